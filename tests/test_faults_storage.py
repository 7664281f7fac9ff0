"""Storage under faults (issue 14): damaged bytes, killed syncs, FIFOs, symlinks, an
unreachable embedder, rowid-dependent ties, a lost signing key.

Every test asserts what a user would notice: a line that cannot be found, a sync that
never ends, a status that lies, a trust class that silently changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conftest import Paths, plant
from reverie.engine import Reverie
from reverie.provenance.markers import render_marker
from reverie.provenance.origin import Origin
from reverie.storage.embedders.fake import FakeEmbedder

Engine = Callable[..., Reverie]


def _engine(engine_factory: Engine, **kwargs: Any) -> Reverie:
    engine = engine_factory(use_embedder=FakeEmbedder(), **kwargs)
    engine.init()
    return engine


def _found(engine: Reverie, query: str) -> dict[str, str]:
    """source -> origin of the hits for ``query`` (keyword lane: exact words)."""
    response = engine.search(query, lanes="keyword", record=False, max_results=50)
    return {f"{h.path}#L{h.start_line}": h.origin.value for h in response.hits}


# -- 5. one bad byte never hides the rest of its file ------------------------------------


def test_one_invalid_utf8_byte_hides_only_its_own_line(
    engine_factory: Engine, paths: Paths
) -> None:
    engine = _engine(engine_factory)
    good = [f"- 09:0{i} kestrel note number{i}" for i in range(9)]
    data = "\n".join(good[:4]).encode() + b"\n- 09:10 torn \xff\xfe write\n"
    paths.write("memory/2026-05-01.md", data + ("\n".join(good[4:]) + "\n").encode())
    stats = engine.index()
    assert any("memory/2026-05-01.md:5" in w and "UTF-8" in w for w in stats.warnings)
    for i in range(9):
        assert _found(engine, f"number{i}"), f"good line {i} not findable"
    assert _found(engine, "torn write")  # the damaged line itself, with the bytes replaced
    # a later write that day is findable too
    plant(engine, "osprey arrives later that day", origin=Origin.AGENT)
    engine.index()
    assert _found(engine, "osprey")


def test_a_nul_byte_keeps_the_text_lines_and_drops_stale_rows(
    engine_factory: Engine, paths: Paths
) -> None:
    engine = _engine(engine_factory)
    paths.write("memory/2026-05-01.md", "- 09:00 heron first version\n")
    engine.index()
    # a torn write: new lines, then a run of NUL bytes (a zero-filled block)
    paths.write(
        "memory/2026-05-01.md",
        b"- 09:00 plover second version\n- 09:01 bit\x00tern\n" + b"\x00" * 600 + b"\n",
    )
    stats = engine.index()
    assert any("memory/2026-05-01.md:2" in w and "control" in w for w in stats.warnings)
    assert any("memory/2026-05-01.md:3" in w for w in stats.warnings)
    assert _found(engine, "plover")
    assert _found(engine, "bittern")  # the control character is dropped, the text kept
    assert not _found(engine, "heron")  # no stale rows of the old version
    assert "memory/2026-05-01.md" in stats.changed_paths


def test_a_damaged_line_never_reads_above_its_default_trust(
    engine_factory: Engine, paths: Paths
) -> None:
    engine = _engine(engine_factory)
    key = paths.key
    owner = render_marker("- 09:00 grebe owner fact", Origin.OWNER, key=key)
    flipped = render_marker("- 09:01 avocet owner fact", Origin.OWNER, key=key)
    # the HMAC covers the text: one changed byte (invalid UTF-8) breaks the signature
    flipped_bytes = flipped.encode().replace(b"avocet", b"avoc\xffet")
    # damage inside the marker: dropping the control character re-forms a valid marker,
    # which must not verify on a damaged line
    in_marker = render_marker("- 09:02 dunlin owner fact", Origin.OWNER, key=key)
    in_marker_bytes = in_marker.encode().replace(b"sig: ", b"sig: \x01")
    intact = render_marker("- 09:03 curlew owner fact", Origin.OWNER, key=key)
    paths.write(
        "memory/2026-05-01.md",
        b"\n".join([owner.encode(), flipped_bytes, in_marker_bytes, intact.encode()]) + b"\n",
    )
    engine.index()
    assert set(_found(engine, "grebe").values()) == {"owner"}
    assert set(_found(engine, "curlew").values()) == {"owner"}
    assert set(_found(engine, "dunlin").values()) == {"agent"}  # the journal default
    hits = engine.search("avoc", lanes="keyword", record=False).hits
    assert all(h.origin is not Origin.OWNER for h in hits if "avoc" in h.text)
