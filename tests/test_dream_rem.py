"""REM reflections: by the configured model when there is one, else deterministic;
either way they land in the phase report, never in MEMORY.md."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from conftest import plant
from reverie import Origin, Reverie, SessionKind
from reverie.clock import Clock
from reverie.llm.fake import ScriptedLLM
from reverie.testing import scripted_judge

DAY0 = datetime(2026, 5, 4, 10, 0).astimezone()
# themes are multi-word concepts shared by several traces (issue 14, defect 16)
NOTES = (
    "The payment gateway certificate renews every ninety days.",
    "The payment gateway rate limit is 300 requests per minute.",
    "The payment gateway logs go to the central syslog host.",
)

KEEP = scripted_judge(keep_all=True)  # REM's themes, not the judgement


def _farm(tmp_path: Path) -> tuple[Path, Path]:
    ws, st = tmp_path / "ws", tmp_path / "st"
    first = Reverie.open(ws, st, embedder="fake", clock=Clock(DAY0))
    first.init()
    for note in NOTES:
        plant(first, note, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    first.index()
    first.close()
    for day in range(3):
        e = Reverie.open(ws, st, embedder="fake", clock=Clock(DAY0 + timedelta(days=day)))
        for q in (
            "payment gateway certificate",
            "payment gateway rate limit",
            "payment gateway logs syslog",
        ):
            e.search(q)
        e.close()
    return ws, st


def test_rem_reflections_come_from_the_model_and_stay_out_of_memory(tmp_path: Path) -> None:
    ws, st = _farm(tmp_path)
    model = ScriptedLLM(
        [{"reflections": ["The gateway keeps coming up: certificates, limits, logs."]}]
    )
    e = Reverie.open(
        ws, st, embedder="fake", clock=Clock(DAY0 + timedelta(days=3)), llm=model, judge=KEEP
    )
    report = e.dream()
    assert report.themes and any(t["tag"] == "payment gateway" for t in report.themes)
    assert report.reflections == ["The gateway keeps coming up: certificates, limits, logs."]
    phase = (ws / "memory" / ".dreams" / "reports" / f"{report.at[:10]}.md").read_text(
        encoding="utf-8"
    )
    assert "certificates, limits, logs" in phase
    assert "certificates, limits, logs" not in (ws / "MEMORY.md").read_text(encoding="utf-8")
    assert (
        "themes" in model.calls[0].messages[0].content
        or "gateway" in model.calls[0].messages[0].content
    )


def test_rem_without_a_model_writes_deterministic_reflections(tmp_path: Path) -> None:
    ws, st = _farm(tmp_path)
    e = Reverie.open(ws, st, embedder="fake", clock=Clock(DAY0 + timedelta(days=3)), judge=KEEP)
    report = e.dream()
    assert any("Recurring theme 'payment gateway'" in r for r in report.reflections)
