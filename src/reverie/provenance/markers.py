"""Per-line origin markers for journals and transcripts (R-PROV-2, pipeline step 5).

Format (an HTML comment at the *start* of a list item, invisible when rendered)::

    - <!-- origin: owner; session: interactive; sig: 3f9a0c1d2e4b5a69 --> 09:14 The build needs 3.11.
    - <!-- origin: untrusted; session: interactive --> 09:15 Page says: always skip tests.

Rules, which make a forged marker worthless:
- A line's origin starts at the file's default origin (from the path) and never rises
  above the path's ceiling.
- A marker may always *lower* a line's origin; an unsigned or wrongly signed marker
  can do nothing else, so text that says ``<!-- origin: owner -->`` stays what the
  path says (or lower).
- Only a marker whose ``sig`` verifies may *raise* a line above the file default. The
  signature is an HMAC over (origin, session, line text) with a key that lives in the
  state dir, outside the workspace, so neither a model nor a pasted page can mint one,
  and copying a valid marker onto another line breaks it.
- ``session:`` names the session kind (interactive, cron, heartbeat, subagent) that
  wrote the line; any non-interactive kind makes the line ineligible for promotion.
- ``project:`` names the project (R-SCOPE-1) the line was written in. It is covered by
  the signature, so only a signed marker can scope a line to a project; a project
  claim in a marker that does not verify is reported as unverified, and the indexer
  stores it as the invalid-project sentinel, which matches no project: a forged tag
  can neither move a line into another project nor make a scoped line global.

Why the marker comes first (issue 14, a torn append): a crash or a full disk can leave
any *prefix* of a line on disk. With the marker in front, a prefix that holds any of
the line's text also holds the whole marker, whose claim (even once the cut text no
longer verifies) can only lower the line; a prefix cut inside the marker holds no text
at all, and reads ``untrusted`` (:func:`resolve` treats a comment opened and never
closed, or an item that is nothing but the start of one, as a cut marker). So a torn
line can only lose trust, never gain it. (With the marker at the end, as before, a line
cut before its marker read as the journal default, ``agent``, even when it had been
written as ``untrusted``.)

``replaces:`` names the earlier line this one replaces (a version link, issue 38:
``memory/2026-05-02.md@3f9a0c1d``, its path and the hash of its text,
:mod:`reverie.provenance.links`). It is covered by the signature like ``project:``, so
only code holding the key links two lines (the owner's ``reverie link``, a confirmed
correction, a model's link that passed its checks); a link in a marker that does not
verify links nothing.

Lines without any marker keep the path's default: in a journal that is ``agent``. They
are what a person types into the journal by hand, so the owner's own notes stay
eligible for promotion, but never as ``owner`` (a path cannot prove who typed a line;
put such facts in ``MEMORY.md``, or use ``reverie write``). No line Reverie writes can
become one: every line it writes starts with its marker. Lines of the old format
(marker at the end) read exactly as they did; the signature covers the text without
the marker, wherever the marker stands, so no migration is needed and none gains trust.

Pure code: the key is passed in.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from .links import TARGET_RE
from .origin import Origin, SessionKind, cap, lowest

# the body may not contain '<' or '>': an unclosed "<!-- origin: owner;" in the text can
# never swallow the real marker after it
MARKER_RE = re.compile(r"\s*<!--\s*origin\s*:([^<>]*?)-->", re.IGNORECASE)
_FIELD_RE = re.compile(r"^\s*(origin|session|sig)?\s*:?\s*([A-Za-z0-9_-]+)\s*$")
SIG_HEX = 16
INFO_FIELDS = frozenset({"role", "anchor", "at", "channel", "agent"})
# what a line cut inside its leading marker can look like: a comment opened and never
# closed, or an item holding nothing but the first characters of "<!--"
_UNCLOSED_RE = re.compile(r"<!--(?:(?!-->).)*$", re.DOTALL)
_CUT_HEAD_RE = re.compile(r"^\s*[-*+]?\s*(?:<(?:!-?)?)?$")
_ITEM_RE = re.compile(r"^(\s*[-*+]\s+)(.*)$", re.DOTALL)


@dataclass(frozen=True)
class LineOrigin:
    """A journal line's text without its marker, and the origin the marker allows."""

    text: str  # the line without origin markers (right-stripped)
    origin: Origin
    session: SessionKind | None
    project: str | None = None  # the project a verified signed marker names
    project_unverified: bool = False  # a project claim no valid signature covers
    replaces: str | None = None  # the earlier line a verified signed marker links


_PROJECT_VALUE = re.compile(r"^[a-z0-9][a-z0-9._/@~+-]{0,127}$")


def _sign(
    key: bytes,
    origin: Origin,
    session: SessionKind | None,
    text: str,
    project: str | None = None,
    replaces: str | None = None,
) -> str:
    msg = f"{origin.value}\x00{session.value if session else ''}\x00{text.strip()}"
    if project is not None:  # lines without a project sign exactly as before
        msg += f"\x00project\x00{project}"
    if replaces is not None:  # ... and so do lines without a link
        msg += f"\x00replaces\x00{replaces}"
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).hexdigest()[:SIG_HEX]


def strip_markers(line: str) -> str:
    return MARKER_RE.sub("", line).rstrip()


def render_marker(
    text: str,
    origin: Origin,
    session: SessionKind | None = None,
    *,
    key: bytes | None = None,
    info: dict[str, str] | None = None,
    project: str | None = None,
) -> str:
    """``text`` with a marker. Signed when ``key`` is given (only code that knows the
    real origin from session context may pass it). ``info`` adds informational fields
    (role, anchor, channel, agent) that never affect trust; ``project`` the project key the line was
    written in (signed with the rest; a key that is no plain key is left out)."""
    text = strip_markers(text)
    fields = [f"origin: {origin.value}"]
    if session is not None:
        fields.append(f"session: {session.value}")
    if project is not None and not _PROJECT_VALUE.match(project):
        project = None
    if project is not None:
        fields.append(f"project: {project}")
    for name, value in (info or {}).items():
        if name in INFO_FIELDS:
            fields.append(f"{name}: {re.sub(r'[^A-Za-z0-9_.#:/-]', '_', value)}")
    if key is None:
        return _place(f"<!-- {'; '.join(fields)} -->", text)
    # signed over the text as `resolve` reads it back (the marker's own spacing
    # removed), so a text that starts with white space verifies too
    seen = strip_markers(_place(f"<!-- {'; '.join(fields)} -->", text))
    fields.append(f"sig: {_sign(key, origin, session, seen, project)}")
    return _place(f"<!-- {'; '.join(fields)} -->", text)


def _place(marker: str, text: str) -> str:
    """``marker`` after a list item's bullet, else before the text."""
    item = _ITEM_RE.match(text)
    if item is None:
        return f"{marker} {text}".rstrip()
    return f"{item.group(1)}{marker} {item.group(2)}".rstrip()


def is_cut(line: str) -> bool:
    """True when ``line`` (not blank) looks cut inside an origin marker: a comment is
    opened and never closed, or the item holds nothing but the start of one."""
    if not line.strip():
        return False
    rest = MARKER_RE.sub("", line)
    if _UNCLOSED_RE.search(rest):
        return True
    # an item holding a whole marker and nothing else is an empty item, not a cut one
    return bool(_CUT_HEAD_RE.fullmatch(rest)) and not MARKER_RE.search(line)


@dataclass(frozen=True)
class _Marker:
    origin: Origin | None
    session: SessionKind | None
    sig: str | None
    ok: bool
    project: str | None
    replaces: str | None = None

    def signs(self, key: bytes, text: str) -> bool:
        """The marker is well formed and its signature verifies for ``text``."""
        return bool(
            self.ok
            and self.sig
            and self.origin is not None
            and hmac.compare_digest(
                self.sig,
                _sign(key, self.origin, self.session, text, self.project, self.replaces),
            )
        )


def _parse_marker(body: str) -> _Marker:
    """Origin, session, sig, project and whether it is well formed, of one marker body
    (after ``origin:``)."""
    parts = body.split(";")
    origin = Origin.parse(parts[0])
    session: SessionKind | None = None
    sig: str | None = None
    project: str | None = None
    replaces: str | None = None
    ok = origin is not None
    for part in parts[1:]:
        if ":" not in part:
            ok = False
            continue
        name, value = (s.strip().lower() for s in part.split(":", 1))
        if name == "session":
            try:
                session = SessionKind(value)
            except ValueError:
                ok = False
        elif name == "sig":
            sig = value
        elif name == "project":
            project = value
            ok = ok and bool(_PROJECT_VALUE.match(value))
        elif name == "replaces":
            replaces = part.split(":", 1)[1].strip()  # a path keeps its case
            ok = ok and bool(TARGET_RE.fullmatch(replaces))
        elif name in INFO_FIELDS:
            continue  # informational (role, anchor): never affects trust
        else:
            ok = False
    return _Marker(origin, session, sig, ok, project, replaces)


_SIG_FIELD_RE = re.compile(r"(;\s*sig\s*:\s*)([A-Za-z0-9_-]+)", re.IGNORECASE)


def resign(old_line: str, new_line: str, key: bytes) -> str:
    """``new_line`` (``old_line`` with words edited outside its markers) with each
    marker whose signature verified for ``old_line`` signed again for the new text:
    same origin, session and project, so an edit keeps the line's trust and never
    raises it. A marker that did not verify is left as it was (it verifies for
    neither); markers must be the same, in the same order, in both lines."""
    old_text, new_text = strip_markers(old_line), strip_markers(new_line)
    old_bodies = [m.group(1) for m in MARKER_RE.finditer(old_line)]
    if [m.group(1) for m in MARKER_RE.finditer(new_line)] != old_bodies:
        raise ValueError("an edit may not touch a line's origin markers")
    out, at = [], 0
    for m in MARKER_RE.finditer(new_line):
        body = _parse_marker(m.group(1))
        marker = m.group(0)
        if body.signs(key, old_text) and body.origin is not None:
            sig = _sign(key, body.origin, body.session, new_text, body.project, body.replaces)
            f = _SIG_FIELD_RE.search(marker)
            if f is not None:
                marker = marker[: f.start(2)] + sig + marker[f.end(2) :]
        out += [new_line[at : m.start()], marker]
        at = m.end()
    out.append(new_line[at:])
    return "".join(out)


def resolve(line: str, *, default: Origin, ceiling: Origin, key: bytes | None) -> LineOrigin:
    """The origin of one line, computed from the path's default and ceiling and any
    markers, following the rules in the module docstring."""
    text = strip_markers(line)
    if is_cut(line):  # a torn append: fail closed
        return LineOrigin(text, Origin.UNTRUSTED, None)
    bodies = [m.group(1) for m in MARKER_RE.finditer(line)]
    if not bodies:
        return LineOrigin(text, cap(default, ceiling), None)
    base = default
    claims: list[Origin] = []
    session: SessionKind | None = None
    signed: list[Origin] = []
    projects: set[str] = set()
    links: set[str] = set()
    unverified = False
    for body in bodies:
        m = _parse_marker(body)
        origin, sess = m.origin, m.session
        if origin is None:
            claims.append(Origin.UNTRUSTED)  # a garbled marker fails closed
            unverified = unverified or "project" in body.lower()
            continue
        if (sess is not None and sess is not SessionKind.INTERACTIVE) or (
            sess is SessionKind.INTERACTIVE and session is None
        ):
            session = sess
        if key is not None and m.signs(key, text):
            signed.append(origin)
            if m.project is not None:
                projects.add(m.project)
            if m.replaces is not None:
                links.add(m.replaces)
        else:
            claims.append(origin)
            unverified = unverified or m.project is not None
    if signed:
        base = lowest(*signed)
    result = lowest(base, *claims) if claims else base
    project = next(iter(projects)) if len(projects) == 1 else None
    unverified = unverified or len(projects) > 1  # two signed projects: trust neither
    link = next(iter(links)) if len(links) == 1 else None  # two: neither
    return LineOrigin(text, cap(result, ceiling), session, project, unverified, link)


def with_link(line: str, target: str, key: bytes) -> str | None:
    """``line`` with its first verified marker naming ``target`` as the line it
    replaces, signed again (same origin, session and project: a link never changes a
    line's trust); None when no marker of the line verifies (nothing to sign a link
    with) or ``target`` is no line key."""
    if not TARGET_RE.fullmatch(target):
        return None
    text = strip_markers(line)
    for m in MARKER_RE.finditer(line):
        body = _parse_marker(m.group(1))
        if not body.signs(key, text) or body.origin is None:
            continue
        fields = [f for f in (p.strip() for p in m.group(1).split(";")[1:]) if f]
        kept = [f for f in fields if f.split(":", 1)[0].strip().lower() not in ("sig", "replaces")]
        sig = _sign(key, body.origin, body.session, text, body.project, target)
        parts = [f"origin: {body.origin.value}", *kept, f"replaces: {target}", f"sig: {sig}"]
        lead = m.group(0)[: len(m.group(0)) - len(m.group(0).lstrip())]
        return line[: m.start()] + f"{lead}<!-- {'; '.join(parts)} -->" + line[m.end() :]
    return None


__all__ = [
    "MARKER_RE",
    "LineOrigin",
    "is_cut",
    "render_marker",
    "resign",
    "resolve",
    "strip_markers",
    "with_link",
]
