"""The package's shape rules that a linter does not check: no function takes more than 8 parameters (group them in
a dataclass instead), and no module is over 800 lines (split it by what it does)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "archbench"
MAX_PARAMETERS = 8
MAX_MODULE_LINES = 800


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = function.args
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    names = [name for name in names if name not in ("self", "cls")]
    return names + [f"*{a.arg}" for a in (arguments.vararg, arguments.kwarg) if a is not None]


def test_no_function_takes_more_than_eight_parameters() -> None:
    too_many = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                count = len(_parameters(node))
                if count > MAX_PARAMETERS:
                    too_many.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name} ({count})")
    assert too_many == []


def test_no_module_is_over_800_lines() -> None:
    long = [
        f"{path.relative_to(PACKAGE.parent)} ({lines})"
        for path in _modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert long == []


def test_the_rules_see_the_package() -> None:
    assert len(_modules()) > 100  # the walk finds the package, so an empty result above means something
