"""PII redaction (R-WRITE-3, pure): transcripts before they become dreaming evidence,
and every text built from memory or conversation on its way to a model (lane 2's
prompt, dreaming's prompts: :func:`for_model`).

A transcript is evidence that may be consolidated into long-term memory, so anything
personal or secret in it must be gone *before* ingestion: once a phone number reaches a
journal it can be recalled, injected and promoted forever. ``redact`` replaces each
finding with ``[REDACTED:<kind>]`` and reports how many of each kind it removed.

The detector is a small set of regular expressions plus checksums, not a model: it must
run offline, deterministically, and identically in Chinese and English text. Two rules
keep it honest on ordinary prose:

* Boundaries are ASCII look-arounds, never ``\\b``. In Python ``\\b`` treats CJK
  characters as word characters, so ``\\b`` would find no boundary in "手机号是13812345678".
* Number-shaped kinds need a second proof: payment cards must pass Luhn (and start with a
  real network prefix), resident IDs must carry a valid birth date and ISO 7064 MOD 11-2
  check character, and phones need a recognisable shape (``+`` prefix, NANP grouping or a
  Chinese mobile prefix). Dates, times, versions, prices, git hashes and UUIDs match none.

Order of the passes (each pass sees the output of the previous one, and a placeholder
never matches a later rule, so ``redact`` is idempotent):

1. ``secret``: tokens are long opaque runs that may contain digit runs or ``@``; a labelled
   value (``token: <40 hex>``) must be claimed by its label before anything else looks at it.
2. ``email``: Chinese mailboxes are often phone numbers (``13812345678@163.com``); the
   phone pass would otherwise leave ``[REDACTED:phone]@163.com`` behind.
3. ``cn_id``: an 18-digit ID passes Luhn one time in ten; with a valid date and check
   character it is an ID, not a card.
4. ``card``: a grouped card (``6222 0212 3456 7890``) contains pieces the looser phone
   shapes could half-eat.
5. ``phone``: last, on what is left.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

KINDS = ("secret", "email", "cn_id", "card", "phone")


def placeholder(kind: str) -> str:
    """The text that replaces one finding of ``kind``."""
    return f"[REDACTED:{kind}]"


@dataclass(frozen=True)
class Redaction:
    """Redacted text plus the number of findings per kind (kinds with no findings omitted)."""

    text: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


# --- checksums -------------------------------------------------------------------------


def luhn_ok(digits: str) -> bool:
    """Luhn (mod 10) check used by every payment card network."""
    if not digits.isdigit():
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card_prefix_ok(digits: str) -> bool:
    """Issuer prefix of a real network: 3 (Amex, JCB, Diners), 4 (Visa), 5 (Mastercard),
    6 (UnionPay, Discover) or Mastercard's 2221-2720. This is why a list of years such as
    "2019 2020 2021 2022" is never a card, even when it happens to pass Luhn."""
    return digits[0] in "3456" or 2221 <= int(digits[:4]) <= 2720


_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def cn_id_ok(value: str) -> bool:
    """Chinese resident ID (GB 11643): region, valid YYYYMMDD, sequence, MOD 11-2 check."""
    if len(value) != 18 or not value[:17].isdigit() or value[0] == "0":
        return False
    year, month, day = int(value[6:10]), int(value[10:12]), int(value[12:14])
    if not 1800 <= year <= 2099:
        return False
    try:
        date(year, month, day)
    except ValueError:
        return False
    total = sum(int(d) * w for d, w in zip(value[:17], _ID_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == value[17].upper()


# --- patterns --------------------------------------------------------------------------

# Number boundaries: not glued to a letter, digit or underscore, and not the middle of a
# dotted/dashed number chain such as a date or version.
_NL = r"(?<![0-9A-Za-z_+])(?<![0-9][-.])"
_NR = r"(?![0-9A-Za-z_])(?![-.][0-9])"
# Token boundary: an API key starts at the start of an identifier-like run.
_TL = r"(?<![A-Za-z0-9_\-])"
_TR = r"(?![A-Za-z0-9_\-])"

_SECRET_TOKENS = re.compile(
    _TL
    + "(?:"
    + "|".join(
        (
            r"sk-ant-[A-Za-z0-9_\-]{20,}",  # Anthropic
            r"sk-(?:proj-)?[A-Za-z0-9_\-]{20,}",  # OpenAI
            r"gh[pousr]_[A-Za-z0-9]{20,}",  # GitHub classic tokens
            r"github_pat_[A-Za-z0-9_]{20,}",  # GitHub fine-grained tokens
            r"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key id
            r"xox[abpr]-[A-Za-z0-9\-]{10,}",  # Slack
            r"AIza[0-9A-Za-z_\-]{30,}",  # Google API key
            r"eyJ[A-Za-z0-9_\-]+\.eyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+",  # JWT
        )
    )
    + ")"
    + _TR
)

_BEARER = re.compile(r"(?<![A-Za-z])[Bb]earer\s+(?P<v>[A-Za-z0-9\-._~+/]+=*)")

# A bare assigned value: printable ASCII up to whitespace, quotes, separators or brackets,
# not ending in "." ":" or "?" (a trailing "!" is more often part of a password than prose).
# "[" is a stop character, so a placeholder is never redacted again.
_STOP = r"[\"'`,;&()\[\]{}<>]"
_BARE = rf"(?:(?!{_STOP})[\x21-\x7e])*(?:(?!{_STOP}|[.:?])[\x21-\x7e])"
_PASSWORD_LABEL = re.compile(r"pass|pwd|密码|口令", re.IGNORECASE)
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.\-])"
    r"(?P<label>"
    r"(?:[A-Za-z0-9]+[_.\-])*"  # prefixes: AWS_SECRET_ACCESS_, x-api-, db.
    r"(?:api[_\-]?key|key|token|secret|password|passwd|pwd|passphrase|credentials?)"
    r"[\"']?\s*[:=：]"
    r"|(?:密码|口令|密钥|秘钥|令牌)\s*(?:[:=：]|是|为)"
    r")\s*"
    r"(?:\"(?P<dq>(?!\[REDACTED:)[^\"\n]+)\"|'(?P<sq>(?!\[REDACTED:)[^'\n]+)'|(?P<bare>"
    + _BARE
    + r"))",
    re.IGNORECASE,
)

_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+\-])"
    r"[A-Za-z0-9][A-Za-z0-9._%+\-]*@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}"
    r"(?![A-Za-z0-9\-])"
)

_CN_ID = re.compile(_NL + r"\d{17}[\dXx]" + _NR)

_CARD = re.compile(
    _NL
    + r"(?:\d{13,19}"  # contiguous
    + r"|\d{4}(?P<s>[ \-])\d{4,6}(?:(?P=s)\d{3,5}){1,3})"  # 4-4-4-4(-3), 4-6-5, 4-6-4
    + _NR
)

_PHONE = re.compile(
    _NL
    + "(?:"
    + "|".join(
        (
            r"(?:(?:\+|00)86[ \-]?)?1[3-9]\d(?P<s>[ \-]?)\d{4}(?P=s)\d{4}",  # CN mobile
            r"(?:\+?1[ .\-]?)?(?:\(\d{3}\)[ .\-]?|\d{3}[ .\-])\d{3}[ .\-]\d{4}",  # NANP
            r"\+\d{1,3}(?:[ .\-]?\(\d{1,4}\))?(?:[ .\-]?\d{1,5}){2,6}",  # +CC international
            r"0\d{2,3}-\d{7,8}",  # CN landline 010-12345678
        )
    )
    + ")"
    + _NR
)


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _opaque(value: str) -> bool:
    """A value that looks like a credential rather than a word: long with a digit, or very
    long. Keeps "sort key: name" and "the bearer of bad news" intact."""
    return (len(value) >= 8 and any(c.isdigit() for c in value)) or len(value) >= 24


def _assignment_ok(m: re.Match[str]) -> bool:
    value = _value(m)
    if _PASSWORD_LABEL.search(m.group("label")):
        return len(value) >= 3
    return _opaque(value)


def _value(m: re.Match[str]) -> str:
    return next(v for v in (m.group("dq"), m.group("sq"), m.group("bare")) if v is not None)


def _phone_ok(m: re.Match[str]) -> bool:
    return 8 <= len(_digits(m.group(0))) <= 15


def _card_ok(m: re.Match[str]) -> bool:
    digits = _digits(m.group(0))
    return 13 <= len(digits) <= 19 and _card_prefix_ok(digits) and luhn_ok(digits)


def _always(m: re.Match[str]) -> bool:
    return True


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    accept: Callable[[re.Match[str]], bool] = _always
    # named groups whose span is replaced (the first that matched); else the whole match
    groups: tuple[str, ...] = ()


# The order is the contract described in the module docstring.
_RULES: tuple[_Rule, ...] = (
    _Rule("secret", _SECRET_TOKENS),
    _Rule("secret", _BEARER, lambda m: _opaque(m.group("v")), ("v",)),
    _Rule("secret", _ASSIGNMENT, _assignment_ok, ("dq", "sq", "bare")),
    _Rule("email", _EMAIL),
    _Rule("cn_id", _CN_ID, lambda m: cn_id_ok(m.group(0))),
    _Rule("card", _CARD, _card_ok),
    _Rule("phone", _PHONE, _phone_ok),
)


def _apply(
    rule: _Rule,
    text: str,
    counts: dict[str, int],
    name: Callable[[str, str], str] = lambda kind, _value: placeholder(kind),
) -> str:
    def replace(m: re.Match[str]) -> str:
        if not rule.accept(m):
            return m.group(0)
        counts[rule.kind] = counts.get(rule.kind, 0) + 1
        group = next((g for g in rule.groups if m.group(g) is not None), None)
        if group is None:
            return name(rule.kind, m.group(0))
        start, end = m.start(group) - m.start(), m.end(group) - m.start()
        whole = m.group(0)
        return whole[:start] + name(rule.kind, m.group(group)) + whole[end:]

    return rule.pattern.sub(replace, text)


def redact_secrets(text: str) -> Redaction:
    """Only secrets (API keys, tokens, passwords): for journal appends, where an email
    or a phone number may be the fact itself but a live key never should be stored."""
    counts: dict[str, int] = {}
    for rule in _RULES:
        if rule.kind == "secret":
            text = _apply(rule, text, counts)
    return Redaction(text, counts)


def redact(text: str) -> Redaction:
    """Replace emails, phones, payment cards, secrets and Chinese resident IDs in ``text``
    with ``[REDACTED:<kind>]``. Labels stay (``password = [REDACTED:secret]``) so the
    transcript still reads naturally. Idempotent: ``redact(redact(t).text).text`` equals
    ``redact(t).text``."""
    counts: dict[str, int] = {}
    for rule in _RULES:
        text = _apply(rule, text, counts)
    return Redaction(text, counts)


def for_model(text: str) -> str:
    """``text`` as a model may see it: :func:`redact` (every path from memory or a
    conversation to a model goes through here)."""
    return redact(text).text


@dataclass(frozen=True)
class Masked:
    """Text for a model with each finding replaced by a numbered placeholder
    (``[REDACTED:email:1]``; the same value, the same placeholder), and the way back:
    a model that rewrites memory (dreaming's consolidation) never sees the values, and
    what it returns gets them back, so nothing the owner stored is lost."""

    text: str
    originals: dict[str, str] = field(default_factory=dict)

    def restore(self, text: str) -> str:
        if not self.originals:
            return text
        return _NUMBERED.sub(lambda m: self.originals.get(m.group(0), m.group(0)), text)

    def restore_data(self, data: object) -> object:
        """:meth:`restore` over every string of a JSON value."""
        if isinstance(data, str):
            return self.restore(data)
        if isinstance(data, list):
            return [self.restore_data(v) for v in data]
        if isinstance(data, dict):
            return {k: self.restore_data(v) for k, v in data.items()}
        return data


_NUMBERED = re.compile(r"\[REDACTED:[a-z_]+:\d+\]")


def mask(text: str) -> Masked:
    """:func:`redact` with numbered placeholders that :meth:`Masked.restore` undoes."""
    originals: dict[str, str] = {}
    by_value: dict[tuple[str, str], str] = {}

    def name(kind: str, value: str) -> str:
        if (kind, value) not in by_value:
            by_value[kind, value] = f"[REDACTED:{kind}:{len(by_value) + 1}]"
            originals[by_value[kind, value]] = value
        return by_value[kind, value]

    counts: dict[str, int] = {}
    for rule in _RULES:
        text = _apply(rule, text, counts, name)
    return Masked(text, originals)


# line breaks other than "\n" (str.splitlines breaks at them, the indexer does not)
_BREAKS_RE = re.compile("\r\n|[\r\x0b\x0c\x1c\x1d\x1e\x85]")
# every other control character but tab (C0, DEL, C1), and lone surrogates (which no
# UTF-8 file can hold)
_CONTROLS_RE = re.compile("[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f\ud800-\udfff]")


def strip_controls(text: str) -> str:
    """``text`` safe for a Markdown or JSONL file: other line breaks become ``\\n`` and
    every other control character but tab is removed (issue 14: one NUL byte made a
    journal binary to the indexer). Every write path applies it before anything else,
    so removing a character can never join the pieces of a marker."""
    return _CONTROLS_RE.sub("", _BREAKS_RE.sub("\n", text))


__all__ = [
    "KINDS",
    "Masked",
    "Redaction",
    "cn_id_ok",
    "for_model",
    "luhn_ok",
    "mask",
    "placeholder",
    "redact",
    "redact_secrets",
    "strip_controls",
]
