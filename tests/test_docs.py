"""Docs that are tested: the README's first commands and every Python block of the
README and of docs/, the generated references (settings, command line, Python API),
the docs site's strict build, and the public API (``__all__``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import reverie
from reverie.settings import settings_table

README = Path(__file__).resolve().parents[1] / "README.md"
DOCS = README.parent / "docs"
PYTHON_BLOCK = re.compile(r"```python\n(.*?)\n```", re.S)


def blocks() -> list[tuple[str, str]]:
    """Every Python block of the README and of docs/, with the file it is in."""
    out = [("README.md", b) for b in PYTHON_BLOCK.findall(README.read_text(encoding="utf-8"))]
    for doc in sorted(DOCS.glob("*.md")):
        out += [(f"docs/{doc.name}", b) for b in PYTHON_BLOCK.findall(doc.read_text("utf-8"))]
    return out


def block(marker: str) -> str:
    """The first block holding ``marker``."""
    return next(b for _, b in blocks() if marker in b)


# what identifies each tested block (the tests below run each as written)
TESTED = ("open_session", "AsyncReverie", "add_intent", "ScriptedLLM")


def test_every_python_block_of_the_docs_is_run_by_a_test() -> None:
    untested = [f"{name}: {b[:60]!r}" for name, b in blocks() if not any(m in b for m in TESTED)]
    assert untested == []
    assert len(blocks()) == len(TESTED)


def test_the_settings_reference_is_generated_from_the_settings_table() -> None:
    text = (DOCS / "settings.md").read_text(encoding="utf-8")
    block = text.split("<!-- settings-table:begin -->")[1].split("<!-- settings-table:end -->")[0]
    assert block.strip() == settings_table().strip(), (
        "regenerate docs/settings.md's table from reverie.settings"
    )


def test_readme_opens_with_the_demo_and_the_test_command() -> None:
    text = README.read_text(encoding="utf-8")
    commands = re.findall(r"```bash\n(.*?)\n```", text, re.S)
    venv = "python3 -m venv .venv && . .venv/bin/activate && "  # no system install (PEP 668)
    assert commands[0].strip() == venv + "python -m pip install . && reverie demo"
    test = "python -m pip install -e '.[test]' && python -m pytest -q -n auto"
    assert commands[1].strip() == venv + test
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1].strip() in ci


def test_public_api_is_exactly_all() -> None:
    import inspect

    exported = set(reverie.__all__)
    for name in exported:
        assert hasattr(reverie, name), name
    public = {
        n
        for n in dir(reverie)
        if not n.startswith("_") and not inspect.ismodule(getattr(reverie, n))
    }
    assert public == exported - {"__version__"}, public ^ exported
    assert issubclass(reverie.PathEscapeError, reverie.ReverieError)
    assert issubclass(reverie.ProviderTimeout, reverie.ProviderError)


def test_readme_session_example_runs(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("REVERIE_EMBEDDER", "fake")
    code = block("open_session")
    code = code.replace('"~/.reverie/workspace"', repr(str(tmp_path / "ws")))
    code = code.replace('"~/.reverie/state"', repr(str(tmp_path / "st")))
    namespace: dict[str, object] = {}  # a fresh machine: nothing exists yet
    exec(compile(code, "README.md", "exec"), namespace)
    turn = namespace["turn"]
    reply = turn("remember that I like tea", lambda ctx, msg: ("ok", ["ls"]), lambda call: "a.txt")  # type: ignore[operator]
    assert reply == "ok"
    namespace["session"].end()  # type: ignore[attr-defined]  (the example ended it before any turn)
    transcript = next((tmp_path / "st" / "main" / "sessions").glob("*.jsonl")).read_text()
    assert '"source":"tool"' in transcript and '"origin":"untrusted"' in transcript
    assert (tmp_path / "ws" / "memory" / ".dreams" / "session-corpus").exists()


def test_readme_async_example_runs(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """The README's asyncio block as written (issue 43 point 3): a script, not a
    fragment; on a workspace made by ``reverie init`` it writes, refreshes and finds the
    line."""
    monkeypatch.setenv("REVERIE_EMBEDDER", "fake")
    monkeypatch.setenv("REVERIE_STATE_DIR", str(tmp_path / "st"))
    reverie.Reverie.open(tmp_path / "ws", tmp_path / "st").init()  # `reverie init`
    code = block("AsyncReverie")
    code = code.replace('"~/.reverie/workspace"', repr(str(tmp_path / "ws")))
    exec(compile(code, "README.md", "exec"), {"__name__": "__main__"})
    assert "deploy key rotates on Fridays" in capsys.readouterr().out


def test_readme_intents_example_runs(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The README's intents block as written: the owner's grounded reminder is armed,
    an ungrounded one waits (issue 43 point 3)."""
    monkeypatch.setenv("REVERIE_EMBEDDER", "fake")
    code = block("add_intent")
    code = code.replace('"~/.reverie/workspace"', repr(str(tmp_path / "ws")))
    code = code.replace('"~/.reverie/state"', repr(str(tmp_path / "st")))
    reverie.Reverie.open(tmp_path / "ws", tmp_path / "st").init()  # `reverie init`
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    intents = namespace["mem"].intents.listing(all=True)  # type: ignore[attr-defined]
    assert sorted(str(i.status.value) for i in intents) == ["armed", "pending"], intents


def test_readme_testing_example_passes(tmp_path: Path) -> None:
    """The README's pytest example as written: each of its tests passes on the shipped
    fakes (issue 43 point 3)."""
    code = block("ScriptedLLM")
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    tests = [n for n in namespace if n.startswith("test_")]
    assert len(tests) == 2
    for n, name in enumerate(tests):
        namespace[name](tmp_path / str(n))  # type: ignore[operator]


def test_the_command_line_reference_is_generated_from_the_commands() -> None:
    from reverie.cli.app import COMMANDS
    from reverie.cli.reference import markdown

    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert page == markdown(), "regenerate: python -m reverie.cli.reference > docs/cli.md"
    for name in COMMANDS:
        assert f"## `reverie {name}`" in page


def test_the_python_api_page_renders_every_public_name() -> None:
    page = (DOCS / "api.md").read_text(encoding="utf-8")
    rendered = set(re.findall(r"^::: reverie\.(\w+)$", page, re.M))
    assert set(reverie.__all__) - {"__version__"} <= rendered
    assert "::: reverie.aio.AsyncReverie" in page


def test_the_docs_site_builds_with_no_warning(tmp_path: Path) -> None:
    """``mkdocs build --strict``: a broken link, a page missing from the nav or a
    docstring the API page cannot render fails the suite."""
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=README.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "memory_search" in api  # Reverie.search's docstring, rendered
    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    assert "reverie search" in cli
