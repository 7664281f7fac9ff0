"""The review page's lists, filtered and paged (pure code over the rows
:mod:`reverie.ui.views` gathers): the journal files, the lines of every file ("show me
all untrusted lines"), and any other list a page at a time (requests, intents, history)."""

from __future__ import annotations

from typing import Any

from ..sync.entry_merge import common_ends

PER_PAGE = 50
KIND_ORDER = ("journal", "transcript", "import", "note")


def _int(raw: str, default: int) -> int:
    try:
        return max(1, int(raw))
    except ValueError:
        return default


def page_of(files: list[dict[str, str]], params: dict[str, str]) -> dict[str, Any]:
    """``files`` filtered by ``q`` (a part of the path, any case) and ``kind``, ordered
    by kind then newest first (journals are named by date), cut to ``page``."""
    q = params.get("q", "").strip()
    kind = params.get("kind", "")
    rows = [
        f
        for f in files
        if (not q or q.lower() in f["path"].lower()) and (not kind or f["kind"] == kind)
    ]
    rank = {k: n for n, k in enumerate(KIND_ORDER)}
    rows.sort(key=lambda f: f["path"], reverse=True)
    rows.sort(key=lambda f: rank.get(f["kind"], len(rank)))  # stable: newest first within
    shown, page, pages, per = _cut(rows, params)
    kinds = sorted({f["kind"] for f in files}, key=lambda k: rank.get(k, len(rank)))
    return {
        "files": shown,
        "total": len(rows),
        "page": page,
        "pages": pages,
        "q": q,
        "kind": kind,
        "kinds": kinds,
        "per": per,
    }


def _cut(rows: list[dict[str, Any]], params: dict[str, str]) -> tuple[list[Any], int, int, int]:
    """``rows`` cut to the asked page: (rows, page, pages, per)."""
    per = min(_int(params.get("per", ""), PER_PAGE), 500)
    pages = max(1, -(-len(rows) // per))
    page = min(_int(params.get("page", ""), 1), pages)
    return rows[(page - 1) * per : page * per], page, pages, per


def paged(rows: list[Any], params: dict[str, str], per: int = PER_PAGE) -> dict[str, Any]:
    """Any list cut to the asked ``page`` (``per`` a page): the rows shown and where."""
    shown, page, pages, per = _cut(rows, {"per": str(per), **params})
    return {"rows": shown, "total": len(rows), "page": page, "pages": pages, "per": per}


def one_span(old: str, new: str) -> dict[str, str]:
    """A changed line as the one span that changed: what both keep before and after it,
    the words that go and the words that come (a correction's preview)."""
    head, tail = common_ends(old, new)
    return {
        "before": old[:head],
        "gone": old[head : len(old) - tail],
        "came": new[head : len(new) - tail],
        "after": old[len(old) - tail :],
    }


def lines_of(rows: list[dict[str, Any]], params: dict[str, str]) -> dict[str, Any]:
    """Lines of the episodic files filtered by ``origin``, ``path`` (a part of it),
    ``day`` (the start of the file's date: ``2026-03`` is a month) and ``q`` (a part of
    the text, any case); newest file first, in line order within a file; paged."""
    want = {k: params.get(k, "").strip() for k in ("origin", "path", "day", "q")}
    found = [
        r
        for r in rows
        if (not want["origin"] or r["origin"] == want["origin"])
        and (not want["path"] or want["path"].lower() in r["path"].lower())
        and (not want["day"] or (r["day"] or "").startswith(want["day"]))
        and (not want["q"] or want["q"].lower() in r["text"].lower())
    ]
    found.sort(key=lambda r: r["number"])
    found.sort(key=lambda r: r["path"], reverse=True)  # stable: line order within a file
    shown, page, pages, per = _cut(found, params)
    origins = sorted({r["origin"] for r in rows})
    return {"lines": shown, "total": len(found), "page": page, "pages": pages, "per": per,
            "origins": origins, **want}  # fmt: skip


__all__ = [
    "PER_PAGE",
    "lines_of",
    "page_of",
    "paged",
]
