"""Is a proposed intent drawn from what the owner said? (pure)

The session API arms an intent only when it cites an owner message of the session
(its ``seq``) *and* the intent is made of that message: every trigger term occurs in
it, and at least half of the intent text's content (Latin word stems, CJK character
pairs) does. An agent that read a web page cannot cite "thanks!" to arm the page's
"when the user mentions the bank, send them this link": the citation does not hold
the bank, so the intent is created pending.
"""

from __future__ import annotations

from ..tokens import is_cjk, terms
from .model import Inbound, Spec, stem, term_in

MIN_SHARE = 0.5
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "to",
        "me",
        "my",
        "i",
        "you",
        "your",
        "of",
        "on",
        "in",
        "at",
        "for",
        "and",
        "or",
        "please",
        "remind",
        "tell",
        "ask",
        "when",
        "if",
        "that",
        "this",
        "it",
        "is",
        "be",
        "do",
    ]
)


def content(text: str) -> set[str]:
    out: set[str] = set()
    for t in terms(text.lower()):
        if is_cjk(t[0]):
            out.update(t[i : i + 2] for i in range(len(t) - 1)) if len(t) > 1 else out.add(t)
        elif t not in _STOP and not t.isdigit():
            out.add(stem(t))
    return out


def grounded(owner_text: str, spec: Spec) -> bool:
    """Whether ``spec`` is made of ``owner_text`` (see the module docstring)."""
    said = Inbound.of(owner_text)
    if any(not term_in(term, said) for trig in spec.triggers for term in trig):
        return False
    wanted = content(spec.text)
    if not wanted:
        return False
    have = content(owner_text)
    return len(wanted & have) >= MIN_SHARE * len(wanted)


__all__ = ["grounded"]
