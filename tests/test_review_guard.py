"""The review page's guard, without a browser: the token, the cookie, the Host check
(DNS rebinding), CSRF on every change, and paths that leave the workspace."""

from __future__ import annotations

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


def test_only_the_printed_url_opens_the_page(review: ReviewApp) -> None:
    c = client(review)
    assert c.get("/").status_code == 403
    assert c.get("/?token=wrong").status_code == 403
    first = c.get(f"/?token={review.token}")
    assert first.status_code == 303 and first.headers["location"] == "/"
    cookie = first.headers["set-cookie"]
    assert COOKIE in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    page = c.get("/")
    assert page.status_code == 200 and "Keep the gateway on loopback" in page.text
    assert "Content-Security-Policy" in page.text and "<script" not in page.text


def test_another_host_is_refused_even_with_the_cookie(review: ReviewApp) -> None:
    c = client(review, host=f"evil.example:{PORT}")
    c.cookies.set(COOKIE, review.token)
    assert c.get("/").status_code == 403


def test_every_change_needs_the_csrf_token(review: ReviewApp, paths: Paths) -> None:
    c = client(review)
    c.get(f"/?token={review.token}")
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
    ok = c.post("/forget", data={"key": "MEMORY.md:3", "csrf": review.csrf, "back": "//evil"})
    assert ok.status_code == 303 and ok.headers["location"].startswith("/?done=")
    assert b"gateway" not in (paths.workspace / "MEMORY.md").read_bytes()


def test_a_path_out_of_the_workspace_is_refused(review: ReviewApp) -> None:
    c = client(review)
    c.get(f"/?token={review.token}")
    for path in ("../outside.md", "/etc/passwd", "MEMORY.md"):
        assert c.get("/file", params={"path": path}).status_code == 400, path
