"""The check Aider runs after an edit, for the same reason: a Python file a small model wrote out that
does not compile, or uses a name it never defined or imported (a function used in one module and
defined in another), is sent back once with pyflakes' words, before the turn ends.

``with_missing_imports`` is the one mechanism here that changes what the model wrote: it runs only
where a profile says so (``Profile.auto_imports``; ``SHIRO_ADAPT_OFF=auto_imports``).
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path

from pyflakes import api, messages
from pyflakes.reporter import Reporter

from shiro_lsp.adapt.reflections.base import Reflection, Reply, SendBack, TurnFacts
from shiro_lsp.bounded import python_module
from shiro_lsp.errors import ToolError
from shiro_lsp.fs.reader import read_text

MAX_PROBLEMS = 5
MAX_MODULES = 200
"""Top-level modules looked at for broken imports and for where a name is defined (a small workspace has few)."""
MAX_MODULE_BYTES = 1024 * 1024
"""What is read of one module (a small workspace's modules are far smaller)."""
_NAMES = (messages.UndefinedName, messages.UndefinedExport)


class _Collector(Reporter):
    def __init__(self, modules: _Modules) -> None:
        self.problems: list[str] = []
        self.undefined: list[str] = []
        self.modules = modules

    def unexpectedError(self, filename: str, msg: str) -> None:
        pass  # unreadable: not the model's mistake

    def syntaxError(self, filename: str, msg: str, lineno: int, offset: int | None, text: str | None) -> None:
        self.problems.append(f"{filename}:{lineno}: {msg}")

    def flake(self, message: messages.Message) -> None:
        if isinstance(message, _NAMES):
            problem = f"{message.filename}:{message.lineno}: {message.message % message.message_args}"
            name = str(message.message_args[0])
            self.undefined.append(name)
            self.problems.append(problem + self.modules.where_defined(name, besides=message.filename))


def python_problems(workspace: Path, paths: Sequence[str]) -> list[str]:
    """Syntax errors and undefined names in the ``.py`` files among ``paths`` (relative to ``workspace``),
    and broken imports between the workspace's top-level modules where one side was written: a name a
    written module no longer defines (a function renamed in one module, still imported by another), or
    a written module importing a name its module lacks. Blocking: reads the files."""
    modules = _Modules(workspace)
    collector = _Collector(modules)
    for rel in paths:
        source = _source(workspace, rel) if rel.endswith(".py") else None
        if source is not None:
            _checked(source, rel, collector)
    return (collector.problems + _broken_imports(modules, paths))[:MAX_PROBLEMS]


def _source(workspace: Path, rel: str) -> str | None:
    """A module's text through the confined reader (no link out, no FIFO, no secrets file, bounded)."""
    try:
        return read_text(workspace, rel, limit=MAX_MODULE_BYTES)
    except (ToolError, OSError):
        return None


def _checked(source: str, rel: str, collector: _Collector) -> None:
    """pyflakes on ``source``: nested too deep for its walk, a module is left unchecked."""
    try:
        api.check(source, rel, collector)
    except RecursionError:
        collector.unexpectedError(rel, "nested too deep to check")


class _Modules:
    """The workspace's top-level modules and the names each binds, read once each."""

    def __init__(self, workspace: Path, written: Mapping[str, str] | None = None) -> None:
        self.workspace = workspace
        self.written = {
            rel: text for rel, text in (written or {}).items() if rel.endswith(".py") and "/" not in rel
        }
        found = [path.name for path in sorted(workspace.glob("*.py"))[:MAX_MODULES]]
        self.files = sorted({*found, *self.written})
        self._trees: dict[str, ast.Module | None] = {}
        self._names: dict[str, set[str] | None] = {}
        self._top: dict[str, set[str]] = {}

    def tree(self, file: str) -> ast.Module | None:
        """The parsed module (None: unreadable, or it does not parse), read and parsed once."""
        if file not in self._trees:
            source = self.written[file] if file in self.written else _source(self.workspace, file)
            self._trees[file] = _parsed(source)
        return self._trees[file]

    def names(self, module: str) -> set[str] | None:
        """Every name ``module`` binds (None: no such top-level module, or it does not parse)."""
        if module not in self._names:
            present = f"{module}.py" in self.files
            self._names[module] = _defined_names(self.tree(f"{module}.py")) if present else None
        return self._names[module]

    def defined_at_top(self, module: str) -> set[str]:
        """The functions and classes ``module`` defines at its top level: what another module imports."""
        if module not in self._top:
            tree = self.tree(f"{module}.py")
            self._top[module] = {
                node.name
                for node in (tree.body if tree else [])
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            }
        return self._top[module]

    def homes(self, name: str, *, besides: str) -> list[str]:
        """The top-level modules other than ``besides`` that define ``name`` at their top level."""
        return [file for file in self.files if file != besides and name in self.defined_at_top(file[:-3])]

    def where_defined(self, name: str, *, besides: str) -> str:
        """`` (defined in other.py: …)``, when one other top-level module defines ``name``."""
        homes = self.homes(name, besides=besides)
        return f" (defined in {homes[0]}; import it)" if len(homes) == 1 else ""

    def close_to(self, module: str, name: str) -> str:
        match = difflib.get_close_matches(name, sorted(self.defined_at_top(module)), n=1)
        return f" ({module}.py defines {match[0]})" if match else ""


def _broken_imports(modules: _Modules, paths: Sequence[str]) -> list[str]:
    written = {Path(rel).stem for rel in paths if rel.endswith(".py") and "/" not in rel}
    problems: list[str] = []
    for importer in modules.files:
        tree = modules.tree(importer)
        for node in tree.body if tree else []:
            if not isinstance(node, ast.ImportFrom) or node.level != 0 or not node.module:
                continue
            if importer[:-3] not in written and node.module not in written:
                continue
            problems += _missing_names(modules, importer, node)
    return problems


def _missing_names(modules: _Modules, importer: str, node: ast.ImportFrom) -> list[str]:
    module = node.module or ""
    names = modules.names(module)
    if names is None or "*" in names:
        return []
    return [
        f"{importer}:{node.lineno}: cannot import name '{alias.name}' from '{module}'"
        + modules.close_to(module, alias.name)
        for alias in node.names
        if alias.name != "*" and alias.name not in names
    ]


def _parsed(source: str | None) -> ast.Module | None:
    return python_module(source) if source is not None else None


def _defined_names(tree: ast.Module | None) -> set[str] | None:
    """Every name a module binds, at any level: generous, as a false alarm costs more than a miss
    (None: it does not parse, and pyflakes says why)."""
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


def with_missing_imports(workspace: Path, written: Mapping[str, str]) -> dict[str, tuple[str, list[str]]]:
    """The files written out in one reply (path to content) that use a name they never bind which
    exactly one other top-level module defines (those written in the same reply count before the
    workspace's): path to (content with the imports added, the import lines). A small model writes a
    function into one file and its use into another without the import, and does not mend it when
    told. Blocking: reads the workspace's modules."""
    modules = _Modules(workspace, written)
    mended: dict[str, tuple[str, list[str]]] = {}
    for path, content in written.items():
        tree = modules.tree(path) if path in modules.written else None
        if tree is None:
            continue
        collector = _Collector(modules)
        _checked(content, path, collector)
        imports: dict[str, list[str]] = {}
        for name in dict.fromkeys(collector.undefined):
            homes = modules.homes(name, besides=path)
            if len(homes) == 1:
                imports.setdefault(homes[0][:-3], []).append(name)
        lines = [f"from {module} import {', '.join(names)}" for module, names in sorted(imports.items())]
        if lines:
            mended[path] = (_inserted(content, tree, lines), lines)
    return mended


def _inserted(content: str, tree: ast.Module, lines: list[str]) -> str:
    """``lines`` put before the module's first statement (``tree`` is ``content`` parsed) that is not
    its docstring or a ``__future__`` import (its decorators included)."""
    body = list(tree.body)
    while body and (
        _is_docstring(body[0]) or (isinstance(body[0], ast.ImportFrom) and body[0].module == "__future__")
    ):
        body.pop(0)
    source = content.splitlines(keepends=True)
    if not body:
        at = len(source)
    else:
        first = body[0]
        decorators = getattr(first, "decorator_list", [])
        at = min([first.lineno, *(d.lineno for d in decorators)]) - 1
    follows_import = bool(body) and isinstance(body[0], (ast.Import, ast.ImportFrom))
    added = "".join(f"{line}\n" for line in lines) + ("" if follows_import else "\n\n")
    head = "".join(source[:at])
    if head and not head.endswith("\n"):
        head += "\n"
    return head + added + "".join(source[at:])


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


class Lint(Reflection):
    """Python files the model wrote out that do not compile, use a name never defined, or break an
    import between modules are sent back once, with the problems."""

    name = group = "lint"
    after_calls = True

    def answer(self, reply: Reply, facts: TurnFacts) -> SendBack | None:
        if not facts.writes_out or not facts.written or not isinstance(facts.workspace, Path):
            return None
        problems = python_problems(facts.workspace, facts.written)
        return SendBack(fix_instruction(problems), "errors in the files it wrote") if problems else None
