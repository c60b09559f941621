"""The report's prose, rendered from the LaTeX templates under paper/templates/.

Python computes facts (numbers already formatted for LaTeX, names already escaped, booleans that choose
between phrasings); the sentences themselves live in templates a researcher edits without touching
Python. A template file holds one Jinja2 macro per sentence or paragraph:

    <% macro pool_series(f) %>
    For the << f.label >>, mean throughput goes from << f.first_mean >>\\,r/s at $N=<< f.first_threads >>$
    <% if f.largest_is_highest %>; the largest pool measured has the highest mean<% endif %>.
    <% endmacro %>

The delimiters are chosen to never occur in LaTeX: `<< expression >>`, `<% statement %>`, `<# comment #>`.
A template may wrap its text over several lines: `sentence()` joins every run of white space into one
space, the way TeX reads a paragraph. `block()` keeps the lines as written (tables, figure environments).
A reference to a fact that was not given is an error (StrictUndefined), never an empty string in the PDF.

A study's section is a template too, `<study>/section.tex.j2`, rendered whole by `section()` with the facts the
study gives it. It holds the section's fixed text and calls its sentence macros, `<< s.main_pool(main_pool)|oneline >>`
(`oneline` makes a macro's wrapped lines one line, so a sentence never ends a paragraph by accident); the choices
between phrasings stay in the macros, so the section's own lines, paragraphs and blank lines are as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

from archbench.config.paths import TEMPLATES_DIR

TEMPLATE_SUFFIX = ".tex.j2"
SECTION_TEMPLATE = "section" + TEMPLATE_SUFFIX  # paper/templates/<study>/section.tex.j2


def oneline(text: Any) -> str:
    """Every run of white space one space, the ends stripped: a sentence as TeX reads it, on one line."""
    return " ".join(str(text).split())


def environment(templates_dir: Path = TEMPLATES_DIR) -> jinja2.Environment:
    """A Jinja2 environment with LaTeX-safe delimiters over `templates_dir`."""
    made = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        variable_start_string="<<",
        variable_end_string=">>",
        block_start_string="<%",
        block_end_string="%>",
        comment_start_string="<#",
        comment_end_string="#>",
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
        undefined=jinja2.StrictUndefined,
    )
    made.filters["oneline"] = oneline
    return made


class Prose:
    """The templates of one directory; each call renders one macro of one template file with its facts."""

    def __init__(self, templates_dir: Path = TEMPLATES_DIR) -> None:
        self._environment = environment(templates_dir)

    def _macro(self, template: str, macro: str) -> Any:
        name = template if template.endswith(TEMPLATE_SUFFIX) else template + TEMPLATE_SUFFIX
        module = self._environment.get_template(name).module
        try:
            return getattr(module, macro)
        except AttributeError:
            raise KeyError(f"{name} has no macro {macro!r}") from None

    def block(self, template: str, macro: str, facts: Mapping[str, Any] | None = None, **more: Any) -> str:
        """The macro's text as written in the template (lines kept), for multi-line LaTeX."""
        return str(self._macro(template, macro)({**(facts or {}), **more}))

    def sentence(self, template: str, macro: str, facts: Mapping[str, Any] | None = None, **more: Any) -> str:
        """The macro's text with every run of white space made one space and the ends stripped."""
        return oneline(self.block(template, macro, facts, **more))

    def section(self, study: str, facts: Mapping[str, Any]) -> str:
        """The study's section, `<study>/section.tex.j2`, rendered with its facts."""
        return self._environment.get_template(f"{study}/{SECTION_TEMPLATE}").render(facts)
