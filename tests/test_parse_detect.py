"""`python -m archbench parse FILE` on files whose name does not say the tool: recognised by content."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from archbench.cli.main import main
from archbench.parse import ToolDetectionError, detect_tool, known_tools, parse_file, parse_output
from archbench.parse.detect import candidates

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TOOLS = ("wrk", "wrk2", "oha", "open_loop", "httperf", "echo_client", "iperf3")
REAL_OUTPUTS = sorted(path for tool in TOOLS for path in (FIXTURES / tool).glob(f"*.{tool}.txt"))


def tool_of(path: Path) -> str:
    return path.name.split(".")[-2]


def test_every_tool_has_real_outputs() -> None:
    assert {tool_of(path) for path in REAL_OUTPUTS} == set(TOOLS)
    assert set(TOOLS) == set(known_tools())


@pytest.mark.parametrize("path", REAL_OUTPUTS, ids=lambda path: path.name)
def test_renamed_output_is_recognised_and_parsed(path: Path, tmp_path: Path) -> None:
    unnamed = tmp_path / "out.txt"
    shutil.copyfile(path, unnamed)
    assert detect_tool(unnamed.read_text()) == tool_of(path)
    assert parse_file(unnamed) == parse_output(tool_of(path), path.read_text())


@pytest.mark.parametrize(
    ("text", "tool"),
    [
        ("Running 2s test @ http://127.0.0.1:1/\n  1 threads and 1 connections\n", "wrk"),
        ("Running 2s test @ http://x/\n  Thread calibration: mean lat.: 1.0ms, rate sampling interval: 10ms\n", "wrk2"),
        ("#[Mean    =        6.602, StdDeviation   =        1.919]\nRunning 1s test @ http://x/\n", "wrk2"),
        ("httperf --hog --server=x --port=1 --num-conns=1\n", "httperf"),
        ("Total: connections 1 requests 1 replies 1 test-duration 0.001 s\n", "httperf"),
        ('{"summary": {}, "latencyPercentiles": {}}', "oha"),
        ("Summary:\n  Success rate:\t100.00%\n  Total:\t2.0 secs\n", "oha"),
        ('echo_client: 10 connections\n{"tool":"echo_client","mode":"throughput"}\n', "echo_client"),
        ('{"start": {}, "intervals": [], "end": {}}', "iperf3"),
    ],
)
def test_signatures(text: str, tool: str) -> None:
    assert candidates(text) == [tool]


def test_short_wrk2_run_without_its_markers_goes_to_the_parser_that_accepts_it() -> None:
    text = (FIXTURES / "wrk2" / "constructed_short_run.wrk2.txt").read_text()
    assert "calibration" not in text and "HdrHistogram" not in text
    assert detect_tool(text) == "wrk2"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty"),
        ("hello\n", "not recognisably the output of any known tool"),
        ('{"tool": "other"}', "not recognisably the output of any known tool"),
        (
            (FIXTURES / "wrk" / "normal_latency.wrk.txt").read_text()
            + (FIXTURES / "httperf" / "normal.httperf.txt").read_text(),
            r"several tools \(wrk, httperf\)",
        ),
    ],
)
def test_unrecognised_or_ambiguous_content_names_tool_and_lists_the_tools(text: str, message: str) -> None:
    with pytest.raises(ToolDetectionError, match=message) as caught:
        detect_tool(text)
    assert "--tool" in str(caught.value)
    assert all(tool in str(caught.value) for tool in TOOLS)


def test_the_name_still_wins_over_the_content(tmp_path: Path) -> None:
    named = tmp_path / "x-r01.wrk2.txt"
    shutil.copyfile(FIXTURES / "wrk2" / "seed001_epoll.wrk2.txt", named)
    assert parse_file(named)["tool"] == "wrk2"
    assert parse_file(named, tool="wrk2") == parse_file(named)


def test_cli_parses_an_unnamed_httperf_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unnamed = tmp_path / "load.log"
    shutil.copyfile(FIXTURES / "httperf" / "timeout_silent_server.httperf.txt", unnamed)
    assert main(["parse", str(unnamed)]) == 0
    out = capsys.readouterr().out
    assert '"tool": "httperf"' in out and '"timeout": 50' in out


def test_cli_error_for_unknown_content_names_tool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    unnamed = tmp_path / "load.log"
    unnamed.write_text("nothing a load generator printed\n")
    assert main(["parse", str(unnamed)]) == 1
    err = capsys.readouterr().err
    assert "--tool" in err and "load.log" in err and "httperf" in err
