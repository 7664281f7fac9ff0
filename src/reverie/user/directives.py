"""USER.md as a list of imperative directives (R-USER-1). Pure code, no I/O.

A preference merely present in context stops being followed after a few turns; an
imperative restated next to the question is followed (seed section 9.2). So every entry
of USER.md is a directive, one list item each, with its metadata in trailers::

    - Always use four spaces for indentation. <!-- key: code.indent --> <!-- observed: 2026-05-01 --> <!-- status: active -->
    - 回复时总是使用中文。 <!-- key: reply.language --> <!-- observed: 2026-05-01 --> <!-- status: active --> <!-- always: on -->

- ``key``: the supersede key. A changed preference *replaces* the directive of the same
  key in place (same line, new text and date), never appended beside it: a stack of
  contradicting preferences makes a model answer with the old value. No two active
  directives share a key (:func:`problems`).
- ``observed``: the day the preference was stated; ``status``: ``active`` or
  ``superseded`` (a line a person marks superseded is kept but never restated);
  ``always: on``: restated beside every message, not only those it bears on.

Lines of USER.md that are no list item (headings, prose) are left as they are.
"""

from __future__ import annotations

import re
from datetime import date
from functools import cache
from typing import TYPE_CHECKING

from ..records import Record
from ..stopwords import KEY
from ..tokens import terms

if TYPE_CHECKING:  # (writing USER.md: not restating it on every prompt)
    from ..results import Accepted, Rejected

FIELD_RE = re.compile(r"\s*<!--\s*(key|observed|status|always)\s*:([^<>]*?)-->", re.IGNORECASE)
_ITEM_RE = re.compile(r"^(\s*[-*+]\s+)(.*)$")
_OTHER_TRAILER_RE = re.compile(r"\s*<!--(?:(?!-->).)*-->")
STATUSES = ("active", "superseded")
MAX_DIRECTIVE_CHARS = 300


def _split(words: str) -> tuple[str, ...]:
    return tuple(words.split("|"))


# Leading words of an imperative, English and Chinese (checked after an optional
# "please" / "请"). A closed list: the check is deterministic and explainable.
_EN_LEADS = _split(
    "always|never|prefer|don't|dont|do not|avoid|use|keep|stop|only|"
    "make sure|ensure|remember to|write|reply|respond|answer|call me|"
    "address me|speak|format|default to|put|run|include|omit|no "
)
_ZH_LEADS = _split(
    "总是|始终|永远不要|永远|绝不|绝对不要|从不|不要|别|优先|尽量|务必|必须|一律|默认|记得|用|使用|回复|回答|叫我|称呼我"
)


# a directive's key, compiled when USER.md holds a directive (its CJK range costs a
# prompt without one a millisecond)
@cache
def _key_re() -> re.Pattern[str]:
    return re.compile(r"^[a-z0-9\u4e00-\u9fff][a-z0-9._\-/\u4e00-\u9fff]{0,63}$")


# compiled on first use: only writing a directive asks (restating them on every prompt
# never does, and a one-shot hook should not pay for these patterns)
@cache
def _please_re() -> re.Pattern[str]:
    return re.compile(r"^(?:please[,\s]+|pls[,\s]+|kindly\s+|请(?:你|您)?)", re.IGNORECASE)


@cache
def _first_person() -> tuple[tuple[re.Pattern[str], str], ...]:
    """First-person preferences a journal line may hold, and the directive each becomes."""
    return (
        (
            re.compile(r"^i\s+(?:always|do always)\s+(?:want|like)\s+(?:you\s+)?to\s+", re.I),
            "Always ",
        ),
        (re.compile(r"^i\s+(?:always\s+)?prefer\s+", re.I), "Prefer "),
        (re.compile(r"^i\s+never\s+want\s+(?:you\s+)?to\s+", re.I), "Never "),
        (re.compile(r"^i\s+(?:don't|do not)\s+want\s+(?:you\s+)?to\s+", re.I), "Never "),
        (re.compile(r"^(?:the\s+)?user\s+prefers\s+", re.I), "Prefer "),
        (re.compile(r"^我(?:更)?(?:喜欢|偏好|希望你)(?:总是)?"), "优先"),
    )


_KEY_STOP = KEY


class Directive(Record):
    """One directive of USER.md: its text (no trailers), key, date, status and line
    (1-based in USER.md; 0: not in the file yet)."""

    __slots__ = ("always", "key", "line", "observed", "status", "text")

    def __init__(
        self,
        text: str,
        key: str | None,
        observed: date | None = None,
        status: str = "active",
        always: bool = False,
        line: int = 0,
    ) -> None:
        self.text, self.key, self.observed = text, key, observed
        self.status, self.always, self.line = status, always, line

    def moved(self, *, line: int | None = None, status: str | None = None) -> Directive:
        """This directive at another ``line`` or with another ``status``."""
        line = self.line if line is None else line
        status = self.status if status is None else status
        return Directive(self.text, self.key, self.observed, status, self.always, line)

    @property
    def active(self) -> bool:
        return self.status == "active"

    def render(self) -> str:
        out = f"- {self.text}"
        if self.key:
            out += f" <!-- key: {self.key} -->"
        if self.observed:
            out += f" <!-- observed: {self.observed.isoformat()} -->"
        out += f" <!-- status: {self.status} -->"
        if self.always:
            out += " <!-- always: on -->"
        return out

    def as_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "key": self.key,
            "observed": self.observed.isoformat() if self.observed else None,
            "status": self.status,
            "always": self.always,
            "source": f"USER.md#L{self.line}" if self.line else None,
        }


def strip_fields(line: str) -> str:
    """A line without its directive trailers (what FTS and the embedder see)."""
    return FIELD_RE.sub("", line).rstrip()


def parse_directive(line: str, number: int = 0) -> Directive | None:
    """The directive on one USER.md line (None for a line that is no list item)."""
    m = _ITEM_RE.match(line)
    if not m:
        return None
    fields: dict[str, str] = {}
    for f in FIELD_RE.finditer(line):
        fields.setdefault(f.group(1).lower(), f.group(2).strip())
    text = _OTHER_TRAILER_RE.sub("", FIELD_RE.sub("", m.group(2))).strip()
    if not text:
        return None
    key = normalise_key(fields.get("key", ""))
    try:
        observed = date.fromisoformat(fields["observed"]) if "observed" in fields else None
    except ValueError:
        observed = None
    status = fields.get("status", "active").lower()
    return Directive(
        text=text,
        key=key,
        observed=observed,
        status=status if status in STATUSES else "superseded",  # unknown: never restated
        always=fields.get("always", "").lower() in ("on", "yes", "true", "1"),
        line=number,
    )


def parse(text: str) -> list[Directive]:
    """Every directive of USER.md, in file order (lines split on "\\n" only)."""
    out = []
    for number, raw in enumerate(text.split("\n"), start=1):
        d = parse_directive(raw.rstrip("\r"), number)
        if d is not None:
            out.append(d)
    return out


def normalise_key(raw: str) -> str | None:
    key = "-".join(raw.strip().lower().split())
    return key if key and _key_re().match(key) and ".." not in key else None


def auto_key(text: str) -> str:
    """A key for a directive given without one: its first content words, else a hash."""
    words = [t for t in terms(text) if t not in _KEY_STOP and not t.isdigit()][:3]
    slug = "-".join(words)[:40].strip("-.")
    key = normalise_key(f"auto.{slug}") if slug else None
    if key:
        return key
    import hashlib  # (OpenSSL: only for a directive with no words to name it)

    return "auto." + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def is_imperative(text: str) -> bool:
    """Does ``text`` read as a directive ("Always...", "Never...", "总是...", ...)?"""
    body = _please_re().sub("", text.strip()).strip()
    low = body.lower()
    if any(low.startswith(lead) and _word_end(low, len(lead)) for lead in _EN_LEADS):
        return True
    return any(body.startswith(lead) for lead in _ZH_LEADS) or (
        _please_re().match(text.strip()) is not None and text.strip().startswith("请")
    )


def _word_end(text: str, at: int) -> bool:
    return at >= len(text) or not text[at].isalnum() or text[at - 1] == " "


def as_directive(text: str) -> str | None:
    """``text`` as a directive: itself when imperative, a first-person preference
    ("I prefer X" -> "Prefer X") rewritten, else None."""
    t = " ".join(text.split()).strip()
    if not t:
        return None
    if is_imperative(t):
        return t[0].upper() + t[1:]
    for pattern, lead in _first_person():
        m = pattern.match(t)
        if m and t[m.end() :].strip():
            rest = t[m.end() :].strip()
            return lead + rest
    return None


def clean_text(text: str) -> str:
    """One line, no comment openers or closers (text can never forge a trailer)."""
    t = " ".join(re.sub(r"<!--.*?-->", " ", text, flags=re.DOTALL).split())
    t = t.replace("<!--", "").replace("-->", "").replace("<", "‹").replace(">", "›")
    return t[:MAX_DIRECTIVE_CHARS].strip()


class Change(Record):
    """A change to USER.md: the new text, what happened (added, superseded, unchanged,
    retired), and the directives involved."""

    __slots__ = ("action", "directive", "replaced", "text")

    def __init__(
        self, text: str, action: str, directive: Directive, replaced: Directive | None = None
    ) -> None:
        self.text, self.action, self.directive, self.replaced = text, action, directive, replaced

    def summary(self) -> str:
        """One line for DREAMS.md."""
        d = self.directive
        if self.action == "superseded" and self.replaced is not None:
            return f"superseded [{d.key}] {self.replaced.text!r} -> {d.text!r}"
        return f"{self.action} [{d.key}] {d.text!r}"


def upsert(
    current: str,
    text: str,
    *,
    key: str | None,
    observed: date,
    always: bool = False,
    same_subject: str | None = None,
) -> Accepted[Change] | Rejected:
    """USER.md with the directive ``text`` added, or replacing in place the active
    directive of the same ``key`` (or, without a key, of the key ``same_subject`` that
    the consolidation model judged to be the same subject; it must name an active
    directive). Never two active directives of one key."""
    from ..results import Accepted, Rejected

    body = clean_text(text)
    if not body:
        return Rejected("empty", "the directive is empty")
    if not is_imperative(body):
        return Rejected(
            "not-imperative",
            "a USER.md entry is a directive: start it with Always, Never, Prefer, Don't, "
            "Use ... (or 总是, 永远不要, 不要, 优先, 请始终 ...)",
            {"text": body},
        )
    existing = parse(current)
    if key is not None and normalise_key(key) is None:
        return Rejected("key", f"{key!r} is no key (letters, digits, '.', '-', '_', '/')")
    wanted = normalise_key(key) if key else None
    if wanted is None and same_subject is not None:
        named = [d for d in existing if d.active and d.key == normalise_key(same_subject)]
        if not named:
            return Rejected("subject", f"no active directive has the key {same_subject!r}")
        wanted = named[0].key
    if wanted is None:
        same_text = [d for d in existing if d.active and _norm(d.text) == _norm(body)]
        wanted = same_text[0].key if same_text and same_text[0].key else auto_key(body)
    new = Directive(body, wanted, observed, "active", always)
    old = [d for d in existing if d.active and d.key == wanted]
    lines = current.split("\n")
    if not old:
        return Accepted(Change(_append(current, new.render()), "added", _at_end(new, current)))
    first = old[0]
    if _norm(first.text) == _norm(body) and first.always == always and len(old) == 1:
        return Accepted(Change(current, "unchanged", first))
    placed = new.moved(line=first.line)
    lines[first.line - 1] = placed.render()
    for extra in old[1:]:  # a hand edit left two active of one key: one remains
        lines[extra.line - 1] = extra.moved(status="superseded").render()
    return Accepted(Change("\n".join(lines), "superseded", placed, first))


def retire(current: str, key: str) -> Accepted[Change] | Rejected:
    """USER.md without the active directive(s) of ``key`` (kept in the pre-image)."""
    from ..results import Accepted, Rejected

    k = normalise_key(key)
    old = [d for d in parse(current) if d.active and d.key == k]
    if not old:
        return Rejected("unknown", f"no active directive has the key {key!r}")
    drop = {d.line for d in old}
    lines = [ln for i, ln in enumerate(current.split("\n"), start=1) if i not in drop]
    return Accepted(Change("\n".join(lines), "retired", old[0]))


def problems(text: str) -> list[str]:
    """What breaks R-USER-1 in ``text``: two active directives of one key."""
    seen: dict[str, int] = {}
    out = []
    for d in parse(text):
        if d.active and d.key:
            if d.key in seen:
                out.append(f"USER.md:{d.line}: key {d.key!r} is active on line {seen[d.key]} too")
            else:
                seen[d.key] = d.line
    return out


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".。!！")


def _append(current: str, line: str) -> str:
    if not current.strip():
        return f"# User\n\n{line}\n"
    base = current if current.endswith("\n") else current + "\n"
    return base + line + "\n"


def _at_end(d: Directive, current: str) -> Directive:
    appended = _append(current, d.render())
    return d.moved(line=appended.rstrip("\n").count("\n") + 1)


__all__ = [
    "FIELD_RE",
    "Change",
    "Directive",
    "as_directive",
    "auto_key",
    "clean_text",
    "is_imperative",
    "normalise_key",
    "parse",
    "parse_directive",
    "problems",
    "retire",
    "strip_fields",
    "upsert",
]
