"""LangGraph store items as journal lines, and LangGraph's filters and namespace
matches (pure).

An item is one record, written as a journal line a person can read::

    langgraph {"namespace":["users","Alice Smith"],"key":"food","value":{"likes":"ramen"}}

with ``"index": false`` for an item that is not to be ranked by a query, and
``"deleted": true`` (no value) for a delete. The namespace and the key are any text
(JSON strings); the value is the JSON of what was put, so it reads back equal. The
record is JSON with ``ensure_ascii`` off (Chinese stays Chinese, and searchable), but
the characters a journal line may not hold or would change are escaped as ``\\uXXXX``
(compact, so that white space is only ever inside a JSON string):
``<`` and ``>`` (no record can open an HTML comment, so none can carry or forge a
marker), control characters, line and paragraph separators, lone surrogates.

A record longer than :data:`MAX_RECORD` characters (a journal line holds 2,000) is cut
into parts written together, each ``langgraph-part <id> <i>/<n> <slice>``; no slice
ends in white space (a line's ends are trimmed), and the parts read back joined. The
lines an earlier version of the store wrote (``lg[users/alice|food] {...}``) are still
read as records.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

RECORD = "langgraph"
PART = "langgraph-part"
MAX_RECORD = 1800
_ESCAPE = re.compile("[<>\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_RECORD_RE = re.compile(r"(?:^|\s)langgraph (\{.*\})\s*$")
_PART_RE = re.compile(r"(?:^|\s)langgraph-part ([0-9a-f]{8}) (\d+)/(\d+) (.*\S)\s*$")
# the line an earlier version wrote, ``lg[users/alice|food] {"likes": "sushi"}``: still read
_EARLIER_RE = re.compile(r"(?:^|\s)lg\[([^\]|]*)\|([^\]]*)\] (\{.*\})\s*$")


@dataclass(frozen=True)
class Record:
    """One record read back: the item's place, and what it says."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any] | None  # None: a delete
    indexed: bool = True


def _escape(text: str) -> str:
    return _ESCAPE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def encode(
    namespace: Sequence[str], key: str, value: Mapping[str, Any] | None, *, index: bool = True
) -> str:
    """The record of a put (``value``) or a delete (None) as one JSON text."""
    body: dict[str, Any] = {"namespace": list(namespace), "key": key}
    if value is None:
        body["deleted"] = True
    else:
        body["value"] = value
        if not index:
            body["index"] = False
    return _escape(json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str))


def lines_of(record: str, *, token: str | None = None) -> list[str]:
    """The journal lines that hold ``record``: one, or its parts (module doc)."""
    if len(record) <= MAX_RECORD:
        return [f"{RECORD} {record}"]
    slices: list[str] = []
    rest = record
    while rest:
        cut = back = min(MAX_RECORD, len(rest))
        while back > cut // 2 and rest[back - 1].isspace():
            back -= 1  # a slice never ends in white space: the line's end is trimmed
        if rest[back - 1].isspace():  # a long run of it: its last one written escaped
            rest = f"{rest[: cut - 1]}\\u{ord(rest[cut - 1]):04x}{rest[cut:]}"
            back = cut + 5  # (white space is only ever inside a JSON string here)
        slices.append(rest[:back])
        rest = rest[back:]
    rid = token or secrets.token_hex(4)
    return [f"{PART} {rid} {i}/{len(slices)} {s}" for i, s in enumerate(slices, start=1)]


def _decoded(text: str) -> Record | None:
    try:
        body = json.loads(text)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    ns, key, value = body.get("namespace"), body.get("key"), body.get("value")
    if not isinstance(ns, list) or not all(isinstance(p, str) for p in ns) or not ns:
        return None
    if not isinstance(key, str):
        return None
    if body.get("deleted") is True:
        return Record(tuple(ns), key, None)
    if not isinstance(value, dict):
        return None
    return Record(tuple(ns), key, value, body.get("index") is not False)


def read(lines: Iterable[tuple[int, str]]) -> list[tuple[int, int, Record]]:
    """The records of one file's lines (number, text), each with the first and last line
    that hold it; a record with a part missing, or that is not a record, is skipped."""
    out: list[tuple[int, int, Record]] = []
    parts: dict[str, tuple[int, list[str], int]] = {}  # id -> (first line, slices, of n)
    for number, text in lines:
        whole = _RECORD_RE.search(text)
        if whole is not None:
            record = _decoded(whole.group(1))
            if record is not None:
                out.append((number, number, record))
            continue
        part = _PART_RE.search(text)
        if part is None:
            earlier = _EARLIER_RE.search(text)
            if earlier is not None:
                ns = [p for p in earlier.group(1).split("/") if p]
                body = f'{{"namespace":{json.dumps(ns)},"key":{json.dumps(earlier.group(2))},'
                record = _decoded(body + f'"value":{earlier.group(3)}}}')
                if record is not None:
                    out.append((number, number, record))
            continue
        rid, i, n, piece = part.group(1), int(part.group(2)), int(part.group(3)), part.group(4)
        first, pieces, total = parts.get(rid, (number, [], n))
        if i != len(pieces) + 1 or total != n:
            parts.pop(rid, None)  # out of order or mixed: never glued into a wrong value
            continue
        pieces.append(piece)
        parts[rid] = (first, pieces, n)
        if i == n:
            del parts[rid]
            record = _decoded("".join(pieces))
            if record is not None:
                out.append((first, number, record))
    return out


def matches(value: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """``value`` passes a LangGraph filter: each field equal to the one asked for, or
    passing its operators (``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``);
    nested objects compared field by field, lists element by element."""
    return all(_holds(value.get(k), want) for k, want in wanted.items())


def _holds(have: Any, want: Any) -> bool:
    if isinstance(want, Mapping):
        if any(str(k).startswith("$") for k in want):
            return all(_operator(have, str(op), arg) for op, arg in want.items())
        return isinstance(have, Mapping) and all(_holds(have.get(k), v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return (
            isinstance(have, (list, tuple))
            and len(have) == len(want)
            and all(_holds(h, w) for h, w in zip(have, want, strict=True))
        )
    return bool(have == want)


def _operator(have: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(have == arg)
    if op == "$ne":
        return bool(have != arg)
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"unsupported filter operator {op!r} (use $eq, $ne, $gt, $gte, $lt, $lte)")
    try:
        a, b = float(have), float(arg)
    except (TypeError, ValueError):
        return False  # a missing or non-numeric field passes no comparison
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def namespace_matches(namespace: tuple[str, ...], path: tuple[str, ...], kind: str) -> bool:
    """``namespace`` matches a prefix or suffix ``path`` (``*`` matches any label)."""
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if kind == "prefix" else namespace[len(namespace) - len(path) :]
    return all(p in ("*", q) for p, q in zip(path, part, strict=True))


__all__ = [
    "MAX_RECORD",
    "PART",
    "RECORD",
    "Record",
    "encode",
    "lines_of",
    "matches",
    "namespace_matches",
    "read",
]
