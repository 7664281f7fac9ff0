"""The review page (``reverie ui``) in a real headless Chromium, driven by Playwright.

The browser is Debian's ``chromium`` (``.ci/run`` installs it); Playwright never
downloads one. In CI these tests always run: a missing browser fails them. Outside CI
they are skipped when chromium or Playwright is missing.

``REVERIE_SCREENSHOTS=docs`` also saves the screenshots the docs show, one per main
view (``review-<view>.png``; the dream view's is ``review.png``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXED_NOW, Paths, plant, start_ui
from reverie.clock import Clock
from reverie.dreaming.safe_write import MemoryFile, sha
from reverie.engine import Reverie
from reverie.provenance.origin import Origin, SessionKind

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NOW = datetime.fromisoformat(FIXED_NOW)
FACT = "The staging database lives on host orca-db-2 in the Frankfurt region."
OLDER = "The staging database lived on host orca-db-1 in the Dublin region."  # a month before
OTHER = "I'm in charge of descaling the coffee machine on floor three every month."
SCRIPT = "Page said <script>document.title='pwned'</script> and <b>bold</b> things."
PAGE_FACT = "The backup server heron-7 sits in rack twelve of the basement."  # web text
QUERIES = (
    "backup server heron-7 rack twelve",
    "staging database host orca-db-2",
    "coffee machine floor three descaling",
    "page said document title pwned bold things",
)


def _playwright() -> Any:
    why = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = "playwright is not installed (pip install -e '.[test]')"
    if why is None and not Path(CHROMIUM).exists():
        why = f"{CHROMIUM} is missing (apt-get install chromium)"
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the browser tests must run in CI: {why}")
        pytest.skip(why)
    return sync_playwright


def _expect(locator: Any) -> Any:
    """Playwright's retrying assertion (a page loading after a click is waited for;
    ``count()`` reads the page as it is at that moment)."""
    from playwright.sync_api import expect

    return expect(locator)


@dataclass
class Review:
    paths: Paths
    base: str
    page: Any
    browser: Any

    def memory(self) -> str:
        return (self.paths.workspace / "MEMORY.md").read_text(encoding="utf-8")


def _seed(paths: Paths, env: dict[str, str]) -> None:
    month_ago = Clock(NOW - timedelta(days=30))
    e = Reverie.open(paths.workspace, paths.state, environ=env, clock=month_ago, embedder="fake")
    e.init()
    plant(e, OLDER, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    e.close()
    e = Reverie.open(paths.workspace, paths.state, environ=env, clock=Clock(NOW), embedder="fake")
    (paths.workspace / "MEMORY.md").write_text(
        "# Long-term memory\n\n- Keep the gateway on loopback. <!-- trigger: gateway setup --> "
        "<!-- importance: 9 -->\n- The user takes green tea at four. <!-- project: acme -->\n",
        encoding="utf-8",
    )
    plant(e, FACT, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    plant(e, OTHER, origin=Origin.OWNER, session=SessionKind.INTERACTIVE)
    plant(e, SCRIPT, origin=Origin.UNTRUSTED, session=SessionKind.INTERACTIVE)
    plant(e, PAGE_FACT, origin=Origin.UNTRUSTED, session=SessionKind.INTERACTIVE)
    e.index()
    for q in QUERIES:
        assert e.search(q).hits
    mf = MemoryFile(e.workspace, preimages_kept=5)  # one pre-image: the version before
    old = mf.read()
    assert mf.replace_if_unchanged(sha(old), old + "- A line added later.\n")
    e.index()
    e.curation.pending.request("forget", "green tea", by="test agent")
    e.intents.add(
        "when Bob mentions the audit, ask about the auditor's report",
        proposer="agent",
        proposed_by="mcp",
    )
    e.intents.add(
        "remind me to water the ficus", proposer="owner", proposed_by="cli", at="tomorrow 9am"
    )
    e.intents.add("check the backups", proposer="owner", proposed_by="cli", every="0 9 * * 1")
    e.close()


@pytest.fixture
def review(paths: Paths, env: dict[str, str], tmp_path: Path) -> Iterator[Review]:
    sync_playwright = _playwright()
    _seed(paths, env)
    err = (tmp_path / "ui.log").open("w")
    proc, url = start_ui(paths, env, err)
    try:
        with sync_playwright() as pw:
            # launch() gives the browser a fresh, empty user-data-dir of its own
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url)  # trades the token for the session cookie
            yield Review(paths, url.split("/?")[0], page, browser)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        err.close()


def test_every_view_loads(review: Review) -> None:
    page, base = review.page, review.base
    assert "token" not in page.url  # the token left the address bar
    assert page.locator("h2", has_text="MEMORY.md").count() == 1
    row = page.locator("tr", has_text="Keep the gateway on loopback")
    assert "9" in row.inner_text() and "gateway setup" in row.inner_text()
    assert "acme" in page.locator("tr", has_text="green tea").inner_text()
    page.goto(f"{base}/files")
    journal = f"memory/{NOW.date().isoformat()}.md"
    page.click(f"text={journal}")
    badges = page.locator("span.badge").all_inner_texts()
    assert "owner" in badges and "untrusted" in badges and "interactive" in page.content()
    page.goto(f"{base}/dream")
    assert page.locator("details.cand").count() >= 2
    assert "gate provenance" in page.content() and "signal" in page.content()
    page.goto(f"{base}/history")
    assert page.locator(".diff .add", has_text="A line added later").count() == 1
    page.goto(f"{base}/pending")
    assert page.locator("td", has_text="green tea").count() == 2  # the request, its diff
    assert page.locator(".diff .del", has_text="The user takes green tea at four").count() == 1
    page.goto(f"{base}/search?q=document+title+pwned+bold+things")
    frame = page.locator(".frame")
    assert frame.count() >= 1 and "UNTRUSTED CONTENT" in frame.first.inner_text()
    views = {
        "review.png": "/dream",
        "review-memory.png": "/",
        "review-lines.png": "/lines?origin=untrusted",
        "review-search.png": "/search?q=staging+database+host",
        "review-pending.png": "/pending",
        "review-night.png": "/night",
    }
    for name, view in views.items():  # every main view renders as a page (and its picture)
        page.goto(f"{base}{view}")
        shot = review.paths.workspace.parent / name
        page.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 10_000
        if folder := os.environ.get("REVERIE_SCREENSHOTS"):
            shutil.copyfile(shot, Path(folder) / name)


def test_script_in_a_journal_line_renders_as_text(review: Review) -> None:
    page = review.page
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{review.base}/file?path=memory/{NOW.date().isoformat()}.md")
    cell = page.locator("td.line", has_text="<script>")
    assert cell.count() == 1 and "<b>bold</b>" in cell.inner_text()
    assert page.evaluate("document.scripts.length") == 0
    assert page.locator("td.line b").count() == 0  # no markup was made from memory text
    assert page.title() != "pwned" and not dialogs


def test_promote_and_reject_a_candidate(review: Review) -> None:
    page = review.page
    page.goto(f"{review.base}/dream")

    def candidate(text: str) -> Any:
        """The candidate holding ``text``, opened (the pool is a list of summaries)."""
        found = page.locator("details.cand", has_text=text)
        found.locator("summary").click()
        return found

    candidate("orca-db-2").locator("button", has_text="promote").click()
    assert "promoted" in page.locator(".flash").inner_text()
    assert "orca-db-2" in review.memory() and "Source: " in review.memory()
    candidate("coffee machine").locator("button", has_text="reject").click()
    assert "rejected" in page.locator(".flash").inner_text()
    assert (
        "rejected by the owner"
        in page.locator("details.cand", has_text="coffee machine").inner_text()
    )
    dreams = (review.paths.workspace / "DREAMS.md").read_text(encoding="utf-8")
    assert "owner promote" in dreams and "owner reject" in dreams
    assert page.url.startswith(f"{review.base}/dream?")  # back to the view it came from
    # untrusted text: the provenance gate, which no one waives, fails: no promote offered
    web = candidate("heron-7")
    assert "gate provenance: FAIL" in web.inner_text()
    assert web.locator("button", has_text="promote").count() == 0
    assert web.locator("button", has_text="reject").count() == 1
    # the untrusted page text is refused by its provenance too: no promote offered
    # (the owner's promote refusing untrusted lines: test_curation)
    page_text = page.locator("details.cand", has_text="document.title")
    assert page_text.locator("button", has_text="promote").count() == 0
    assert "pwned" not in review.memory()


def test_forget_an_entry(review: Review) -> None:
    page = review.page
    page.locator("tr", has_text="Keep the gateway on loopback").locator("button").click()
    assert "Keep the gateway on loopback" in page.locator(".diff .del").inner_text()
    assert "gateway on loopback" in review.memory()  # asked, not done yet
    page.locator("button", has_text="yes, forget").click()
    assert "forgotten: 1 line(s)" in page.locator(".flash").inner_text()
    assert "gateway on loopback" not in review.memory()
    assert page.locator("tr", has_text="Keep the gateway on loopback").count() == 0


def test_this_replaces_that_links_two_lines_after_one_confirm(review: Review) -> None:
    page = review.page
    journal = review.paths.workspace / "memory" / f"{NOW.date().isoformat()}.md"
    page.goto(f"{review.base}/search?q=staging+database+host+region")
    page.locator(".line", has_text="orca-db-2").locator("input[name=newer]").check()
    page.locator(".line", has_text="orca-db-1").locator("input[name=older]").check()
    page.locator("button", has_text="this replaces that").click()
    _expect(page.locator(".diff .add", has_text="orca-db-2")).to_have_count(1)
    assert "orca-db-1" in page.locator(".diff").inner_text()
    assert "replaces:" not in journal.read_text(encoding="utf-8")  # asked, not done yet
    page.locator("button", has_text="yes, link").click()
    assert "linked" in page.locator(".flash").inner_text()
    assert "replaces: memory/" in journal.read_text(encoding="utf-8")  # in the file
    # the older line cannot replace the newer one: refused, naming why, nothing written
    page.goto(f"{review.base}/search?q=staging+database+host+region")
    page.locator(".line", has_text="orca-db-1").locator("input[name=newer]").check()
    page.locator(".line", has_text="orca-db-2").locator("input[name=older]").check()
    page.locator("button", has_text="this replaces that").click()
    page.locator("button", has_text="yes, link").click()
    assert "refused" in page.locator(".flash").inner_text()
    older = review.paths.workspace / "memory" / f"{(NOW - timedelta(days=30)).date()}.md"
    assert "replaces:" not in older.read_text(encoding="utf-8")


def test_restore_a_preimage(review: Review) -> None:
    page = review.page
    assert "A line added later" in review.memory()
    page.goto(f"{review.base}/history")
    page.locator("h3").first.locator("button", has_text="restore").click()
    # the confirm page loads after the click: expect waits for it, count() would not
    _expect(page.locator(".diff .del", has_text="A line added later")).to_have_count(1)
    assert "A line added later" in review.memory()  # asked, not done yet
    page.locator("button", has_text="yes, restore").click()
    assert "restored" in page.locator(".flash").inner_text()
    assert "A line added later" not in review.memory()


def test_confirm_a_pending_request(review: Review) -> None:
    page = review.page
    page.goto(f"{review.base}/pending")
    page.locator("tr", has_text="green tea").locator("button", has_text="confirm").click()
    _expect(page.locator(".diff .del", has_text="green tea")).to_have_count(1)
    page.locator("button", has_text="yes, confirm").click()
    assert "confirmed" in page.locator(".flash").inner_text()
    assert "green tea" not in review.memory()
    assert page.locator("tr", has_text="green tea").count() == 0
    # what still waits: the intent an agent proposed (listed here too, with its id)
    assert page.locator("tr", has_text="auditor's report").count() == 1


def test_a_post_without_the_tokens_is_refused(review: Review) -> None:
    before = review.memory()
    key = {"key": "MEMORY.md:3"}
    no_csrf = review.page.request.post(f"{review.base}/forget", form=key)
    assert no_csrf.status == 403 and "CSRF" in no_csrf.text()
    stranger = review.browser.new_context()  # no session cookie
    refused = stranger.request.post(f"{review.base}/forget", form={**key, "csrf": "x"})
    assert refused.status == 403
    assert stranger.request.get(f"{review.base}/").status == 403
    stranger.close()
    assert review.memory() == before


def test_confirm_and_cancel_standing_intents(
    review: Review, paths: Paths, env: dict[str, str]
) -> None:
    page = review.page
    page.goto(f"{review.base}/intents")
    weekly = page.locator("tr", has_text="check the backups").inner_text()
    assert "At 09:00, only on Monday (every 0 9 * * 1" in weekly  # a schedule in words
    proposed = page.locator("tr", has_text="auditor's report")
    assert "pending" in proposed.inner_text()
    proposed.locator("button", has_text="confirm").click()
    assert "confirmed" in page.locator(".flash").inner_text()
    assert "armed" in page.locator("tr", has_text="auditor's report").inner_text()
    page.locator("tr", has_text="water the ficus").locator("button", has_text="cancel").click()
    assert "cancelled" in page.locator(".flash").inner_text()
    e = Reverie.open(paths.workspace, paths.state, environ=env, clock=Clock(NOW), embedder="fake")
    try:
        status = {i.text: i.status.value for i in e.intents.listing(all=True)}
    finally:
        e.close()
    assert status["when Bob mentions the audit, ask about the auditor's report"] == "armed"
    assert status["remind me to water the ficus"] == "cancelled"


def test_every_untrusted_line_on_one_page_filtered_paged_and_forgotten_in_place(
    review: Review,
) -> None:
    """Issue 43 point 4: lines of every file filtered by origin, text, file and day,
    paged; forgetting one returns to the same filtered page."""
    page, base = review.page, review.base
    page.goto(f"{base}/lines")
    assert page.locator("td.line", has_text="orca-db-1").count() == 1  # every file
    assert page.locator("td.line", has_text="orca-db-2").count() == 1
    page.select_option("select[name=origin]", "untrusted")
    page.click("button:has-text('filter')")
    assert "origin=untrusted" in page.url
    badges = page.locator("td span.badge").all_inner_texts()
    assert badges and set(badges) == {"untrusted"}
    assert page.locator("td.line", has_text="document.title").count() == 1  # as text
    assert page.title() != "pwned"
    page.goto(f"{base}/lines?origin=owner&q=STAGING")  # any case
    assert page.locator("td.line").count() == 2
    month_ago = (NOW - timedelta(days=30)).date().isoformat()
    page.goto(f"{base}/lines?day={month_ago[:7]}&origin=owner")
    rows = page.locator("td.line").all_inner_texts()
    assert any("orca-db-1" in r for r in rows) and not any("orca-db-2" in r for r in rows)
    page.goto(f"{base}/lines?per=1&origin=owner")
    assert page.locator("td.line").count() == 1 and "page 1 of" in page.content()
    page.click("a[rel=next]")
    assert "page=2" in page.url and page.locator("td.line").count() == 1
    page.goto(f"{base}/lines?origin=untrusted")
    page.locator("tr", has_text="document.title").locator("button").click()
    page.locator("button", has_text="yes, forget").click()
    assert "forgotten: 1 line(s)" in page.locator(".flash").inner_text()
    assert "/lines?origin=untrusted" in page.url  # back where it started
    assert page.locator("td.line", has_text="document.title").count() == 0


def test_a_search_hit_says_why_in_words(review: Review) -> None:
    """Issue 43 point 4: each hit lists its reasons in words; the numbers fold away."""
    page, base = review.page, review.base
    page.goto(f"{base}/search?q=staging+database+host+orca-db-2")
    first = page.locator("ul.why").first.inner_text()
    assert "holds words of the question" in first
    assert "bm25_rank" not in first and "cosine" not in first
    numbers = page.locator("details").first
    assert not numbers.evaluate("d => d.open")  # folded until asked for
    numbers.locator("summary").click()
    assert "hybrid=" in numbers.inner_text()


def test_the_reasons_read_the_score_chain() -> None:
    from reverie.ui.why import reasons

    said = reasons({"bm25_rank": -3.2, "cosine": 0.55, "decay": 0.8, "project_mult": 1.15})
    assert said == [
        "holds words of the question",
        "close in meaning to the question",
        "from the project you are in",
        "older, so it counts 80% of a line written today",
    ]
    assert reasons({"bm25_rank": None, "cosine": 0.1, "decay": 1.0}) == [
        "little in common in meaning"
    ]


def test_the_newest_dreams_entry_reads_back_in_words() -> None:
    """The "Last night" view reads DREAMS.md's newest entry as the dream wrote it."""
    from reverie.dreaming.report import DreamReport, change_summary, last_entry

    night = DreamReport(at="2026-05-02T03:00:00", enabled=True, dry_run=False, mode="append-only")
    night.counts = {"added": 1, "archived": 1}
    old = "# Long-term memory\n\n- The old fact.\n"
    new = "# Long-term memory\n\n- The new fact. Source: memory/2026-05-01.md#L3-L3\n"
    dreams = "# Dreams\n\n## 2026-05-01T03:00:00 · rewrite\n\n- added 9\n\n" + change_summary(
        night, old, new
    )
    heading, items = last_entry(dreams) or ("", [])
    assert heading == "2026-05-02T03:00:00 · append-only"
    assert items[0] == "added 1, merged 0, superseded 0"
    assert "archived 1 (moved to memory/archive.md, still searched)" in items
    assert "out of MEMORY.md: The old fact." in items
    assert any(i.startswith("into MEMORY.md: The new fact.") for i in items)
    assert last_entry("# Dreams\n") is None


def test_last_night_says_what_the_owner_promoted(review: Review) -> None:
    page, base = review.page, review.base
    page.goto(f"{base}/night")
    assert "it has not run yet" in page.content() or "it last ran" in page.content()
    assert "(At 03:00, 0 3 * * *)" in page.locator("p").first.inner_text()  # said in words
    page.goto(f"{base}/dream")
    found = page.locator("details.cand", has_text="orca-db-2")
    found.locator("summary").click()
    found.locator("button", has_text="promote").click()
    assert "promoted" in page.locator(".flash").inner_text()  # the POST has landed
    page.goto(f"{base}/night")
    assert "owner promote" in page.locator("h2").all_inner_texts()[1]
    assert "promoted by the owner" in page.locator("ul.night").inner_text()


def test_last_night_reads_the_phase_report_under_the_reader_policy(
    paths: Paths, env: dict[str, str]
) -> None:
    from reverie.ui.views import last_night

    e = Reverie.open(paths.workspace, paths.state, environ=env, embedder="fake")
    e.init()
    reports = e.workspace.dream_reports_dir
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "2026-05-01.md").write_text("# Dream report\n\n- staged 4 candidates, dropped 1\n")
    assert last_night(e)["phases"] == ["staged 4 candidates, dropped 1"]
    outside = paths.workspace.parent / "elsewhere.md"
    outside.write_text("- a line from outside the workspace\n")
    (reports / "2026-05-02.md").symlink_to(outside)  # the newest report links out
    with pytest.raises(ValueError):
        last_night(e)
    e.close()


def test_pending_requests_come_a_page_at_a_time(
    review: Review, paths: Paths, env: dict[str, str]
) -> None:
    """A long-lived agent's queue: fifty requests a page, the rest one click away."""
    e = Reverie.open(paths.workspace, paths.state, environ=env, clock=Clock(NOW), embedder="fake")
    try:
        for n in range(55):
            e.curation.pending.request("forget", f"old parking spot number {n}", by="test agent")
    finally:
        e.close()
    page = review.page
    page.goto(f"{review.base}/pending")
    assert "57 request(s) · page 1 of 2" in page.locator("p.pager").inner_text()  # 2 seeded
    assert page.locator("button", has_text="reject").count() == 50
    page.locator("a[rel=next]").click()
    assert "page 2 of 2" in page.locator("p.pager").inner_text()
    assert page.locator("button", has_text="reject").count() == 7
    page.locator("tr", has_text="parking spot number 54").locator(
        "button", has_text="reject"
    ).click()
    assert "rejected" in page.locator(".flash").inner_text()


def test_a_correction_is_previewed_as_the_one_span_it_changes(
    review: Review, paths: Paths, env: dict[str, str]
) -> None:
    e = Reverie.open(paths.workspace, paths.state, environ=env, clock=Clock(NOW), embedder="fake")
    try:
        e.curation.pending.request("correct", "green tea", "oolong tea", by="test agent")
    finally:
        e.close()
    page = review.page
    page.goto(f"{review.base}/pending")
    span = page.locator(".diff .span").first
    assert span.locator("del").inner_text() == "green"
    assert span.locator("ins").inner_text() == "oolong"
    assert " tea" in span.inner_text()  # the rest of the line, as it stays


def test_one_span_is_what_changed_between_two_lines() -> None:
    from reverie.ui.listing import one_span

    assert one_span("I drink green tea daily.", "I drink oolong tea daily.") == {
        "before": "I drink ", "gone": "green", "came": "oolong", "after": " tea daily."
    }  # fmt: skip
    assert one_span("aaa", "aaa")["gone"] == "" and one_span("ab", "b")["gone"] == "a"


def test_any_list_comes_a_page_at_a_time() -> None:
    """The pending requests, intents, history and dream pool share one pager."""
    from reverie.ui.listing import paged

    third = paged(list(range(120)), {"page": "3"})
    assert third["rows"] == list(range(100, 120)) and (third["page"], third["pages"]) == (3, 3)
    assert paged(list(range(120)), {"page": "9"})["page"] == 3  # past the end: the last
    assert paged(list(range(120)), {"page": "abc"})["rows"][0] == 0
    assert paged([], {})["pages"] == 1 and paged(list(range(30)), {}, per=10)["pages"] == 3


def test_a_link_request_is_previewed_as_the_link_not_as_removed_lines(
    review: Review, paths: Paths, env: dict[str, str]
) -> None:
    e = Reverie.open(paths.workspace, paths.state, environ=env, clock=Clock(NOW), embedder="fake")
    try:
        refs = ("memory/2026-05-02.md#L3", "memory/2026-05-01.md#L3")
        e.curation.pending.request("link", *refs, by="test agent", key="a@1 b@2", reason="dentist")
    finally:
        e.close()
    page = review.page
    page.goto(f"{review.base}/pending")
    page.locator("tr", has_text=refs[0]).locator("button", has_text="confirm").click()
    preview = page.locator(".diff").inner_text()
    assert f"{refs[0]} replaces {refs[1]}" in preview and "version link (dentist)" in preview
    assert page.locator(".diff .del").count() == 0  # no line is shown as going
