"""The LaTeX vocabulary of the report: escaping, number formats, macros, table and figure primitives.

Nothing in paper/report.tex is a measured number; it quotes macros from
`generated/macros.tex` and inputs the generated tables. Three rules keep the
output buildable from any campaign, including a smoke run with few
configurations:

* every macro the report uses is always defined (a value, or a sentence saying
  the campaign has no data for it), never left undefined;
* a table or figure without data becomes a sentence saying so;
* every string that comes from data (CPU model, flags, ids) is escaped.

Rows carry marks (flagged, failed, unsupported, client-bound trials, impossible
wrk latencies), each explained under the table that uses it.

Besides the primitives, this module renders the two table families other report
modules cite by label (the source-000 pool-size tables and the architecture
comparison per pipeline depth); the files that hold them, the configurations
table and the sentences citing them are in archbench.studies.pool.tables, the
environment macros in archbench.studies.method.facts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import pandas as pd

from archbench.analyze import analysis, bottleneck
from archbench.analyze.analysis import CLIENT_BOUND_THRESHOLD
from archbench.analyze.values import count_text
from archbench.render.prose import Prose
from archbench.stats import MIN_TRIALS_FOR_INTERVAL, RANGE_METHOD, ConfidenceInterval

MACRO_PREFIX = "ab"
MARKS_TEMPLATE = "common/marks"  # the explanation of each table mark
MISSING = "--"  # how an undefined number prints in tables and macros
# A configuration's marks in tables, explained under each table that uses them.
FLAGGED_MARK = r"\textsuperscript{*}"
FAILED_MARK = r"\textsuperscript{\dag}"
UNSUPPORTED_MARK = r"\textsuperscript{u}"
CLIENT_BOUND_MARK = r"\textsuperscript{c}"
# A configuration whose trials the server did not bound (archbench.analyze.bottleneck) carries its class's mark.
BOTTLENECK_MARKS = {
    bottleneck.CLIENT: CLIENT_BOUND_MARK,
    bottleneck.BOTH: r"\textsuperscript{b}",
    bottleneck.WAIT: r"\textsuperscript{w}",
    bottleneck.NEITHER: r"\textsuperscript{n}",
}
NOT_MEASURED = "n/m"
LATENCY_MARK = r"\textsuperscript{l}"
# An interval cell of a configuration with under stats.MIN_TRIALS_FOR_INTERVAL trials holds their range.
RANGE_MARK = r"\textsuperscript{r}"
RANGE_NOTE = (
    RANGE_MARK + r" the range of the trials, not a confidence interval: too few trials (under "
    f"{MIN_TRIALS_FOR_INTERVAL}) for one."
)

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_NUMBER_WORDS = "Zero One Two Three Four Five Six Seven Eight Nine".split()


# --------------------------------------------------------------------------- primitives


def escape(text: Any) -> str:
    """Escape LaTeX specials in data-derived text (one pass, so replacements are not re-escaped)."""
    escaped = "".join(_LATEX_SPECIALS.get(char, char) for char in str(text))
    # "--" would typeset as an en dash (command-line options must stay two hyphens).
    return re.sub(r"-(?=-)", "-{}", escaped)


def escape_identifier(text: Any) -> str:
    """Escaped identifier (trial id, configuration, server entry) in typewriter type that may
    break after its separators, so long generated names never run into the margin."""
    escaped = escape(text)
    for separator in ("-{}", "/", "=", ",", ":"):
        escaped = escaped.replace(separator, separator + r"\allowbreak{}")
    escaped = re.sub(r"-(?!\{\})", r"-\\allowbreak{}", escaped)
    return r"\texttt{" + escaped + "}"


def escape_command(text: Any) -> str:
    """Escaped command line in typewriter type that may break after '/' (long paths, URLs)."""
    return r"\texttt{" + escape(text).replace("/", r"/\allowbreak{}") + "}"


def macro_name(*words: str) -> str:
    r"""`\ab` + CamelCase of the words; digits become words since macro names are letters only.

    >>> macro_name("pool", "best", "threads")
    '\\abPoolBestThreads'
    """
    parts = []
    for word in words:
        for token in re.split(r"[^A-Za-z0-9]+", word):
            if not token:
                continue
            token = "".join(_NUMBER_WORDS[int(c)] if c.isdigit() else c for c in token)
            parts.append(token[0].upper() + token[1:])
    name = MACRO_PREFIX + "".join(parts)
    if not re.fullmatch(r"[A-Za-z]+", name) or name == MACRO_PREFIX:
        raise ValueError(f"cannot build a macro name from {words!r}")
    return "\\" + name


# What counts as no value (None, NaN, NaT, pd.NA) is decided once, in analysis; tables and macros print
# it as MISSING.
is_missing = analysis.is_nan
# A rounded integer with thousands separators (source 000's r/s style), or MISSING: the analyze stage's count_text,
# under the name the report's modules know it by.
format_count = count_text


def format_decimal(value: Any, digits: int = 1) -> str:
    if is_missing(value):
        return MISSING
    return f"{float(value):,.{digits}f}"


def format_compact(value: Any, digits: int = 1) -> str:
    """Integers without decimals, other values with `digits`: 0, 12, 3.5."""
    if is_missing(value):
        return MISSING
    number = float(value)
    if number.is_integer():
        return f"{number:,.0f}"
    return f"{number:,.{digits}f}"


def format_interval(low: Any, high: Any, n: Any = None) -> str:
    """'93,735--97,262 ($n=5$)'; a dash range would be ambiguous beside thousands commas. With `n` under
    stats.MIN_TRIALS_FOR_INTERVAL the bounds are the trials' range (stats.rate_ci) and the text says so."""
    if is_missing(low) or is_missing(high):
        return MISSING
    return _bare_interval(low, high) + interval_note(n)


def table_interval(low: Any, high: Any, n: Any, formatter: Callable[[Any], str] = format_count) -> str:
    """An interval cell of a table that has an $n$ column: the bounds (each as `formatter` prints it), marked
    RANGE_MARK when they are the trials' range (`range_notes` says so under the table)."""
    if is_missing(low) or is_missing(high):
        return MISSING
    few = not is_missing(n) and float(n) < MIN_TRIALS_FOR_INTERVAL
    return _bare_interval(low, high, formatter) + (RANGE_MARK if few else "")


def range_notes(rows: pd.DataFrame, n_column: str = "n") -> list[str]:
    """[RANGE_NOTE] when a row's interval cell is a range (1 or 2 trials), else []."""
    if rows.empty or n_column not in rows:
        return []
    n = pd.to_numeric(rows[n_column], errors="coerce")
    return [RANGE_NOTE] if ((n >= 1) & (n < MIN_TRIALS_FOR_INTERVAL)).any() else []


def interval_note(n: Any) -> str:
    """What follows an interval: its n, and under stats.MIN_TRIALS_FOR_INTERVAL that it is the trials' range."""
    if n is None or is_missing(n):
        return ""
    trials = int(float(n))
    if trials < MIN_TRIALS_FOR_INTERVAL:
        return f" (range, $n={trials}$: too few trials)"
    return f" ($n={trials}$)"


def minus(text: str) -> str:
    """A leading hyphen as a typeset minus sign (in a range, a hyphen would read as its dash)."""
    return "$-$" + text[1:] if text.startswith("-") else text


def _bare_interval(low: Any, high: Any, formatter: Callable[[Any], str] = format_count) -> str:
    return f"{minus(formatter(low))}--{minus(formatter(high))}"


def format_significant(value: Any, digits: int = 3) -> str:
    """`digits` significant digits, thousands separators, no exponent: 0.115, 3.41, 18.8, 1,230."""
    if is_missing(value):
        return MISSING
    number = float(value)
    if number == 0:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(number)))))
    return f"{number:,.{decimals}f}"


def format_bound(value: Any, marks: Sequence[float] = (1.0,)) -> str:
    """An interval bound with two significant digits, more when two would put it on the other side of a mark (1, or
    a decision threshold such as 1 - delta) or on the mark itself (1.046 is 1.05, not 1.0): a table must not make an
    interval look as if it touched or crossed a threshold when it does not."""
    if is_missing(value):
        return MISSING
    number = float(value)
    for digits in (2, 3, 4):
        text = format_significant(number, digits)
        shown = float(text.replace(",", ""))
        if all(number == mark or (shown - mark) * (number - mark) > 0 for mark in marks):
            return text
    return text


def format_ms(seconds: Any) -> str:
    """A latency in seconds as milliseconds with three significant digits."""
    return MISSING if is_missing(seconds) else format_significant(float(seconds) * 1000.0, 3)


def format_range(low: Any, high: Any, formatter: Callable[[Any], str] = format_count) -> str:
    """ "6,000--7,500", or one value when both bounds print alike or the upper one is missing (a dash without the
    lower one)."""
    if is_missing(low):
        return MISSING
    first = formatter(low)
    last = first if is_missing(high) else formatter(high)
    return first if last == first else f"{first}--{last}"


def format_percent(fraction: Any, digits: int = 0) -> str:
    return MISSING if is_missing(fraction) else format_decimal(float(fraction) * 100.0, digits) + r"\,\%"


def format_list(values: Iterable[Any]) -> str:
    items = [format_compact(v) if isinstance(v, (int, float)) else escape(v) for v in values]
    if not items:
        return MISSING
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]


# --------------------------------------------------------------------------- macros


@dataclass(frozen=True)
class Macro:
    name: str  # with the backslash, e.g. \abCpuModel
    value: str  # LaTeX-ready (already escaped)
    comment: str = ""

    def render(self) -> str:
        line = f"\\newcommand{{{self.name}}}{{{self.value}}}"
        return f"{line} % {self.comment}" if self.comment else line


@dataclass
class MacroSet:
    """Macros in insertion order; a name defined twice is a bug in the generator."""

    macros: dict[str, Macro] = field(default_factory=dict)

    def add(self, name: str, value: str, comment: str = "") -> str:
        """Define `name` (written out, `\\abEchoScalingFinding`, so that searching for it finds where it is made)."""
        if not MACRO_NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a macro name \\{MACRO_PREFIX}CamelCase")
        if name in self.macros:
            raise ValueError(f"macro {name} defined twice")
        if "\n\n" in value:
            raise ValueError(f"macro {name}: a paragraph break cannot be inside a macro argument")
        self.macros[name] = Macro(name, value, comment)
        return name

    def names(self) -> set[str]:
        return set(self.macros)

    def render(self, header: str) -> str:
        lines = [f"% {line}" if line else "%" for line in header.splitlines()]
        lines += [macro.render() for macro in self.macros.values()]
        return "\n".join(lines) + "\n"


def render_macro_groups(header: str, groups: Sequence[tuple[str, MacroSet]]) -> str:
    """The macros of several sets, each group under a `% study: NAME` comment (a group without macros is left out),
    so the study that defines a macro is one search away."""
    lines = [f"% {line}" if line else "%" for line in header.splitlines()]
    for name, macros in groups:
        if macros.macros:
            lines.append(f"% study: {name}")
            lines += [macro.render() for macro in macros.macros.values()]
    return "\n".join(lines) + "\n"


MACRO_NAME = re.compile(r"\\" + MACRO_PREFIX + r"[A-Z][A-Za-z]*")
MACRO_USE = re.compile(r"\\(" + MACRO_PREFIX + r"[A-Z][A-Za-z]*)")


def macros_used(tex: str) -> set[str]:
    r"""Every \ab... control sequence in a TeX source (comments stripped)."""
    without_comments = re.sub(r"(?<!\\)%.*", "", tex)
    return {"\\" + name for name in MACRO_USE.findall(without_comments)}


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class Column:
    header: str
    align: str  # l, r, c


def _header(columns: Sequence[Column]) -> str:
    return " & ".join(c.header for c in columns) + r" \\"


def _body_lines(rows: Sequence[Sequence[str] | str], group_breaks: Iterable[int]) -> list[str]:
    """One line per row; a \\midrule before each row index in `group_breaks` (never before the first)."""
    breaks = set(group_breaks)
    lines = []
    for index, row in enumerate(rows):
        if index in breaks and index:
            lines.append(r"\midrule")
        lines.append(row if isinstance(row, str) else " & ".join(row) + r" \\")
    return lines


def group_starts(values: Iterable[Any]) -> list[int]:
    """The row indices where a run of equal values starts (0 included): the group_breaks of rows in groups."""
    values = list(values)
    return [index for index, value in enumerate(values) if index == 0 or value != values[index - 1]]


def render_tabular(columns: Sequence[Column], rows: Sequence[Sequence[str]], group_breaks: Iterable[int] = ()) -> str:
    """A booktabs tabular; `group_breaks` are row indices that get a \\midrule before them."""
    lines = [
        r"\begin{tabular}{" + "".join(c.align for c in columns) + "}",
        r"\toprule",
        _header(columns),
        r"\midrule",
        *_body_lines(rows, group_breaks),
        r"\bottomrule",
        r"\end{tabular}",
    ]
    return "\n".join(lines)


# A column whose alignment is X takes the width the others leave (xltabular, which LaTeX sizes itself):
# the one place a table's width is decided, so no table needs its columns estimated in Python.
FILL_COLUMN = r">{\raggedright\arraybackslash}X"


def render_longtable(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str] | str],
    caption: str,
    label: str,
    group_breaks: Iterable[int] = (),
    tabcolsep: str = "3pt",
    notes: str = "",
    size: str = r"\footnotesize",
) -> str:
    """The report's one long-table renderer: booktabs, breaking across pages with the header repeated, in `size`.

    A row is a sequence of cells, or a whole line (a str, e.g. a \\multicolumn group heading) used as it is.
    With a column aligned `FILL_COLUMN` the table is an xltabular of the text width and that column takes what
    the others leave; otherwise a longtable at its natural width. `notes` (may be empty) follow the table
    inside its font-size group; `group_breaks` as in render_tabular.
    """
    header = _header(columns)
    spec = "".join(c.align for c in columns)
    fills = any(c.align == FILL_COLUMN for c in columns)
    begin = (r"\begin{xltabular}{\linewidth}{" + spec + "}") if fills else (r"\begin{longtable}{" + spec + "}")
    end = r"\end{xltabular}" if fills else r"\end{longtable}"
    lines = [
        "{" + size + r"\setlength{\tabcolsep}{" + tabcolsep + r"}\setlength{\LTcapwidth}{\linewidth}",
        begin,
        r"\caption{" + caption + r"}\label{" + label + r"}\\",
        r"\toprule",
        header,
        r"\midrule",
        r"\endfirsthead",
        r"\toprule",
        header,
        r"\midrule",
        r"\endhead",
        r"\bottomrule",
        r"\endfoot",
        *_body_lines(rows, group_breaks),
        end,
        notes,
        "}",
    ]
    return "\n".join(lines) + "\n"


def adjusted_table(
    caption: str,
    label: str,
    tabular: str,
    notes: str = "",
    size: str = r"\footnotesize",
    shrink: bool = True,
    skip: bool = False,
) -> str:
    """A table float in `size` with `notes` (a notes_block, may be empty) under it. With `shrink` its columns are
    3pt apart and the tabular is shrunk only if its data make it wider than the text (long intervals, names);
    `skip` puts a small space between the caption and the table."""
    return "\n".join(
        [
            r"\begin{table}[htbp]",
            r"\centering",
            size,
            *([r"\setlength{\tabcolsep}{3pt}"] if shrink else []),
            f"\\caption{{{caption}}}",
            f"\\label{{{label}}}",
            *([r"\smallskip"] if skip else []),
            *([r"\begin{adjustbox}{max width=\linewidth}", tabular, r"\end{adjustbox}"] if shrink else [tabular]),
            *([notes] if notes else []),
            r"\end{table}",
        ]
    )


def row_marks(row: pd.Series, client_bound: bool = False, unsupported: bool = True) -> str:
    """Marks for a configuration's number: flagged, failed, unsupported (unless the table leaves that
    mark out) and (where the table explains it, `client_bound`) what bounded its trials when it was not the
    server (`bottleneck_of`)."""
    marks = ""
    if count_or_zero(row.get("n_flagged")) > 0:
        marks += FLAGGED_MARK
    if count_or_zero(row.get("n_failed")) > 0:
        marks += FAILED_MARK
    if unsupported and count_or_zero(row.get("n_unsupported")) > 0:
        marks += UNSUPPORTED_MARK
    if client_bound:
        marks += BOTTLENECK_MARKS.get(bottleneck_of(row), "")
    return marks


def bottleneck_of(row: pd.Series) -> str:
    """The most common class of a configuration's trials, a tie never the server (summary.csv `bottleneck`); for
    rows without it (the echo and latency studies' own tables), "client" when any trial was client-bound, else ""."""
    value = row.get("bottleneck")
    if isinstance(value, str) and value:
        return value
    return bottleneck.CLIENT if count_or_zero(row.get("n_client_bound")) > 0 else ""


def any_positive(rows: pd.DataFrame, column: str) -> bool:
    if column not in rows:
        return False
    return bool((pd.to_numeric(rows[column], errors="coerce").fillna(0) > 0).any())


@dataclass(frozen=True)
class MarkNotes:
    """The standard explanation of each table mark (paper/templates/common/marks.tex.j2)."""

    flagged: str
    failed: str
    unsupported: str
    client_bound: str
    both_bound: str
    wait_bound: str
    neither_bound: str
    latency: str
    not_measured: str


def mark_notes(prose: Prose) -> MarkNotes:
    marks = {
        "flagged_mark": FLAGGED_MARK,
        "failed_mark": FAILED_MARK,
        "unsupported_mark": UNSUPPORTED_MARK,
        "client_bound_mark": CLIENT_BOUND_MARK,
        "both_mark": BOTTLENECK_MARKS[bottleneck.BOTH],
        "wait_mark": BOTTLENECK_MARKS[bottleneck.WAIT],
        "neither_mark": BOTTLENECK_MARKS[bottleneck.NEITHER],
        "latency_mark": LATENCY_MARK,
        "not_measured": NOT_MEASURED,
        "threshold": f"{CLIENT_BOUND_THRESHOLD * 100:.0f}",
        "server_threshold": f"{bottleneck.SERVER_BOUND_THRESHOLD * 100:.0f}",
        "wait_share": f"{bottleneck.WAIT_BOUND_SHARE * 100:.0f}",
    }
    return MarkNotes(**{f.name: prose.sentence(MARKS_TEMPLATE, f.name, marks) for f in fields(MarkNotes)})


def notes_for_marks(
    rows: pd.DataFrame,
    flagged: str | None,
    failed: str | None,
    unsupported: str | None,
    client_bound: str | None = None,
    bottlenecks: dict[str, str] | None = None,
) -> list[str]:
    """The note of each mark (as row_marks puts them) that some row carries, in mark order: usually the
    `MarkNotes`; a table whose trials mean something else (echo, latency) passes its own wording; None: the
    table has no such mark. `bottlenecks` ({class: note}) explains the classes the rows carry (the client-bound
    one is `client_bound`)."""
    notes = []
    for column, note in (
        ("n_flagged", flagged),
        ("n_failed", failed),
        ("n_unsupported", unsupported),
    ):
        if note is not None and any_positive(rows, column):
            notes.append(note)
    carried = {bottleneck_of(row) for _, row in rows.iterrows()}
    by_class = {bottleneck.CLIENT: client_bound, **(bottlenecks or {})}
    for name in (bottleneck.CLIENT, bottleneck.BOTH, bottleneck.WAIT, bottleneck.NEITHER):
        if by_class.get(name) is not None and name in carried:
            notes.append(by_class[name])
    return notes


def study_marks(row: pd.Series) -> str:
    """row_marks for a study whose trials mean something else (echo, latency): it counts unsupported trials but
    does not mark them."""
    return row_marks(row, client_bound=True, unsupported=False)


def study_mark_notes(rows: pd.DataFrame, prose: Prose, template: str, threshold: str) -> list[str]:
    """notes_for_marks for the rows of such a study (marked study_marks): `template`'s own flagged_note and client_bound_note
    (client-bound beyond `threshold` percent) and the standard failed note."""
    return notes_for_marks(
        rows,
        flagged=prose.sentence(template, "flagged_note", mark=FLAGGED_MARK),
        failed=mark_notes(prose).failed,
        unsupported=None,
        client_bound=prose.sentence(template, "client_bound_note", mark=CLIENT_BOUND_MARK, threshold=threshold),
    )


def notes_block(notes: Sequence[str]) -> str:
    """Notes set small under a table, one per line; empty without notes."""
    if not notes:
        return ""
    return "\n".join([r"\par\smallskip", r"{\footnotesize\raggedright", r" \\ ".join(notes), r"\par}"])


def table_notes(rows: pd.DataFrame, notes: MarkNotes, extra: Sequence[str] = (), client_bound: bool = False) -> str:
    """`extra`, then the notes of the marks row_marks(row, client_bound) puts on these rows."""
    bottlenecks = (
        {bottleneck.BOTH: notes.both_bound, bottleneck.WAIT: notes.wait_bound, bottleneck.NEITHER: notes.neither_bound}
        if client_bound
        else None
    )
    marks = notes_for_marks(
        rows, notes.flagged, notes.failed, notes.unsupported, notes.client_bound if client_bound else None, bottlenecks
    )
    return notes_block([*extra, *marks, *range_notes(rows)])


def stacked(*lines: str) -> str:
    """A multi-line header cell (narrow columns keep the table inside the text width)."""
    return r"\begin{tabular}[b]{@{}c@{}}" + r" \\ ".join(lines) + r"\end{tabular}"


def ms_columns(*names: str) -> list[Column]:
    """Right-aligned latency columns, each headed by its name over "(ms)"."""
    return [Column(stacked(name, "(ms)"), "r") for name in names]


def stacked_column(*lines: str, align: str = "r") -> Column:
    """A column headed by `lines` one over the other, right-aligned unless `align` says otherwise."""
    return Column(stacked(*lines), align)


# What a column's cell holds for a row of the table's frame.
Cell = Callable[[pd.Series], str]


def cell_of(name: str, formatter: Callable[[Any], str] = format_count) -> Cell:
    """The cell of a column that shows the row's `name` as `formatter` prints it (a count unless told)."""
    return lambda row: formatter(row[name])


def ms_cells(*pairs: tuple[str, str]) -> list[tuple[Column, Cell]]:
    """ms_columns's columns with their cells: (header, the frame's column of seconds) shown in ms."""
    columns = ms_columns(*(header for header, _ in pairs))
    return [(column, cell_of(name, format_ms)) for column, (_, name) in zip(columns, pairs, strict=True)]


def tabulate(rows: pd.DataFrame, spec: Sequence[tuple[Column, Cell]]) -> tuple[list[Column], list[list[str]]]:
    """The columns of `spec` and each row's cells: a table written as (column, cell) pairs keeps every header
    beside what fills its column, rather than in a second list that must follow the same order."""
    return [column for column, _ in spec], [[cell(row) for _, cell in spec] for _, row in rows.iterrows()]


def flagged_failed(row: pd.Series) -> str:
    """ "2/1": the configuration's flagged and failed trials."""
    return f"{format_count(row['n_flagged'])}/{format_count(row['n_failed'])}"


def table_float(
    caption: str,
    label: str,
    columns: Sequence[Column],
    body: Sequence[Sequence[str]],
    breaks: Iterable[int] = (),
    notes: Sequence[str] = (),
) -> str:
    """A table float (adjusted_table) of a tabular with a rule before each of `breaks`, its `notes` under it."""
    return adjusted_table(caption, label, render_tabular(columns, body, breaks), notes_block(notes)) + "\n"


# A figure takes the text's width unless that makes it taller than this: two figures then share a page, and a tall
# figure does not leave a page to itself.
FIGURE_MAX_HEIGHT = r"0.5\textheight"


def figure_block(include_path: str | None, label: str, caption: str, missing_sentence: str) -> str:
    """A figure environment, or a sentence when the campaign cannot produce the figure."""
    if include_path is None:
        return r"\noindent " + missing_sentence + "\n"
    return "\n".join(
        [
            r"\begin{figure}[htbp]",
            r"\centering",
            f"\\includegraphics[width=\\linewidth,height={FIGURE_MAX_HEIGHT},keepaspectratio]{{{include_path}}}",
            f"\\caption{{{caption}}}",
            f"\\label{{{label}}}",
            r"\end{figure}",
            "",
        ]
    )


# --------------------------------------------------------------------------- helpers


def count_or_zero(value: Any) -> float:
    """A count from a summary cell; a missing one counts as none."""
    return 0.0 if is_missing(value) else float(value)


def interval_of(row: pd.Series) -> ConfidenceInterval:
    """The row's interval for a comparison between rows; undefined (NaN) when it is only the range of under
    stats.MIN_TRIALS_FOR_INTERVAL trials, which separates nothing."""
    low = row.get("ci95_low")
    high = row.get("ci95_high")
    method = row.get("ci95_method")
    n = row.get("n")
    if method == RANGE_METHOD or (not is_missing(n) and float(n) < MIN_TRIALS_FOR_INTERVAL):
        return ConfidenceInterval(float("nan"), float("nan"), 0.95, RANGE_METHOD)
    return ConfidenceInterval(
        float("nan") if is_missing(low) else float(low),
        float("nan") if is_missing(high) else float(high),
        0.95,
        "log-t" if is_missing(method) else str(method),
    )


def best_row(rows: pd.DataFrame) -> pd.Series | None:
    defined = rows.dropna(subset=["mean"])
    if defined.empty:
        return None
    return defined.loc[defined["mean"].idxmax()]


# --------------------------------------------------------------------------- environment and provenance


def campaign_provenance(meta: dict[str, Any], trial_records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The campaign's provenance, falling back to the first trial's when campaign.json lacks it."""
    provenance = dict(meta.get("provenance") or {})
    if not provenance:
        for record in trial_records:
            if record.get("provenance"):
                return dict(record["provenance"])
    return provenance


def provenance_differences(trial_records: Sequence[dict[str, Any]]) -> list[str]:
    """Provenance keys whose values differ between trials: the environment changed mid-campaign."""
    values: dict[str, set[str]] = {}
    for record in trial_records:
        for key, value in (record.get("provenance") or {}).items():
            values.setdefault(key, set()).add(repr(value))
    return sorted(key for key, seen in values.items() if len(seen) > 1)
