"""``bench/tenants.py --locomo`` (``bench/_backends.py``): LoCoMo's figures of the two
backends side by side, and whether every one is within 0.01 (issue 23's acceptance)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _backends() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_backends", BENCH / "_backends.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _out(tmp_path: Path, backend: str, single_hop: float) -> Path:
    figures = {
        "config": {"backend": backend},
        "seconds": 100.0 if backend == "sqlite" else 200.0,  # run times never count
        "summary": {"hybrid/decay": {"overall": {"S@5": 0.917, "B2k": 0.649}}},
        "views": {"ours": {"single-hop": single_hop, "overall": 0.88}},
    }
    path = tmp_path / f"{backend}.json"
    path.write_text(json.dumps(figures), encoding="utf-8")
    return path


def test_figures_within_a_hundredth_are_met_and_one_past_it_is_missed(tmp_path: Path) -> None:
    compare = _backends().compare
    sqlite = _out(tmp_path, "sqlite", 0.952)
    lines, ok = compare(sqlite, _out(tmp_path, "postgres", 0.945))
    text = "\n".join(lines)
    assert ok and "0.952    0.945" in text and "largest difference 0.0070" in text
    lines, ok = compare(sqlite, _out(tmp_path, "postgres", 0.94))
    assert not ok
    assert "largest difference 0.0120 (/views/ours/single-hop)" in lines[-1]
    assert lines[-1].endswith("MISSED")
