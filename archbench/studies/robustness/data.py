"""The abuse suite's result, read for the robustness appendix: which file, its matrix, its provenance.

The abuse suite (`tests/test_abuse.py`, schema in the docstring of `tests/abuse/report.py`) writes a JSON
result. It is a measurement, so it is read like a campaign with a fallback:

* `robustness` given (a path; relative to the repository root): that file;
* otherwise `<processed_dir>/robustness.json`, this machine's result, written by `make test` (regenerable);
* otherwise `<raw_root>/reference-robustness/robustness.json`, the result shipped in git (written once).

A missing or unreadable file is a `Problem` (the appendix turns it into sentences); reading never raises for
data. The suite's result does not record the host or the commit; a `provenance.json` beside it (the shipped
reference has one) or a `provenance` object inside it supplies them, else they print as unknown.
Also here: the helpers that make the result's texts safe for LaTeX, shared by the table, notes and macros.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archbench.config.paths import REPO_ROOT
from archbench.render.latex import escape

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
    "large_response_backpressure": "1\\,MiB, unread",
    "workload_abused": "work + waits",
}
OBSERVED_LIMIT = 500  # characters of an observed text quoted in the notes (a sanitizer report can be long)


# --------------------------------------------------------------------------- text helpers


def collapsed(text: Any) -> str:
    """Whitespace runs (newlines included) to one space."""
    return re.sub(r"\s+", " ", "" if text is None else str(text)).strip()


def plain(text: Any) -> str:
    """Data text made safe for LaTeX: whitespace runs (newlines included) to one space, anything outside printable
    ASCII as <U+XXXX> (inputenc cannot typeset every character a failure message may hold), then escaped."""
    ascii_only = "".join(c if 32 <= ord(c) < 127 else f"<U+{ord(c):04X}>" for c in collapsed(text))
    return escape(ascii_only)


def breakable(text: str, every: int = 24) -> str:
    """plain(), with a permitted line break every `every` characters of a long unspaced run (a byte dump, a path)."""
    words = []
    for word in text.split(" "):
        pieces = [word[i : i + every] for i in range(0, len(word), every)] or [""]
        words.append(r"\allowbreak{}".join(plain(piece) for piece in pieces))
    return " ".join(words)


@dataclass(frozen=True)
class Quoted:
    """A text from the result file, safe for LaTeX; `cut` when it was longer than the limit (the notes say so)."""

    text: str
    cut: bool


def truncated(text: Any, limit: int = OBSERVED_LIMIT) -> Quoted:
    whole = collapsed(text)
    return Quoted(breakable(whole[:limit]), len(whole) > limit)


def tt(text: Any) -> str:
    """Typewriter text from data that may break after '_', '/', '-' and '.' (long paths of any kind)."""
    escaped = plain(text).replace(r"\_", r"\_\allowbreak{}").replace("/", r"/\allowbreak{}")
    # Inside a word only: an option's leading dashes (escaped -{}-) and decimal points stay whole.
    escaped = re.sub(r"(?<=[A-Za-z0-9])([-.])(?=[A-Za-z])", r"\1\\allowbreak{}", escaped)
    return r"\texttt{" + escaped + "}"


def case_label(case: str) -> str:
    return CASE_LABELS.get(case) or plain(case.replace("_", " "))


def display_path(path: Path) -> str:
    try:
        return Path(path).resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return Path(path).as_posix()


def number_or_none(value: Any) -> float | None:
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
class Problem:
    """Why there is no matrix: "missing" (none of `paths` exists) or "unreadable" (`paths[0]`, with `error`)."""

    kind: str
    paths: tuple[str, ...]  # as LaTeX (tt)
    error: str = ""  # as LaTeX (plain)


@dataclass(frozen=True)
class RobustnessResult:
    source: RobustnessSource
    problem: Problem | None  # why there is no matrix (None: there is one)
    doc: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)
    variants: tuple[VariantRow, ...] = ()
    cases: tuple[str, ...] = ()
    cells: dict = field(default_factory=dict)  # (variant, case) -> result dict, outcome normalised
    repo_root: Path = REPO_ROOT

    @property
    def available(self) -> bool:
        return self.problem is None

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


def read_robustness(
    requested: str | Path | None,
    processed_dir: Path,
    raw_root: Path,
    repo_root: Path = REPO_ROOT,
) -> RobustnessResult:
    """The abuse-suite result the appendix shows (see the module docstring for which), never raising for data."""
    source = resolve_source(requested, Path(processed_dir), Path(raw_root))
    if source.path is None:
        missing = Problem("missing", tuple(tt(display_path(p)) for p in source.tried))
        return RobustnessResult(source, missing, repo_root=Path(repo_root))
    try:
        doc = json.loads(source.path.read_text(encoding="utf-8"))
        variants, cases, cells = parse_result(doc)
    except (OSError, ValueError) as error:  # json.JSONDecodeError is a ValueError
        unreadable = Problem("unreadable", (tt(display_path(source.path)),), plain(error))
        return RobustnessResult(source, unreadable, repo_root=Path(repo_root))
    return RobustnessResult(source, None, doc, _provenance(doc, source.path), variants, cases, cells, Path(repo_root))
