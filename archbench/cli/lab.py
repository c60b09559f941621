"""The project's Jupyter kernel and JupyterLab (`python -m archbench lab`, `make lab`).

The kernel is registered in the venv (`<sys.prefix>/share/jupyter/kernels/archbench`) under the name the
notebooks' kernelspec names, `archbench`, shown as "archbench (.venv)"; it runs on the interpreter running this
command, where archbench is installed (editable), so a notebook imports the package without touching sys.path.

`ProjectKernelManager` is what papermill starts (archbench.cli.notebooks): the same interpreter, whatever
kernelspecs exist elsewhere (a user-level `archbench` kernel of another clone cannot shadow this one), so
`python -m archbench notebook` works on a fresh clone before `make lab` ever registered anything.

JupyterLab runs headless on a loopback address by default, with a token this command draws and prints in the URL,
and its file browser rooted at the repository.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from ipykernel.kernelspec import get_kernel_dict, install
from jupyter_client import AsyncKernelManager
from jupyter_client.kernelspec import KernelSpec

from archbench.config.paths import REPO_ROOT

KERNEL_NAME = "archbench"
KERNEL_DISPLAY_NAME = "archbench (.venv)"
DEFAULT_PORT = 8888
DEFAULT_IP = "127.0.0.1"


def project_kernel_spec() -> KernelSpec:
    """A kernelspec for the interpreter running this process (argv: sys.executable -m ipykernel_launcher ...)."""
    values = get_kernel_dict()
    values["display_name"] = KERNEL_DISPLAY_NAME
    return KernelSpec(resource_dir="", **values)


class ProjectKernelManager(AsyncKernelManager):
    """Starts the kernel on this process's interpreter instead of looking `kernel_name` up among kernelspecs."""

    @property
    def kernel_spec(self) -> KernelSpec:
        if self._kernel_spec is None:
            self._kernel_spec = project_kernel_spec()
        return self._kernel_spec


def register_kernel(prefix: Path | str | None = None) -> Path:
    """Install (or refresh) the `archbench` kernelspec under `prefix` (default: this venv); its directory."""
    return Path(install(kernel_name=KERNEL_NAME, display_name=KERNEL_DISPLAY_NAME, prefix=str(prefix or sys.prefix)))


def lab_url(ip: str, port: int, token: str) -> str:
    return f"http://{ip}:{port}/lab?token={token}"


def lab_command(
    ip: str, port: int, token: str, open_browser: bool, root_dir: Path = REPO_ROOT, as_root: bool = False
) -> list[str]:
    """The `jupyter lab` command line (run as `python -m jupyterlab` of this interpreter)."""
    command = [sys.executable, "-m", "jupyterlab", f"--ip={ip}", f"--port={port}", "--port-retries=0"]
    command += [f"--ServerApp.root_dir={root_dir}", f"--IdentityProvider.token={token}"]
    command += [] if open_browser else ["--no-browser"]
    # Jupyter refuses to run as root without it; a container or VM where root runs the benchmarks is common here.
    command += ["--allow-root"] if as_root else []
    return command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m archbench lab", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="default: %(default)s (fails if taken)")
    parser.add_argument("--ip", default=DEFAULT_IP, help="address to listen on; default: %(default)s (loopback)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser (headless)")
    parser.add_argument("--token", help="the server's token (default: a new random one)")


def run_lab(port: int, ip: str = DEFAULT_IP, no_browser: bool = True, token: str | None = None) -> None:
    """Register the kernel, print the URL, then become JupyterLab (exec: signals reach the server directly)."""
    if not 0 < port < 65536:
        raise ValueError(f"--port: {port} is not a TCP port")
    spec_dir = register_kernel()
    token = token or secrets.token_hex(24)
    print(f"kernel {KERNEL_NAME!r} ({KERNEL_DISPLAY_NAME}) registered in {spec_dir}", file=sys.stderr)
    print(f"JupyterLab: {lab_url(ip, port, token)}", flush=True)
    sys.stderr.flush()
    command = lab_command(ip, port, token, open_browser=not no_browser, as_root=os.geteuid() == 0)
    os.execv(command[0], command)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run_lab(args.port, args.ip, args.no_browser, args.token)
    return 0  # not reached: run_lab execs JupyterLab


if __name__ == "__main__":
    sys.exit(main())
