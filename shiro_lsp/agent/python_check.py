"""The check Aider runs after an edit, for the same reason: a Python file a small model wrote out that
does not compile, or uses a name it never defined or imported (``is_palindrome`` used in ``main.py``,
defined in ``textutils.py``), is sent back once with pyflakes' words, before the turn ends."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import Path

from pyflakes import api, messages
from pyflakes.reporter import Reporter

MAX_PROBLEMS = 5
MAX_MODULES = 200
"""Top-level modules looked at for imports of a name a written module lost (a small workspace has few)."""
_NAMES = (messages.UndefinedName, messages.UndefinedExport)


class _Collector(Reporter):
    def __init__(self) -> None:
        self.problems: list[str] = []

    def unexpectedError(self, filename: str, msg: str) -> None:
        pass  # unreadable: not the model's mistake

    def syntaxError(self, filename: str, msg: str, lineno: int, offset: int | None, text: str | None) -> None:
        self.problems.append(f"{filename}:{lineno}: {msg}")

    def flake(self, message: messages.Message) -> None:
        if isinstance(message, _NAMES):
            self.problems.append(
                f"{message.filename}:{message.lineno}: {message.message % message.message_args}"
            )


def python_problems(workspace: Path, paths: Sequence[str]) -> list[str]:
    """Syntax errors and undefined names in the ``.py`` files among ``paths`` (relative to ``workspace``),
    and imports, in the workspace's top-level modules, of a name a written module no longer defines
    (``calc_area`` renamed in ``geometry.py``, still imported by ``main.py``). Blocking: reads the files."""
    collector = _Collector()
    for rel in paths:
        source = _source(workspace, rel) if rel.endswith(".py") else None
        if source is not None:
            api.check(source, rel, collector)
    return (collector.problems + _broken_imports(workspace, paths))[:MAX_PROBLEMS]


def _source(workspace: Path, rel: str) -> str | None:
    try:
        return (workspace / rel).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _broken_imports(workspace: Path, paths: Sequence[str]) -> list[str]:
    written = {Path(rel).stem: rel for rel in paths if rel.endswith(".py") and "/" not in rel}
    defined = {module: _defined_names(_source(workspace, rel)) for module, rel in written.items()}
    problems: list[str] = []
    for importer in sorted(workspace.glob("*.py"))[:MAX_MODULES]:
        tree = _parsed(_source(workspace, importer.name))
        for node in tree.body if tree else []:
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and defined.get(node.module or "") is not None
            ):
                names = defined[node.module or ""] or {"*"}
                problems += [
                    f"{importer.name}:{node.lineno}: cannot import name '{alias.name}' from '{node.module}'"
                    for alias in node.names
                    if alias.name != "*" and alias.name not in names and "*" not in names
                ]
    return problems


def _parsed(source: str | None) -> ast.Module | None:
    try:
        return ast.parse(source) if source is not None else None
    except (SyntaxError, ValueError):
        return None


def _defined_names(source: str | None) -> set[str] | None:
    """Every name a module binds, at any level: generous, as a false alarm costs more than a miss
    (None: it does not parse, and pyflakes says why)."""
    tree = _parsed(source)
    if tree is None:
        return None
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def fix_instruction(problems: Sequence[str]) -> str:
    return "\n".join(["The files you wrote have errors:", *problems, "Write the files out again, fixed."])
