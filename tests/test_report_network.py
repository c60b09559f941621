"""The network section (source 000): a netns campaign and its loopback twin compared per pool size,
beside source 000's separate-client/loopback ratio; missing campaigns; the PDF with the section."""

from __future__ import annotations

import contextlib
import json
import math
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
import synthetic  # tests/fixtures/campaigns/synthetic.py (pytest pythonpath)
from scipy import stats as scipy_stats

from archbench.config.profiles import profile_values
from archbench.render import latex
from archbench.render.prose import Prose
from archbench.render.study import Paper
from archbench.report import build as report
from archbench.studies import network as report_network
from archbench.studies.network import facts as network_facts
from archbench.studies.network.data import FRAME_OVERHEAD_BYTES, LinkBound, NetworkResults, source000_pools

FIXTURES = Path(__file__).parent / "fixtures" / "campaigns"
PAPER = Path(__file__).resolve().parents[1] / "paper"
SECTION = PAPER / "templates" / "network" / "section.tex.j2"

NETWORK = "synthetic-network"
LOOPBACK = NETWORK + report_network.LOOPBACK_SUFFIX
# Requests per second per pool size: two measured trials each (and a warm-up that must not count).
LOOPBACK_RATES = {1: (100_000.0, 110_000.0), 3: (200_000.0, 210_000.0), 7: (300_000.0, 310_000.0)}
NETWORK_RATES = {1: (90_000.0, 100_000.0), 3: (150_000.0, 160_000.0), 7: (300_000.0, 320_000.0)}


def write_campaign(root: Path, name: str, rates: dict[int, tuple[float, float]], link: str | None) -> Path:
    writer = synthetic.CampaignWriter(root, name)
    for threads, (first, second) in rates.items():
        cfg = synthetic.config("thread_pool", threads, 400, dispatch="request")
        writer.trial(cfg, None, wrk=synthetic.wrk_report(1.0, 1, 400), served=400)
        for repetition, rate in ((1, first), (2, second)):
            writer.trial(cfg, repetition, wrk=synthetic.wrk_report(rate, int(rate), 400), served=400)
    path = writer.finish()
    # The placement is a campaign parameter (archbench.config.params); the writer's campaign.json has none.
    meta = json.loads((path / "campaign.json").read_text())
    meta["parameters"].update(placement="netns" if link else "loopback", link=link)
    (path / "campaign.json").write_text(json.dumps(meta))
    return path


@pytest.fixture(scope="module")
def raw_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("network-raw")
    write_campaign(root, NETWORK, NETWORK_RATES, "1gbit")
    write_campaign(root, LOOPBACK, LOOPBACK_RATES, None)
    # A netns campaign whose twin is missing.
    write_campaign(root, "alone", NETWORK_RATES, "1gbit")
    shutil.copytree(FIXTURES / "fixture-minimal", root / "fixture-minimal")
    return root


@pytest.fixture(scope="module")
def study(raw_root, tmp_path_factory) -> NetworkResults:
    return report_network.NETWORK.read([NETWORK], raw_root, tmp_path_factory.mktemp("processed"))


def outputs_for(study: NetworkResults, tmp_path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """({generated file: text}, {macro: value, sentence: text}): each sentence of the section (by its fact's name,
    paper/templates/network/sentences.tex.j2) rendered from the facts the study gives its template."""
    macros = latex.MacroSet()
    files = report_network.NETWORK.section(study, macros, Paper(tmp_path / "paper" / "figures", tmp_path / "paper"))
    facts = report_network.NETWORK.sentences(study, {})
    sentences = {name: Prose().sentence("network/sentences", name, f) if f else "" for name, f in facts.items()}
    return files, {name: m.value for name, m in macros.macros.items()} | sentences


def holm_by_hand(p_values: list[float]) -> list[float]:
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


# --------------------------------------------------------------------------- the profile


def test_network_profile_is_source_000s_sweep() -> None:
    values = profile_values("network")
    assert values["servers"] == [
        {"architecture": "thread_pool", "dispatch": "request", "threads": [1, 3, 5, 7, 9, 11], "connections": [400]}
    ]
    assert (values["duration_s"], values["trials"], values["warmup"]) == (2, 4, True)
    assert "placement" not in values  # a campaign's parameter: the notebook runs the profile twice


# --------------------------------------------------------------------------- both campaigns


def test_both_campaigns_give_a_row_per_pool_size_with_our_ratio_and_welch(study) -> None:
    assert study.available
    frame = study.comparison
    assert frame["threads"].tolist() == [1, 3, 7]
    assert (frame["loopback_n"] == 2).all() and (frame["network_n"] == 2).all()  # the warm-up is not counted
    raw_p = []
    for _, row in frame.iterrows():
        net, loop = NETWORK_RATES[row["threads"]], LOOPBACK_RATES[row["threads"]]
        assert row["network_mean"] == pytest.approx(sum(net) / 2)
        assert row["loopback_mean"] == pytest.approx(sum(loop) / 2)
        assert row["ratio"] == pytest.approx(sum(net) / sum(loop))
        # Two trials a side are too few for an interval (stats.MIN_TRIALS_FOR_INTERVAL): none is given.
        assert math.isnan(row["ratio_ci_low"]) and math.isnan(row["ratio_ci_high"])
        welch = scipy_stats.ttest_ind(net, loop, equal_var=False)
        assert row["p_value"] == pytest.approx(welch.pvalue)
        raw_p.append(welch.pvalue)
    assert frame["p_holm"].tolist() == pytest.approx(holm_by_hand(raw_p))


def test_source_000s_ratio_only_where_it_has_both_setups(study) -> None:
    frame = study.comparison.set_index("threads")
    assert math.isnan(frame.loc[1, "source_ratio"])  # its separate-client table has pool sizes 3 and 7 only
    published = {3: ((364409, 15646, 5), (273615, 8849, 10)), 7: ((480115, 15883, 5), (558097, 4679, 10))}
    raw_p = []
    for threads, (separate, loopback) in published.items():
        assert frame.loc[threads, "source_ratio"] == pytest.approx(separate[0] / loopback[0])
        welch = scipy_stats.ttest_ind_from_stats(*separate, *loopback, equal_var=False)
        assert frame.loc[threads, "source_p_value"] == pytest.approx(welch.pvalue)
        raw_p.append(welch.pvalue)
    assert [frame.loc[t, "source_p_holm"] for t in (3, 7)] == pytest.approx(holm_by_hand(raw_p))
    assert sorted(source000_pools().index) == [3, 7]


def test_table_and_sentences(study, tmp_path) -> None:
    files, macros = outputs_for(study, tmp_path)
    table = files[report_network.TABLE_FILE]
    assert r"\label{tab:network}" in table
    for threads in (1, 3, 7):
        assert re.search(rf"^{threads} & ", table, re.MULTILINE), threads
    assert "0.756" in table  # 155,000 / 205,000 at N = 3
    assert "1.332" in table and "0.860" in table  # source 000 at N = 3 and 7
    assert "delta method on the log ratio" in table  # the caption says how the interval is computed
    assert macros[r"\abNetworkHasData"] == "1"
    assert "synthetic-network" in macros["campaign"].replace(r"\allowbreak{}", "")
    assert "goes from 0.756 to 1.016" in macros["ratio"]
    assert "1.332" in macros["source"] and "faster at some" in macros["source"]
    assert "link \\texttt{1gbit}" in macros["method"]
    assert "1,000\\,Mbit/s" in macros["link_bound"]
    assert "does not bound it" in macros["link_bound"]


def test_link_bound_arithmetic() -> None:
    bound = LinkBound("1gbit", 1e9, 100.0)
    assert bound.payload_bound == pytest.approx(1e9 / 800)
    assert bound.framed_bound == pytest.approx(1e9 / (8 * (100 + FRAME_OVERHEAD_BYTES)))
    assert math.isnan(LinkBound(None, math.nan, 100.0).payload_bound)
    assert math.isnan(LinkBound("1gbit", 1e9, math.nan).framed_bound)


def test_link_bound_sentence_without_response_size_or_link() -> None:
    prose = Prose()
    facts = network_facts.link_facts(LinkBound("1gbit", 1e9, math.nan), pd.DataFrame(columns=["network_mean"]))
    assert "does not record how many bytes" in prose.sentence("network/sentences", "link_bound", facts)
    facts = network_facts.link_facts(LinkBound(None, math.nan, 90.0), pd.DataFrame(columns=["network_mean"]))
    assert "was not shaped" in prose.sentence("network/sentences", "link_bound", facts)


def test_processed_csv_and_raw_untouched(raw_root, tmp_path) -> None:
    before = {p: p.read_bytes() for p in (raw_root / NETWORK).iterdir()}
    processed = tmp_path / "processed"
    report_network.NETWORK.read([NETWORK], raw_root, processed)
    assert [p.name for p in processed.iterdir()] == [report_network.COMPARISON_CSV]
    assert (processed / report_network.COMPARISON_CSV).read_text().count("\n") == 4  # header + 3 pool sizes
    assert {p: p.read_bytes() for p in (raw_root / NETWORK).iterdir()} == before


# --------------------------------------------------------------------------- missing campaigns


def test_one_campaign_missing_makes_the_section_a_sentence(raw_root, tmp_path) -> None:
    stale = tmp_path / "processed" / report_network.COMPARISON_CSV
    stale.parent.mkdir(parents=True)
    stale.write_text("stale\n")
    with pytest.warns(UserWarning, match="alone-loopback"):
        study = report_network.NETWORK.read(["alone"], raw_root, tmp_path / "processed")
    assert not study.available and not stale.exists()
    files, macros = outputs_for(study, tmp_path)
    assert macros[r"\abNetworkHasData"] == "0"
    sentence = macros["campaign"]
    assert "the loopback campaign alone-loopback is not in the raw data" in sentence
    assert files[report_network.TABLE_FILE].startswith("% no network campaign")
    with pytest.warns(UserWarning):
        study = report_network.NETWORK.read(["nope"], raw_root, None)
    assert "the network campaign nope is not in the raw data" in outputs_for(study, tmp_path)[1]["campaign"]


def test_no_campaign_given(raw_root, tmp_path) -> None:
    study = report_network.NETWORK.read([None], raw_root, None)
    _, macros = outputs_for(study, tmp_path)
    assert macros["campaign"].startswith("This section has no measurements: no network campaign was given")
    assert macros["ratio"] == ""


def test_loopback_twin_can_be_named() -> None:
    assert report_network.loopback_name("x") == "x-loopback"
    assert report_network.loopback_name("x", "y") == "y"
    assert report_network.loopback_name(None) is None


@pytest.mark.parametrize("case", ["both", "one", "none"])
def test_every_macro_of_the_network_section_is_defined(case, raw_root, tmp_path) -> None:
    campaign = {"both": NETWORK, "one": "alone", "none": None}[case]
    with pytest.warns(UserWarning) if case == "one" else contextlib.nullcontext():
        study = report_network.NETWORK.read([campaign], raw_root, None)
    _, macros = outputs_for(study, tmp_path)
    assert latex.macros_used(SECTION.read_text()) - set(macros) == set()


# --------------------------------------------------------------------------- the whole report


def test_report_pdf_builds_with_the_network_section(raw_root, tmp_path) -> None:
    paper = tmp_path / "paper"
    paper.mkdir()
    for name in ("report.tex", "references.bib"):
        shutil.copy(PAPER / name, paper / name)
    shutil.copytree(PAPER / "templates", paper / "templates")
    outputs = report.build_report(
        {"main": "fixture-minimal", "network": NETWORK},
        paths=report.ReportPaths(
            raw_root=raw_root,
            processed_dir=tmp_path / "processed",
            generated_dir=paper / "generated",
            figures_dir=paper / "figures",
        ),
    )
    assert outputs.result("network") is not None and outputs.result("network").available
    # Source 000's separate client is per-source detail: an appendix after the main body.
    assert r"\input{generated/section-network}" in (paper / "generated" / "appendices.tex").read_text()
    generated = paper / "generated"
    assert (generated / report_network.TABLE_FILE).read_text().startswith(r"\begin{table}")
    used = latex.macros_used(SECTION.read_text()) | latex.macros_used(
        (generated / report_network.TABLE_FILE).read_text()
    )
    assert used - latex.macros_used((generated / report.MACROS_FILE).read_text()) == set()
    if shutil.which("latexmk") is None:
        pytest.skip("latexmk is not installed (apt-get install latexmk texlive-latex-extra)")
    pdf = report.build_pdf(paper)
    assert pdf.read_bytes().startswith(b"%PDF")
    log = (paper / "report.log").read_text(errors="replace")
    assert "undefined" not in log.lower(), [line for line in log.splitlines() if "ndefined" in line]
    section = log[log.index("(./generated/section-network.tex") :]
    section = section[: section.find("/section", len("(./generated/section-network.tex"))]
    assert "Overfull" not in section, section
