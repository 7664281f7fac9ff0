"""Grounded in a message the owner typed: the one rule (R-PROV-1, R-USER-1, R-INTENT-1).
Pure code.

A session may arm an intent or write a USER.md directive on the owner's authority only
when it cites a message the owner typed in that session (:func:`cited`: an interactive
session, source ``owner``, origin ``owner``, as recorded when the message came in) and
the text *adds nothing the owner did not say* (:func:`faithful`):

- no URL, host or domain, address, e-mail, file name, path, identifier or version
  that is not in the message, each compared whole (``vpn.evil.example`` is not
  grounded by "vpn");
- no number and no command or shell syntax (``|``, ``;``, ``&``, ``$``, backticks,
  redirections ...) that the message does not hold;
- no word beyond it: every word (by its English stem) and every Chinese character must
  occur in the message, except function words and a small fixed frame ("remind me",
  "always", "please", 提醒, 总是; :mod:`reverie.stopwords`), so no extra clause, name
  or instruction can ride along;
- the same polarity: a text that drops the message's "not" (or adds one) says the
  opposite.

A faithful restatement (the owner's words reordered, function words added or dropped)
is grounded; anything else is not, and the callers keep it pending until the owner
confirms it. The rule never looks at what the text claims about itself.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..results import Accepted, Rejected
from ..stopwords import CJK_FRAMING, CJK_FUNCTION, CJK_NEGATION, FRAMING, FUNCTION, NEGATION
from ..tokens import is_cjk, stem, terms

_NOT_OWNER = {
    "tool": "tool output",
    "web": "a web page",
    "import": "imported text",
    "member": "a group member's message",
    "recalled": "recalled memory",
    "assistant": "the assistant's own words",
    "scaffold": "scaffolding (a cron or heartbeat prompt)",
}
# whole tokens compared as written (lower-cased): URLs, e-mails, dotted names (hosts,
# IPs, files, versions), paths, identifiers (snake_case, words with digits)
_URL = r"[a-z][a-z0-9+.-]*://\S+"
_EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_DOTTED = r"[\w-]+(?:\.[\w-]+)+"
_PATH = r"[^\s/\\]*[/\\]\S*"
_IDENT = r"\w*_\w*|\w*[a-z]\d\w*|\w*\d[a-z]\w*"
_SPECIAL = re.compile("|".join((_URL, _EMAIL, _PATH, _DOTTED, _IDENT)), re.IGNORECASE)
_TRIM = ".,:;!?)]}'\"”’»"
_SHELL = frozenset("|;&$`<>\\{}=~*^%@#")
_DIGITS = re.compile(r"\d+")
_NT = re.compile(r"n[’']t\b", re.IGNORECASE)  # don't -> do not (terms splits at "'")


@dataclass(frozen=True)
class Tokens:
    """What a text is compared on."""

    special: frozenset[str]
    numbers: frozenset[str]
    shell: frozenset[str]
    words: frozenset[str]  # English stems (function and frame words left out)
    chars: frozenset[str]  # Chinese characters (function and frame characters left out)
    negated: bool

    @classmethod
    def of(cls, text: str) -> Tokens:
        text = _NT.sub(" not", unicodedata.normalize("NFKC", text))
        special = frozenset(m.group(0).rstrip(_TRIM).lower() for m in _SPECIAL.finditer(text))
        words: set[str] = set()
        chars: set[str] = set()
        negated = False
        for t in terms(text):
            if is_cjk(t[0]):
                for ch in t:
                    if ch in CJK_NEGATION:
                        negated = True
                    elif ch not in CJK_FUNCTION and ch not in CJK_FRAMING:
                        chars.add(ch)
            elif t in NEGATION:
                negated = True
            elif t not in FUNCTION and t not in FRAMING and not t.isdigit():
                words.add(stem(t))
        return cls(
            special=frozenset(s for s in special if s),
            numbers=frozenset(_DIGITS.findall(text)),
            shell=frozenset(ch for ch in text if ch in _SHELL),
            words=frozenset(words),
            chars=frozenset(chars),
            negated=negated,
        )

    @property
    def empty(self) -> bool:
        return not (self.special or self.numbers or self.words or self.chars)


def added(text: str, said: str) -> list[str]:
    """What ``text`` says that the owner's message ``said`` does not (empty: nothing)."""
    t, m = Tokens.of(text), Tokens.of(said)
    out = sorted(t.special - m.special) + sorted(t.numbers - m.numbers)
    out += sorted(t.shell - m.shell) + sorted(t.words - m.words) + sorted(t.chars - m.chars)
    if t.negated != m.negated:
        out.append("a negation" if t.negated else "without the message's negation")
    return out


@dataclass(frozen=True)
class Grounded:
    """A text grounded in the owner message ``seq`` (its ``text``)."""

    seq: int
    text: str


def faithful(text: str, said: str, *, seq: int = 0) -> Accepted[Grounded] | Rejected:
    """Accepted when ``text`` adds nothing the owner's message ``said`` does not say."""
    extra = added(text, said)
    if extra:
        shown = ", ".join(repr(e) for e in extra[:8]) + (" ..." if len(extra) > 8 else "")
        return Rejected(
            "grounding",
            f"message {seq} does not say all of this: it adds {shown}",
            {"added": extra},
        )
    if Tokens.of(text).empty:
        return Rejected("grounding", "the text says nothing of its own", {"added": []})
    return Accepted(Grounded(seq, said))


def cited(
    messages: Sequence[Mapping[str, Any]], seq: int | None, *, session_kind: str
) -> Accepted[Grounded] | Rejected:
    """Accepted (the message) when ``seq`` is a message the owner typed in this
    (interactive) session, else why not."""
    if session_kind != "interactive":
        return Rejected("session", f"a {session_kind} session cannot speak for the owner")
    if seq is None:
        return Rejected("citation", "no owner message is cited")
    found = next((m for m in messages if m.get("seq") == seq), None)
    if found is None:
        return Rejected("citation", f"this session has no message {seq}")
    source = str(found.get("source"))
    if source != "owner":
        what = _NOT_OWNER.get(source, f"a {source!r} message")
        return Rejected(
            "source",
            f"message {seq} is {what}, not the owner's: only the owner's words count",
            {"source": source},
        )
    if found.get("origin") != "owner":
        return Rejected(
            "origin",
            f"message {seq} was recorded as {found.get('origin')!r}, not as the owner's "
            "(another sender, or a channel that cannot prove it is the owner)",
            {"origin": found.get("origin")},
        )
    return Accepted(Grounded(seq, str(found.get("text", ""))))


def grounded(
    messages: Sequence[Mapping[str, Any]], seq: int | None, text: str, *, session_kind: str
) -> Accepted[Grounded] | Rejected:
    """:func:`cited`, then :func:`faithful`: may ``text`` stand on the owner's word?"""
    match cited(messages, seq, session_kind=session_kind):
        case Accepted(value=message):
            return faithful(text, message.text, seq=message.seq)
        case refused:
            return refused


__all__ = ["Grounded", "Tokens", "added", "cited", "faithful", "grounded"]
