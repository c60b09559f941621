"""Command line: `python -m archbench parse|run|bench|notebook ...` (contracts.md section 5).

    python -m archbench parse FILE [--tool wrk]
    python -m archbench run [--profile smoke|default|full|bench] [--campaign NAME] [--raw-root data/raw]
                            [--servers S ...] [--thread-counts N ...] [--connection-counts N ...]
                            [--load-threads N ...] [--pipeline-depths D ...] [--duration-s N] [--trials N]
                            [--warmup|--no-warmup]
                            [--server-cpus CPUS] [--load-cpus CPUS] [--seed N] [--wrk-timeout-s N]
                            [--ready-timeout-s S] [--stop-grace-s S] [--response SPEC] [--workloads JSON]
                            [--build-dir build]
                            [--proto http|echo] [--load-generator wrk|wrk2|oha|open_loop|echo_client|httperf]
                            [--message-size BYTES] [--sources K] [--connect-rate R]
                            [--max-conns-cap CAP] [--max-conns-duration-s S]
                            [--rate-fractions F ...] [--offered-rates R ...] [--arrival A] [--saturation-campaign NAME]
                            [--rate-reference KEY] [--ci-target PCT] [--max-trials N]
                            [--adaptive-criterion mean|paired|paired_median] [--adaptive-budget-s S]
                            [--placement loopback|netns|ssh] [--link MODEL] [--hosts FILE] [--topology-root DIR] [--dry-run]
    python -m archbench bench [--trials 5] [--duration-s 5] [--campaign NAME] [--raw-root data/raw]
                              [--build-dir build] [--server-cpus CPUS] [--load-cpus CPUS] [--seed N]
    python -m archbench notebook NAME [--campaign C] [--raw-root data/raw] [--output-dir DIR] [-p KEY VALUE]...
    python -m archbench import PATH [--raw-root data/raw] [--as NEWNAME]
    python -m archbench artifact [--allow-dirty] [--dist dist]          (archbench.cli.artifact)
    python -m archbench check-artifact ARCHIVE [--no-pdf] [--keep DIR]  (archbench.cli.artifact_check)
    python -m archbench lab [--port 8888] [--ip 127.0.0.1] [--no-browser] [--token T]
    python -m archbench campaigns [--set KEY=CAMPAIGN,...] [--measured-main NAME] [--json] [--makefile FILE]
    python -m archbench campaigns --catalogue [--markdown] | --measures KEY   (archbench.cli.campaigns)
    python -m archbench pick [--work-us N] [--block-us N] [--idle K] [--churn] [--response SPEC] [--connections N]
                             [--budget 3m] [--delta F] [--servers S ...] ...                (archbench.cli.pick)

Exit status: 0 done, 1 could not run (missing binary, existing campaign with other
parameters, notebook error...), 2 invalid parameter, 130 interrupted (re-run to resume).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from archbench.cli import artifact, artifact_check, campaigns, lab, pick
from archbench.cli.notebooks import NotebookFailed, execute_notebook, parse_parameter_value
from archbench.config.params import ParameterError, Parameters, resolve_parameters
from archbench.config.plan import TrialConfig, estimate_duration_s, expand_grid
from archbench.config.plan_description import describe_configurations
from archbench.config.profiles import PROFILE_NAMES, TRIAL_OVERHEAD_S
from archbench.config.topology import AUTO, CPUS, CpuSplit, CpuTopology, read_topology
from archbench.config.values import parse_cpu_list
from archbench.data import manifest
from archbench.data.importer import import_campaigns
from archbench.data.manifest import ManifestConflict
from archbench.data.storage import StorageError
from archbench.measure.bench import run_bench
from archbench.measure.latency import saturation_rates, saturation_source
from archbench.measure.progress import format_duration
from archbench.measure.runner import CampaignInterrupted, PreflightError, run_campaign
from archbench.parse import LoadOutputError, known_tools, parse_file

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _count_or_auto(text: str) -> int | str:
    """A sweep value on the command line: a number, "auto" / "auto:N" or "cpus" (archbench.config.topology)."""
    if text in (AUTO, CPUS) or text.startswith(AUTO + ":"):
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a number nor auto nor cpus") from None


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile", choices=PROFILE_NAMES, default="default", help="parameter defaults (default: %(default)s)"
    )
    parser.add_argument("--campaign", help="campaign name (default: PROFILE-HOSTNAME)")
    parser.add_argument("--raw-root", default="data/raw", help="where campaigns live (default: %(default)s)")
    parser.add_argument(
        "--servers",
        nargs="+",
        metavar="SERVER",
        help="architectures, or ARCH:key=v1/v2,... e.g. thread_pool:dispatch=connection/request",
    )
    parser.add_argument(
        "--thread-counts",
        nargs="+",
        type=_count_or_auto,
        metavar="N",
        help="threads or worker processes (--threads, prefork --workers, nginx worker_processes); "
        "auto: powers of two up to max(8, 2 x server CPUs); cpus: the server's CPU count",
    )
    parser.add_argument("--connection-counts", nargs="+", type=int, metavar="N", help="wrk -c values")
    parser.add_argument(
        "--load-threads",
        nargs="+",
        type=_count_or_auto,
        metavar="N",
        help="wrk -t values; auto: one per load CPU, fitted to each connection count",
    )
    parser.add_argument(
        "--pipeline-depths",
        nargs="+",
        type=int,
        metavar="D",
        help="requests per connection per write (1: no pipelining; >1: wrk with pipeline.lua)",
    )
    parser.add_argument("--duration-s", type=int, metavar="N", help="wrk -d, seconds")
    parser.add_argument("--trials", type=int, metavar="N", help="measured repetitions per configuration")
    parser.add_argument(
        "--warmup",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="one warm-up trial per configuration (kept, marked, excluded downstream)",
    )
    parser.add_argument(
        "--server-cpus",
        metavar="CPUS",
        help="taskset CPU list for the server (default auto: half the physical cores, one NUMA node)",
    )
    parser.add_argument(
        "--load-cpus", metavar="CPUS", help="taskset CPU list for wrk (default auto: the CPUs the server leaves)"
    )
    parser.add_argument("--seed", type=int, help="seed of the execution order (default: random, recorded)")
    parser.add_argument("--wrk-timeout-s", type=int, metavar="N", help="wrk --timeout, seconds")
    parser.add_argument("--ready-timeout-s", type=float, metavar="S", help="wait for the ready line this long")
    parser.add_argument("--stop-grace-s", type=float, metavar="S", help="SIGTERM to SIGKILL grace period")
    parser.add_argument("--response", help="server --response: test, hello, file:PATH or bytes:N")
    parser.add_argument(
        "--workloads",
        metavar="JSON",
        help='workload families as a JSON list, e.g. \'[{"name": "cpu", "work_us": [20, 100]}]\' (keys: '
        "name, work_us, block_us, block_dist, idle_connections, connection_mode, response, thread_counts, "
        "connection_counts, servers; archbench.config.workloads)",
    )
    parser.add_argument("--build-dir", help="CMake build directory holding bin/ (default: build)")
    parser.add_argument(
        "--proto",
        choices=("http", "echo"),
        help="http (default) or echo: servers run --proto echo, echo_client is the load",
    )
    parser.add_argument(
        "--load-generator", help="wrk or httperf (closed loop), oha or wrk2 (open loop), echo_client (echo)"
    )
    parser.add_argument("--httperf-calls", type=int, metavar="K", help="httperf --num-calls (requests per connection)")
    parser.add_argument("--httperf-rate", type=int, metavar="R", help="httperf --rate, connections/s (0: none)")
    parser.add_argument("--httperf-hog", action=argparse.BooleanOptionalAction, default=None, help="httperf --hog")
    parser.add_argument(
        "--warmup-s",
        type=int,
        metavar="S",
        help="seconds of the same load on each trial's server before its measured window (0: none)",
    )
    parser.add_argument("--baseline-s", type=int, metavar="S", help="iperf3 baseline length at creation (0: none)")
    parser.add_argument("--message-size", type=int, metavar="BYTES", help="echo: bytes per message (default 64)")
    parser.add_argument("--sources", type=int, metavar="K", help="echo: source addresses 127.0.0.1..K (0: no bind)")
    parser.add_argument("--connect-rate", type=int, metavar="R", help="echo: connections per second (0: all at once)")
    parser.add_argument(
        "--max-conns-cap",
        type=int,
        metavar="CAP",
        help="echo: also one --max-conns trial per server variant, up to CAP connections",
    )
    parser.add_argument("--max-conns-duration-s", type=int, metavar="S", help="echo: longest --max-conns ramp")
    parser.add_argument(
        "--rate-fractions",
        nargs="+",
        type=float,
        metavar="F",
        help="open loop: fractions of each configuration's saturation throughput to offer",
    )
    parser.add_argument("--offered-rates", nargs="+", type=int, metavar="R", help="open loop: requests/s in total")
    parser.add_argument(
        "--arrival",
        choices=("fixed", "poisson"),
        help="open_loop's schedule: evenly spaced or a Poisson process of the offered rate (default: the profile's)",
    )
    parser.add_argument(
        "--saturation-campaign",
        metavar="NAME",
        help="closed-loop campaign in RAW_ROOT whose median requests/s are the saturation rates",
    )
    parser.add_argument(
        "--rate-reference",
        metavar="KEY",
        help="offer fractions of this saturation key's throughput to every configuration",
    )
    parser.add_argument(
        "--ci-target",
        type=float,
        metavar="PCT",
        help="adaptive repetition: add trials until the 95%% CI half-width is <= PCT %% of the mean",
    )
    parser.add_argument(
        "--max-trials",
        type=int,
        metavar="N",
        help="adaptive repetition: at most N measured trials per configuration (default 3 x --trials)",
    )
    parser.add_argument(
        "--adaptive-criterion",
        choices=("mean", "paired", "paired_median"),
        help="what --ci-target bounds: each configuration's mean (default), every paired ratio to the reference "
        "(whole rounds), or their median",
    )
    parser.add_argument(
        "--adaptive-budget-s",
        type=float,
        metavar="S",
        help="adaptive repetition: no round starts that would take the adaptive trials beyond S seconds",
    )
    parser.add_argument(
        "--placement",
        choices=("loopback", "netns", "ssh"),
        help="where server and load generator run: both on loopback (default), each in its own network "
        "namespace joined by a veth pair (root), or on the hosts of --hosts reached by ssh",
    )
    parser.add_argument(
        "--hosts",
        metavar="FILE",
        help="ssh only: the hosts inventory (TOML: each host's address, user, port, key, role, cpus, workdir)",
    )
    parser.add_argument(
        "--link",
        metavar="MODEL",
        help="netns only: the veth link's model, '<rate>' or '<rate> <delay>' in tc's units (e.g. '1gbit')",
    )
    parser.add_argument(
        "--topology-root",
        type=Path,
        metavar="DIR",
        help="for planning and testing: read the CPU topology from DIR/sys (a fake tree such as "
        "tests/fixtures/topology/16cpu-smt) instead of this machine's",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the CPU split, the configurations and expected duration only"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m archbench", description="archbench measurement tools")
    commands = parser.add_subparsers(dest="command", required=True)

    parse = commands.add_parser("parse", help="print a load-generator output file as the parsed JSON record")
    parse.add_argument("file", type=Path)
    parse.add_argument(
        "--tool",
        choices=known_tools(),
        help="the tool that wrote FILE (default: from the name <trial-id>.<tool>.txt, else from the content)",
    )

    run = commands.add_parser("run", help="run (or resume) a campaign")
    _add_run_arguments(run)

    bench = commands.add_parser("bench", help="every architecture against nginx: CPU per request, req/s, targets")
    bench.add_argument(
        "--trials", type=int, default=5, metavar="N", help="measured trials per configuration (default: %(default)s)"
    )
    bench.add_argument("--duration-s", type=int, default=5, metavar="N", help="wrk -d, seconds (default: %(default)s)")
    bench.add_argument("--campaign", help="campaign name (default: bench-HOST-UTCDATETIME, a new one per run)")
    bench.add_argument("--raw-root", default="data/raw", help="where campaigns live (default: %(default)s)")
    bench.add_argument("--build-dir", help="CMake build directory holding bin/ (default: build)")
    bench.add_argument(
        "--server-cpus", metavar="CPUS", help="taskset CPU list for the server (default auto: half the cores)"
    )
    bench.add_argument("--load-cpus", metavar="CPUS", help="taskset CPU list for wrk (default auto: the rest)")
    bench.add_argument("--seed", type=int, help="seed of the execution order (default: random, recorded)")

    importer = commands.add_parser(
        "import", help="merge campaigns from another machine's data/raw (byte for byte, checksummed; never overwrites)"
    )
    importer.add_argument("path", type=Path, help="another machine's raw root, or one campaign directory")
    importer.add_argument("--raw-root", default="data/raw", help="ours (default: %(default)s)")
    importer.add_argument(
        "--as",
        dest="rename",
        metavar="NEWNAME",
        help="import the one campaign of PATH under this name (the original name goes into "
        "NEWNAME/import/import-<UTC>.json; no file is edited)",
    )

    manifest = commands.add_parser(
        "manifest",
        help="check data/raw against its checksum manifest, or add new files to it (never changes a listed entry)",
    )
    manifest.add_argument("--raw-root", default="data/raw", help="default: %(default)s")
    manifest.add_argument(
        "--update", action="store_true", help="add files not listed yet; refuses if a listed file changed or is missing"
    )

    notebook = commands.add_parser("notebook", help="execute notebooks/NAME.ipynb with papermill, keep the copy")
    notebook.add_argument("name", help="notebook name in notebooks/ (e.g. run_trials) or a path to an .ipynb")
    notebook.add_argument("--campaign", help="the campaign; the executed copy goes to RAW_ROOT/CAMPAIGN/executed/")
    notebook.add_argument("--raw-root", default="data/raw", help="default: %(default)s")
    notebook.add_argument("--output-dir", type=Path, help="save the executed copy here instead (read-only notebooks)")
    notebook.add_argument("--notebooks-dir", type=Path, default=Path("notebooks"), help="default: %(default)s")
    notebook.add_argument(
        "--html-dir",
        type=Path,
        help="HTML export's directory (default: paper/notebooks/ when --raw-root is the repository's data/raw, "
        "else no export)",
    )
    notebook.add_argument("--no-html", action="store_true", help="do not export the executed notebook to HTML")
    notebook.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("KEY", "VALUE"),
        help="notebook parameter; VALUE is JSON (numbers, lists, null) or a plain string",
    )
    lab.add_arguments(commands.add_parser("lab", help="JupyterLab with the project's kernel (make lab)"))
    campaigns.add_parser(commands)
    pick.add_parser(commands)
    artifact.add_parsers(commands)
    return parser


def cmd_parse(args: argparse.Namespace) -> int:
    print(json.dumps(parse_file(args.file, tool=args.tool), indent=2))
    return EXIT_OK


RUN_PARAMETER_NAMES = (
    "campaign",
    "raw_root",
    "servers",
    "thread_counts",
    "connection_counts",
    "load_threads",
    "pipeline_depths",
    "duration_s",
    "trials",
    "warmup",
    "warmup_s",
    "server_cpus",
    "load_cpus",
    "seed",
    "wrk_timeout_s",
    "ready_timeout_s",
    "stop_grace_s",
    "response",
    "build_dir",
    "proto",
    "load_generator",
    "message_size",
    "sources",
    "connect_rate",
    "max_conns_cap",
    "max_conns_duration_s",
    "rate_fractions",
    "offered_rates",
    "rate_reference",
    "arrival",
    "ci_target",
    "max_trials",
    "adaptive_criterion",
    "adaptive_budget_s",
    "placement",
    "link",
    "hosts",
    "httperf_calls",
    "httperf_rate",
    "httperf_hog",
    "baseline_s",
    "workloads",
)


def cmd_run(args: argparse.Namespace) -> int:
    overrides: dict[str, Any] = {name: getattr(args, name) for name in RUN_PARAMETER_NAMES}
    if args.saturation_campaign:
        source = Path(args.raw_root) / args.saturation_campaign
        overrides.update(saturation_rates=saturation_rates(source), saturation_source=saturation_source(source))
    topology = read_topology(args.topology_root) if args.topology_root else None
    params = resolve_parameters(args.profile, topology=topology, **overrides)
    if args.dry_run:
        configs = expand_grid(params)
        print(_describe_split(params, configs, topology or read_topology()))
        for line in describe_configurations(params, configs):
            print(line)
        runs = params.trials + (1 if params.warmup else 0)
        expected = estimate_duration_s(params, TRIAL_OVERHEAD_S)
        adaptive = (
            f", up to {params.max_trials} trials per configuration if the CI needs them"
            if params.ci_target is not None
            else ""
        )
        print(
            f"{len(configs)} configurations x {runs} runs = {len(configs) * runs} trials, "
            f"about {format_duration(expected)}{adaptive} (campaign {params.campaign!r} in {params.raw_root})"
        )
        return EXIT_OK

    if args.topology_root:
        raise ParameterError("topology_root", "is for planning only (--dry-run): trials run on this machine's CPUs")
    # SIGTERM stops a campaign the same way as Ctrl-C: children stopped, finished trials kept.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    result = run_campaign(params)
    counts = ", ".join(f"{n} {status}" for status, n in sorted(result.statuses.items())) or "nothing to run"
    print(
        f"campaign {params.campaign}: {result.ran} trials run now ({counts}), {result.skipped} already done; "
        f"data in {result.path}",
        file=sys.stderr,
    )
    return EXIT_OK


# How each load generator is told its thread count (oha has none: it runs its own).
LOAD_THREAD_FLAGS = {"wrk": "-t", "wrk2": "-t", "echo_client": "--threads "}


def _describe_split(params: Parameters, configs: Sequence[TrialConfig], topology: CpuTopology) -> str:
    """The dry run's CPU-split line, with the load generator's thread counts as the plan runs them."""
    split = CpuSplit(
        parse_cpu_list(params.server_cpus, "server_cpus"), parse_cpu_list(params.load_cpus, "load_cpus"), topology
    )
    planned = sorted({config.load_threads for config in configs}) or list(params.load_threads)
    most = max(params.load_threads)
    threads = "/".join(map(str, planned)) if not params.load_threads_auto else str(most)
    if params.load_threads_auto and planned != [most]:
        threads += f", {'/'.join(str(t) for t in planned if t != most)} where the connections need fewer"
    flag = LOAD_THREAD_FLAGS.get(params.load_generator)
    return split.describe(f"{params.load_generator} {flag}{threads}" if flag else params.load_generator)


def cmd_bench(args: argparse.Namespace) -> int:
    # SIGTERM stops the benchmark like Ctrl-C: children stopped, finished trials kept.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    path, report = run_bench(
        trials=args.trials,
        duration_s=args.duration_s,
        campaign=args.campaign,
        raw_root=args.raw_root,
        build_dir=args.build_dir,
        server_cpus=args.server_cpus,
        load_cpus=args.load_cpus,
        seed=args.seed,
    )
    print(f"campaign {path.name} ({path})\n")
    print(report)
    return EXIT_OK


def cmd_notebook(args: argparse.Namespace) -> int:
    parameters = {key: parse_parameter_value(value) for key, value in args.parameter}
    run = execute_notebook(
        args.name,
        campaign=args.campaign,
        parameters=parameters,
        raw_root=args.raw_root,
        output_dir=args.output_dir,
        notebooks_dir=args.notebooks_dir,
        html_dir=args.html_dir,
        export=not args.no_html,
    )
    if run.html is not None:
        print(f"HTML: {run.html}", file=sys.stderr)
    print(run.executed_copy)
    return EXIT_OK


def cmd_lab(args: argparse.Namespace) -> int:
    lab.run_lab(args.port, args.ip, args.no_browser, args.token)
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    for outcome in import_campaigns(args.path, args.raw_root, rename=args.rename):
        print(outcome.describe())
    return EXIT_OK


def cmd_manifest(args: argparse.Namespace) -> int:
    raw_root = Path(args.raw_root)
    if args.update:
        added = manifest.update(raw_root)
        campaigns = sorted({manifest.campaign_of(p) for p in added})
        print(f"{raw_root / manifest.MANIFEST_DIR}: {len(added)} file(s) added ({', '.join(campaigns) or 'none new'})")
        return 0
    check = manifest.verify(raw_root)
    if check.describe():
        print(check.describe())
    verdict = "intact" if check.intact else "DAMAGED: listed files modified or missing"
    print(
        f"{raw_root}: {verdict} ({len(manifest.read_manifest(raw_root))} listed, {len(check.unlisted)} not listed yet)"
    )
    return 0 if check.intact else EXIT_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handlers = {
        "parse": cmd_parse,
        "run": cmd_run,
        "bench": cmd_bench,
        "notebook": cmd_notebook,
        "lab": cmd_lab,
        "import": cmd_import,
        "manifest": cmd_manifest,
        "artifact": artifact.cmd_artifact,
        "check-artifact": artifact_check.cmd_check_artifact,
        "campaigns": campaigns.cmd_campaigns,
        "pick": pick.cmd_pick,
    }
    try:
        return handlers[args.command](args)
    except ParameterError as error:
        print(f"error: invalid parameter {error}", file=sys.stderr)
        return EXIT_USAGE
    except CampaignInterrupted as interrupted:
        print(f"\n{interrupted}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (
        PreflightError,
        StorageError,
        LoadOutputError,
        NotebookFailed,
        FileNotFoundError,
        FileExistsError,
        ValueError,
        ManifestConflict,
    ) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as error:  # a full disk or a read-only directory outside the campaign store: one line, no trace
        where = f"{error.filename}: " if error.filename else ""
        print(f"error: {where}{error.strerror or error}", file=sys.stderr)
        return EXIT_ERROR
