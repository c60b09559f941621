"""The robustness appendix (issue 7): the abuse suite's result as a matrix of server variants x abuse cases.

The abuse suite (`tests/test_abuse.py`, schema in the docstring of `tests/abuse/report.py`) writes a JSON
result. It is a measurement, so it is read like a campaign with a fallback:

* `robustness` given (a path; relative to the repository root): that file;
* otherwise `<processed_dir>/robustness.json`, this machine's result, written by `make test` (regenerable);
* otherwise `<raw_root>/reference-robustness/robustness.json`, the result shipped in git (written once).

A missing or unreadable file makes every part of the appendix a sentence saying so; the report still builds.
The suite's result does not record the host or the commit; a `provenance.json` beside it (the shipped reference
has one) or a `provenance` object inside it supplies them, else they print as unknown.

What is written (`RobustnessResult.outputs`): macros (`\\abRobustness...`, every number the appendix quotes),
`generated/table-robustness.tex` (the matrix: a mark per variant and case, passed/total per variant and per
architecture) and `generated/robustness-notes.tex` (every failed cell with what was expected and observed, the
skipped and not-run cells, and the cases with what is expected of each architecture, grouped where the
expectation differs between architectures, as for slowloris: event loops against one connection per slot).
The sanitizer and fuzzing sentences are derived from the repository's files (Makefile, .ci/run,
servers_c/fuzz/), never from results, which those runs do not record.
"""
from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archbench.report.latex import MISSING, MacroSet, escape, format_compact, format_count
from archbench.config.paths import REPO_ROOT

RESULT_FILE = "robustness.json"
REFERENCE_DIR = "reference-robustness"
PROVENANCE_FILE = "provenance.json"
TABLE_FILE = "table-robustness.tex"
NOTES_FILE = "robustness-notes.tex"
SCHEMA = 1

PASSED, FAILED, SKIPPED, NOT_RUN = "passed", "failed", "skipped", "not run"
MARKS = {
    PASSED: r"\ding{51}",
    FAILED: r"\ding{55}",
    SKIPPED: "--",
    NOT_RUN: r"$\cdot$",
}
# Short column headings for the cases the suite has now; any other case is headed by its name.
CASE_LABELS = {
    "bind_loopback": "loopback bind",
    "malformed_request_line": "malformed line",
    "header_without_colon": "header w/o colon",
    "nul_bytes": "NUL bytes",
    "header_100kb": "100\\,KB header",
    "headers_10000": "10{,}000 headers",
    "byte_at_a_time": "byte at a time",
    "pipelined_64": "64 pipelined",
    "half_request_then_close": "half request",
    "reset_mid_response": "reset mid-resp.",
    "connection_close": "Conn.: close",
    "idle_keepalive_timeout": "idle timeout",
    "trickled_head_timeout": "trickled head",
    "slowloris": "slowloris",
    "file_response_fixed": "file response",
    "echo_idle_timeout": "echo idle",
    "clean_shutdown": "clean shutdown",
}
OBSERVED_LIMIT = 500  # characters of an observed text quoted in the notes (a sanitizer report can be long)


# --------------------------------------------------------------------------- text helpers


def plain(text: Any) -> str:
    """Data text made safe for LaTeX: whitespace runs (newlines included) to one space, anything outside printable
    ASCII as <U+XXXX> (inputenc cannot typeset every character a failure message may hold), then escaped."""
    collapsed = re.sub(r"\s+", " ", "" if text is None else str(text)).strip()
    ascii_only = "".join(c if 32 <= ord(c) < 127 else f"<U+{ord(c):04X}>" for c in collapsed)
    return escape(ascii_only)


def breakable(text: str, every: int = 24) -> str:
    """plain(), with a permitted line break every `every` characters of a long unspaced run (a byte dump, a path)."""
    words = []
    for word in text.split(" "):
        pieces = [word[i:i + every] for i in range(0, len(word), every)] or [""]
        words.append(r"\allowbreak{}".join(plain(piece) for piece in pieces))
    return " ".join(words)


def truncated(text: Any, limit: int = OBSERVED_LIMIT) -> str:
    collapsed = re.sub(r"\s+", " ", "" if text is None else str(text)).strip()
    if len(collapsed) <= limit:
        return breakable(collapsed)
    return breakable(collapsed[:limit]) + r"\ldots{} (cut here; the whole text is in the result file)"


def tt(text: Any) -> str:
    """Typewriter text from data that may break after '_', '/', '-' and '.' (long paths of any kind)."""
    escaped = plain(text).replace(r"\_", r"\_\allowbreak{}").replace("/", r"/\allowbreak{}")
    # Inside a word only: an option's leading dashes (escaped -{}-) and decimal points stay whole.
    escaped = re.sub(r"(?<=[A-Za-z0-9])([-.])(?=[A-Za-z])", r"\1\\allowbreak{}", escaped)
    return r"\texttt{" + escaped + "}"


def case_label(case: str) -> str:
    return CASE_LABELS.get(case) or plain(case.replace("_", " "))


def _plural(count: int, one: str, many: str | None = None) -> str:
    return one if count == 1 else (many or one + "s")


def display_path(path: Path) -> str:
    try:
        return Path(path).resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number else None  # NaN is missing


# --------------------------------------------------------------------------- reading the result


@dataclass(frozen=True)
class RobustnessSource:
    path: Path | None  # the file read (None: none found)
    origin: str  # "processed" (this machine's, make test), "reference" (shipped), "given" or "missing"
    tried: tuple[Path, ...] = ()


@dataclass(frozen=True)
class VariantRow:
    name: str
    architecture: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class RobustnessResult:
    source: RobustnessSource
    reason: str | None  # why there is no matrix (None: there is one)
    doc: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)
    variants: tuple[VariantRow, ...] = ()
    cases: tuple[str, ...] = ()
    cells: dict = field(default_factory=dict)  # (variant, case) -> result dict, outcome normalised
    repo_root: Path = REPO_ROOT

    @property
    def available(self) -> bool:
        return self.reason is None

    def outcome(self, variant: str, case: str) -> str:
        cell = self.cells.get((variant, case))
        return NOT_RUN if cell is None else cell["outcome"]

    def counts(self, variants: Sequence[VariantRow] | None = None) -> dict[str, int]:
        counts = {PASSED: 0, FAILED: 0, SKIPPED: 0, NOT_RUN: 0}
        for row in self.variants if variants is None else variants:
            for case in self.cases:
                counts[self.outcome(row.name, case)] += 1
        return counts

    def architectures(self) -> list[tuple[str, list[VariantRow]]]:
        """Architectures in order of first appearance, each with its variants."""
        groups: dict[str, list[VariantRow]] = {}
        for row in self.variants:
            groups.setdefault(row.architecture, []).append(row)
        return list(groups.items())

    def outputs(self, macros: MacroSet, paper_dir: Path, figures_dir: Path | None = None) -> dict[str, str]:
        """What archbench.report.build writes for the appendix: macros into `macros`, {generated file: LaTeX}."""
        robustness_macros(macros, self)
        return {TABLE_FILE: matrix_table(self), NOTES_FILE: notes(self)}


def resolve_source(requested: str | Path | None, processed_dir: Path, raw_root: Path) -> RobustnessSource:
    processed = Path(processed_dir) / RESULT_FILE
    reference = Path(raw_root) / REFERENCE_DIR / RESULT_FILE
    if requested is not None and str(requested).strip():
        path = Path(requested)
        path = path if path.is_absolute() else REPO_ROOT / path
        origin = "given"
        if path.resolve() in (processed.resolve(), (REPO_ROOT / "data" / "processed" / RESULT_FILE).resolve()):
            origin = "processed"
        elif path.parent.name == REFERENCE_DIR:
            origin = "reference"
        return RobustnessSource(path if path.is_file() else None, origin if path.is_file() else "missing", (path,))
    for path, origin in ((processed, "processed"), (reference, "reference")):
        if path.is_file():
            return RobustnessSource(path, origin, (processed, reference))
    return RobustnessSource(None, "missing", (processed, reference))


_OUTCOME_RANK = {PASSED: 0, SKIPPED: 1, FAILED: 2}


def _normalised(result: Mapping[str, Any]) -> dict[str, Any]:
    cell = dict(result)
    outcome = str(cell.get("outcome", "")).strip().lower()
    if outcome not in _OUTCOME_RANK:
        # An outcome this report does not know is never shown as a pass.
        cell["observed"] = f"outcome {cell.get('outcome')!r} in the result file: {cell.get('observed', '')}"
        outcome = FAILED
    cell["outcome"] = outcome
    return cell


def parse_result(doc: Any) -> tuple[tuple[VariantRow, ...], tuple[str, ...], dict]:
    """Variants (in the file's order, then any only in the results), cases (likewise) and cells.
    Raises ValueError when the document is not a schema-1 result."""
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"schema {doc.get('schema')!r}, expected {SCHEMA}")
    results = doc.get("results")
    if not isinstance(results, list):
        raise ValueError("no list of results")
    variants: dict[str, VariantRow] = {}
    for entry in doc.get("variants") or []:
        if isinstance(entry, dict) and entry.get("variant"):
            name = str(entry["variant"])
            args = tuple(str(a) for a in entry.get("args") or [])
            variants.setdefault(name, VariantRow(name, str(entry.get("architecture") or name), args))
    cases: list[str] = [str(c) for c in doc.get("cases") or [] if c]
    cells: dict[tuple[str, str], dict] = {}
    for result in results:
        if not isinstance(result, dict) or not result.get("variant") or not result.get("case"):
            continue
        name, case = str(result["variant"]), str(result["case"])
        if name not in variants:
            args = tuple(str(a) for a in result.get("args") or [])
            variants[name] = VariantRow(name, str(result.get("architecture") or name), args)
        if case not in cases:
            cases.append(case)
        cell = _normalised(result)
        previous = cells.get((name, case))
        # A pair recorded twice shows its worse outcome: a failure is never hidden behind a pass.
        if previous is None or _OUTCOME_RANK[cell["outcome"]] > _OUTCOME_RANK[previous["outcome"]]:
            cells[(name, case)] = cell
    if not variants or not cases:
        raise ValueError("no variant or no case")
    return tuple(variants.values()), tuple(dict.fromkeys(cases)), cells


def _provenance(doc: dict, path: Path) -> dict:
    """Host and commit: the result's own `provenance` object, else a provenance.json beside the file."""
    found: dict = {}
    sidecar = path.parent / PROVENANCE_FILE
    if sidecar.is_file():
        try:
            loaded = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            loaded = None
        if isinstance(loaded, dict) and loaded.get("result", path.name) == path.name:
            found.update(loaded)
    embedded = doc.get("provenance")
    if isinstance(embedded, dict):
        found.update(embedded)
    for key in ("hostname", "host", "git_commit", "git_dirty"):
        if key in doc and key not in found:
            found[key] = doc[key]
    return found


def load_robustness(
    requested: str | Path | None, processed_dir: Path, raw_root: Path, repo_root: Path = REPO_ROOT
) -> RobustnessResult:
    """The abuse-suite result the appendix shows (see the module docstring for which), never raising for data."""
    source = resolve_source(requested, Path(processed_dir), Path(raw_root))
    if source.path is None:
        tried = " nor ".join(tt(display_path(p)) for p in source.tried)
        if len(source.tried) == 1:
            reason = f"The abuse-suite result {tried} does not exist"
        else:
            reason = f"Neither {tried} exists"
        return RobustnessResult(source, reason, repo_root=Path(repo_root))
    try:
        doc = json.loads(source.path.read_text(encoding="utf-8"))
        variants, cases, cells = parse_result(doc)
    except (OSError, ValueError) as error:  # json.JSONDecodeError is a ValueError
        reason = f"The abuse-suite result {tt(display_path(source.path))} could not be read ({plain(error)})"
        return RobustnessResult(source, reason, repo_root=Path(repo_root))
    return RobustnessResult(source, None, doc, _provenance(doc, source.path), variants, cases, cells, Path(repo_root))


# --------------------------------------------------------------------------- sanitizers and fuzzing (from files)


@dataclass(frozen=True)
class Harness:
    name: str
    what: str  # from the harness's header comment
    corpus: int | None  # committed seed inputs (None: no corpus directory)


@dataclass(frozen=True)
class Tooling:
    sanitize_target: bool
    sanitize_abuse: bool  # SANITIZE_ABUSE=1 runs the abuse suite against the sanitizer builds
    fuzz_target: bool
    fuzz_seconds: int | None
    harnesses: tuple[Harness, ...]
    corpus_replayed: bool  # every build replays the corpus as a CTest unit test
    ci_commands: tuple[str, ...]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _harness_what(source: str) -> str:
    match = re.match(r"\s*/\*+\s*(.*?)(?:\*/|$)", source, re.S)
    if not match:
        return ""
    comment = re.sub(r"\s*\n\s*\*?\s*", " ", match.group(1)).strip()
    first = re.split(r"(?<=[.:;])\s", comment, maxsplit=1)[0].rstrip(".:;")
    return re.sub(r"^libFuzzer harness for\s+", "", first)


def tooling(repo_root: Path = REPO_ROOT) -> Tooling:
    repo_root = Path(repo_root)
    makefile = _read(repo_root / "Makefile")
    seconds = re.search(r"^FUZZ_SECONDS\s*\??=\s*(\d+)\s*$", makefile, re.M)
    fuzz_dir = repo_root / "servers_c" / "fuzz"
    harnesses = []
    for source in sorted(fuzz_dir.glob("fuzz_*.c")) if fuzz_dir.is_dir() else []:
        name = source.stem[len("fuzz_"):]
        corpus_dir = fuzz_dir / "corpus" / name
        corpus = sum(1 for p in corpus_dir.iterdir() if p.is_file()) if corpus_dir.is_dir() else None
        harnesses.append(Harness(name, _harness_what(_read(source)), corpus))
    ci = _read(repo_root / ".ci" / "run")
    commands = tuple(
        re.sub(r"\s+", " ", line.strip())
        for line in ci.splitlines()
        if re.match(r"\s*make\s+(test|test-sanitize|fuzz)(\s|$)", line)
    )
    return Tooling(
        sanitize_target=bool(re.search(r"^test-sanitize:", makefile, re.M)),
        sanitize_abuse="SANITIZE_ABUSE" in makefile and "test_abuse.py" in makefile,
        fuzz_target=bool(re.search(r"^fuzz:", makefile, re.M)),
        fuzz_seconds=int(seconds.group(1)) if seconds else None,
        harnesses=tuple(harnesses),
        corpus_replayed="replay_" in _read(repo_root / "servers_c" / "CMakeLists.txt"),
        ci_commands=commands,
    )


def tooling_macros(macros: MacroSet, facts: Tooling) -> None:
    if facts.sanitize_target:
        sanitizer = (
            r"\texttt{make test-sanitize} builds the servers and the C tests with AddressSanitizer and "
            r"UndefinedBehaviorSanitizer and runs every CTest suite (unit tests, HTTP and echo conformance of every "
            r"variant) under them, then with ThreadSanitizer the unit tests and the threaded architectures; the first "
            r"report fails the run"
            + (r"; with \texttt{SANITIZE\_ABUSE=1} it also runs this abuse suite against both builds, where any "
               r"report on a server's standard error fails its cases." if facts.sanitize_abuse else ".")
        )
    else:
        sanitizer = "The Makefile has no sanitizer target."
    macros.add("robustness sanitizer sentence", sanitizer, "make test-sanitize, from the Makefile")
    total_corpus = sum(h.corpus or 0 for h in facts.harnesses)
    macros.add("robustness fuzz harness count", format_count(len(facts.harnesses)), "servers_c/fuzz/fuzz_*.c")
    macros.add("robustness fuzz corpus count", format_count(total_corpus), "seed inputs in servers_c/fuzz/corpus/*/*")
    macros.add("robustness fuzz seconds", format_count(facts.fuzz_seconds), "FUZZ_SECONDS default in the Makefile")
    if facts.harnesses:
        described = []
        for h in facts.harnesses:
            seeds = "no committed seed corpus" if h.corpus is None else (
                f"{format_count(h.corpus)} committed seed {_plural(h.corpus, 'input')}")
            what = f" for {plain(h.what)}" if h.what else ""
            described.append(f"{tt('fuzz_' + h.name)}{what}, with {seeds}")
        fuzz = (
            f"The repository has {format_count(len(facts.harnesses))} libFuzzer "
            f"{_plural(len(facts.harnesses), 'harness', 'harnesses')}: " + "; ".join(described) + "."
        )
        if facts.fuzz_target:
            fuzz += (
                r" \texttt{make fuzz} builds them with clang (\texttt{-fsanitize=fuzzer,address,undefined}) and "
                r"runs each from its seed corpus for \texttt{FUZZ\_SECONDS} ("
                + (f"{format_count(facts.fuzz_seconds)}\\,s by default" if facts.fuzz_seconds is not None else "no default")
                + "); a crash or a broken invariant fails the target."
            )
        if facts.corpus_replayed:
            fuzz += " Every build, the sanitizer builds included, also replays the seed corpora as CTest unit tests."
    else:
        fuzz = "The repository has no fuzzing harness."
    macros.add("robustness fuzz sentence", fuzz, "servers_c/fuzz/ and the Makefile")
    if facts.ci_commands:
        ci = (
            r"CI (\texttt{.ci/run}, on a clean clone) runs "
            + format_list_tex([tt(c) for c in facts.ci_commands])
            + r"; those runs pass or fail the CI run and are not part of the repository's data, so this appendix "
            r"quotes no outcome of theirs: the matrix is the one run of the abuse suite named above."
        )
    else:
        ci = r"No CI script (\texttt{.ci/run}) runs these targets."
    macros.add("robustness ci sentence", ci, "the make commands of .ci/run")


def format_list_tex(items: Sequence[str]) -> str:
    """Like latex.format_list, for items that are LaTeX already (not escaped again)."""
    items = list(items)
    if not items:
        return MISSING
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


# --------------------------------------------------------------------------- macros


def _date(value: Any) -> str:
    text = "" if value is None else str(value)
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return plain(text) if text else "unknown"
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M") + (" UTC" if moment.tzinfo is not None else "")


def _seconds(value: Any) -> str:
    number = _number(value)
    return MISSING if number is None else format_compact(number)


def robustness_macros(macros: MacroSet, result: RobustnessResult) -> None:
    doc, provenance = result.doc, result.provenance
    build = doc.get("build") if isinstance(doc.get("build"), dict) else {}
    settings = doc.get("settings") if isinstance(doc.get("settings"), dict) else {}
    available = result.available

    def text(value: Any) -> str:
        return plain(value) if value not in (None, "") else ("unknown" if available else MISSING)

    commit = str(provenance.get("git_commit") or "")
    macros.add("robustness host", text(provenance.get("hostname") or provenance.get("host")), "host of the abuse run")
    macros.add("robustness date", _date(doc.get("generated_at")) if available else MISSING, "when the result was written")
    macros.add("robustness build type", text(build.get("build_type")), "CMake build type of the servers tested")
    macros.add("robustness compiler", text(build.get("compiler")), "compiler of the servers tested")
    macros.add("robustness commit", r"\texttt{" + plain(commit[:12]) + "}" if commit else text(None), "git commit")
    dirty = provenance.get("git_dirty")
    macros.add(
        "robustness commit state",
        "unknown" if dirty is None or not commit else ("with uncommitted changes" if dirty else "clean"),
        "working tree state of the tested code",
    )
    rss_kb = _number(settings.get("rss_growth_bound_kb"))
    macros.add("robustness header timeout", _seconds(settings.get("header_timeout_s")), "--header-timeout, s")
    macros.add("robustness idle timeout", _seconds(settings.get("idle_timeout_s")), "--idle-timeout, s")
    macros.add("robustness slowloris connections", format_count(_number(settings.get("slowloris_connections"))),
               "slowloris connections held at once")
    macros.add("robustness rss bound", MISSING if rss_kb is None else format_compact(rss_kb / 1024, 1),
               "resident memory growth allowed per case, MiB")
    macros.add("robustness fd settle", _seconds(settings.get("fd_settle_s")), "s for descriptors to be released")

    counts = result.counts() if available else {PASSED: 0, FAILED: 0, SKIPPED: 0, NOT_RUN: 0}
    architectures = result.architectures()
    all_passed = [a for a, rows in architectures if result.counts(rows)[PASSED] == len(rows) * len(result.cases)]
    numbers = {
        "robustness variant count": (len(result.variants), "server variants in the matrix"),
        "robustness architecture count": (len(architectures), "architectures in the matrix"),
        "robustness case count": (len(result.cases), "abuse cases per variant"),
        "robustness cell count": (len(result.variants) * len(result.cases), "variant x case cells"),
        "robustness passed count": (counts[PASSED], "cells passed"),
        "robustness failed count": (counts[FAILED], "cells failed"),
        "robustness skipped count": (counts[SKIPPED], "cells skipped"),
        "robustness not run count": (counts[NOT_RUN], "cells without a result"),
        "robustness architectures all passed": (len(all_passed), "architectures that passed every cell"),
    }
    for words, (value, comment) in numbers.items():
        macros.add(words, format_count(value) if available else MISSING, comment)

    if not available:
        source = (result.reason + ", so there is no abuse-suite result to show: " + r"\texttt{make test} writes "
                  + tt("data/processed/" + RESULT_FILE) + ", and the shipped reference is "
                  + tt(f"data/raw/{REFERENCE_DIR}/{RESULT_FILE}") + ".")
        macros.add("robustness source sentence", source, "which abuse-suite result the appendix shows")
        macros.add("robustness provenance sentence", "", "where and how the result was produced")
        macros.add("robustness summary sentence", "", "totals of the matrix")
    else:
        where = tt(display_path(result.source.path))
        source = {
            "processed": f"The result shown is this machine's, {where}, written by the abuse suite when "
                         r"\texttt{make test} last ran (regenerable).",
            "reference": f"The result shown is the reference shipped with the repository, {where} (written once, "
                         "never replaced), since this machine has no result of its own "
                         r"(\texttt{make test} writes " + tt("data/processed/" + RESULT_FILE) + ").",
        }.get(result.source.origin, f"The result shown is {where}, as requested.")
        macros.add("robustness source sentence", source, "which abuse-suite result the appendix shows")
        host = provenance.get("hostname") or provenance.get("host")
        provenance_sentence = (
            r"It was written on \abRobustnessDate{} "
            + (r"on host \abRobustnessHost{}" if host else "on a host it does not name")
            + (r", testing a \abRobustnessBuildType{} build (\abRobustnessCompiler) of " if build.get("build_type")
               else ", testing servers of an unrecorded build type from ")
            + (r"commit \abRobustnessCommit{} (\abRobustnessCommitState)" if commit else "an unrecorded commit")
            + r", with the "
            r"servers' header timeout set to \abRobustnessHeaderTimeout\,s and their idle timeout to "
            r"\abRobustnessIdleTimeout\,s, \abRobustnessSlowlorisConnections{} slowloris connections, a bound of "
            r"\abRobustnessRssBound\,MiB on the growth of the server's resident memory per case, and "
            r"\abRobustnessFdSettle\,s for its descriptors to come back."
        )
        if not host or not commit:
            provenance_sentence += (" The suite's result does not record the host or the commit and no "
                                    r"\texttt{provenance.json} lies beside it, hence ``unknown''.")
        macros.add("robustness provenance sentence", provenance_sentence, "where and how the result was produced")
        macros.add("robustness summary sentence", summary_sentence(result, counts, all_passed),
                   "totals of the matrix")
    tooling_macros(macros, tooling(result.repo_root))


def summary_sentence(result: RobustnessResult, counts: Mapping[str, int], all_passed: Sequence[str]) -> str:
    architectures = result.architectures()
    sentence = (
        r"Table~\ref{tab:robustness} has \abRobustnessVariantCount{} "
        f"{_plural(len(result.variants), 'variant')} of \\abRobustnessArchitectureCount{{}} "
        f"{_plural(len(architectures), 'architecture')} against \\abRobustnessCaseCount{{}} "
        f"{_plural(len(result.cases), 'case')}: of the \\abRobustnessCellCount{{}} cells, \\abRobustnessPassedCount{{}} "
        f"passed, \\abRobustnessFailedCount{{}} failed and \\abRobustnessSkippedCount{{}} "
        f"{_plural(counts[SKIPPED], 'was', 'were')} skipped"
    )
    if counts[NOT_RUN]:
        sentence += (r", and \abRobustnessNotRunCount{} " + _plural(counts[NOT_RUN], "was", "were")
                     + " not run in this result")
    sentence += ". "
    if len(all_passed) == len(architectures):
        sentence += "Every architecture passed every case in every variant."
    elif not all_passed:
        sentence += "No architecture passed every case in every variant."
    else:
        sentence += (r"\abRobustnessArchitecturesAllPassed{} of the \abRobustnessArchitectureCount{} architectures "
                     "passed every case in every variant (" + format_list_tex([tt(a) for a in all_passed]) + ").")
    if counts[FAILED]:
        sentence += " Every failed cell is explained below the table, with what was expected and what was observed."
    return sentence


# --------------------------------------------------------------------------- the matrix


def failure_numbers(result: RobustnessResult) -> dict[tuple[str, str], int]:
    numbers: dict[tuple[str, str], int] = {}
    for row in result.variants:
        for case in result.cases:
            if result.outcome(row.name, case) == FAILED:
                numbers[(row.name, case)] = len(numbers) + 1
    return numbers


def matrix_table(result: RobustnessResult) -> str:
    if not result.available:
        return "% No abuse-suite result: the appendix says so in \\abRobustnessSourceSentence.\n"
    numbers = failure_numbers(result)
    header = [r"\multicolumn{1}{@{}l}{Variant}"]
    header += [r"\multicolumn{1}{c}{\rotatebox{90}{" + case_label(c) + "}}" for c in result.cases]
    header += [r"\multicolumn{1}{c}{\rotatebox{90}{passed}}", r"\multicolumn{1}{c@{}}{\rotatebox{90}{arch.\ passed}}"]
    lines = [
        r"\begin{table}[htbp]",
        r"\centering",
        r"\footnotesize",
        r"\setlength{\tabcolsep}{2.2pt}",
        r"\caption{The abuse suite's result: one row per server variant (grouped by architecture), one column per "
        r"abuse case. \ding{51}~passed, \ding{55}~failed (the number refers to the explanation below the table), "
        r"--~skipped, $\cdot$~not run in this result. \emph{passed}: cases passed out of all cases, per variant; "
        r"\emph{arch.\ passed}: the same for the architecture, all its variants together.}",
        r"\label{tab:robustness}",
        r"\begin{adjustbox}{max width=\linewidth}",
        r"\begin{tabular}{@{}l" + "c" * len(result.cases) + "rr@{}}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
    ]
    total = len(result.cases)
    for index, (architecture, rows) in enumerate(result.architectures()):
        if index:
            lines.append(r"\midrule")
        group = result.counts(rows)
        for position, row in enumerate(rows):
            cells = [tt(row.name)]
            for case in result.cases:
                outcome = result.outcome(row.name, case)
                mark = MARKS[outcome]
                if outcome == FAILED:
                    mark += r"\textsuperscript{" + str(numbers[(row.name, case)]) + "}"
                cells.append(mark)
            passed = result.counts([row])[PASSED]
            cells.append(f"{passed}/{total}")
            cells.append(f"{group[PASSED]}/{total * len(rows)}" if position == 0 else "")
            lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{adjustbox}", r"\end{table}", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- notes under the matrix


def _who(result: RobustnessResult, names: Sequence[str]) -> str:
    """The variants by name, except that an architecture with several variants, all of them included, is named
    once: `blocking and every variant of epoll and reactor`."""
    chosen = set(names)
    single, whole = [], []
    for architecture, rows in result.architectures():
        members = [r.name for r in rows if r.name in chosen]
        if len(rows) > 1 and len(members) == len(rows):
            whole.append(tt(architecture))
        else:
            single.extend(tt(m) for m in members)
    if not whole:
        return format_list_tex(single)
    every = f"every variant of {format_list_tex(whole)}"
    if not single:
        return every
    return f"{single[0]} and {every}" if len(single) == 1 else f"{format_list_tex(single)}, and {every}"


def _itemize(items: Sequence[str]) -> list[str]:
    return [r"\begin{itemize}\setlength{\itemsep}{0pt}\setlength{\parskip}{0pt}", *[r"\item " + i for i in items],
            r"\end{itemize}"]


def notes(result: RobustnessResult) -> str:
    if not result.available:
        return "% No abuse-suite result: the appendix says so in \\abRobustnessSourceSentence.\n"
    lines = [r"\begingroup\small\raggedright"]
    numbers = failure_numbers(result)
    if numbers:
        lines.append(r"\paragraph{Failed cells.}")
        items = []
        for (variant, case), number in numbers.items():
            cell = result.cells[(variant, case)]
            expected = truncated(cell.get("expected")) or "not recorded"
            items.append(
                f"\\textsuperscript{{{number}}}\\,{tt(variant)}, {case_label(case)} ({tt(case)}): expected "
                f"{expected}; observed: {truncated(cell.get('observed')) or 'nothing recorded'}."
            )
        lines += _itemize(items)
    else:
        lines.append(r"\paragraph{Failed cells.} None.")

    skipped: dict[tuple[str, str], list[str]] = {}  # (variant, reason) -> cases
    for row in result.variants:
        for case in result.cases:
            if result.outcome(row.name, case) == SKIPPED:
                reason = truncated(result.cells[(row.name, case)].get("observed")) or "no reason recorded"
                skipped.setdefault((row.name, reason), []).append(case)
    if skipped:
        lines.append(r"\paragraph{Skipped cells.}")
        items = []
        for (variant, reason), cases in skipped.items():
            which = "every case" if len(cases) == len(result.cases) else format_list_tex([case_label(c) for c in cases])
            items.append(f"{tt(variant)}, {which}: {reason}.")
        lines += _itemize(items)
    not_run = result.counts()[NOT_RUN]
    if not_run:
        lines.append(
            r"\paragraph{Cells not run.} \abRobustnessNotRunCount{} "
            f"{_plural(not_run, 'cell has', 'cells have')} no result in this file: the suite was run on a subset of "
            r"its tests (for example with \texttt{pytest -k})."
        )

    # What each case expects: one line for a case that expects the same of every variant, a list of groups for a
    # case whose expectation depends on the architecture (slowloris: event loops against one connection per slot).
    lines.append(r"\paragraph{The cases and what is expected.} After every case the suite also checks that a normal "
                 r"request is still answered, that the server's descriptors are back at their level before the case "
                 r"and that its resident memory stayed within the bound.")
    items = []
    for case in result.cases:
        groups: dict[str, list[str]] = {}
        for row in result.variants:
            cell = result.cells.get((row.name, case))
            expected = re.sub(r"\s+", " ", str((cell or {}).get("expected") or "")).strip()
            if expected:
                groups.setdefault(expected, []).append(row.name)
        head = f"\\textbf{{{case_label(case)}}} ({tt(case)})"
        if not groups:
            items.append(f"{head}: no expectation recorded.")
        elif len(groups) == 1:
            items.append(f"{head}: {breakable(next(iter(groups)))}.")
        else:
            sub = [f"{_who(result, names)}: {breakable(text)}." for text, names in groups.items()]
            items.append(f"{head}, by architecture:\n" + "\n".join(_itemize(sub)))
    lines += _itemize(items)

    arguments = [f"{tt(row.name)} {tt(' '.join(row.args)) if row.args else '(no arguments)'}"
                 for row in result.variants]
    lines.append(r"\paragraph{Variants.} Each variant is its architecture's binary with these arguments (besides the "
                 r"timeouts above): " + "; ".join(arguments) + ".")
    lines += [r"\par\endgroup", ""]
    return "\n".join(lines)
