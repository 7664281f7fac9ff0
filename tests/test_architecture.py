"""The architecture, enforced: layers, pure modules, no cycles, small modules, typed
settings, documented public classes, one exception tree.

The contracts themselves live in ``pyproject.toml`` (``[tool.importlinter]``); the list
of pure modules there is the one this file also type-checks with ``mypy --strict``.
"""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
import tomllib
import typing
from pathlib import Path

import pytest

import reverie
from reverie import errors
from reverie.settings import SETTINGS, Settings

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "reverie"
MAX_LINES = 400


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(config["tool"]["importlinter"]["contracts"])


def _pure_modules() -> list[str]:
    [pure] = [c for c in _contracts() if str(c["name"]).startswith("Pure modules")]
    return list(pure["source_modules"])  # type: ignore[call-overload]


def _modules() -> dict[str, Path]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        parts = list(f.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = f
    return out


def _runtime_imports(module: str, path: Path, known: set[str]) -> set[str]:
    """Modules of ours that ``module`` imports at run time (TYPE_CHECKING excepted)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            skipped.update(id(n) for n in ast.walk(node))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(
                    package[: len(package) - node.level + 1]
                    + ([node.module] if node.module else [])
                )
            else:
                base = node.module or ""
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if name in known and name != module and not module.startswith(name + "."):
                found.add(name)
    return found


def test_import_contracts_hold() -> None:
    """``lint-imports``: the layers contract and the pure-modules contract."""
    run = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports; exit(lint_imports())"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def test_the_layers_contract_names_every_package_of_the_spec() -> None:
    [layers] = [c for c in _contracts() if c["type"] == "layers"]
    named = {m.strip() for layer in layers["layers"] for m in str(layer).split("|")}  # type: ignore[attr-defined]
    for flow in ("provenance", "storage", "write", "recall", "dreaming", "llm"):
        assert f"reverie.{flow}" in named
    for door in ("engine", "session", "cli", "mcp_server", "daemon"):
        assert f"reverie.{door}" in named
    # every top-level module and package of ours sits in a layer (or is the package root)
    tops = {m.split(".")[1] for m in _modules() if m.count(".") >= 1}
    assert {f"reverie.{t}" for t in tops} <= named


def test_no_import_cycles() -> None:
    mods = _modules()
    known = set(mods)
    edges = {m: _runtime_imports(m, p, known) for m, p in mods.items()}
    # a package's __init__ re-exporting its own modules is not a cycle of the layout
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for m in sorted(mods):
        if m not in state:
            visit(m, [m])
    assert cycles == [], " ; ".join(" -> ".join(c) for c in cycles)


def test_nothing_below_the_front_door_imports_it() -> None:
    mods = _modules()
    entry = {"reverie", "reverie.__main__", "reverie.mcp_server", "reverie.daemon", "reverie.demo"}
    entry |= {"reverie.testing"}  # the fakes for users' tests open a memory through the facade
    for module, path in mods.items():
        doors = ("reverie.cli", "reverie.integrations", "reverie.mcp_server", "reverie.ui")
        doors += ("reverie.aio", "reverie.adapters")  # the async door and what builds on it
        if module in entry or module.startswith(doors) or module == "reverie.engine":
            continue
        imports = _runtime_imports(module, path, set(mods))
        assert "reverie.engine" not in imports, module
        text = path.read_text(encoding="utf-8")
        assert "from ..engine" not in text and "from .engine" not in text, module


def test_no_module_over_400_lines() -> None:
    big = {
        str(p.relative_to(ROOT)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert big == {}


def test_pure_modules_are_mypy_strict_clean() -> None:
    files = []
    for module in _pure_modules():
        path = SRC / module.replace(".", "/")
        files.append(str(path / "__init__.py") if path.is_dir() else str(path) + ".py")
        if path.is_dir():
            files += [str(p) for p in path.rglob("*.py")]
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *sorted(set(files))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_settings_view_is_typed_and_matches_the_table() -> None:
    annotations = inspect.get_annotations(Settings)
    assert set(annotations) == {s.name for s in SETTINGS}
    for s in SETTINGS:
        assert annotations[s.name] == s.type.__name__, s.name
    assert "__getattr__" not in Settings.__dict__


def test_public_classes_have_docstrings() -> None:
    missing = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.ClassDef)
                and not node.name.startswith("_")
                and not ast.get_docstring(node)
            ):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert missing == []


def test_one_exception_tree_drawn_in_its_docstring() -> None:
    classes = [getattr(errors, n) for n in errors.__all__]
    for cls in classes:
        assert issubclass(cls, errors.ReverieError), cls
        assert cls.__name__ in (errors.__doc__ or ""), f"{cls.__name__} not in the drawn tree"
        assert cls.__name__ in reverie.__all__
    from reverie.daemon import DaemonBusy

    assert DaemonBusy is errors.DaemonBusy


@pytest.mark.parametrize(
    "name",
    ["Session", "SearchResponse", "Hit", "TurnContext", "SyncStats", "DreamReport", "Appended"],
)
def test_result_types_are_exported(name: str) -> None:
    assert name in reverie.__all__
    assert inspect.isclass(getattr(reverie, name))


def test_facade_methods_have_real_types() -> None:
    from reverie.dreaming.state import DreamStatus
    from reverie.engine import Reverie
    from reverie.llm.base import LLM
    from reverie.llm.factory import Purpose

    # the modules of these types load on first use (not on a one-shot hook's path): the
    # annotations still name the real classes
    names = {"DreamStatus": DreamStatus, "DreamReport": reverie.DreamReport, "LLM": LLM}
    hints = typing.get_type_hints(Reverie.dream, localns=names)
    assert hints["return"] is reverie.DreamReport
    status = typing.get_type_hints(Reverie.dream_status, localns=names)
    assert status["return"] is DreamStatus
    llm = typing.get_type_hints(Reverie.llm, localns={**names, "Purpose": Purpose})
    assert "LLM" in str(llm["return"]) and "Any" not in str(llm["return"])
