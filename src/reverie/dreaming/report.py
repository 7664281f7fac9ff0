"""What a dream did, for people (R-DREAM-10): the report, the DREAMS.md change summary
and the per-night phase report. Pure: text in, text out."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class CandidateReport:
    """One candidate of the deep-sleep pool with every signal and gate."""

    key: str
    source: str
    snippet: str
    origin: str | None
    session_kind: str | None
    score: float
    signals: dict[str, float]
    gates: list[dict[str, Any]]
    decision: str  # promote | reject
    reason: str


@dataclass
class DreamReport:
    """One dream (or preview): what was staged, themed, promoted, and how it was written."""

    at: str
    enabled: bool
    dry_run: bool
    staged: int = 0
    dropped: list[dict[str, str]] = field(default_factory=list)
    themes: list[dict[str, Any]] = field(default_factory=list)
    reflections: list[str] = field(default_factory=list)
    candidates: list[CandidateReport] = field(default_factory=list)
    promoted: list[str] = field(default_factory=list)
    mode: str = "none"  # none | rewrite | append-only
    fallback_reason: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    directives: list[dict[str, Any]] = field(default_factory=list)  # USER.md (R-USER-1)
    superseded: list[str] = field(default_factory=list)  # entries marked superseded, and why
    links: dict[str, Any] = field(default_factory=dict)  # version links a model proposed

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def change_summary(report: DreamReport, old: str, new: str) -> str:
    """The DREAMS.md entry of one rewrite: counts, why, a short diff, rejections."""
    import difflib  # (this module is imported by the facade, on every one-shot command)

    c = report.counts
    lines = [
        f"## {report.at} · {report.mode}",
        "",
        f"- added {c.get('added', 0)}, merged {c.get('merged', 0)}, superseded {c.get('superseded', 0)}",
    ]
    if c.get("archived"):
        lines.append(f"- archived {c['archived']} (moved to memory/archive.md, still searched)")
    lines += [f"- {why}" for why in report.superseded]
    if report.fallback_reason:
        lines.append(f"- why: {report.fallback_reason}")
    diff = [
        d
        for d in difflib.unified_diff(old.split("\n"), new.split("\n"), lineterm="", n=0)
        if d[:1] in "+-" and not d.startswith(("+++", "---"))
    ]
    lines += [f"- `{d[:1]}` {d[1:].strip()[:200]}" for d in diff[:20]]
    rejected = Counter(
        next((g["name"] for g in cand.gates if not g["passed"]), "dropped")
        for cand in report.candidates
        if cand.decision == "reject"
    )
    if rejected:
        lines.append("- rejected: " + ", ".join(f"{k} {v}" for k, v in sorted(rejected.items())))
    return "\n".join(lines) + "\n"


def last_entry(dreams: str) -> tuple[str, list[str]] | None:
    """The newest entry of DREAMS.md as :func:`change_summary` (or an owner's promote or
    reject) wrote it: its heading (``<at> · <mode>``) and its items in plain words (a
    diff line ``+`` / ``-`` says what came into or left ``MEMORY.md``); None when no
    dream has written one."""
    lines = dreams.split("\n")
    heads = [n for n, ln in enumerate(lines) if ln.startswith("## ")]
    if not heads:
        return None
    items = []
    for ln in lines[heads[-1] + 1 :]:
        if not ln.startswith("- "):
            continue
        item = ln[2:]
        if item[:4] in ("`+` ", "`-` "):
            text = item[4:].removeprefix("- ")  # the entry's own bullet
            item = ("into" if item[1] == "+" else "out of") + " MEMORY.md: " + text
        items.append(item)
    return lines[heads[-1]][3:].strip(), items


def phase_report(report: DreamReport) -> str:
    """The night's report of every phase (``memory/.dreams/reports/<day>.md``)."""
    lines = [
        f"# Dream report {report.at}",
        "",
        "## Light sleep",
        "",
        f"- staged {report.staged} candidates, dropped {len(report.dropped)}",
        "",
        "## REM",
        "",
    ]
    lines += [f"- {r}" for r in report.reflections] or ["- no recurring themes"]
    lines += ["", "## Deep sleep", ""]
    for c in report.candidates:
        lines.append(f"- {c.decision} {c.source} score {c.score:.3f}: {c.reason}")
    return "\n".join(lines) + "\n"


def rewrite_counts(
    old_entries: set[str], new_entries: set[str], added: int, model_ops: int, superseded: int = 0
) -> dict[str, int]:
    """Counts of one accepted rewrite, from the normalised entries before and after
    (``superseded``: the entries a version link marked before the model's turn)."""
    gone = len(old_entries - new_entries)
    return {"added": added, "merged": gone, "superseded": superseded, "model_ops": model_ops}


__all__ = ["CandidateReport", "DreamReport", "change_summary", "phase_report", "rewrite_counts"]
