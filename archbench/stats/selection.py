"""Choosing the best of k designs from rounds of measurements: multiple comparisons with the best (MCB) with an
indifference zone, and the same procedure over several looks at growing data.

The question a workload point asks is not "does A differ from B" but "which designs are within delta of the best".
A test that fails to separate two designs is no evidence that they are alike; a ranking-and-selection procedure
answers the question itself (Bechhofer 1954 for the indifference zone; Hsu 1984 and Hsu 1996, ch. 4, for MCB).

The model (`mcb`). n rounds, k designs, `logs[r, i]` the log of design i's rate in round r. Every round runs every
design once in a shuffled order, so a round is a block: y_ri = mu_i + beta_r + e_ri with independent e_ri of
common variance sigma^2 (the two-way additive model; under common random numbers this is Nelson & Matejcik's
1995 sphericity assumption), fitted by least squares to the cells observed. Differences of design estimates cancel
the round effects beta_r; sigma^2 is estimated from the residuals (with complete rounds, (n - 1)(k - 1) degrees of
freedom, and every difference has the standard error sigma * sqrt(2 / n)). A cell is missing where a trial failed,
or was disturbed and its re-runs too: the other designs' values of that round still count.

MCB gives, for every design i, an interval for D_i = mu_i - max_{j != i} mu_j that hold simultaneously with
probability at least 1 - alpha:

    low_i  = min(0, min_{j != i} (m_i - m_j - d se_ij)),    high_i = max(0, min_{j != i} (m_i - m_j + d se_ij)),

d the one-sided critical value for the k - 1 comparisons of the best with the others: Dunnett's, with correlation 1/2,
where the rounds are complete (`dunnett_one_sided_quantile`); with cells missing the correlations differ, and d is
Sidak's where they are all non-negative (conservative by Slepian's inequality), else Bonferroni's. On the log scale a
difference is a ratio, so with the indifference zone delta (a fraction, 0.10 = 10 %):

* **within delta of the best**: low_i > log(1 - delta): design i is at least (1 - delta) times the best of the
  others (and so of the best), with 95 % simultaneous confidence: a pick;
* **slower than the best**: high_i = 0 (and not within delta): some other design is faster;
* **open**: neither; more rounds would decide it, and `rounds_needed` estimates how many.

Several looks (`select_sequentially`). Rounds are added only where a point is still open, and a design shown
slower leaves the point. Each look (one per round count from `first_look` to `max_rounds`) runs MCB on the designs
still in, over their rounds so far, at level alpha / L, L the number of looks the schedule allows: by
Bonferroni over the looks, every statement made at any look holds with probability at least 1 - alpha together,
whatever the data decided about continuing (the union bound needs no independence between looks). Under that
event the best design is never eliminated, so the intervals of later looks still compare with it.

The family is one workload point's designs; points are separate decisions, each at 1 - alpha.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special
from scipy import stats as scipy_stats

from archbench.stats.samples import DEFAULT_ALPHA, check_alpha

DEFAULT_DELTA = 0.10
WITHIN, SLOWER, OPEN = "within", "slower", "open"
VERDICTS = (WITHIN, SLOWER, OPEN)
CORRELATION = 0.5  # of two differences m_i - m_b, m_j - m_b with equal variances
HERMITE_NODES = 96
LEGENDRE_NODES = 96
QUANTILE_TOLERANCE = 1e-7  # on the probability: the solved quantile is checked against it
ROUNDS_NEEDED_CAP = 1000  # beyond it "rounds needed" says only "more than this"

_NODES, _WEIGHTS = special.roots_hermitenorm(HERMITE_NODES)
_WEIGHTS = _WEIGHTS / math.sqrt(2.0 * math.pi)
_LEGENDRE_NODES, _LEGENDRE_WEIGHTS = np.polynomial.legendre.leggauss(LEGENDRE_NODES)


class SolverCheckError(ArithmeticError):
    """An iteratively solved number failed its check (the probability at the solution is not the requested one)."""


def check_delta(delta: float) -> None:
    """Raise ValueError unless 0 < delta < 1 (an indifference zone as a fraction of the best)."""
    if not (isinstance(delta, int | float) and 0.0 < float(delta) < 1.0):
        raise ValueError(f"delta must be a fraction in (0, 1), got {delta!r}")


def _normal_max_cdf(threshold: np.ndarray, comparisons: int) -> np.ndarray:
    """P(max of `comparisons` equicorrelated (rho = 1/2) standard normals <= threshold), vectorised over the
    threshold: Z_i = sqrt(rho) Z_0 + sqrt(1 - rho) W_i, integrated over Z_0 by Gauss-Hermite quadrature."""
    rho = CORRELATION
    inner = (np.asarray(threshold, dtype=float)[..., None] - math.sqrt(rho) * _NODES) / math.sqrt(1.0 - rho)
    return np.sum(_WEIGHTS * scipy_stats.norm.cdf(inner) ** comparisons, axis=-1)


def dunnett_one_sided_probability(d: float, comparisons: int, df: float) -> float:
    """P(max_i T_i <= d) for `comparisons` one-sided Dunnett statistics (correlation 1/2) with `df` degrees of
    freedom (math.inf: known variance). T_i = Z_i / S, S = sqrt(chi2_df / df), integrated over S."""
    if comparisons < 1:
        raise ValueError(f"comparisons must be at least 1, got {comparisons}")
    if math.isinf(df):
        return float(_normal_max_cdf(np.asarray(d), comparisons))
    if df <= 0:
        raise ValueError(f"df must be positive, got {df}")
    # Gauss-Legendre over the central 1 - 2e-12 of S's distribution: agrees with scipy's adaptive quadrature to
    # 1e-12 from 2 degrees of freedom up, at a tenth of its time.
    chi = scipy_stats.chi(df, scale=1.0 / math.sqrt(df))
    low, high = float(chi.ppf(1e-12)), float(chi.ppf(1.0 - 1e-12))
    s = 0.5 * (high - low) * _LEGENDRE_NODES + 0.5 * (high + low)
    weights = 0.5 * (high - low) * _LEGENDRE_WEIGHTS * chi.pdf(s)
    return float(np.sum(weights * _normal_max_cdf(d * s, comparisons)))


@functools.lru_cache(maxsize=4096)
def dunnett_one_sided_quantile(comparisons: int, df: float, alpha: float = DEFAULT_ALPHA) -> float:
    """The one-sided Dunnett critical value d with P(max_i T_i <= d) = 1 - alpha (`dunnett_one_sided_probability`).
    Solved by Brent's method and checked after it is solved: raises SolverCheckError if the probability at the
    solution is not 1 - alpha within QUANTILE_TOLERANCE."""
    check_alpha(alpha)
    if comparisons == 1:  # one comparison: Student's t (or the normal)
        d = float(scipy_stats.norm.ppf(1 - alpha) if math.isinf(df) else scipy_stats.t.ppf(1 - alpha, df))
    else:
        target = 1.0 - alpha
        upper = float(scipy_stats.t.ppf(1.0 - alpha / comparisons, df)) + 1.0  # Bonferroni's bound exceeds it
        d = optimize.brentq(
            lambda x: dunnett_one_sided_probability(x, comparisons, df) - target, 0.0, upper, xtol=1e-10
        )
    achieved = dunnett_one_sided_probability(d, comparisons, df)
    if abs(achieved - (1.0 - alpha)) > QUANTILE_TOLERANCE:
        raise SolverCheckError(
            f"Dunnett quantile for {comparisons} comparisons, df {df}, alpha {alpha}: P(max <= {d}) = {achieved}"
        )
    return float(d)


@dataclass(frozen=True)
class DesignComparison:
    """One design's MCB interval against the best of the others, on the log scale, and its verdict."""

    name: str
    mean_log: float  # the design's mean log rate, round effects removed (the additive model's estimate)
    estimate: float  # m_i - max_{j != i} m_j
    low: float
    high: float
    verdict: str
    rounds: int  # the rounds with a value of this design

    @property
    def ratio(self) -> float:
        """exp(estimate): the design's rate over the best other's (above 1 for the observed best)."""
        return math.exp(self.estimate)


@dataclass(frozen=True)
class MCBResult:
    """MCB with an indifference zone over one point's designs (module docstring)."""

    rounds: int  # rounds with at least one value
    df: float
    sigma: float  # residual sd of the log rates (two-way model)
    critical: float  # one-sided critical value: Dunnett's, or Sidak's / Bonferroni's with rounds incomplete
    critical_method: str
    alpha: float
    delta: float
    designs: tuple[DesignComparison, ...]

    @property
    def resolved(self) -> bool:
        return all(c.verdict != OPEN for c in self.designs)


DUNNETT, SIDAK, BONFERRONI = "dunnett", "sidak", "bonferroni"


def _verdict(low: float, high: float, delta: float) -> str:
    if low > math.log1p(-delta):
        return WITHIN
    if high <= 0.0:
        return SLOWER
    return OPEN


@dataclass(frozen=True)
class AdditiveFit:
    """The two-way additive model y_ri = mu_i + beta_r + e_ri fitted by least squares to the observed cells."""

    means: np.ndarray  # mu_i, identified up to the common round level (only differences are used)
    covariance: np.ndarray  # of the mu estimates, in units of sigma^2
    sigma: float
    df: float
    rounds: int


def additive_fit(logs: np.ndarray) -> AdditiveFit | None:
    """Least squares over the finite cells (rows: rounds, columns: designs); None when the data cannot identify the
    differences with a residual degree of freedom (a design without a value, or too few cells)."""
    observed = np.isfinite(logs)
    logs = logs[observed.any(axis=1)]
    observed = np.isfinite(logs)
    n, k = logs.shape
    if n < 2 or np.any(observed.sum(axis=0) < 1):
        return None
    rows, columns = np.nonzero(observed)
    design = np.zeros((rows.size, k + n - 1))
    design[np.arange(rows.size), columns] = 1.0
    later = rows > 0  # the first round is the reference level of the round effects
    design[np.arange(rows.size)[later], k + rows[later] - 1] = 1.0
    values = logs[rows, columns]
    df = float(rows.size - (k + n - 1))
    gram = design.T @ design
    if df < 1 or np.linalg.matrix_rank(gram) < gram.shape[0]:
        return None
    inverse = np.linalg.inv(gram)
    coefficients = inverse @ design.T @ values
    residuals = values - design @ coefficients
    sigma = float(math.sqrt(float(residuals @ residuals) / df))
    return AdditiveFit(coefficients[:k], inverse[:k, :k], sigma, df, n)


def _critical(fit: AdditiveFit, alpha: float, complete: bool) -> tuple[float, str]:
    """The one-sided critical value for the k - 1 comparisons of a design with the true best: Dunnett's (correlation
    1/2, exact) for complete rounds; with rounds incomplete the correlations differ, and the value is Sidak's where
    every comparison with every candidate best is non-negatively correlated (conservative by Slepian's inequality),
    else Bonferroni's (conservative always)."""
    k = fit.means.size
    if complete:
        return dunnett_one_sided_quantile(k - 1, fit.df, alpha), DUNNETT
    cov = fit.covariance
    for best in range(k):
        others = [i for i in range(k) if i != best]
        contrast = (
            cov[np.ix_(others, others)] - cov[others, best][:, None] - cov[best, others][None, :] + cov[best, best]
        )
        if np.any(contrast < -1e-12):
            return float(scipy_stats.t.ppf(1.0 - alpha / (k - 1), fit.df)), BONFERRONI
    per_comparison = 1.0 - (1.0 - alpha) ** (1.0 / (k - 1))
    return float(scipy_stats.t.ppf(1.0 - per_comparison, fit.df)), SIDAK


def mcb(
    logs: np.ndarray, names: Sequence[str], *, delta: float = DEFAULT_DELTA, alpha: float = DEFAULT_ALPHA
) -> MCBResult:
    """MCB intervals and verdicts for a matrix of log rates (rows: rounds, columns: `names`; NaN where a design has
    no value in a round). Raises ValueError when the data cannot be compared (module docstring)."""
    check_delta(delta)
    check_alpha(alpha)
    logs = np.asarray(logs, dtype=float)
    if logs.ndim != 2 or logs.shape[1] != len(names):
        raise ValueError(f"logs must be rounds x designs with {len(names)} columns, got shape {logs.shape}")
    if logs.shape[1] < 2:
        raise ValueError(f"MCB needs at least 2 designs, got {logs.shape[1]}")
    fit = additive_fit(logs)
    if fit is None:
        raise ValueError(
            f"MCB needs every design measured and a residual degree of freedom: at least 2 rounds, got {logs.shape}"
        )
    complete = bool(np.all(np.isfinite(logs)))
    critical, method = _critical(fit, alpha, complete)
    counts = np.isfinite(logs).sum(axis=0)
    cov, means = fit.covariance, fit.means
    designs = []
    for i, name in enumerate(names):
        others = [j for j in range(len(names)) if j != i]
        gaps = np.array([means[i] - means[j] for j in others])
        errors = fit.sigma * np.sqrt(np.array([cov[i, i] + cov[j, j] - 2 * cov[i, j] for j in others]))
        low = min(0.0, float(np.min(gaps - critical * errors)))
        high = max(0.0, float(np.min(gaps + critical * errors)))
        designs.append(
            DesignComparison(
                str(name),
                float(means[i]),
                float(np.min(gaps)),
                low,
                high,
                _verdict(low, high, delta),
                int(counts[i]),
            )
        )
    return MCBResult(fit.rounds, fit.df, fit.sigma, critical, method, alpha, delta, tuple(designs))


def rounds_needed(estimate: float, sigma: float, designs: int, *, delta: float, alpha: float) -> int | None:
    """Rounds at which an open design's interval would be narrow enough to decide it if its estimate and the spread
    stayed as observed (`designs` still in the point, each look at `alpha`): the smallest n with d * sigma *
    sqrt(2 / n) below the distance to the nearer decision (within delta, or slower). None beyond ROUNDS_NEEDED_CAP
    or without a spread."""
    if not (math.isfinite(estimate) and math.isfinite(sigma)) or designs < 2:
        return None
    distance = max(estimate - math.log1p(-delta), -estimate)
    if sigma == 0.0:
        return 2

    def decides(n: int) -> bool:  # the half-width shrinks with n (more rounds, more degrees of freedom)
        critical = dunnett_one_sided_quantile(designs - 1, float((n - 1) * (designs - 1)), alpha)
        return critical * sigma * math.sqrt(2.0 / n) < distance

    if not decides(ROUNDS_NEEDED_CAP):
        return None
    low, high = 1, ROUNDS_NEEDED_CAP  # decides(high); not decides(low) (n = 1 has no spread)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if decides(middle) else (middle, high)
    return high


@dataclass(frozen=True)
class Look:
    """One look: MCB over the designs still in, on the rounds they all completed."""

    rounds: int  # the round count the look was taken at (the schedule's)
    result: MCBResult


@dataclass(frozen=True)
class SequentialSelection:
    """The outcome of `select_sequentially`: the looks taken, every design's final comparison (from the look that
    eliminated it, else the last), the designs still in, and for an open point the rounds it would need."""

    names: tuple[str, ...]
    delta: float
    alpha: float  # over all looks together
    alpha_per_look: float
    looks_allowed: int
    looks: tuple[Look, ...]
    final: dict[str, DesignComparison]
    decided_at: dict[str, int]  # design -> rounds of the look that gave its final comparison
    still_in: tuple[str, ...]
    rounds_needed: int | None

    @property
    def resolved(self) -> bool:
        return bool(self.final) and all(c.verdict != OPEN for c in self.final.values())

    @property
    def decided(self) -> bool:
        """At least one look was taken."""
        return bool(self.looks)


def looks_allowed(first_look: int, max_rounds: int) -> int:
    """How many looks a schedule allows: one per round count from first_look to max_rounds."""
    if first_look < 2:
        raise ValueError(f"the first look needs at least 2 rounds, got {first_look}")
    if max_rounds < first_look:
        raise ValueError(f"max_rounds ({max_rounds}) is below the first look ({first_look})")
    return max_rounds - first_look + 1


def select_sequentially(
    rates: np.ndarray,
    names: Sequence[str],
    *,
    first_look: int,
    max_rounds: int,
    delta: float = DEFAULT_DELTA,
    alpha: float = DEFAULT_ALPHA,
) -> SequentialSelection:
    """Replay the looks over `rates` (rows: rounds 1..N in order, columns: `names`; NaN where a design has no
    usable value in a round, or was not run because it had left): at each round count from first_look to
    min(N, max_rounds), MCB at alpha / L over the designs still in; a design shown slower (and not within delta)
    leaves; the replay stops once every design still in is decided. The module docstring gives the guarantee."""
    check_delta(delta)
    check_alpha(alpha)
    allowed = looks_allowed(first_look, max_rounds)
    per_look = alpha / allowed
    values = np.asarray(rates, dtype=float)
    if values.ndim != 2 or values.shape[1] != len(names):
        raise ValueError(f"rates must be rounds x designs with {len(names)} columns, got shape {values.shape}")
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.where(values > 0, np.log(values), np.nan)
    names = tuple(str(name) for name in names)
    still_in = list(range(len(names)))
    looks: list[Look] = []
    final: dict[str, DesignComparison] = {}
    decided_at: dict[str, int] = {}
    for rounds in range(first_look, min(values.shape[0], max_rounds) + 1):
        # A design without one usable value so far (a server that cannot run here, every trial failed) cannot be
        # compared: it leaves without a verdict rather than keep the others from being compared.
        still_in = [i for i in still_in if np.isfinite(logs[:rounds, i]).any()]
        if len(still_in) < 2:
            break
        block = logs[:rounds, still_in]
        if additive_fit(block) is None:
            continue
        result = mcb(block, [names[i] for i in still_in], delta=delta, alpha=per_look)
        looks.append(Look(rounds, result))
        for comparison in result.designs:
            final[comparison.name] = comparison
            decided_at[comparison.name] = rounds
        leaving = {c.name for c in result.designs if c.verdict == SLOWER}
        still_in = [i for i in still_in if names[i] not in leaving]
        if result.resolved:
            break
    needed = None
    if looks and not all(c.verdict != OPEN for c in final.values()):
        last = looks[-1].result
        in_names = {names[i] for i in still_in}
        open_estimates = [c.estimate for c in last.designs if c.verdict == OPEN and c.name in in_names]
        each = [rounds_needed(e, last.sigma, len(still_in), delta=delta, alpha=per_look) for e in open_estimates]
        needed = None if any(n is None for n in each) or not each else max(each)  # type: ignore[type-var]
    return SequentialSelection(
        names=names,
        delta=delta,
        alpha=alpha,
        alpha_per_look=per_look,
        looks_allowed=allowed,
        looks=tuple(looks),
        final=final,
        decided_at=decided_at,
        still_in=tuple(names[i] for i in still_in),
        rounds_needed=needed,
    )
