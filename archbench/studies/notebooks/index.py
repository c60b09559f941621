"""The appendix that lists the executed notebooks exported to HTML (generated/notebooks.tex).

`python -m archbench notebook` exports each notebook it ran to `paper/notebooks/*.html` (archbench.cli.notebooks)
with `<meta name="archbench:KEY" content="...">` tags in the head: which notebook, which campaign, when its
execution ended. The report lists what is in that directory when it is built (the paper directory's
`notebooks/`, beside `generated/`); with none, the appendix is a sentence saying where they would be. The
sentences and the caption are in paper/templates/notebooks/index.tex.j2.
"""

from __future__ import annotations

import argparse
import html
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from archbench.config.paths import GENERATED_DIR
from archbench.render.latex import FILL_COLUMN, Column, escape, escape_command, escape_identifier, render_longtable
from archbench.render.prose import Prose

NOTEBOOKS_FILE = "notebooks.tex"
NOTEBOOKS_DIR = "notebooks"  # in the paper directory: paper/notebooks/
META_PREFIX = "archbench:"
TEMPLATE = "notebooks/index"
# The head of an exported page is small; a page's figures (megabytes of data URIs) need not be read to find it.
HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class NotebookEntry:
    file: str  # the HTML file's name in the notebooks directory
    notebook: str
    campaign: str
    executed: str  # UTC, ISO 8601 to the second ("" when the page does not say)


def meta_tags(facts: dict[str, str]) -> str:
    """The head tags an exported page carries (one per fact, `archbench:KEY`)."""
    return "".join(
        f'<meta name="{META_PREFIX}{key}" content="{html.escape(value, quote=True)}">\n' for key, value in facts.items()
    )


class _MetaReader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.facts: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        name = values.get("name") or ""
        if tag == "meta" and name.startswith(META_PREFIX):
            self.facts[name.removeprefix(META_PREFIX)] = values.get("content") or ""


def page_facts(path: Path) -> dict[str, str]:
    """The `archbench:*` meta facts of one exported page."""
    with open(path, encoding="utf-8", errors="replace") as page:
        head = page.read(HEAD_BYTES)
    reader = _MetaReader()
    reader.feed(head.split("</head>", 1)[0])
    return reader.facts


def notebook_entries(notebooks_dir: Path) -> list[NotebookEntry]:
    """The exported notebooks in `notebooks_dir`, by name; a page without the tags is listed by its name alone."""
    entries = []
    for path in sorted(Path(notebooks_dir).glob("*.html")):
        facts = page_facts(path)
        entries.append(
            NotebookEntry(
                file=path.name,
                notebook=facts.get("notebook") or path.stem,
                campaign=facts.get("campaign", ""),
                executed=facts.get("executed", ""),
            )
        )
    return entries


def notebook_index_tex(notebooks_dir: Path, prose: Prose, shown_as: str = "paper/notebooks/") -> str:
    """The appendix: heading, a paragraph and the table (or the sentence standing in for it)."""
    entries = notebook_entries(notebooks_dir)
    facts = {"count": len(entries), "directory": escape_command(shown_as)}
    heading = prose.block(TEMPLATE, "heading")
    if not entries:
        return heading + prose.sentence(TEMPLATE, "no_exports", facts) + "\n"
    columns = [
        # File and campaign names are the longest cells: they share the width the others leave and break at
        # their hyphens rather than run past the margin.
        Column(prose.sentence(TEMPLATE, "column", key="file"), FILL_COLUMN),
        Column(prose.sentence(TEMPLATE, "column", key="notebook"), "l"),
        Column(prose.sentence(TEMPLATE, "column", key="campaign"), FILL_COLUMN),
        Column(prose.sentence(TEMPLATE, "column", key="executed"), "l"),
    ]
    missing = prose.sentence(TEMPLATE, "no_campaign")
    rows = [
        [
            escape_identifier(entry.file),
            escape_identifier(entry.notebook),
            escape_identifier(entry.campaign) if entry.campaign else missing,
            escape(entry.executed.replace("T", " ").removesuffix("Z")) if entry.executed else missing,
        ]
        for entry in entries
    ]
    table = render_longtable(columns, rows, prose.sentence(TEMPLATE, "caption"), "tab:notebooks")
    return heading + prose.sentence(TEMPLATE, "intro", facts) + "\n\n" + table


def write_notebook_index(generated_dir: Path, prose: Prose | None = None) -> dict[str, Path]:
    """Write generated/notebooks.tex from the paper directory's notebooks/ (generated_dir's sibling)."""
    generated_dir = Path(generated_dir)
    generated_dir.mkdir(parents=True, exist_ok=True)
    path = generated_dir / NOTEBOOKS_FILE
    text = notebook_index_tex(generated_dir.parent / NOTEBOOKS_DIR, prose if prose is not None else Prose())
    path.write_text(text, encoding="utf-8")
    return {NOTEBOOKS_FILE: path}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m archbench.studies.notebooks.index", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--generated-dir", type=Path, default=GENERATED_DIR, help="default: paper/generated")
    args = parser.parse_args(argv)
    for path in write_notebook_index(args.generated_dir).values():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
