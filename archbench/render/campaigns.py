"""Which campaign each part of the report reads, and why: the one resolution the Makefile, the notebooks, the
command line and the artifact all use.

Every key of the catalogue (`archbench.config.catalogue`: `main` and each study with data of its own, the cross-OS
comparison's included) is chosen the same way:
1. the mapping CAMPAIGNS names it (`main=full-vm,echo=echo-lab`): that one, which must exist;
2. else this machine's, the most complete first (for `main`, first what `make trials` wrote: the Makefile passes
   that name as `measured_main`);
3. else the campaign shipped in git (`reference`, `reference-echo`, ...);
4. else none: the study's section says so, the report still builds (the main campaign is required).
`python -m archbench campaigns` prints the choice; `make paper` prints it before every analysis.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from archbench.config.catalogue import CATALOGUE, MAIN, MAIN_REFERENCE, CampaignRule
from archbench.config.params import ParameterError
from archbench.config.paths import PROCESSED_DIR, RAW_ROOT, REPO_ROOT
from archbench.data import storage
from archbench.data.importer import IMPORT_DIR  # a campaign directory with it came from `python -m archbench import`
from archbench.render.study import Study

__all__ = [
    "CAMPAIGNS_FILE",
    "GIVEN",
    "MAIN",
    "MAIN_REFERENCE",
    "MEASURED",
    "NONE",
    "PARAMETER",
    "REFERENCE",
    "Campaigns",
    "Choice",
    "file_path",
    "main_rule",
    "parse_overrides",
    "resolve",
    "short_host",
]

PARAMETER = "campaigns"
CAMPAIGNS_FILE = "campaigns.json"  # in data/processed/: the choice the last analysis made (the artifact reads it)

GIVEN, MEASURED, REFERENCE, NONE = "given", "measured", "reference", "none"


def short_host() -> str:
    """The host name up to its first dot, as `hostname -s` prints it (the Makefile's HOST_SHORT)."""
    return socket.gethostname().split(".")[0]


def main_rule(measured_main: str | None) -> CampaignRule:
    """The catalogue's main rule, with what `make trials` wrote on this machine (the Makefile's CAMPAIGN) first."""
    rule = CATALOGUE[MAIN]
    if not measured_main:
        return rule
    return replace(rule, measured=((measured_main, rule.measure_with), *rule.measured))


@dataclass(frozen=True)
class Choice:
    """One key's campaign (or file), where it came from (`how`: given, measured, reference or none) and the
    command behind it; `read` are the campaigns the study reads beside it that exist (its `read_with`)."""

    key: str
    name: str | None
    how: str
    detail: str = ""
    read: tuple[str, ...] = ()

    def explain(self) -> str:
        why = {
            GIVEN: "given in CAMPAIGNS",
            MEASURED: f"this machine's ({self.detail})",
            REFERENCE: f"the shipped reference ({self.detail})",
        }.get(self.how, f"none ({self.detail})")
        extra = [r for r in self.read if r != self.name]
        also = f"; also reads {', '.join(extra)}" if extra else ""
        return f"{self.name or '-'}: {why}{also}"


@dataclass(frozen=True)
class Campaigns(Mapping[str, "str | None"]):
    """The resolved choice of every key: `main` and each study with a campaign of its own, in registry order."""

    choices: tuple[Choice, ...]

    def __getitem__(self, key: str) -> str | None:
        return self.choice(key).name

    def __iter__(self) -> Iterator[str]:
        return (c.key for c in self.choices)

    def __len__(self) -> int:
        return len(self.choices)

    def choice(self, key: str) -> Choice:
        for choice in self.choices:
            if choice.key == key:
                return choice
        raise KeyError(key)

    @property
    def main(self) -> str:
        name = self[MAIN]
        assert name is not None  # resolve() refuses a report without a main campaign
        return name

    def as_text(self) -> str:
        """`main=x,echo=y,...`: what CAMPAIGNS and the notebooks' `campaigns` parameter take (chosen keys only)."""
        return ",".join(f"{c.key}={c.name}" for c in self.choices if c.name)

    def explain(self, studies: Sequence[Study]) -> list[str]:
        """One line per study: which campaign its section reads and why."""
        width = max((len(s.name) for s in studies), default=0)
        lines = []
        for study in studies:
            key = study.name if study.campaign is not None else MAIN
            choice = self.choice(key)
            lines.append(f"{study.name:<{width}}  {choice.explain()}")
        return lines

    def raw_campaigns(self) -> list[str]:
        """Every campaign directory the report reads, in registry order, once each."""
        names: list[str] = []
        for choice in self.choices:
            names += [r for r in choice.read if "/" not in r]
        return list(dict.fromkeys(names))

    def to_json(self) -> str:
        rows = [
            {"key": c.key, "name": c.name, "how": c.how, "detail": c.detail, "read": list(c.read)} for c in self.choices
        ]
        return json.dumps({"campaigns": rows}, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Campaigns:
        rows = json.loads(text)["campaigns"]
        return cls(tuple(Choice(r["key"], r["name"], r["how"], r["detail"], tuple(r["read"])) for r in rows))


def parse_overrides(value: str | Mapping[str, str] | None, keys: Iterable[str]) -> dict[str, str]:
    """CAMPAIGNS as text (`echo=echo-lab,latency=lat`, commas or white space between entries) or a mapping; a
    ParameterError names the parameter and the key it cannot use."""
    known = list(keys)
    if value is None:
        return {}
    if isinstance(value, Mapping):
        pairs = [(str(k), "" if v is None else str(v)) for k, v in value.items()]
    elif isinstance(value, str):
        pairs = []
        for entry in value.replace(",", " ").split():
            key, sep, name = entry.partition("=")
            if not sep:
                raise ParameterError(PARAMETER, f"{entry!r} is not KEY=CAMPAIGN (keys: {', '.join(known)})")
            pairs.append((key.strip(), name.strip()))
    else:
        raise ParameterError(PARAMETER, f"a text KEY=CAMPAIGN,... or a mapping, got {type(value).__name__}")
    overrides: dict[str, str] = {}
    for key, name in pairs:
        if key not in known:
            raise ParameterError(PARAMETER, f"unknown key {key!r} (keys: {', '.join(known)})")
        if key in overrides:
            raise ParameterError(PARAMETER, f"{key!r} given twice")
        if name:
            overrides[key] = name
    return overrides


def _exists(rule: CampaignRule, name: str, raw_root: Path) -> bool:
    if rule.file is None:
        return (raw_root / name / storage.CAMPAIGN_FILE).is_file()
    return file_path(rule, name, raw_root).is_file()


def file_path(rule: CampaignRule, name: str, raw_root: Path) -> Path:
    """A file study's value: a path (relative to the repository root), or a campaign directory holding the file."""
    path = Path(name)
    if "/" not in name and rule.file and (raw_root / name / rule.file).is_file():
        return raw_root / name / rule.file
    return path if path.is_absolute() else REPO_ROOT / path


def _expand(pattern: str, host: str, raw_root: Path, processed_dir: Path) -> str:
    """A pattern with this machine's names; a path inside the repository as a repository-relative one, so that a
    recorded choice still names the file in an unpacked artifact."""
    name = pattern.format(host=host, raw=raw_root, processed=processed_dir)
    if "/" in name and Path(name).is_absolute():
        try:
            return Path(name).resolve().relative_to(REPO_ROOT).as_posix()
        except ValueError:
            return name
    return name


def _classify(rule: CampaignRule, name: str, host: str, raw_root: Path, processed_dir: Path) -> tuple[str, str]:
    """Where a campaign comes from, read off its name: so a choice passed on (Makefile -> notebook) explains
    itself the same way wherever it is resolved again."""
    if rule.reference is not None and name == _expand(rule.reference, host, raw_root, processed_dir):
        if not rule.measured:
            return REFERENCE, f"{rule.measure_with} brings another machine's"
        return REFERENCE, f"{rule.measure_with} measures this machine's"
    for pattern, how in rule.measured:
        if name == _expand(pattern, host, raw_root, processed_dir):
            return MEASURED, how
    return GIVEN, ""


def _choose(key: str, rule: CampaignRule, given: str | None, raw_root: Path, processed_dir: Path, host: str) -> Choice:
    if given is not None:
        if not _exists(rule, given, raw_root):
            what = f"file {rule.file}" if rule.file else storage.CAMPAIGN_FILE
            available = ", ".join(storage.list_campaigns(raw_root)) or "none"
            raise ParameterError(
                PARAMETER, f"{key}={given}: no {what} for it under {raw_root}; available campaigns: {available}"
            )
        candidates = [given]
    else:
        candidates = [_expand(p, host, raw_root, processed_dir) for p, _ in rule.measured]
        if rule.reference is not None:
            candidates.append(_expand(rule.reference, host, raw_root, processed_dir))
    for name in dict.fromkeys(candidates):
        if _exists(rule, name, raw_root):
            how, detail = _classify(rule, name, host, raw_root, processed_dir)
            return Choice(key, name, how, detail, _read(rule, name, raw_root))
    tried = ", ".join(dict.fromkeys(candidates))
    return Choice(key, None, NONE, f"none of {tried} exists; {rule.measure_with} measures it")


def _read(rule: CampaignRule, name: str, raw_root: Path) -> tuple[str, ...]:
    if rule.file is not None:
        # A result file inside a campaign directory (this raw root's, or the repository's data/raw) brings that
        # directory with it: its provenance sits beside the file.
        folder = file_path(rule, name, raw_root).resolve().parent
        for root in (Path(raw_root).resolve(), RAW_ROOT.resolve()):
            if folder.parent == root:
                return (folder.name,)
        return (name,)
    names = [name + suffix for suffix in rule.read_with]
    if rule.imported:
        names += [n for n in storage.list_campaigns(raw_root) if (raw_root / n / IMPORT_DIR).is_dir()]
    return tuple(n for n in dict.fromkeys(names) if (raw_root / n / storage.CAMPAIGN_FILE).is_file())


def resolve(
    studies: Sequence[Study],
    overrides: str | Mapping[str, str] | None = None,
    *,
    raw_root: Path = RAW_ROOT,
    processed_dir: Path = PROCESSED_DIR,
    host: str | None = None,
    measured_main: str | None = None,
) -> Campaigns:
    """The campaign of `main` and of every study with a rule of its own (see the module's docstring). A given
    campaign that does not exist, an unknown key, or no main campaign at all is a ParameterError."""
    raw_root, processed_dir = Path(raw_root), Path(processed_dir)
    if not raw_root.is_dir():
        raise ParameterError("raw_root", f"{raw_root} is not a directory")
    host = host or short_host()
    rules = {MAIN: main_rule(measured_main)}
    rules.update({s.name: s.campaign for s in studies if s.campaign is not None})
    given = parse_overrides(overrides, rules)
    choices = tuple(_choose(k, r, given.get(k), raw_root, processed_dir, host) for k, r in rules.items())
    campaigns = Campaigns(choices)
    if campaigns[MAIN] is None:
        available = ", ".join(storage.list_campaigns(raw_root)) or "none"
        raise ParameterError(
            PARAMETER, f"no main campaign: give main=NAME (campaigns under {raw_root}: {available}), or run make trials"
        )
    return campaigns
