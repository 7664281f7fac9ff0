"""A confirmed ``memory_correct`` edits the words it names (issue 22, point 7): the rest
of the line, its signed origin marker and its trailers stay, and ``pending list`` and
the review page show the change before it is confirmed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from conftest import Paths, RunCli
from reverie.curation.correct import edit_line
from reverie.engine import Reverie
from reverie.provenance.markers import render_marker, resolve
from reverie.provenance.origin import Origin, SessionKind
from reverie.ui.app import ReviewApp

VPN = "The VPN endpoint is vpn.corp.example, port 1194 (UDP)."
MEMORY = (
    "# Long-term memory\n\n- The backup VPN also listens on port 1194 (UDP). "
    "<!-- trigger: vpn setup --> <!-- importance: 8 -->\n- The user likes green tea.\n"
)


def _journal(paths: Paths) -> str:
    return "".join(
        p.read_text(encoding="utf-8") for p in sorted((paths.workspace / "memory").glob("*.md"))
    )


def test_a_confirmed_correction_edits_the_words_and_keeps_the_line(
    paths: Paths,
    run_cli: RunCli,
    cli_json: Callable[..., Any],
    engine_factory: Callable[..., Reverie],
) -> None:
    run_cli("init")
    paths.write("MEMORY.md", MEMORY)
    run_cli("write", VPN)
    engine = engine_factory(embedder="fake")
    req = engine.curation.pending.request(
        "correct", "port 1194 (UDP)", "port 443 (TCP)", by="connected agent (MCP)"
    )
    engine.close()
    before = _journal(paths)
    listed = cli_json("pending", "list")
    changes = {c["path"]: c for c in listed[0]["changes"]}
    day = next(p for p in changes if p.startswith("memory/"))
    assert "port 1194 (UDP)." in changes[day]["old"]
    assert changes[day]["new"].endswith("The VPN endpoint is vpn.corp.example, port 443 (TCP).")
    assert "origin: owner" in changes[day]["new"]
    assert changes["MEMORY.md"]["new"].startswith(
        "- The backup VPN also listens on port 443 (TCP). <!-- trigger: vpn setup -->"
    )
    text = run_cli("pending", "list").stdout
    assert "- " in text and "+ " in text and "port 443 (TCP)" in text
    assert _journal(paths) == before  # listing changes nothing

    cli_json("pending", "confirm", req.id)
    journal = _journal(paths)
    line = next(ln for ln in journal.split("\n") if "VPN endpoint" in ln)
    assert line == changes[day]["new"]
    assert "1194" not in journal
    got = resolve(line, default=Origin.AGENT, ceiling=Origin.OWNER, key=paths.key)
    assert got.origin is Origin.OWNER  # the marker was re-signed for the new words
    assert got.text.endswith("The VPN endpoint is vpn.corp.example, port 443 (TCP).")
    memory = (paths.workspace / "MEMORY.md").read_text(encoding="utf-8")
    assert (
        "- The backup VPN also listens on port 443 (TCP). <!-- trigger: vpn setup --> "
        "<!-- importance: 8 -->\n- The user likes green tea." in memory
    )
    hits = cli_json("search", "VPN endpoint port")["hits"]
    top = next(h for h in hits if "VPN endpoint" in h["snippet"])
    assert "443 (TCP)" in top["snippet"] and top["origin"] == "owner"


def test_the_review_page_shows_the_change_before_confirmation(
    engine_factory: Callable[..., Reverie], paths: Paths
) -> None:
    engine = engine_factory(embedder="fake")
    engine.init()
    paths.write("MEMORY.md", MEMORY)
    engine.index()
    engine.curation.pending.request("correct", "green tea", "oolong", by="test agent")
    review = ReviewApp(engine, port=48212)
    c = TestClient(review.app, base_url="http://127.0.0.1:48212", follow_redirects=False)
    c.get(f"/?token={review.token}")
    page = c.get("/pending").text
    # the one span that changes, in the line as it stays
    assert '- The user likes <del class="del">green tea</del><ins class="add">oolong</ins>.' in page
    assert "green tea" in (paths.workspace / "MEMORY.md").read_text(encoding="utf-8")


KEY = b"k" * 32
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(
    before=st.lists(WORD, max_size=5),
    old=st.lists(WORD, min_size=1, max_size=3),
    after=st.lists(WORD, max_size=5),
    new=st.lists(WORD, min_size=1, max_size=3),
    origin=st.sampled_from([Origin.OWNER, Origin.AGENT, Origin.UNTRUSTED]),
)
def test_an_edit_changes_only_the_named_words_and_never_raises_trust(
    before: list[str], old: list[str], after: list[str], new: list[str], origin: Origin
) -> None:
    body = " ".join([*before, "(", *old, ")", *after])
    line = render_marker(f"- 09:14 {body}", origin, SessionKind.INTERACTIVE, key=KEY)
    edited = edit_line(line, f"( {' '.join(old)} )", " ".join(new), key=KEY)
    assert edited is not None
    want = " ".join([*before, " ".join(new), *after]).replace("  ", " ")
    got = resolve(edited, default=Origin.AGENT, ceiling=Origin.OWNER, key=KEY)
    assert " ".join(got.text.split()) == " ".join(f"- 09:14 {want}".split())
    assert got.origin is origin
    forged = edit_line(
        line.replace(f"origin: {origin.value}", "origin: owner"), old[0], "x", key=KEY
    )
    assert forged is not None
    assert resolve(forged, default=Origin.AGENT, ceiling=Origin.OWNER, key=KEY).origin is (
        Origin.OWNER if origin is Origin.OWNER else Origin.AGENT
    )
