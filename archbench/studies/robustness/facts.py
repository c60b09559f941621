"""The robustness appendix's text: macros (every number it quotes), the facts of its sentences, the matrix table
and the notes.

Python computes the facts (counts, escaped names, booleans that choose a phrasing); the words are in
paper/templates/robustness/ (section.tex.j2, which calls the macros of sentences.tex.j2; table.tex.j2, notes.tex.j2).
The sanitizer and fuzzing sentences are derived from the repository's files (Makefile, .ci/run, servers_c/fuzz/),
never from results, which those runs do not record.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archbench.config.paths import REPO_ROOT
from archbench.render.latex import MISSING, MacroSet, format_compact, format_count
from archbench.render.prose import Prose
from archbench.studies.robustness.data import (
    FAILED,
    MARKS,
    NOT_RUN,
    NOTES_FILE,
    PASSED,
    REFERENCE_DIR,
    RESULT_FILE,
    SKIPPED,
    TABLE_FILE,
    Quoted,
    RobustnessResult,
    breakable,
    case_label,
    collapsed,
    display_path,
    number_or_none,
    plain,
    truncated,
    tt,
)

SENTENCES = "robustness/sentences"
TABLE = "robustness/table"
NOTES = "robustness/notes"


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
        name = source.stem[len("fuzz_") :]
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


def tooling_facts(macros: MacroSet, facts: Tooling) -> dict[str, Any]:
    """The fuzzing numbers into `macros`; the facts of the sanitizer, fuzzing and CI sentences."""
    total_corpus = sum(h.corpus or 0 for h in facts.harnesses)
    macros.add(r"\abRobustnessFuzzHarnessCount", format_count(len(facts.harnesses)), "servers_c/fuzz/fuzz_*.c")
    macros.add(r"\abRobustnessFuzzCorpusCount", format_count(total_corpus), "seed inputs in servers_c/fuzz/corpus/*/*")
    macros.add(r"\abRobustnessFuzzSeconds", format_count(facts.fuzz_seconds), "FUZZ_SECONDS default in the Makefile")
    harnesses = [
        {
            "name": tt("fuzz_" + h.name),
            "what": plain(h.what) if h.what else "",
            "corpus": None if h.corpus is None else format_count(h.corpus),
            "corpus_count": h.corpus,
        }
        for h in facts.harnesses
    ]
    return {
        "sanitizer": {"target": facts.sanitize_target, "abuse": facts.sanitize_abuse},
        "fuzz": {
            "harnesses": harnesses,
            "count": format_count(len(facts.harnesses)),
            "target": facts.fuzz_target,
            "replayed": facts.corpus_replayed,
            "seconds": None if facts.fuzz_seconds is None else format_count(facts.fuzz_seconds),
        },
        "ci": {"commands": [tt(c) for c in facts.ci_commands]},
    }


# --------------------------------------------------------------------------- numbers and sentence facts


def _date(value: Any, unknown: str) -> str:
    text = "" if value is None else str(value)
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return plain(text) if text else unknown
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M") + (" UTC" if moment.tzinfo is not None else "")


def _seconds(value: Any) -> str:
    number = number_or_none(value)
    return MISSING if number is None else format_compact(number)


def robustness_facts(macros: MacroSet, result: RobustnessResult, prose: Prose) -> dict[str, Any]:
    """Every number of the appendix into `macros`; the facts of its sentences (provenance and summary None without
    a result: those sentences are empty)."""
    doc, provenance = result.doc, result.provenance
    build = doc.get("build") if isinstance(doc.get("build"), dict) else {}
    settings = doc.get("settings") if isinstance(doc.get("settings"), dict) else {}
    available = result.available
    unknown = prose.sentence(SENTENCES, "unknown")

    def text(value: Any) -> str:
        return plain(value) if value not in (None, "") else (unknown if available else MISSING)

    commit = str(provenance.get("git_commit") or "")
    host = provenance.get("hostname") or provenance.get("host")
    macros.add(r"\abRobustnessHost", text(host), "host of the abuse run")
    macros.add(
        r"\abRobustnessDate",
        _date(doc.get("generated_at"), unknown) if available else MISSING,
        "when the result was written",
    )
    macros.add(r"\abRobustnessBuildType", text(build.get("build_type")), "CMake build type of the servers tested")
    macros.add(r"\abRobustnessCompiler", text(build.get("compiler")), "compiler of the servers tested")
    macros.add(r"\abRobustnessCommit", r"\texttt{" + plain(commit[:12]) + "}" if commit else text(None), "git commit")
    dirty = provenance.get("git_dirty") if commit else None
    macros.add(
        r"\abRobustnessCommitState",
        prose.sentence(SENTENCES, "commit_state", dirty=dirty),
        "working tree state of the tested code",
    )
    rss_kb = number_or_none(settings.get("rss_growth_bound_kb"))
    macros.add(r"\abRobustnessHeaderTimeout", _seconds(settings.get("header_timeout_s")), "--header-timeout, s")
    macros.add(r"\abRobustnessIdleTimeout", _seconds(settings.get("idle_timeout_s")), "--idle-timeout, s")
    macros.add(
        r"\abRobustnessSlowlorisConnections",
        format_count(number_or_none(settings.get("slowloris_connections"))),
        "slowloris connections held at once",
    )
    macros.add(
        r"\abRobustnessRssBound",
        MISSING if rss_kb is None else format_compact(rss_kb / 1024, 1),
        "resident memory growth allowed per case, MiB",
    )
    macros.add(r"\abRobustnessFdSettle", _seconds(settings.get("fd_settle_s")), "s for descriptors to be released")

    counts = result.counts() if available else {PASSED: 0, FAILED: 0, SKIPPED: 0, NOT_RUN: 0}
    architectures = result.architectures()
    all_passed = [a for a, rows in architectures if result.counts(rows)[PASSED] == len(rows) * len(result.cases)]
    numbers = {
        r"\abRobustnessVariantCount": (len(result.variants), "server variants in the matrix"),
        r"\abRobustnessArchitectureCount": (len(architectures), "architectures in the matrix"),
        r"\abRobustnessCaseCount": (len(result.cases), "abuse cases per variant"),
        r"\abRobustnessCellCount": (len(result.variants) * len(result.cases), "variant x case cells"),
        r"\abRobustnessPassedCount": (counts[PASSED], "cells passed"),
        r"\abRobustnessFailedCount": (counts[FAILED], "cells failed"),
        r"\abRobustnessSkippedCount": (counts[SKIPPED], "cells skipped"),
        r"\abRobustnessNotRunCount": (counts[NOT_RUN], "cells without a result"),
        r"\abRobustnessArchitecturesAllPassed": (len(all_passed), "architectures that passed every cell"),
    }
    for name, (value, comment) in numbers.items():
        macros.add(name, format_count(value) if available else MISSING, comment)

    source = {
        "problem": result.problem,
        "origin": result.source.origin,
        "path": tt(display_path(result.source.path)) if result.source.path is not None else None,
        "processed_file": tt("data/processed/" + RESULT_FILE),
        "reference_file": tt(f"data/raw/{REFERENCE_DIR}/{RESULT_FILE}"),
    }
    facts: dict[str, Any] = {"source": source, "provenance": None, "summary": None}
    if available:
        facts["provenance"] = {"host": bool(host), "commit": bool(commit), "build_type": bool(build.get("build_type"))}
        facts["summary"] = {
            "variants": len(result.variants),
            "architectures": len(architectures),
            "cases": len(result.cases),
            "skipped": counts[SKIPPED],
            "not_run": counts[NOT_RUN],
            "failed": counts[FAILED],
            "all_passed": [tt(a) for a in all_passed],
        }
    return facts | tooling_facts(macros, tooling(result.repo_root))


# --------------------------------------------------------------------------- the matrix


def failure_numbers(result: RobustnessResult) -> dict[tuple[str, str], int]:
    numbers: dict[tuple[str, str], int] = {}
    for row in result.variants:
        for case in result.cases:
            if result.outcome(row.name, case) == FAILED:
                numbers[(row.name, case)] = len(numbers) + 1
    return numbers


def matrix_table(result: RobustnessResult, prose: Prose) -> str:
    if not result.available:
        return prose.block(TABLE, "no_result")
    numbers = failure_numbers(result)
    total = len(result.cases)
    rows = []
    for index, (_, variants) in enumerate(result.architectures()):
        group = result.counts(variants)
        for position, row in enumerate(variants):
            cells = [tt(row.name)]
            for case in result.cases:
                outcome = result.outcome(row.name, case)
                mark = MARKS[outcome]
                if outcome == FAILED:
                    mark += r"\textsuperscript{" + str(numbers[(row.name, case)]) + "}"
                cells.append(mark)
            cells.append(f"{result.counts([row])[PASSED]}/{total}")
            cells.append(f"{group[PASSED]}/{total * len(variants)}" if position == 0 else "")
            rows.append({"rule_before": index > 0 and position == 0, "cells": cells})
    return prose.block(TABLE, "matrix", case_labels=[case_label(c) for c in result.cases], rows=rows)


# --------------------------------------------------------------------------- notes under the matrix


def _who(result: RobustnessResult, names: Sequence[str]) -> dict[str, list[str]]:
    """The variants by name, except that an architecture with several variants, all of them included, is named
    once (`whole`): `blocking and every variant of epoll and reactor`."""
    chosen = set(names)
    single, whole = [], []
    for architecture, rows in result.architectures():
        members = [r.name for r in rows if r.name in chosen]
        if len(rows) > 1 and len(members) == len(rows):
            whole.append(tt(architecture))
        else:
            single.extend(tt(m) for m in members)
    return {"single": single, "whole": whole}


def _expectations(result: RobustnessResult) -> list[dict[str, Any]]:
    """What each case expects: one group for a case that expects the same of every variant, several for a case
    whose expectation depends on the architecture (slowloris: event loops against one connection per slot)."""
    cases = []
    for case in result.cases:
        groups: dict[str, list[str]] = {}
        for row in result.variants:
            cell = result.cells.get((row.name, case))
            expected = collapsed((cell or {}).get("expected"))
            if expected:
                groups.setdefault(expected, []).append(row.name)
        cases.append(
            {
                "label": case_label(case),
                "case": tt(case),
                "groups": [{"text": breakable(text), "who": _who(result, names)} for text, names in groups.items()],
            }
        )
    return cases


def notes(result: RobustnessResult, prose: Prose) -> str:
    if not result.available:
        return prose.block(NOTES, "no_result")
    failed = [
        {
            "number": number,
            "variant": tt(variant),
            "label": case_label(case),
            "case": tt(case),
            "expected": truncated(result.cells[(variant, case)].get("expected")),
            "observed": truncated(result.cells[(variant, case)].get("observed")),
        }
        for (variant, case), number in failure_numbers(result).items()
    ]
    skipped: dict[tuple[str, Quoted], list[str]] = {}  # (variant, reason) -> cases
    for row in result.variants:
        for case in result.cases:
            if result.outcome(row.name, case) == SKIPPED:
                reason = truncated(result.cells[(row.name, case)].get("observed"))
                skipped.setdefault((row.name, reason), []).append(case)
    facts = {
        "failed": failed,
        "skipped": [
            {
                "variant": tt(variant),
                "reason": reason,
                "every_case": len(cases) == len(result.cases),
                "labels": [case_label(c) for c in cases],
            }
            for (variant, reason), cases in skipped.items()
        ],
        "not_run": result.counts()[NOT_RUN],
        "cases": _expectations(result),
        "variants": [
            {"name": tt(row.name), "args": tt(" ".join(row.args)) if row.args else None} for row in result.variants
        ],
    }
    return prose.block(NOTES, "notes", facts)


def appendix_files(result: RobustnessResult, prose: Prose) -> dict[str, str]:
    """{generated file name: LaTeX} of the appendix: the matrix and the notes under it."""
    return {TABLE_FILE: matrix_table(result, prose), NOTES_FILE: notes(result, prose)}
