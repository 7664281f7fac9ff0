"""Write-flow commands: write (daily append) and ingest (transcript -> evidence)."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ParseError
from ..integrations.claude_transcript import is_claude_code_record
from ..provenance.origin import OWNER_AT_CLI, Origin, SessionKind, Source
from ..scope import project_key
from .common import Ctx, emit, handles_errors, json_option


@click.command()
@click.argument("text")
@click.option(
    "--origin",
    type=click.Choice([o.value for o in Origin]),
    help="Lower the origin (a person at the CLI is the owner; this can only lower it).",
)
@click.option("--no-index", is_flag=True, help="Do not sync the index after writing.")
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, exists=True),
    help="The directory you work in: a line written inside a git repository is tagged "
    "with its project (see `reverie project key`).",
)
@json_option
@click.pass_obj
@handles_errors
def write(
    obj: Ctx, text: str, origin: str | None, no_index: bool, cwd: str | None, as_json: bool
) -> None:
    """Append TEXT to today's journal (memory/YYYY-MM-DD.md)."""
    appended = obj.engine.write(
        text,
        source=Source.OWNER,
        author=OWNER_AT_CLI,
        lower_to=Origin(origin) if origin else None,
        sync=not no_index,
        project=project_key(cwd) if cwd else None,
    )
    emit(
        appended.as_dict(),
        as_json,
        lambda d: (
            f"{d['source']} ({d['origin']})"
            + "".join(f"\nwarning: {w}" for w in d.get("warnings", []))
        ),
    )


@click.command()
@click.argument("transcript", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--session-kind",
    type=click.Choice([k.value for k in SessionKind]),
    help="Treat the session as this kind (can only make it less eligible).",
)
@click.option(
    "--trust-transcript",
    is_flag=True,
    help="Vouch for a transcript the session API did not write (a file from elsewhere, or "
    "one whose header is not sealed): its header's sender and owner then count. Without "
    "it such a transcript is ingested with every line untrusted.",
)
@json_option
@click.pass_obj
@handles_errors
def ingest(
    obj: Ctx, transcript: Path, session_kind: str | None, trust_transcript: bool, as_json: bool
) -> None:
    """Turn a finished session's TRANSCRIPT (JSONL) into dreaming evidence.

    A transcript counts with full provenance only when the session API wrote it (it lies
    in the state dir's sessions folder with a sealed header); any other is capped at
    untrusted unless you pass --trust-transcript."""
    try:
        result = obj.engine.ingest(
            transcript,
            session_kind=SessionKind(session_kind) if session_kind else None,
            trust=trust_transcript,
        )
    except ParseError as exc:
        with transcript.open("rb") as fh:
            first = fh.readline()
        if is_claude_code_record(first):
            raise ParseError(
                f"{exc}; this is a Claude Code transcript: import it with "
                f"`reverie import claude-code {transcript}` (add --as-owner if it is yours)"
            ) from None
        raise
    emit(
        result.as_dict(),
        as_json,
        lambda d: (
            f"{d['status']}: {d['lines_written']} lines"
            + (f" ({d['reason']})" if d["reason"] else "")
            + "".join(f"\n  {f}" for f in d["files"])
            + "".join(f"\nwarning: {w}" for w in d["warnings"])
        ),
    )
