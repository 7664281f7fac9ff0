"""The journal list of the review page: ordered, filtered and paged (pure code over the
rows :func:`reverie.ui.views.episodic_files` gathers)."""

from __future__ import annotations

from typing import Any

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
    per = min(_int(params.get("per", ""), PER_PAGE), 500)
    rows = [
        f
        for f in files
        if (not q or q.lower() in f["path"].lower()) and (not kind or f["kind"] == kind)
    ]
    rank = {k: n for n, k in enumerate(KIND_ORDER)}
    rows.sort(key=lambda f: f["path"], reverse=True)
    rows.sort(key=lambda f: rank.get(f["kind"], len(rank)))  # stable: newest first within
    pages = max(1, -(-len(rows) // per))
    page = min(_int(params.get("page", ""), 1), pages)
    kinds = sorted({f["kind"] for f in files}, key=lambda k: rank.get(k, len(rank)))
    return {
        "files": rows[(page - 1) * per : page * per],
        "total": len(rows),
        "page": page,
        "pages": pages,
        "q": q,
        "kind": kind,
        "kinds": kinds,
        "per": per,
    }


__all__ = ["PER_PAGE", "page_of"]
