"""Project scope commands: ``reverie project key [DIR]`` (R-SCOPE-1)."""

from __future__ import annotations

import os

import click

from ..scope import find_repo, project_key
from .common import emit, handles_errors, json_option


@click.group()
def project() -> None:
    """Project scope: the key memories written inside a repository are tagged with."""


@project.command("key")
@click.argument("directory", required=False, type=click.Path(file_okay=False, exists=True))
@json_option
@handles_errors
def key(directory: str | None, as_json: bool) -> None:
    """The project key of DIRECTORY (default: the current one), read from .git."""
    where = os.path.abspath(directory or ".")
    repo = find_repo(where)
    data = {
        "directory": where,
        "key": project_key(where),
        "repository": str(repo.main_root) if repo else None,
        "worktree": str(repo.root) if repo else None,
    }
    emit(
        data,
        as_json,
        lambda d: d["key"] or f"{d['directory']}: not inside a git repository (no project)",
    )


__all__ = ["project"]
