"""The owner says "this line replaces that one" (``reverie link``; issue 38, point 1).

The newer line's signed origin marker gains ``replaces: <path>@<hash>`` naming the
older line (:mod:`reverie.provenance.links`), signed again with the workspace key: the
link lives in the Markdown, and an index rebuilt from the files has it again. Search
then follows it (:mod:`reverie.recall.chains`): the newer line first for a question
about now, the older one marked as changed, with the day.

Refused, naming the line and changing nothing: a line that is not there, or is not a
journal line; an older line that is not of an earlier day; a line whose origin may not
replace the other's (owner and agent only, and an agent line never replaces the
owner's); a newer line with no marker signed by this workspace's key (a line typed by
hand into a journal has none: ``reverie write`` it again, then link). A connected
agent links over its own notes only (:func:`agent_link`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

from ..errors import ReverieError, WriteError
from ..provenance.links import line_key, may_replace
from ..provenance.markers import LineOrigin, resolve, with_link
from ..provenance.origin import Origin
from ..provenance.paths import SourceKind, classify
from ..recall.escalation.protocol import parse_anchor
from ..storage import reader
from ..storage.files import atomic_write
from ..storage.workspace import Workspace
from ..tokens import QUERY_STOP_WORDS, is_cjk, stem, stem_set, terms

if TYPE_CHECKING:
    from .pending import Request


class LinkRefused(ReverieError):
    """The two lines cannot be linked; the message names which and why."""


@dataclass(frozen=True)
class Linked:
    """A link written: the newer line, the older one, and the key it names."""

    newer: str
    older: str
    target: str
    already: bool  # the newer line named this older line before: nothing written

    def as_dict(self) -> dict[str, object]:
        return {"newer": self.newer, "older": self.older, "target": self.target,
                "already": self.already}  # fmt: skip


def _lines(ws: Workspace, rel: str) -> list[str]:
    """The file's lines under the reader policy (no FIFO, no link out of the workspace);
    a file that is not clean UTF-8 is refused, never rewritten."""
    try:
        data = reader.read(ws.root / rel, ws.root).data
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise LinkRefused(f"{rel}: {exc}") from None
    bad = reader.undecodable(data, rel)
    if bad is not None:
        raise LinkRefused(f"{bad}; nothing written")
    return data.decode("utf-8").split("\n")


def _line(ws: Workspace, ref: str, trusted: list[str]) -> tuple[str, int, str, LineOrigin, date]:
    parsed = parse_anchor(ref.strip())
    if parsed is None or parsed[1] != parsed[2]:
        raise LinkRefused(f"{ref}: name a line as path#Ln (memory/2026-05-02.md#L7)")
    rel, number, _ = parsed
    pclass = classify(rel, trusted)
    day = pclass.day  # (from the file name)
    if pclass.kind is not SourceKind.JOURNAL or not pclass.markers or day is None:
        raise LinkRefused(f"{ref}: only journal lines (memory/YYYY-MM-DD.md) are linked")
    lines = _lines(ws, rel)
    if not 1 <= number <= len(lines) or not lines[number - 1].strip():
        raise LinkRefused(f"{ref}: there is no such line")
    raw = lines[number - 1]
    lo = resolve(raw, default=pclass.default_origin, ceiling=pclass.ceiling, key=ws.origin_key())
    return rel, number, raw, lo, day


def link(ws: Workspace, newer: str, older: str, trusted: list[str]) -> Linked:
    """Write the link from line ``newer`` to line ``older`` (module doc)."""
    n_rel, n_no, n_raw, n_lo, n_day = _line(ws, newer, trusted)
    o_rel, _, _, o_lo, o_day = _line(ws, older, trusted)
    if n_day <= o_day:
        raise LinkRefused(f"{newer}: a line replaces only a line of an earlier day ({older})")
    if not may_replace(n_lo.origin, o_lo.origin):
        raise LinkRefused(
            f"{newer} ({n_lo.origin.value}) may not replace {older} ({o_lo.origin.value}): "
            "owner and agent lines only, and an agent line never replaces the owner's"
        )
    target = line_key(o_rel, o_lo.text)
    if n_lo.replaces == target:
        return Linked(newer, older, target, already=True)
    edited = with_link(n_raw, target, ws.origin_key())
    if edited is None:
        raise LinkRefused(f"{newer}: the line has no marker signed by this workspace's key")
    path = ws.check_inside(n_rel)
    try:
        with FileLock(str(ws.journal_lock(n_day)), timeout=60):
            lines = _lines(ws, n_rel)
            if len(lines) < n_no or lines[n_no - 1] != n_raw:
                raise LinkRefused(f"{newer}: the line changed while linking; nothing written")
            lines[n_no - 1] = edited
            atomic_write(path, "\n".join(lines))
    except Timeout:
        raise ReverieError(f"{n_rel}: another writer held the journal lock for 60 s") from None
    except OSError as exc:
        raise WriteError(
            f"{n_rel}: cannot write ({exc.strerror or exc}); nothing written"
        ) from None
    return Linked(newer, older, target, already=False)


def subject_in_both(subject: str, a: str, b: str) -> bool:
    """Each content word of ``subject`` is in both lines (stem; characters for Chinese)."""
    words = [t for t in terms(subject) if t not in QUERY_STOP_WORDS]
    if not words:
        return False
    sa, sb = stem_set(a), stem_set(b)
    for w in words:
        if is_cjk(w[0]):
            if w not in a or w not in b:
                return False
        elif stem(w) not in sa or stem(w) not in sb:
            return False
    return True


class OwnersLines(LinkRefused):
    """The lines are the owner's: only the owner links them (a request they confirm).
    ``keys``: the two lines' keys, which must still hold when the owner confirms."""

    def __init__(self, message: str, keys: str) -> None:
        super().__init__(message)
        self.keys = keys


def _keys(n_rel: str, n_lo: LineOrigin, o_rel: str, o_lo: LineOrigin) -> str:
    return f"{line_key(n_rel, n_lo.text)} {line_key(o_rel, o_lo.text)}"


def line_keys(ws: Workspace, newer: str, older: str, trusted: list[str]) -> str:
    """The two lines' keys (``path@hash`` each): what a link request checks again."""
    n_rel, _, _, n_lo, _ = _line(ws, newer, trusted)
    o_rel, _, _, o_lo, _ = _line(ws, older, trusted)
    return _keys(n_rel, n_lo, o_rel, o_lo)


def agent_link(ws: Workspace, newer: str, older: str, subject: str, trusted: list[str]) -> Linked:
    """A connected agent's link (MCP ``memory_link``): as :func:`link`, with the
    subject's words in both lines (:func:`subject_in_both`, as a model's proposal), and
    only over an agent's line. Two lines of the owner's are not linked on the agent's
    word (nothing below owner trust supersedes what the owner said): :class:`OwnersLines`
    says so, and the caller files a request the owner confirms."""
    n_rel, _, _, n_lo, n_day = _line(ws, newer, trusted)
    o_rel, _, _, o_lo, o_day = _line(ws, older, trusted)
    if n_day <= o_day:
        raise LinkRefused(f"{newer}: a line replaces only a line of an earlier day ({older})")
    if not subject_in_both(subject, n_lo.text, o_lo.text):
        raise LinkRefused(f"the subject {subject!r} is not in both lines: nothing linked")
    if o_lo.origin is Origin.OWNER and n_lo.origin is Origin.OWNER:
        raise OwnersLines(
            f"{older} and {newer} are the owner's lines: the owner confirms the link",
            _keys(n_rel, n_lo, o_rel, o_lo),  # (the lines as read: not read again)
        )
    if o_lo.origin is Origin.OWNER:
        raise LinkRefused(
            f"{older} is the owner's line: only the owner's newer line replaces it "
            "(`reverie link NEWER OLDER`, or the review page)"
        )
    if o_lo.origin is not Origin.AGENT:
        raise LinkRefused(
            f"{older} is not a note of the agent's ({o_lo.origin.value}): nothing linked"
        )
    return link(ws, newer, older, trusted)


def said(newer: str, older: str, done: Linked | Request) -> tuple[str, dict[str, Any]]:
    """What an agent's link answers, in words and as data: the link written, or the
    request filed over two of the owner's lines."""
    if not isinstance(done, Linked):
        words = (
            f"request {done.id} filed: {older} and {newer} are the user's lines; the link "
            f"is written when the user confirms it (`reverie pending confirm {done.id}`)"
        )
        return words, {"newer": newer, "older": older, "request": done.id}
    words = f"{newer} now replaces {older}" + (" (it did already)" if done.already else "")
    return words, done.as_dict()


__all__ = [
    "LinkRefused",
    "Linked",
    "OwnersLines",
    "agent_link",
    "line_keys",
    "link",
    "said",
    "subject_in_both",
]
