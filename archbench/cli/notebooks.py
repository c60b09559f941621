"""Executing notebooks with papermill and keeping every executed copy.

The executed copy of `notebooks/NAME.ipynb` goes to
`data/raw/<campaign>/executed/NAME-<UTC timestamp>.ipynb` (contracts.md section 2),
or, for notebooks that only read raw data, to a directory given explicitly.
Papermill writes to a temporary file; the copy is then written with the same
write-once rule as raw data, so neither the source notebook nor an earlier
executed copy is ever replaced.

A notebook that ran to the end is also exported to HTML (nbconvert, figures embedded as data URIs) to
`paper/notebooks/NAME.html` (a notebook saved in an explicit output directory, e.g. analyze) or
`paper/notebooks/NAME-<campaign>.html` (one beside its campaign), regenerable and replaced by the next run;
the report's appendix lists them (archbench.studies.notebooks.index, from the `archbench:*` meta tags written
here). For a raw root other than the repository's data/raw (tests, scratch runs) only an explicit `html_dir`
exports.

While the notebook runs, everything its cells print (the runner's per-trial progress lines with their ETA,
the tqdm bar) is copied to this process's stderr as it arrives, so `make trials` shows progress live; stdout
stays for the result (the executed copy's path).

The kernel is the project's (archbench.cli.lab.ProjectKernelManager): this process's interpreter, whatever
kernelspec the notebook names.

Ctrl-C reaches this process but not the kernel, which jupyter_client starts in a session of its own: while a
notebook runs, SIGINT and SIGTERM are passed on to the kernel as an interrupt, so the running cell stops the
way `python -m archbench run` does (finished trials kept, children and network namespaces removed) and the
notebook then fails with that interruption. A second signal interrupts this process itself.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import nbformat
import papermill
from nbconvert import HTMLExporter

from archbench.cli.lab import KERNEL_NAME, ProjectKernelManager
from archbench.config.paths import PAPER_DIR, RAW_ROOT
from archbench.config.values import ParameterError
from archbench.data.storage import CAMPAIGN_FILE, EXECUTED_DIR, write_new_file
from archbench.studies.notebooks.index import NOTEBOOKS_DIR, meta_tags

HTML_DIR = PAPER_DIR / NOTEBOOKS_DIR


class NotebookFailed(RuntimeError):
    """The notebook raised; `executed_copy` is where the executed copy (with the error) is, if kept."""

    def __init__(self, message: str, executed_copy: Path | None) -> None:
        super().__init__(message)
        self.executed_copy = executed_copy


@dataclass(frozen=True)
class NotebookRun:
    source: Path
    executed_copy: Path
    html: Path | None = None  # the HTML export (None: not exported)


def parse_parameter_value(text: str) -> Any:
    """A `-p key value` value: JSON or a Python literal for numbers, lists and None; else the string."""
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    try:
        return json.loads(text)
    except ValueError:
        pass
    if text[:1] in "[({":
        try:
            return ast.literal_eval(text)
        except (ValueError, SyntaxError):
            pass
    return text


def utc_stamp(now: datetime | None = None) -> str:
    return (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")


def save_executed_copy(data: bytes, directory: Path, name: str, now: datetime | None = None) -> Path:
    """Write `NAME-<UTC>.ipynb` in `directory`, never over an existing file (a suffix if the second repeats)."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = f"{name}-{utc_stamp(now)}"
    for attempt in range(1, 1000):
        path = directory / (f"{stem}.ipynb" if attempt == 1 else f"{stem}-{attempt}.ipynb")
        try:
            write_new_file(path, data)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free name for {stem} in {directory}")


def notebook_source(name: str, notebooks_dir: Path) -> Path:
    path = Path(name)
    if path.suffix != ".ipynb":
        path = notebooks_dir / f"{name}.ipynb"
    if not path.is_file():
        available = ", ".join(sorted(p.stem for p in notebooks_dir.glob("*.ipynb"))) or "none"
        raise FileNotFoundError(f"no notebook {path} (available in {notebooks_dir}: {available})")
    return path


def child_pids(parent: int) -> list[int]:
    """The processes whose parent is `parent` (from /proc; empty where there is none)."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended while we looked
        if int(fields[1]) == parent:
            children.append(int(stat.parent.name))
    return children


@contextmanager
def interrupts_forwarded_to_kernel() -> Iterator[None]:
    """While the block runs, the first SIGINT or SIGTERM interrupts our kernel(s) instead of this process."""

    def forward(signum: int, frame: Any) -> None:
        for pid in child_pids(os.getpid()):
            try:
                os.kill(pid, signal.SIGINT)
            except ProcessLookupError:
                pass
        # A second signal stops this process too (a kernel that does not answer an interrupt).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.default_int_handler)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def execute_notebook(
    name: str,
    *,
    campaign: str | None,
    parameters: Mapping[str, Any] | None = None,
    raw_root: Path | str = "data/raw",
    output_dir: Path | str | None = None,
    notebooks_dir: Path | str = "notebooks",
    html_dir: Path | str | None = None,
    export: bool = True,
) -> NotebookRun:
    """Execute notebooks/NAME.ipynb with papermill; `campaign` and `raw_root` are passed as parameters.

    Without `output_dir` the copy goes beside the campaign (which must then be
    named); if the notebook fails before the campaign directory exists (e.g. a
    bad parameter), no directory is created and the copy stays in a temporary
    directory whose path the error names.
    With `export`, a notebook that succeeded is also exported to HTML in `html_dir` (default: paper/notebooks/
    for campaigns under the repository's data/raw, else none). The cells' output is copied to stderr as it arrives,
    and the kernel runs in the current directory.
    """
    source = notebook_source(name, Path(notebooks_dir))
    if output_dir is None and not campaign:
        raise ValueError("campaign: needed to save the executed notebook beside it (or give an output directory)")
    target_dir = Path(output_dir) if output_dir is not None else Path(raw_root) / str(campaign) / EXECUTED_DIR
    if target_dir.resolve() == source.parent.resolve():
        raise ValueError(f"output directory {target_dir} is the notebooks' own directory; not writing beside sources")

    values: dict[str, Any] = {}
    if campaign:
        values["campaign"] = campaign
    values["raw_root"] = str(raw_root)
    values.update(parameters or {})
    # papermill only warns about a name the parameters cell does not declare, and the notebook then runs without
    # it: a misspelt or unsupported parameter would change nothing, silently.
    declared = papermill.inspect_notebook(str(source))
    unknown = sorted(set(parameters or {}) - set(declared))
    if unknown:
        raise ParameterError(unknown[0], f"not a parameter of {source.name}; its parameters: {', '.join(declared)}")

    scratch = Path(tempfile.mkdtemp(prefix=f"archbench-{source.stem}-"))
    scratch_copy = scratch / source.name
    live = sys.stderr
    error: Exception | None = None
    try:
        with interrupts_forwarded_to_kernel():
            papermill.execute_notebook(
                str(source),
                str(scratch_copy),
                parameters=values,
                cwd=str(Path.cwd()),
                progress_bar=False,
                log_output=False,
                stdout_file=live,
                stderr_file=live,
                kernel_name=KERNEL_NAME,
                kernel_manager_class=ProjectKernelManager,
            )
    except Exception as exc:  # noqa: BLE001 - re-raised below after the copy is kept
        error = exc

    keep_beside_campaign = output_dir is not None or (Path(raw_root) / str(campaign) / CAMPAIGN_FILE).is_file()
    saved: Path | None = None
    if scratch_copy.is_file() and (error is None or keep_beside_campaign):
        try:
            saved = save_executed_copy(scratch_copy.read_bytes(), target_dir, source.stem)
            shutil.rmtree(scratch, ignore_errors=True)
        except OSError as copy_error:
            if error is None:
                raise
            # The notebook failed already (a full disk, say): report that failure, not the copy's.
            live.write(f"the executed copy could not be saved in {target_dir}: {copy_error.strerror or copy_error}\n")
    if error is not None:
        where = saved or (scratch_copy if scratch_copy.is_file() else None)
        raise NotebookFailed(
            f"{source} failed: {_describe(error)}" + (f" (executed copy: {where})" if where else ""), where
        ) from error
    assert saved is not None
    exported = None
    if export:
        beside_campaign = output_dir is None
        html_name = f"{source.stem}-{campaign}.html" if beside_campaign else f"{source.stem}.html"
        directory = Path(html_dir) if html_dir is not None else default_html_dir(Path(raw_root))
        if directory is not None:
            exported = export_html(saved, directory / html_name, notebook=source.stem, campaign=campaign or "")
    return NotebookRun(source=source, executed_copy=saved, html=exported)


def default_html_dir(raw_root: Path) -> Path | None:
    """paper/notebooks/ for the repository's campaigns; None (no export unless asked) for a raw root elsewhere,
    whose notebooks the repository's report does not list (and whose executed/ holds only notebooks)."""
    return HTML_DIR if raw_root.resolve() == RAW_ROOT.resolve() else None


def executed_at(notebook: nbformat.NotebookNode) -> str:
    """When papermill finished the notebook (UTC, ISO 8601 to the second), else now."""
    end = str(notebook.metadata.get("papermill", {}).get("end_time") or "")
    try:
        moment = datetime.fromisoformat(end)
    except ValueError:
        moment = datetime.now(timezone.utc)
    if moment.tzinfo is None:  # papermill writes UTC without saying so
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def export_html(executed_copy: Path, target: Path, *, notebook: str, campaign: str) -> Path:
    """Write `executed_copy` as HTML to `target` (replacing an earlier export), figures embedded, with the
    meta tags the report's appendix reads."""
    node = nbformat.read(executed_copy, as_version=4)
    body, _resources = HTMLExporter().from_notebook_node(node)
    facts = {
        "notebook": notebook,
        "campaign": campaign,
        "executed": executed_at(node),
        "executed-copy": executed_copy.name,
    }
    body = body.replace("<head>", "<head>\n" + meta_tags(facts), 1)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f".{target.name}.tmp")
    scratch.write_text(body, encoding="utf-8")
    scratch.replace(target)  # a reader never sees half a file
    return target


def _describe(error: Exception) -> str:
    ename, evalue = getattr(error, "ename", None), getattr(error, "evalue", None)
    if ename:
        return f"{ename}: {evalue}"
    return f"{type(error).__name__}: {error}"
