"""data/external/ for sources 001-004 against excerpts of the sources' own texts (tests/fixtures/sources/).

Every published number carries the text it was read from (`as_written`, in the excerpt section `passage`) and
the number as printed (`written_value`, inside `as_written`); converting that to the row's `unit` must give
`value`. Source 001's outputs are wrk's own format, so they are also parsed with the repository's wrk parser.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from archbench.analyze.published import (
    PUBLISHED_FILES,
    published_table,
    published_value,
    source_001_throughput,
    source_004_echo,
)
from archbench.parse import wrk

FIXTURES = Path(__file__).parent / "fixtures" / "sources"
EXTERNAL = Path(__file__).resolve().parents[1] / "data" / "external"

WORDS = {"eight": 8}
# Unit of the printed number -> factor to the row's unit (keyed by (printed suffix, row unit)).
FACTORS = {
    ("us", "ms"): 1e-3,
    ("ms", "ms"): 1.0,
    ("s", "ms"): 1e3,
    ("s", "s"): 1.0,
    ("Gbits/sec", "bit/s"): 1e9,
    ("Mbits/sec", "bit/s"): 1e6,
    ("%", "%"): 1.0,
    ("", None): 1.0,
}


def excerpt_sections(source: str) -> dict[str, str]:
    """`== passage ==` headed sections of a source's excerpt."""
    text = (FIXTURES / f"source{source}_excerpt.txt").read_text()
    parts = re.split(r"^== (.+?) ==$", text, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def printed_number(written: str, unit: str) -> float:
    """The number a source printed, in the row's unit ("343.58us" in ms, "28,000", "eight")."""
    if written in WORDS:
        return float(WORDS[written])
    match = re.fullmatch(r"([0-9][0-9,]*(?:\.[0-9]+)?)\s*(.*)", written)
    assert match, written
    number = float(match.group(1).replace(",", ""))
    suffix = match.group(2)
    factor = FACTORS.get((suffix, unit), FACTORS.get((suffix, None)))
    assert factor is not None, (written, unit)
    return number * factor


@pytest.mark.parametrize("source", sorted(PUBLISHED_FILES))
def test_every_published_number_is_in_the_source_text(source: str) -> None:
    table = published_table(source, EXTERNAL)
    sections = excerpt_sections(source)
    assert len(table) >= 10 and set(table["source"]) == {source}
    for row in table.itertuples():
        if not isinstance(row.as_written, str):
            # A number the text implies without printing it must say why.
            assert row.note, row
            continue
        assert row.passage in sections, row.passage
        assert row.as_written in sections[row.passage], (row.passage, row.as_written)
        assert row.written_value in row.as_written
        assert printed_number(row.written_value, row.unit) == pytest.approx(row.value, rel=1e-9), row


def test_source_001_rows_match_wrk_parsing_of_its_outputs() -> None:
    sections = excerpt_sections("001")
    table = published_table("001", EXTERNAL)
    for passage, rows in table[table["passage"] != "command"].groupby("passage"):
        parsed = wrk.parse(sections[passage])
        assert parsed["connections"] == 2000 and parsed["threads"] == 16 and parsed["configured_duration_s"] == 30

        def value(quantity: str, rows: pd.DataFrame = rows) -> float | None:
            return published_value(rows, quantity)

        assert value("requests_per_s") == parsed["requests_per_sec"]
        assert value("requests") == parsed["total_requests"]
        assert value("measured_duration_s") == parsed["duration_s"]
        assert value("timeouts") == parsed["socket_errors"]["timeout"]
        assert value("latency_mean_ms") == pytest.approx(parsed["latency_s"]["avg"] * 1e3)
        assert value("latency_max_ms") == pytest.approx(parsed["latency_s"]["max"] * 1e3)


def test_source_001_throughput_orders_its_architectures() -> None:
    frame = source_001_throughput(EXTERNAL).set_index("our_architecture")
    assert list(frame["requests_per_s"].sort_values().index) == ["blocking", "thread_per_conn", "epoll", "reactor"]
    assert frame.loc["blocking", "timeouts"] == 28860 and frame.loc["reactor", "timeouts"] == 0


def test_source_004_totals_are_per_client_averages_times_clients() -> None:
    table = published_table("004", EXTERNAL)
    listings = table[table["table"] == "echo client listing"]
    for (server, clients), rows in listings.groupby(["our_architecture", "connections"]):
        total = published_value(rows, "bytes_sent")
        per_client = published_value(rows, "bytes_sent_per_client")
        # The averages are totals / clients, truncated or rounded to whole bytes.
        assert abs(total / clients - per_client) <= 1, (server, clients)
    echo = source_004_echo(EXTERNAL)
    assert set(echo["connections"]) == {100, 1000, 10000}
    assert echo["bytes_per_s"].between(5e7, 1.2e8).all()  # gigabit: at most 125 MB/s


def test_source_003_iperf_and_connection_effect() -> None:
    table = published_table("003", EXTERNAL)
    loopback = published_value(table, "bandwidth_bits_per_s", machine=table["machine"].iloc[0])
    assert loopback == 68.6e9 and table["machine"].iloc[0].startswith("127.0.0.1")
    assert published_value(table, "throughput_increase_min_pct") == 28
    assert published_value(table, "throughput_increase_max_pct") == 82


def test_source_002_protocol_and_its_file() -> None:
    table = published_table("002", EXTERNAL)
    assert published_value(table, "response_body_bytes") == 151
    assert (EXTERNAL / "source002_index.html").stat().st_size == 151
    assert published_value(table, "max_workers") == 8


def test_nothing_in_the_fixtures_or_data_points_outside_the_repository() -> None:
    # The source texts were read from a directory beside the repository; no file here may name it or any
    # absolute path of the machine it was read on.
    outside = ("../" + "shared", "/" + "work" + "/")
    for path in [*FIXTURES.iterdir(), *EXTERNAL.iterdir()]:
        if path.is_file():
            text = path.read_text(errors="replace")
            assert not any(marker in text for marker in outside), path
