"""LaTeX generated from the processed tables: macros, tables, environment text.

Nothing in paper/report.tex is a measured number; it quotes macros from
`generated/macros.tex` and inputs the generated tables. Three rules keep the
output buildable from any campaign, including a smoke run with few
configurations:

* every macro the report uses is always defined (a value, or a sentence saying
  the campaign has no data for it), never left undefined;
* a table or figure without data becomes a sentence saying so;
* every string that comes from data (CPU model, flags, ids) is escaped.

The architecture comparison (one table per pipeline depth, nginx below a rule
as the reference) marks flagged, failed, unsupported and client-bound rows and
impossible wrk latencies, each mark explained under the table that uses it.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from archbench.analyze import analysis
from archbench.analyze.analysis import (
    CLIENT_BOUND_THRESHOLD,
    ORIGINAL_ARCHITECTURES,
    Comparison,
    Labeller,
    architecture_label,
    key_text,
    main_pool_series,
    parse_cpu_list,
)
from archbench.stats import ConfidenceInterval

MACRO_PREFIX = "ab"
MISSING = "--"  # how an undefined number prints in tables and macros
# A configuration's marks in tables, explained under each table that uses them.
FLAGGED_MARK = r"\textsuperscript{*}"
FAILED_MARK = r"\textsuperscript{\dag}"
FLAGGED_NOTE = (
    r"\textsuperscript{*}\,at least one measured trial was flagged by wrk (socket errors or non-2xx "
    r"responses); flagged trials are included in the statistics and counted in the summary's "
    r"\texttt{n\_flagged}."
)
FAILED_NOTE = (
    r"\textsuperscript{\dag}\,at least one measured trial failed; failed trials are excluded from the "
    r"statistics and counted in \texttt{n\_failed}."
)
UNSUPPORTED_MARK = r"\textsuperscript{u}"
CLIENT_BOUND_MARK = r"\textsuperscript{c}"
NOT_MEASURED = "n/m"
UNSUPPORTED_NOTE = (
    r"\textsuperscript{u}\,at least one measured trial was unsupported (the server reported a missing kernel "
    r"feature and exited before serving); unsupported trials are counted in the summary's "
    r"\texttt{n\_unsupported}, never averaged and never counted as failed."
)
CLIENT_BOUND_NOTE = (
    r"\textsuperscript{c}\,client-bound: in at least one measured trial wrk's CPU was at least "
    + f"{CLIENT_BOUND_THRESHOLD * 100:.0f}"
    + r"\,\% busy, so the client, not the server, may have set that rate (counted in the summary's "
    r"\texttt{n\_client\_bound})."
)
LATENCY_MARK = r"\textsuperscript{l}"
LATENCY_NOTE = (
    r"\textsuperscript{l}\,in at least one trial wrk printed an impossible latency percentile (zero, or below a "
    r"lower percentile; a known wrk fault~\cite{wrkzeropercentiles}); such values are left out of the latency "
    r"means, which are over the remaining trials (-- where none remain)."
)
NOT_MEASURED_NOTE = (
    NOT_MEASURED + r": not measured; nginx does not report the connections it answered, so its starved "
    r"connections are unknown (not zero)."
)
THREADS_NOTE = (
    r"$N$ counts worker threads only; the accepting (and, with request dispatch, polling) thread is one "
    r"more. Source~000 counted that thread too: its ``number of threads'' is $N+1$."
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
_NUMBER_WORDS = (
    "Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine",
)


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


def format_count(value: Any) -> str:
    """A rounded integer with thousands separators (source 000's r/s style), or a dash."""
    if is_missing(value):
        return MISSING
    return f"{float(value):,.0f}"


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


def format_interval(low: Any, high: Any) -> str:
    """'93,735--97,262'; a dash range would be ambiguous beside thousands commas."""
    if is_missing(low) or is_missing(high):
        return MISSING

    def bound(value: Any) -> str:
        text = format_count(value)
        # A t interval of a small sample can reach below zero; a hyphen there would read as a range.
        return "$-$" + text[1:] if text.startswith("-") else text

    return f"{bound(low)}--{bound(high)}"


def format_significant(value: Any, digits: int = 3) -> str:
    """`digits` significant digits, thousands separators, no exponent: 0.115, 3.41, 18.8, 1,230."""
    if is_missing(value):
        return MISSING
    number = float(value)
    if number == 0:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(number)))))
    return f"{number:,.{decimals}f}"


def format_ms(seconds: Any) -> str:
    """A latency in seconds as milliseconds with three significant digits."""
    return MISSING if is_missing(seconds) else format_significant(float(seconds) * 1000.0, 3)


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

    def add(self, words: str | Sequence[str], value: str, comment: str = "") -> str:
        name = macro_name(*([words] if isinstance(words, str) else words))
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


def render_longtable(columns: Sequence[Column], rows: Sequence[Sequence[str] | str], caption: str, label: str,
                     group_breaks: Iterable[int] = (), tabcolsep: str = "3pt", notes: str = "",
                     size: str = r"\footnotesize") -> str:
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
        r"\toprule", header, r"\midrule", r"\endfirsthead",
        r"\toprule", header, r"\midrule", r"\endhead",
        r"\bottomrule", r"\endfoot",
        *_body_lines(rows, group_breaks),
        end,
        notes,
        "}",
    ]
    return "\n".join(lines) + "\n"


def adjusted_table(caption: str, label: str, tabular: str, notes: str = "") -> str:
    """A footnote-size table float whose tabular is shrunk only if its data make it wider than the text
    (long intervals, names), with `notes` (a notes_block, may be empty) under it."""
    return "\n".join(
        [
            r"\begin{table}[htbp]",
            r"\centering",
            r"\footnotesize",
            r"\setlength{\tabcolsep}{3pt}",
            f"\\caption{{{caption}}}",
            f"\\label{{{label}}}",
            r"\begin{adjustbox}{max width=\linewidth}",
            tabular,
            r"\end{adjustbox}",
            notes,
            r"\end{table}",
        ]
    )


def row_marks(row: pd.Series, client_bound: bool = False, unsupported: bool = True) -> str:
    """Marks for a configuration's number: flagged, failed, unsupported (unless the table leaves that
    mark out) and (where the table explains it) client-bound trials."""
    marks = ""
    if _count(row.get("n_flagged")) > 0:
        marks += FLAGGED_MARK
    if _count(row.get("n_failed")) > 0:
        marks += FAILED_MARK
    if unsupported and _count(row.get("n_unsupported")) > 0:
        marks += UNSUPPORTED_MARK
    if client_bound and _count(row.get("n_client_bound")) > 0:
        marks += CLIENT_BOUND_MARK
    return marks


def _any_positive(rows: pd.DataFrame, column: str) -> bool:
    if column not in rows:
        return False
    return bool((pd.to_numeric(rows[column], errors="coerce").fillna(0) > 0).any())


def notes_for_marks(
    rows: pd.DataFrame,
    flagged: str | None = FLAGGED_NOTE,
    failed: str | None = FAILED_NOTE,
    unsupported: str | None = UNSUPPORTED_NOTE,
    client_bound: str | None = None,
) -> list[str]:
    """The note of each mark (as row_marks puts them) that some row carries, in mark order. A table whose
    trials mean something else (echo, latency) passes its own wording; None: the table has no such mark."""
    notes = []
    for column, note in (("n_flagged", flagged), ("n_failed", failed), ("n_unsupported", unsupported),
                         ("n_client_bound", client_bound)):
        if note is not None and _any_positive(rows, column):
            notes.append(note)
    return notes


def notes_block(notes: Sequence[str]) -> str:
    """Notes set small under a table, one per line; empty without notes."""
    if not notes:
        return ""
    return "\n".join([r"\par\smallskip", r"{\footnotesize\raggedright", r" \\ ".join(notes), r"\par}"])


def table_notes(rows: pd.DataFrame, extra: Sequence[str] = (), client_bound: bool = False) -> str:
    """`extra`, then the notes of the marks row_marks(row, client_bound) puts on these rows."""
    marks = notes_for_marks(rows, client_bound=CLIENT_BOUND_NOTE if client_bound else None)
    return notes_block([*extra, *marks])


def stacked(*lines: str) -> str:
    """A multi-line header cell (narrow columns keep the table inside the text width)."""
    return r"\begin{tabular}[b]{@{}c@{}}" + r" \\ ".join(lines) + r"\end{tabular}"


def pool_size_table(series_rows: pd.DataFrame, label: str, caption: str) -> str:
    """Source 000's table (N, sample mean, sample sd) plus n and the 95% CI of the mean.

    Rows are sorted by connections, then N. A Connections column appears when
    the table mixes connection counts; the N column only for the thread pool,
    whose pool size is the swept parameter (the other architectures have none).
    """
    rows = series_rows.sort_values(["connections", "threads"], kind="stable")
    show_connections = rows["connections"].nunique() > 1 or not _is_pool(rows)
    show_threads = _is_pool(rows)
    columns = []
    if show_connections:
        columns.append(Column(stacked("Connections", "(wrk \\texttt{-c})"), "r"))
    if show_threads:
        columns.append(Column(stacked("Number of", "threads $N$"), "r"))
    columns += [
        Column("$n$", "r"),
        Column(stacked("Sample mean", "(r/s)"), "r"),
        Column(stacked("Sample standard", "deviation (r/s)"), "r"),
        Column(stacked(r"95\,\% CI of", "the mean (r/s)"), "r"),
    ]
    body = []
    breaks = []
    previous_connections = None
    for index, (_, row) in enumerate(rows.iterrows()):
        marks = row_marks(row, client_bound=True)
        cells = []
        if show_connections:
            if show_threads and row["connections"] != previous_connections:
                breaks.append(index)
            cells.append(format_count(row["connections"]) + ("" if show_threads else marks))
            previous_connections = row["connections"]
        if show_threads:
            cells.append(format_count(row["threads"]) + marks)
        cells += [
            format_count(row["n"]),
            format_count(row["mean"]),
            format_count(row["sd"]),
            format_interval(row["ci95_low"], row["ci95_high"]),
        ]
        body.append(cells)
    return "\n".join(
        [
            r"\begin{table}[htbp]",
            r"\centering",
            r"\small",
            f"\\caption{{{caption}}}",
            f"\\label{{{label}}}",
            render_tabular(columns, body, breaks),
            table_notes(rows, client_bound=True),
            r"\end{table}",
        ]
    )


def _is_pool(rows: pd.DataFrame) -> bool:
    return bool((rows["architecture"] == "thread_pool").all())


ARCHITECTURE_THREADS_NOTE = {
    "blocking": "The blocking server has one thread, which accepts and serves one connection at a time.",
    "thread_per_conn": "The thread-per-connection server starts one thread per accepted connection besides the accepting thread.",
}


def pool_size_table_blocks(summary: pd.DataFrame) -> list[tuple[str, str]]:
    """(label, table) per architecture, dispatch mode and pipeline depth, in source 000's form.

    Only the designs of source 000's comparison (blocking, thread per connection, thread pool);
    the event-driven architectures and nginx are in the architecture comparison.
    """
    if summary.empty:
        return []
    summary = summary[summary["architecture"].isin(ORIGINAL_ARCHITECTURES)]
    if summary.empty:
        return []
    blocks = []
    group_fields = [f for f in ("architecture", "dispatch", "handoff", "pipeline") if f in summary]
    several_depths = "pipeline" in summary and summary["pipeline"].map(key_text).nunique() > 1
    keyed = summary.assign(_key=[tuple(key_text(r[f]) for f in group_fields) for _, r in summary.iterrows()])
    for key, rows in keyed.groupby("_key", sort=False):
        rows = rows.drop(columns="_key")
        first = rows.iloc[0]
        depth = key_text(first.get("pipeline")) or "1"
        name = architecture_label(first["architecture"], first.get("dispatch"), first.get("handoff"))
        depth_text = f" at pipeline depth {depth}" if several_depths else ""
        connections = sorted(rows["connections"].dropna().unique())
        conn_text = (
            f"{format_count(connections[0])} wrk connections"
            if len(connections) == 1
            else "each wrk connection count"
        )
        statistics = (
            r"sample mean and sample standard deviation over the measured trials (as source~000 reports them) "
            r"with $n$ and the Student-$t$ 95\,\% confidence interval of the mean."
        )
        if _is_pool(rows):
            caption = (
                f"Throughput of the {escape(name)} server{depth_text} by number of threads, {conn_text}: "
                f"{statistics} {THREADS_NOTE}"
            )
        else:
            note = ARCHITECTURE_THREADS_NOTE.get(str(first["architecture"]), "")
            caption = f"Throughput of the {escape(name)} server{depth_text} by wrk connection count: {statistics} {note}"
        # Depth 1 keeps the label it had before pipelining existed.
        parts = [k for k in key[:-1] if k] if "pipeline" in group_fields else [k for k in key if k]
        label = "tab:threads-" + "-".join(parts).replace("_", "-") + ("" if depth == "1" else f"-p{depth}")
        blocks.append((label, pool_size_table(rows, label, caption.strip())))
    return blocks


def pool_size_tables(summary: pd.DataFrame) -> str:
    blocks = pool_size_table_blocks(summary)
    if not blocks:
        return (
            r"\noindent The campaign has no measured configuration of the blocking, thread-per-connection or "
            r"thread-pool server, so there is no throughput table in source~000's form." + "\n"
        )
    return "\n\n".join(tex for _, tex in blocks) + "\n"


def reference_macros(
    macros: MacroSet, table_labels: Sequence[str], figures_present: dict[str, bool], has_configurations: bool = True
) -> None:
    """Sentences that cite tables and figures, so the text never \\ref's one the campaign could not produce.

    A missing figure's own file already says why it is missing, so its sentence here is empty.
    """
    if not table_labels:
        tables = (
            "The campaign has no measured configuration of the blocking, thread-per-connection or thread-pool "
            "server, so there is no per-architecture table."
        )
    elif len(table_labels) == 1:
        tables = f"Table~\\ref{{{table_labels[0]}}} gives the statistics in source~000's form."
    else:
        split_by_depth = any(re.search(r"-p\d+$", label) for label in table_labels)
        per = "architecture, dispatch mode and pipeline depth" if split_by_depth else "architecture and dispatch mode"
        tables = (
            f"Tables~\\ref{{{table_labels[0]}}}--\\ref{{{table_labels[-1]}}} give the statistics in source~000's "
            f"form, one table per {per}."
        )
    macros.add("thread tables sentence", tables, "cites the per-architecture tables")
    macros.add(
        "configurations table sentence",
        "Table~\\ref{tab:configurations} lists every configuration with its starvation evidence."
        if has_configurations
        else "",
        "cites the table of all configurations (empty without one)",
    )
    macros.add(
        "pool figure sentence",
        "Figure~\\ref{fig:pool-size} plots the thread-pool sweeps with their confidence intervals."
        if figures_present.get("pool_size")
        else "",
        "cites the pool-size figure (empty without one)",
    )
    macros.add(
        "connections figure sentence",
        "Figure~\\ref{fig:connections} plots throughput and starved connections against the number of connections."
        if figures_present.get("connections")
        else "",
        "cites the connection-count figure (empty without one)",
    )


N_NOTE = (
    r"$N$ is the pool's worker threads, the event-loop threads of reactor, reuseport and io\_uring, or the "
    r"worker processes of prefork and nginx; the single-loop and per-connection designs have none (--)."
)


def short_family(row: pd.Series, labels: Labeller) -> str:
    """The family name short enough for a narrow table column."""
    architecture = key_text(row.get("architecture"))
    if architecture in ("thread_pool", "thread_per_conn") and not _count(row.get("max_threads")):
        return architecture_label(architecture, row.get("dispatch"), row.get("handoff"), short=True)
    return labels.family(row)


def starved_cell(row: pd.Series) -> str:
    """Mean starved connections; n/m where the server does not report what it answered (nginx)."""
    value = row.get("starved_connections_mean")
    if is_missing(value) and _count(row.get("n")) > 0:
        return NOT_MEASURED
    return format_compact(value)


def architecture_reference_macros(
    macros: MacroSet, table_labels: Sequence[str], figures_present: dict[str, bool]
) -> None:
    """Sentences citing the comparison tables and figures that exist (empty or a plain statement otherwise)."""
    if not table_labels:
        tables = ""  # tables-architectures.tex itself says, per depth, why there is no table
    elif len(table_labels) == 1:
        tables = f"Table~\\ref{{{table_labels[0]}}} compares the architectures."
    else:
        refs = ", ".join(f"\\ref{{{label}}}" for label in table_labels[:-1]) + f" and~\\ref{{{table_labels[-1]}}}"
        tables = f"Tables~{refs} compare the architectures, one table per pipeline depth."
    macros.add("architecture tables sentence", tables, "cites the comparison tables (empty without one)")
    sentences = []
    if figures_present.get("architectures_throughput"):
        sentences.append("Figure~\\ref{fig:architectures-throughput} shows the same means with their intervals.")
    if figures_present.get("architectures_connections"):
        sentences.append(
            "Figure~\\ref{fig:architectures-connections} follows each architecture over the number of connections."
        )
    if figures_present.get("architectures_threads"):
        sentences.append(
            "Figure~\\ref{fig:architectures-threads} shows how the multi-loop designs scale with threads or workers."
        )
    macros.add("architecture figures sentence", " ".join(sentences), "cites the comparison figures (may be empty)")
    macros.add(
        "architecture cpu figure sentence",
        "Figure~\\ref{fig:architectures-cpu} plots the server CPU time per request."
        if figures_present.get("architectures_cpu")
        else "",
        "cites the CPU-per-request figure (may be empty)",
    )


def configurations_table(summary: pd.DataFrame) -> str:
    """Every configuration with the starvation evidence next to its throughput.

    A longtable: a full campaign has dozens of configurations and must be able to break across pages.
    """
    if summary.empty:
        return r"\noindent The campaign has no configuration with a measured trial." + "\n"
    labels = Labeller(summary)
    several_depths = "pipeline" in summary and summary["pipeline"].map(key_text).nunique() > 1
    any_unsupported = _any_positive(summary, "n_unsupported")
    columns = [Column("Architecture", "l")]
    if several_depths:
        columns.append(Column("$D$", "r"))
    columns += [
        Column("$N$", "r"),
        Column(stacked("Conn-", "ections"), "r"),
        Column("$n$", "r"),
        Column(stacked("Mean", "(r/s)"), "r"),
        Column(stacked("SD", "(r/s)"), "r"),
        Column(stacked("wrk", "timeouts"), "r"),
        Column(stacked("Starved", "conn."), "r"),
        Column(stacked("Server CPU", r"(\textmu s/req.)"), "r"),
        Column(stacked("wrk", "CPU"), "r"),
        Column(stacked("Flagged/", "failed/unsup." if any_unsupported else "failed"), "r"),
    ]
    body = []
    breaks = []
    previous = None
    for index, (_, row) in enumerate(summary.iterrows()):
        name = short_family(row, labels)
        if name != previous:
            breaks.append(index)
            previous = name
        counts = f"{format_count(row['n_flagged'])}/{format_count(row['n_failed'])}"
        if any_unsupported:
            counts += f"/{format_count(row.get('n_unsupported'))}"
        cells = [escape(name)]
        if several_depths:
            cells.append(escape(key_text(row.get("pipeline")) or "1"))
        cells += [
            format_count(row["threads"]),
            format_count(row["connections"]),
            format_count(row["n"]),
            format_count(row["mean"]) + row_marks(row, client_bound=True),
            format_count(row["sd"]),
            format_compact(row["timeouts_mean"]),
            starved_cell(row),
            format_decimal(row["server_cpu_us_per_request"], 1),
            format_percent(row.get("load_cpu_utilisation_mean")),
            counts,
        ]
        body.append(cells)
    depth_note = r"$D$ is wrk's pipeline depth (requests per write). " if several_depths else ""
    caption = (
        r"All configurations: throughput (mean and sample standard deviation), wrk's timeouts, "
        r"starved connections (configured connections minus the connections the server answered at least "
        r"once), server CPU time per completed request (user + system CPU seconds of the server divided "
        r"by wrk's completed requests) and the busy fraction of wrk's CPU, each a mean per trial over the "
        r"measured trials with status ok. Flagged/failed"
        + ("/unsupported" if any_unsupported else "")
        + r" count measured trials. "
        + depth_note
        + N_NOTE
        + " "
        + THREADS_NOTE
    )
    extra = [NOT_MEASURED_NOTE] if any(starved_cell(r) == NOT_MEASURED for _, r in summary.iterrows()) else []
    return render_longtable(columns, body, caption, "tab:configurations", breaks, tabcolsep="2.5pt",
                            notes=table_notes(summary, extra, client_bound=True))


# --------------------------------------------------------------------------- architecture comparison


def comparison_label(one: Comparison) -> str:
    return f"tab:architectures-p{one.pipeline}"


def point_text(one: Comparison) -> str:
    """"50 wrk connections, one wrk thread, 1-s trials" for a caption."""
    point = one.point
    parts = [f"{format_count(point.get('connections'))} wrk connections"]
    if "load_threads" in point:
        threads = int(float(point["load_threads"]))
        parts.append(f"{threads} wrk thread{'s' if threads != 1 else ''}")
    if "duration_s" in point:
        parts.append(f"{format_compact(point['duration_s'])}-s trials")
    if key_text(point.get("response")) not in ("", "test"):
        parts.append(f"response {escape(key_text(point['response']))}")
    return ", ".join(parts)


def comparison_row_cells(row: pd.Series, labels: Labeller, reference: bool = False) -> list[str]:
    name = escape(labels.variant(row)) + (" (reference)" if reference else "")
    unsupported_only = _count(row.get("n")) == 0 and _count(row.get("n_unsupported")) > 0
    mean = "unsupported" if unsupported_only else format_count(row["mean"])
    errors = "/".join(
        [format_compact(row.get("errors_mean")), format_compact(row.get("timeouts_mean")), starved_cell(row)]
    )
    latency_mark = LATENCY_MARK if _count(row.get("n_latency_invalid")) > 0 else ""
    return [
        name,
        format_count(row["n"]),
        mean + row_marks(row, client_bound=True),
        format_interval(row["ci95_low"], row["ci95_high"]),
        format_decimal(row.get("ratio_to_nginx"), 2),
        format_ms(row.get("latency_p50_s_mean")) + latency_mark,
        format_ms(row.get("latency_p99_s_mean")) + latency_mark,
        format_decimal(row.get("server_cpu_us_per_request"), 2),
        errors,
        format_percent(row.get("load_cpu_utilisation_mean")),
    ]


def comparison_table(one: Comparison, labels: Labeller) -> str:
    """Every architecture at one pipeline depth and point, nginx below a rule as the reference."""
    columns = [
        Column("Server", r">{\raggedright\arraybackslash}p{3.1cm}"),
        Column("$n$", "r"),
        Column(stacked("Mean", "(r/s)"), "r"),
        Column(stacked(r"95\,\% CI of", "the mean (r/s)"), "r"),
        Column(stacked("Ratio to", "nginx"), "r"),
        Column(stacked("p50", "(ms)"), "r"),
        Column(stacked("p99", "(ms)"), "r"),
        Column(stacked("Server CPU", r"(\textmu s/req.)"), "r"),
        Column(stacked("Errors/time-", "outs/starved"), "r"),
        Column(stacked("wrk", "CPU"), "r"),
    ]
    body = [comparison_row_cells(row, labels) for _, row in one.rows.iterrows()]
    breaks = []
    if one.reference is not None:
        breaks.append(len(body))
        body.append(comparison_row_cells(one.reference, labels, reference=True))
    reference_text = (
        "nginx (below the rule, its fastest worker count here) is the reference of the ratio column"
        if one.reference is not None
        else "nginx was not measured at this depth and point, so there is no ratio to it"
    )
    caption = (
        f"Architecture comparison at pipeline depth {one.pipeline} ({point_text(one)}): throughput mean over "
        r"the measured trials with status ok, its Student-$t$ 95\,\% confidence interval, the ratio of means "
        f"to nginx, wrk's median and 99th-percentile latency (means over trials), server CPU time per request, "
        r"socket errors and non-2xx responses / wrk timeouts / starved connections (means per trial) and the "
        f"busy fraction of wrk's CPU. {reference_text}. An architecture measured at several thread or worker "
        "counts appears with its fastest count."
    )
    all_rows = one.all_rows
    extra = [NOT_MEASURED_NOTE] if any(starved_cell(r) == NOT_MEASURED for _, r in all_rows.iterrows()) else []
    if _any_positive(all_rows, "n_latency_invalid"):
        extra.append(LATENCY_NOTE)
    return adjusted_table(caption, comparison_label(one), render_tabular(columns, body, breaks),
                          table_notes(all_rows, extra, client_bound=True))


def comparison_table_blocks(summary: pd.DataFrame) -> list[tuple[str, str]]:
    """(label, table) per pipeline depth at which two or more servers can be compared."""
    labels = Labeller(summary) if not summary.empty else None
    blocks = []
    for one in analysis.comparisons(summary):
        if len(one.all_rows) >= 2:
            blocks.append((comparison_label(one), comparison_table(one, labels)))
    return blocks


def comparison_tables(summary: pd.DataFrame) -> str:
    """The comparison tables, or a sentence per depth saying why there is none."""
    labels = Labeller(summary) if not summary.empty else None
    parts = []
    for one in analysis.comparisons(summary):
        if len(one.all_rows) >= 2:
            parts.append(comparison_table(one, labels))
        else:
            only = one.all_rows.iloc[0]
            parts.append(
                f"\\noindent At pipeline depth {one.pipeline} the campaign measured only one server "
                f"({escape(labels.variant(only))}), so there is no comparison table for that depth; "
                r"Table~\ref{tab:configurations} lists it." + "\n"
            )
    if not parts:
        return r"\noindent The campaign has no measured configuration, so there is no architecture comparison." + "\n"
    return "\n\n".join(parts) + "\n"


# --------------------------------------------------------------------------- figures


def figure_block(include_path: str | None, label: str, caption: str, missing_sentence: str) -> str:
    """A figure environment, or a sentence when the campaign cannot produce the figure."""
    if include_path is None:
        return r"\noindent " + missing_sentence + "\n"
    return "\n".join(
        [
            r"\begin{figure}[htbp]",
            r"\centering",
            f"\\includegraphics[width=\\linewidth]{{{include_path}}}",
            f"\\caption{{{caption}}}",
            f"\\label{{{label}}}",
            r"\end{figure}",
            "",
        ]
    )


# --------------------------------------------------------------------------- helpers


def _count(value: Any) -> float:
    return 0.0 if is_missing(value) else float(value)


def interval_of(row: pd.Series) -> ConfidenceInterval:
    low = row.get("ci95_low")
    high = row.get("ci95_high")
    return ConfidenceInterval(
        float("nan") if is_missing(low) else float(low),
        float("nan") if is_missing(high) else float(high),
        0.95,
        "student-t",
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


def _first_line(value: Any) -> str:
    text = "" if is_missing(value) else str(value)
    return text.strip().splitlines()[0] if text.strip() else ""


def _or_missing(text: str) -> str:
    return text if text else "unknown"


def _load_command(record: dict[str, Any]) -> str:
    """The exact load command of one trial, with the ephemeral port replaced by PORT."""
    argv = [str(a) for a in (record.get("load") or {}).get("argv") or []]
    argv = [re.sub(r"(://[^/:]+):\d+", r"\1:PORT", a) for a in argv]
    return " ".join(argv)


def _server_command(record: dict[str, Any]) -> str:
    return " ".join(str(a) for a in (record.get("server") or {}).get("argv") or [])


def _representative_record(trial_records: Sequence[dict[str, Any]], summary: pd.DataFrame) -> dict[str, Any] | None:
    """A measured ok trial of the main pool-size series (or any ok trial) to quote commands from."""
    main = main_pool_series(summary)
    preferred = set(main.rows["config_id"]) if main else set()
    candidates = [r for r in trial_records if r.get("status") == "ok" and not r.get("warmup")]
    for record in candidates:
        if record.get("config_id") in preferred:
            return record
    return candidates[0] if candidates else (trial_records[0] if trial_records else None)


def _pipeline_of(record: dict[str, Any] | None) -> int:
    value = ((record or {}).get("config") or {}).get("pipeline")
    try:
        return int(value) if value is not None else analysis.DEFAULT_PIPELINE
    except (TypeError, ValueError):
        return analysis.DEFAULT_PIPELINE


def _first_record(trial_records: Sequence[dict[str, Any]], wanted) -> dict[str, Any] | None:
    """The first measured ok trial matching `wanted` (any matching trial if none is ok)."""
    matching = [r for r in trial_records if wanted(r)]
    ok = [r for r in matching if r.get("status") == "ok" and not r.get("warmup")]
    return (ok or matching or [None])[0]


def _interleaving(trials: pd.DataFrame) -> tuple[int, int]:
    """(configuration changes between consecutive measured trials, possible changes)."""
    measured = trials[~trials["warmup"].astype(bool)].sort_values("order_index", kind="stable")
    ids = list(measured["config_id"])
    return sum(1 for a, b in zip(ids, ids[1:]) if a != b), max(0, len(ids) - 1)


def environment_macros(
    macros: MacroSet,
    meta: dict[str, Any],
    trial_records: Sequence[dict[str, Any]],
    trials: pd.DataFrame,
    summary: pd.DataFrame,
) -> None:
    """Campaign, machine, build and method parameters as macros (all escaped)."""
    provenance = campaign_provenance(meta, trial_records)
    tools = provenance.get("tools") or {}
    parameters = meta.get("parameters") or {}
    measured = trials[~trials["warmup"].astype(bool)] if not trials.empty else trials
    warmups = trials[trials["warmup"].astype(bool)] if not trials.empty else trials

    macros.add("campaign", escape(meta.get("campaign", "")), "campaign name")
    macros.add("profile", escape(_or_missing(str(meta.get("profile") or ""))), "campaign profile")
    macros.add("seed", escape(meta.get("seed", "unknown")), "seed of the randomised trial order")
    macros.add("created date", escape(str(meta.get("created_at") or "unknown")[:10]), "campaign creation date (UTC)")
    commit = str(provenance.get("git_commit") or "")
    macros.add("git commit", r"\texttt{" + escape(commit[:12] or "unknown") + "}", "git commit of the measured code")
    dirty = provenance.get("git_dirty")
    macros.add(
        "git state",
        "unknown" if dirty is None else ("with uncommitted changes" if dirty else "clean"),
        "working tree state at measurement time",
    )
    macros.add("cpu model", escape(_or_missing(_first_line(provenance.get("cpu_model")))), "CPU model")
    macros.add("cpu count", escape(provenance.get("cpu_count", "unknown")), "logical CPUs")
    memory = provenance.get("memory_bytes")
    macros.add(
        "memory", format_decimal(memory / 2**30, 1) + r"\,GiB" if memory else "unknown", "main memory"
    )
    macros.add("kernel", escape(_or_missing(str(provenance.get("kernel") or ""))), "kernel release")
    macros.add("os", escape(_or_missing(str(provenance.get("os") or ""))), "operating system")
    macros.add("hostname", escape(_or_missing(str(provenance.get("hostname") or ""))), "host name")
    macros.add("compiler", escape(_or_missing(str(provenance.get("compiler") or ""))), "C compiler")
    macros.add("c flags", r"\texttt{" + escape(_or_missing(str(provenance.get("c_flags") or ""))) + "}", "C flags")
    macros.add("build type", escape(_or_missing(str(provenance.get("build_type") or ""))), "CMake build type")
    macros.add("wrk version", escape(_or_missing(_first_line(tools.get("wrk")))), "wrk -v, first line")
    macros.add("python version", escape(_or_missing(str(provenance.get("python") or ""))), "Python")

    def unique_text(column: str) -> list[str]:
        if trials.empty or column not in trials:
            return []
        return sorted({key_text(v) for v in trials[column] if not is_missing(v) and key_text(v)})

    macros.add("server cpus", escape(" / ".join(unique_text("server_cpus")) or "unknown"), "taskset CPU list of the server")
    macros.add("load cpus", escape(" / ".join(unique_text("load_cpus")) or "unknown"), "taskset CPU list of wrk")

    def unique_numbers(frame: pd.DataFrame, column: str) -> list[float]:
        if frame.empty or column not in frame:
            return []
        return sorted({float(v) for v in frame[column] if not is_missing(v)})

    macros.add("durations", format_list(unique_numbers(trials, "duration_s")), "configured wrk durations, s")
    macros.add("load threads", format_list(unique_numbers(trials, "load_threads")), "wrk -t values")
    macros.add("connection counts", format_list(unique_numbers(trials, "connections")), "wrk -c values")
    pool = summary[summary["architecture"] == "thread_pool"] if not summary.empty else summary
    macros.add("pool sizes", format_list(unique_numbers(pool, "threads")), "worker threads N of the thread pool")
    labels = Labeller(summary) if not summary.empty else None
    families = [] if summary.empty else list(dict.fromkeys(labels.family(r) for _, r in summary.iterrows()))
    macros.add("architectures", format_list(families), "architecture variants measured")
    macros.add(
        "architecture count",
        format_count(0 if summary.empty else summary["architecture"].nunique()),
        "architectures measured (nginx included)",
    )
    macros.add(
        "pipeline depths", format_list(analysis.pipeline_depths(summary)), "wrk pipeline depths D (requests per write)"
    )
    repetitions = parameters.get("repetitions")
    if repetitions is None and not measured.empty:
        repetitions = int(pd.to_numeric(measured["repetition"], errors="coerce").max())
    macros.add("repetitions", escape(repetitions if repetitions is not None else "unknown"), "measured trials per configuration")
    per_config_warmups = warmups.groupby("config_id").size() if not warmups.empty else pd.Series(dtype=int)
    macros.add(
        "warmups per configuration",
        format_list(sorted(set(per_config_warmups))) if len(per_config_warmups) else "0",
        "warm-up trials per configuration",
    )

    plan = list(meta.get("plan") or [])
    status = measured["status"] if not measured.empty else pd.Series(dtype=str)
    counts = {
        "configuration count": (len(summary), "configurations"),
        "planned trial count": (len(plan), "trials in the plan, warm-ups included"),
        "trial count": (len(trials), "trial records, warm-ups included"),
        "measured trial count": (len(measured), "measured (non-warm-up) trial records"),
        "warmup trial count": (len(warmups), "warm-up trial records"),
        "ok trial count": (int((status == "ok").sum()), "measured trials with status ok"),
        "failed trial count": (int((status == "failed").sum()), "measured trials that failed"),
        "unsupported trial count": (int((status == "unsupported").sum()), "measured trials unsupported"),
        "flagged trial count": (
            int((measured["flagged"].astype(bool) & (status == "ok")).sum()) if not measured.empty else 0,
            "measured ok trials flagged by wrk output",
        ),
        "missing trial count": (
            max(0, len(plan) - len(trials)) if plan else 0,
            "planned trials without a record",
        ),
    }
    for words, (value, comment) in counts.items():
        macros.add(words, format_count(value), comment)

    changes, possible = _interleaving(trials) if not trials.empty else (0, 0)
    macros.add(
        "order interleaving",
        f"{format_count(changes)} of the {format_count(possible)} transitions between consecutive measured "
        "trials changed configuration",
        "how interleaved the executed order was",
    )
    record = _representative_record(trial_records, summary)
    load_command = _load_command(record) if record else ""
    server_command = _server_command(record) if record else ""
    macros.add("load command", escape_command(load_command or "unknown"), "exact load command of one trial")
    macros.add("server command", escape_command(server_command or "unknown"), "exact server command of one trial")
    pipelined = _first_record(trial_records, lambda r: _pipeline_of(r) > 1)
    macros.add(
        "pipeline command sentence",
        "The exact command of one pipelined trial was "
        + escape_command(_load_command(pipelined))
        + (f" (depth {_pipeline_of(pipelined)})." if pipelined else ".")
        if pipelined
        else "No trial of this campaign was pipelined.",
        "exact wrk command of one trial with pipeline depth > 1",
    )
    nginx = _first_record(trial_records, lambda r: (r.get("config") or {}).get("architecture") == "nginx")
    macros.add(
        "nginx command sentence",
        "The exact nginx command of one trial was " + escape_command(_server_command(nginx)) + "."
        if nginx
        else "The campaign has no nginx trial.",
        "exact nginx command of one trial",
    )
    started = sorted(str(r.get("started_at")) for r in trial_records if r.get("started_at"))
    finished = sorted(str(r.get("finished_at")) for r in trial_records if r.get("finished_at"))
    macros.add("first trial at", escape(started[0][:19].replace("T", " ") if started else "unknown"), "UTC")
    macros.add("last trial at", escape(finished[-1][:19].replace("T", " ") if finished else "unknown"), "UTC")
    differences = provenance_differences(trial_records)
    macros.add(
        "provenance consistency",
        "The recorded provenance is identical for every trial."
        if not differences
        else "The recorded provenance differs between trials in: "
        + format_list(r"\texttt{" + escape(d) + "}" for d in differences)
        + ".",
        "whether the environment changed during the campaign",
    )
    macros.add("pinning finding", pinning_finding(trials), "whether server and wrk shared CPUs")
    macros.add("confidence level", "95", "level of every confidence interval")
    macros.add(
        "client bound threshold",
        f"{CLIENT_BOUND_THRESHOLD * 100:.0f}",
        "wrk CPU busy fraction (percent) from which a trial counts as client-bound",
    )


def pinning_finding(trials: pd.DataFrame) -> str:
    """Whether server and wrk were on disjoint CPUs, and how many CPUs the server's threads shared."""
    if trials.empty or "server_cpus" not in trials or "load_cpus" not in trials:
        return "The campaign records no CPU pinning."
    pairs = {(key_text(a), key_text(b)) for a, b in zip(trials["server_cpus"], trials["load_cpus"])}
    pairs = {p for p in pairs if p[0] and p[1]}
    if not pairs:
        return "The campaign records no CPU pinning."
    disjoint = all(not (parse_cpu_list(a) & parse_cpu_list(b)) for a, b in pairs)
    server_sizes = sorted({len(parse_cpu_list(a)) for a, _ in pairs})
    sentence = (
        "Server and load generator ran on disjoint CPU sets in every trial, so they never competed for a core"
        if disjoint
        else "In some trials the server and the load generator shared a CPU, so they competed for it"
    )
    count = format_list(server_sizes)
    plural = "" if server_sizes == [1] else "s"
    return sentence + f"; whatever the pool size, the server's threads shared {count} CPU{plural}."


def environment_table() -> str:
    """Hardware and software table; it holds only macros, so it always matches macros.tex."""
    rows = [
        ("CPU", r"\abCpuModel{} (\abCpuCount{} logical CPUs)"),
        ("Memory", r"\abMemory"),
        ("Operating system", r"\abOs{}, kernel \abKernel"),
        ("Compiler and flags", r"\abCompiler{}, \abBuildType{} build, \abCFlags"),
        ("Load generator", r"\abWrkVersion"),
        ("Pinning", r"server on CPU \abServerCpus{}, wrk on CPU \abLoadCpus{} (\texttt{taskset -c})"),
        ("Code", r"git commit \abGitCommit{} (\abGitState)"),
        ("Campaign", r"\abCampaign{} (profile \abProfile{}, seed \abSeed{}), \abFirstTrialAt{} to \abLastTrialAt{} UTC"),
        ("Analysis", r"Python \abPythonVersion"),
    ]
    body = [[name, value] for name, value in rows]
    return "\n".join(
        [
            r"\begin{table}[htbp]",
            r"\centering",
            r"\small",
            r"\caption{Measurement environment, from the provenance recorded with the campaign.}",
            r"\label{tab:environment}",
            r"\begin{tabular}{@{}lp{0.72\linewidth}@{}}",
            r"\toprule",
            r"\multicolumn{1}{@{}l}{Item} & Value \\",
            r"\midrule",
            *[f"{a} & {b} \\\\" for a, b in body],
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
            "",
        ]
    )
