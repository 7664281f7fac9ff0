"""The review page's guard, without a browser: the token, the cookie, the Host check
(DNS rebinding), CSRF on every change, and paths that leave the workspace."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from starlette.testclient import TestClient

from conftest import Paths
from reverie.engine import Reverie
from reverie.ui.app import COOKIE, ReviewApp

PORT = 48211


@pytest.fixture
def review(engine_factory: Callable[..., Reverie], paths: Paths) -> ReviewApp:
    engine = engine_factory(embedder="fake")
    engine.init()
    paths.write("MEMORY.md", "# Long-term memory\n\n- Keep the gateway on loopback.\n")
    engine.index()
    return ReviewApp(engine, port=PORT)


def client(review: ReviewApp, host: str = f"127.0.0.1:{PORT}") -> TestClient:
    return TestClient(review.app, base_url=f"http://{host}", follow_redirects=False)


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, "no CSRF token on the page"
    return found.group(1)


def opened(review: ReviewApp) -> tuple[TestClient, str]:
    """A client with a session, and the CSRF token its pages carry."""
    c = client(review)
    c.get(f"/?token={review.token}")
    return c, csrf_of(c.get("/").text)


def test_only_the_printed_url_opens_the_page(review: ReviewApp) -> None:
    c = client(review)
    assert c.get("/").status_code == 403
    assert c.get("/?token=wrong").status_code == 403
    first = c.get(f"/?token={review.token}")
    assert first.status_code == 303 and first.headers["location"] == "/"
    cookie = first.headers["set-cookie"]
    assert COOKIE in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert review.token not in cookie  # the token stays in the printed URL only
    assert review.token not in c.get("/").text
    page = c.get("/")
    assert page.status_code == 200 and "Keep the gateway on loopback" in page.text
    assert "Content-Security-Policy" in page.text and "<script" not in page.text


def test_another_host_is_refused_even_with_the_cookie(review: ReviewApp) -> None:
    c = client(review, host=f"evil.example:{PORT}")
    c.cookies.set(COOKIE, review.token)
    assert c.get("/").status_code == 403


def test_the_token_is_no_session_cookie_and_sessions_differ(review: ReviewApp) -> None:
    forged = client(review)
    forged.cookies.set(COOKIE, review.token)  # the token itself is not a session
    assert forged.get("/").status_code == 403
    one, csrf_one = opened(review)
    two, csrf_two = opened(review)
    assert one.cookies[COOKIE] != two.cookies[COOKIE] and csrf_one != csrf_two
    r = one.post("/forget", data={"key": "MEMORY.md:3", "csrf": csrf_two})
    assert r.status_code == 403  # one session's CSRF token is no good in another


def test_every_change_needs_the_csrf_token(review: ReviewApp, paths: Paths) -> None:
    c, csrf = opened(review)
    before = (paths.workspace / "MEMORY.md").read_bytes()
    for action in (
        "/forget",
        "/dream/promote",
        "/dream/reject",
        "/history/restore",
        "/pending/confirm",
        "/pending/reject",
    ):
        r = c.post(action, data={"key": "MEMORY.md:3", "csrf": "nope"})
        assert r.status_code == 403, action
    assert c.get("/forget").status_code == 405  # a GET never changes anything
    assert (paths.workspace / "MEMORY.md").read_bytes() == before
    form = {"key": "MEMORY.md:3", "csrf": csrf, "back": "//evil", "confirmed": "yes"}
    ok = c.post("/forget", data=form)
    assert ok.status_code == 303 and ok.headers["location"].startswith("/?done=")
    assert b"gateway" not in (paths.workspace / "MEMORY.md").read_bytes()


def test_forget_shows_what_it_will_delete_and_asks_once(review: ReviewApp, paths: Paths) -> None:
    c, csrf = opened(review)
    before = (paths.workspace / "MEMORY.md").read_bytes()
    ask = c.post("/forget", data={"key": "MEMORY.md:3", "csrf": csrf, "back": "/"})
    assert ask.status_code == 200 and "Keep the gateway on loopback" in ask.text
    assert "MEMORY.md:3" in ask.text and "yes, forget" in ask.text and "<script" not in ask.text
    assert (paths.workspace / "MEMORY.md").read_bytes() == before  # nothing yet
    fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', ask.text))
    assert fields["confirmed"] == "yes" and fields["key"] == "MEMORY.md:3"
    done = c.post("/forget", data=fields)
    assert done.status_code == 303 and "forgotten" in done.headers["location"]
    assert b"gateway" not in (paths.workspace / "MEMORY.md").read_bytes()


def test_a_pending_confirm_shows_the_lines_it_deletes(review: ReviewApp, paths: Paths) -> None:
    rid = review.engine.curation.pending.request("forget", "gateway", by="an agent").id
    c, csrf = opened(review)
    ask = c.post("/pending/confirm", data={"id": rid, "csrf": csrf, "back": "/pending"})
    assert ask.status_code == 200 and "Keep the gateway on loopback" in ask.text
    assert b"gateway" in (paths.workspace / "MEMORY.md").read_bytes()


def test_a_refused_action_returns_to_the_view_it_came_from(review: ReviewApp) -> None:
    """Every form carries the view it is on (with its query), and a refusal goes back
    there: a refused promote or reject lands on the dream page, not on Memory."""
    review.engine.curation.pending.request("forget", "gateway", by="an agent")
    c, csrf = opened(review)
    page = c.get("/pending", params={"sort": "new"}).text
    backs = set(re.findall(r'name="back" value="([^"]*)"', page))
    assert backs == {"/pending?sort=new"}
    r = c.post("/pending/reject", data={"id": "nope", "csrf": csrf, "back": backs.pop()})
    assert r.status_code == 303
    assert r.headers["location"].startswith("/pending?sort=new&done=refused")


def test_the_journal_list_is_ordered_filtered_and_paged(review: ReviewApp, paths: Paths) -> None:
    for day in range(1, 31):
        paths.write(f"memory/2026-04-{day:02d}.md", f"# 2026-04-{day:02d}\n\n- note {day}\n")
    paths.write("memory/imports/chatgpt/x.md", "- imported\n")
    c, _ = opened(review)
    first = c.get("/files", params={"per": "10"}).text
    days = re.findall(r">memory/2026-04-(\d\d)\.md<", first)
    assert days == [f"{d:02d}" for d in range(30, 20, -1)]  # newest first, ten a page
    assert "page 1 of 4" in first and 'rel="next"' in first
    last = c.get("/files", params={"per": "10", "page": "4"}).text
    assert "imports/chatgpt/x.md" in last and 'rel="next"' not in last
    only = c.get("/files", params={"q": "04-1", "kind": "journal"}).text
    assert re.findall(r">memory/2026-04-(\d\d)\.md<", only) == [f"{d}" for d in range(19, 9, -1)]
    assert "x.md" not in only


def test_a_path_out_of_the_workspace_is_refused(review: ReviewApp) -> None:
    c = client(review)
    c.get(f"/?token={review.token}")
    for path in ("../outside.md", "/etc/passwd", "MEMORY.md"):
        assert c.get("/file", params={"path": path}).status_code == 400, path
