"""The environment appendix: provenance and factors tables, and the environment sentence."""

from __future__ import annotations

import json
import platform
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from archbench.analyze import analysis, outliers
from archbench.analyze.analysis import key_text
from archbench.config.params import FD_HEADROOM
from archbench.measure import provenance
from archbench.render import latex
from archbench.render.formats import plural
from archbench.render.latex import (
    escape,
    escape_identifier,
    format_count,
    format_decimal,
    format_list,
)
from archbench.render.prose import Prose

# =========================================================================== environment appendix


TEMPLATE = "environment/tables"  # paper/templates/environment/tables.tex.j2


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), inner, out)
    else:
        out[prefix] = value


def provenance_values(meta: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> dict[str, Counter]:
    """Flattened provenance key (tools.wrk, python_packages.numpy) -> Counter of its values over the trials
    (campaign.json's provenance when the campaign has no trial record)."""
    sources = [r.get("provenance") or {} for r in records] or [meta.get("provenance") or {}]
    values: dict[str, Counter] = {}
    for source in sources:
        flat: dict[str, Any] = {}
        _flatten("", source, flat)
        for key, value in flat.items():
            values.setdefault(key, Counter())[json.dumps(value, sort_keys=True, default=str)] += 1
    return values


def _value_text(value: Any) -> str:
    """A recorded value as one escaped line: yes or no, a list joined by commas, "not recorded" for null."""
    if value is None:
        return "not recorded"
    if isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, list):
        text = ", ".join(str(v) for v in value)
    else:
        text = str(value)
    return escape(text.strip().splitlines()[0] if text.strip() else text)


def _typewriter(value: Any) -> str:
    return "not recorded" if value is None else r"\texttt{" + _value_text(value) + "}"


def _gib(value: Any) -> str:
    return "not recorded" if value is None else format_decimal(float(value) / 2**30, 1) + r"\,GiB"


def _per_trial(counter: Counter | None, show: Callable[[Any], str] = escape) -> str:
    """The one value the trials had, or each value with how many trials had it; "not recorded" without any."""
    if not counter:
        return "not recorded"
    if len(counter) == 1:
        return show(next(iter(counter)))
    return "; ".join(f"{show(value)} ({plural(count, 'trial')})" for value, count in counter.most_common())


def _counted(counter: Counter | None, show: Callable[[Any], str] = _value_text) -> str:
    """_per_trial of provenance values (JSON texts), each decoded and shown by `show`."""
    return _per_trial(counter, lambda raw: show(json.loads(raw)))


NAME_COLUMN = r">{\raggedright\arraybackslash}p{4.4cm}"
TOOL_ORDER = ("wrk", "wrk2", "oha", "nginx", "taskset", "cmake", "gcc")


def provenance_table(
    meta: Mapping[str, Any], records: Sequence[Mapping[str, Any]], trials: pd.DataFrame, prose: Prose
) -> str:
    """Every provenance fact the campaign recorded, grouped; a value that changed between trials is listed with
    how many trials had each."""
    values = provenance_values(meta, records)
    tools = sorted(
        {k.split(".", 1)[1] for k in values if k.startswith("tools.")},
        key=lambda t: (TOOL_ORDER.index(t) if t in TOOL_ORDER else len(TOOL_ORDER), t),
    )
    packages = sorted(k.split(".", 1)[1] for k in values if k.startswith("python_packages."))
    needed = [((r.get("open_files") or {}).get("needed")) for r in records]
    needed = [int(n) for n in needed if isinstance(n, (int, float))]
    server_cpus, load_cpus = (
        Counter(str(cpus) for r in records if (cpus := (r.get(side) or {}).get("cpus"))) for side in ("server", "load")
    )
    groups = [
        (
            "Hardware",
            [
                ("CPU model", _counted(values.get("cpu_model"))),
                ("Logical CPUs", _counted(values.get("cpu_count"))),
                ("CPUs the runner could use", _counted(values.get("cpu_affinity"))),
                ("Memory", _counted(values.get("memory_bytes"), _gib)),
            ],
        ),
        (
            "Operating system",
            [
                ("Operating system", _counted(values.get("os"))),
                ("Family", _counted(values.get("os_family"))),
                ("Kernel", _counted(values.get("kernel"))),
                ("Host name", _counted(values.get("hostname"))),
                ("Open files (soft, hard)", _counted(values.get("open_files_limit"))),
                (r"\texttt{net.core.somaxconn}", _counted(values.get("somaxconn"))),
            ],
        ),
        (
            "Build of the servers",
            [
                ("Compiler", _counted(values.get("compiler"))),
                ("C flags", _counted(values.get("c_flags"), _typewriter)),
                ("Build type", _counted(values.get("build_type"))),
                ("Architectures built", _counted(values.get("build_architectures"))),
            ],
        ),
        (
            "Tools (first line of each version output)",
            [(escape(t), _counted(values.get(f"tools.{t}"))) for t in tools] or [("Tools", "not recorded")],
        ),
        (
            "Python of the measurement (recorded with the trials)",
            [("Python", _counted(values.get("python")))]
            + (
                [(escape(p), _counted(values.get(f"python_packages.{p}"))) for p in packages]
                or [("Packages", "not recorded (the campaign predates their recording)")]
            ),
        ),
        (
            "Python of this analysis (the machine that built the report)",
            [("Python", escape(platform.python_version()))]
            + [
                (escape(name), escape(version or "not installed"))
                for name, version in provenance.python_packages().items()
            ],
        ),
        (
            "Limits and pinning of the trials",
            [
                (
                    "Descriptors needed per process",
                    f"at most {format_count(max(needed))} (connections + {FD_HEADROOM})" if needed else "not recorded",
                ),
                ("Server CPUs (\\texttt{taskset -c})", _per_trial(server_cpus)),
                ("Load generator CPUs", _per_trial(load_cpus)),
            ],
        ),
        (
            "Code and campaign",
            [
                ("Git commit", _counted(values.get("git_commit"), _typewriter)),
                ("Uncommitted changes", _counted(values.get("git_dirty"))),
                ("Campaign", escape(meta.get("campaign", ""))),
                ("Profile", escape(meta.get("profile") or "not recorded")),
                ("Seed of the trial order", escape(meta.get("seed", "not recorded"))),
                ("Created (UTC)", escape(str(meta.get("created_at") or "not recorded")[:19].replace("T", " "))),
            ],
        ),
    ]
    caption = prose.sentence(TEMPLATE, "provenance_caption")
    return _grouped_table(("Item", "Value"), groups, caption, "tab:provenance")


def _spanning(text: str) -> str:
    """A line across both columns."""
    return r"\multicolumn{2}{@{}l}{" + text + r"} \\"


def _grouped_table(
    headers: tuple[str, str], groups: Sequence[tuple[str, Sequence[tuple[str, str] | str]]], caption: str, label: str
) -> str:
    """A long table of a name column of fixed width and a value column that takes the rest of the text width: each
    group's rows under its bold title, a rule between groups; a row is (name, value) or a whole line."""
    body = []
    for title, items in groups:
        if body:
            body.append(r"\midrule")
        body.append(_spanning(r"\textbf{" + title + "}"))
        body += [item if isinstance(item, str) else f"{item[0]} & {item[1]} \\\\" for item in items]
    columns = [latex.Column(headers[0], NAME_COLUMN), latex.Column(headers[1], latex.FILL_COLUMN)]
    return latex.render_longtable(columns, body, caption, label)


FACTOR_NAMES = {
    "architecture": "architecture",
    "dispatch": "thread-pool dispatch",
    "handoff": "thread-pool hand-off",
    "trigger": "epoll trigger",
    "max_threads": "thread cap (thread per connection)",
    "threads": "threads or workers $N$",
    "connections": "connections (wrk \\texttt{-c})",
    "load_threads": "load threads (wrk \\texttt{-t})",
    "duration_s": "duration (s)",
    "response": "response",
    "load_generator": "load generator",
    "pipeline": "pipeline depth $D$",
    "proto": "protocol",
}
# Campaign parameters that are bookkeeping, not factors (the name, where the files went).
PARAMETER_SKIP = ("campaign", "raw_root", "build_dir")


def factor_levels(summary: pd.DataFrame, trials: pd.DataFrame) -> list[tuple[str, list[tuple[str, int]]]]:
    """(configuration field, [(level, configurations at it)]) for every configuration field, in CONFIG_FIELDS
    order then the extras; 'none' is the level of an architecture without the field."""
    if summary.empty:
        return []
    fields = trials.attrs.get("config_columns") or [f for f in analysis.CONFIG_FIELDS if f in summary]
    out = []
    for name in fields:
        if name not in summary:
            continue
        default = "http" if name == "proto" else "n/a"  # contracts.md: a missing proto means http
        counts = Counter(key_text(v) or default for v in summary[name])

        def order(item: tuple[str, int], factor: str = name) -> tuple[int, float, str]:
            level = item[0]
            if level == "n/a":
                return (2, 0.0, level)
            try:
                return (0, float(level), level)
            except ValueError:
                rank = analysis.architecture_rank(level) if factor == "architecture" else 0
                return (1, float(rank), level)

        out.append((name, sorted(counts.items(), key=order)))
    return out


def _parameter_text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_parameter_text(v) for v in value) if value else "none"
    if isinstance(value, Mapping):
        return "; ".join(f"{k}={_parameter_text(v)}" for k, v in value.items()) if value else "none"
    return str(value)


def _server_entry_text(entry: Any) -> str:
    if not isinstance(entry, Mapping):
        return str(entry)
    name = str(entry.get("architecture", "?"))
    options = [
        f"{k}={'/'.join(str(x) for x in v) if isinstance(v, (list, tuple)) else v}"
        for k, v in entry.items()
        if k != "architecture"
    ]
    return name + (":" + ",".join(options) if options else "")


def factors_table(
    meta: Mapping[str, Any],
    summary: pd.DataFrame,
    trials: pd.DataFrame,
    records: Sequence[Mapping[str, Any]],
    prose: Prose,
) -> str:
    levels = factor_levels(summary, trials)
    varying = [(name, values) for name, values in levels if len(values) > 1]
    fixed = [(name, values) for name, values in levels if len(values) == 1]

    def level_rows(factors: list[tuple[str, list[tuple[str, int]]]], with_counts: bool) -> list[tuple[str, str]]:
        return [
            (
                FACTOR_NAMES.get(name, escape(name)),
                ", ".join(escape(level) + (f" ({count})" if with_counts else "") for level, count in items),
            )
            for name, items in factors
        ]

    parameters = dict(meta.get("parameters") or {})
    parameter_rows: list[tuple[str, str] | str] = [] if parameters else [_spanning("none recorded")]
    for name, value in parameters.items():
        if name in PARAMETER_SKIP:
            continue
        if name == "servers" and isinstance(value, list):
            text = "; ".join(escape_identifier(_server_entry_text(e)) for e in value) or "none"
        else:
            text = escape(_parameter_text(value))
        parameter_rows.append((f"\\texttt{{{escape(name)}}}", text))
    if "seed" not in parameters:
        parameter_rows.append((r"\texttt{seed}", escape(meta.get("seed", "not recorded"))))
    no_configuration = "one configuration" if len(summary) == 1 else "no configuration"
    groups = [
        (
            "Varying factors: levels (configurations at each)",
            level_rows(varying, True) or [_spanning("none: the campaign has " + no_configuration)],
        ),
        ("Fixed factors (one level in every configuration)", level_rows(fixed, False) or [_spanning("none")]),
        ("Campaign parameters (campaign.json)", parameter_rows),
    ]
    if not trials.empty:
        measured = trials[~outliers.truthy(trials["warmup"])]
        per_config = measured.groupby("config_id").size() if not measured.empty else pd.Series(dtype=int)
        warmups = trials[outliers.truthy(trials["warmup"])].groupby("config_id").size()
        added = sum(1 for record in records if record.get("adaptive"))
        as_run = [
            ("measured trials per configuration", format_list(sorted(set(per_config.tolist())) or [0])),
            ("warm-up trials per configuration", format_list(sorted(set(warmups.tolist())) or [0])),
            ("trials added by adaptive repetition", str(added)),
        ]
        groups.append(("As run (from the trial records)", as_run))
    caption = prose.sentence(TEMPLATE, "factors_caption")
    return _grouped_table(("Factor", "Levels or value"), groups, caption, "tab:factors")


def environment_facts(
    summary: pd.DataFrame, trials: pd.DataFrame, records: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The factors that vary and the provenance fields that changed during the campaign (the section's sentence)."""
    varying = [
        FACTOR_NAMES.get(name, escape(name)) for name, levels in factor_levels(summary, trials) if len(levels) > 1
    ]
    changed = [r"\texttt{" + escape(c) + "}" for c in latex.provenance_differences(list(records))]
    return {"configurations": len(summary), "varying": varying, "changed": changed}
