"""``reverie ui``: a local review page for the owner (Starlette, served by uvicorn).

Who can use it, and how that is enforced:

- it binds 127.0.0.1 only, and answers only requests whose ``Host`` is that address
  (or ``localhost``) on its port, so a web page cannot reach it by DNS rebinding;
- the URL it prints carries a random token; a visit with it opens a session: a fresh
  random session id in an HttpOnly, SameSite=Strict cookie (never the token itself, which
  stays only in the printed URL), and every request without a live session is refused
  (403);
- every state change is a POST carrying a CSRF token (derived from the session id) in
  the form; a POST without it, or with a wrong one, is refused (403) and changes
  nothing; one that changes things for good (forget, restore, confirming a request)
  first shows what it will change and asks once (:mod:`.confirm`);
- the page loads nothing from anywhere (inline CSS, no script, a Content-Security-
  Policy that forbids all else), so it works offline;
- memory text is rendered by autoescaped templates only: a ``<script>`` in a journal
  shows as text.

One lock serialises every engine call (the engine shares one SQLite connection).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from ..engine import Reverie
from ..errors import ReverieError
from ..timewords import cron_in_words
from . import confirm, views
from .listing import lines_of, one_span, page_of, paged
from .templates import CSS, ENV

HISTORY_PER_PAGE = 10  # pre-images a page (each shown as a diff)

COOKIE = "reverie_review"
NAV = (
    ("/", "Memory"),
    ("/files", "Journals"),
    ("/lines", "Lines"),
    ("/night", "Last night"),
    ("/dream", "Dream candidates"),
    ("/history", "History"),
    ("/pending", "Pending"),
    ("/intents", "Intents"),
    ("/search", "Search"),
)


class ReviewApp:
    """The review page over one engine; ``token`` is the secret in the printed URL."""

    def __init__(self, engine: Reverie, *, token: str | None = None, port: int = 0) -> None:
        self.engine = engine
        self.token = token or secrets.token_urlsafe(24)
        self._secret = secrets.token_bytes(32)  # signs CSRF tokens; never leaves the process
        self._sessions: set[str] = set()  # live session ids (sha256 of the cookie)
        self.port = port
        self._lock = threading.Lock()
        routes = [
            Route("/", self.page(self._memory)),
            Route("/files", self.page(self._files)),
            Route("/file", self.page(self._file)),
            Route("/lines", self.page(self._lines)),
            Route("/night", self.page(self._night)),
            Route("/dream", self.page(self._dream)),
            Route("/history", self.page(self._history)),
            Route("/pending", self.page(self._pending)),
            Route("/intents", self.page(self._intents)),
            Route("/search", self.page(self._search)),
            Route("/forget", self.action(self._forget), methods=["POST"]),
            Route("/link", self.action(self._link), methods=["POST"]),
            Route("/dream/promote", self.action(self._promote), methods=["POST"]),
            Route("/dream/reject", self.action(self._reject), methods=["POST"]),
            Route("/history/restore", self.action(self._restore), methods=["POST"]),
            Route("/pending/confirm", self.action(self._confirm), methods=["POST"]),
            Route("/sync/pick", self.action(self._pick), methods=["POST"]),
            Route("/pending/reject", self.action(self._reject_request), methods=["POST"]),
            Route("/intents/confirm", self.action(self._confirm_intent), methods=["POST"]),
            Route("/intents/cancel", self.action(self._cancel_intent), methods=["POST"]),
        ]
        self.app = Starlette(routes=routes)

    def url(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}/?token={quote(self.token)}"

    # -- the guard -----------------------------------------------------------------------
    def _refusal(self, request: Request) -> Response | None:
        host = request.headers.get("host", "")
        if self.port and host not in (f"127.0.0.1:{self.port}", f"localhost:{self.port}"):
            return PlainTextResponse("refused: unexpected Host header", status_code=403)
        if self._session(request) is not None:
            return None
        given = request.query_params.get("token", "")
        if request.method == "GET" and hmac.compare_digest(given, self.token):
            sid = secrets.token_urlsafe(32)
            self._sessions.add(hashlib.sha256(sid.encode()).hexdigest())
            back = RedirectResponse(request.url.path, status_code=303)
            back.set_cookie(COOKIE, sid, httponly=True, samesite="strict")
            return back
        return PlainTextResponse("refused: open the URL that `reverie ui` printed", status_code=403)

    def _session(self, request: Request) -> str | None:
        """The request's live session id, or None."""
        sid = request.cookies.get(COOKIE, "")
        live = sid and hashlib.sha256(sid.encode()).hexdigest() in self._sessions
        return sid if live else None

    def csrf_for(self, request: Request) -> str:
        sid = self._session(request) or ""
        return hmac.new(self._secret, sid.encode(), hashlib.sha256).hexdigest()

    def _render(self, request: Request, name: str, data: dict[str, Any]) -> Response:
        here = request.url.path
        kept = [(k, v) for k, v in request.query_params.multi_items() if k not in ("done", "token")]
        html = ENV.get_template(name).render(
            title=dict(NAV).get(here, name),
            css=CSS,
            nav=NAV,
            here=here,
            back_here=here + (f"?{urlencode(kept)}" if kept else ""),
            csrf=self.csrf_for(request),
            flash=request.query_params.get("done", ""),
            **data,
        )
        return HTMLResponse(
            html, headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
        )

    def page(self, build: Callable[[Request], tuple[str, dict[str, Any]]]) -> Any:
        async def endpoint(request: Request) -> Response:
            refused = self._refusal(request)
            if refused is not None:
                return refused
            try:
                with self._lock:
                    name, data = build(request)
            except (ReverieError, ValueError) as exc:
                return PlainTextResponse(f"error: {exc}", status_code=400)
            return self._render(request, name, data)

        return endpoint

    def action(self, do: Callable[[dict[str, str]], tuple[str, str]]) -> Any:
        async def endpoint(request: Request) -> Response:
            refused = self._refusal(request)
            if refused is not None:
                return refused
            form = {k: str(v) for k, v in (await request.form()).items()}
            if not hmac.compare_digest(form.get("csrf", ""), self.csrf_for(request)):
                return PlainTextResponse("refused: missing or wrong CSRF token", status_code=403)
            came_from = form.get("back", "/")
            try:
                with self._lock:
                    if confirm.needs_confirm(request.url.path, form):  # show, ask once
                        step = confirm.preview(self.engine, request.url.path, form)
                        return self._render(request, "confirm", {"step": step})
                    back, said = do(form)
            except (ReverieError, ValueError) as exc:
                back, said = came_from, f"refused: {exc}"
            if "back" in form:
                back = came_from  # the view it came from
            if not back.startswith("/") or back.startswith("//"):
                back = "/"
            sep = "&" if "?" in back else "?"
            return RedirectResponse(f"{back}{sep}{urlencode({'done': said})}", status_code=303)

        return endpoint

    # -- pages ---------------------------------------------------------------------------
    def _memory(self, _r: Request) -> tuple[str, dict[str, Any]]:
        trusted = self.engine.curation.trusted.folders()
        conflicts = self.engine.sync.conflicts()  # open until the owner picks (issue 25)
        return "memory", {
            "files": views.curated(self.engine),
            "trusted": trusted,
            "conflicts": conflicts,
        }

    def _files(self, r: Request) -> tuple[str, dict[str, Any]]:
        return "files", {"list": page_of(views.episodic_files(self.engine), dict(r.query_params))}

    def _file(self, r: Request) -> tuple[str, dict[str, Any]]:
        return "file", {"data": views.file_lines(self.engine, r.query_params.get("path", ""))}

    def _lines(self, r: Request) -> tuple[str, dict[str, Any]]:
        return "lines", {"list": lines_of(views.every_line(self.engine), dict(r.query_params))}

    def _night(self, _r: Request) -> tuple[str, dict[str, Any]]:
        return "night", {"data": views.last_night(self.engine)}

    def _dream(self, r: Request) -> tuple[str, dict[str, Any]]:
        data = views.candidates(self.engine)
        at = paged(data["candidates"], dict(r.query_params))
        return "dream", {"data": {**data, "candidates": at["rows"]}, "paging": at}

    def _history(self, r: Request) -> tuple[str, dict[str, Any]]:
        at = paged(views.preimages(self.engine), dict(r.query_params), per=HISTORY_PER_PAGE)
        images = views.history(self.engine, at["rows"])  # only the page's are read and diffed
        return "history", {"images": images, "paging": at}

    def _pending(self, r: Request) -> tuple[str, dict[str, Any]]:
        store = self.engine.curation.pending
        at = paged(store.requests(), dict(r.query_params))
        rows = [  # (a dry run each: the page's only); a changed line shows its one span
            (q, [{**c, "span": one_span(c["old"], c["new"]) if c["new"] else None}
                 for c in store.diff(q)])
            for q in at["rows"]
        ]  # fmt: skip
        return "pending", {"requests": rows, "paging": at}

    def _intents(self, r: Request) -> tuple[str, dict[str, Any]]:
        at = paged(self.engine.intents.listing(all=True), dict(r.query_params))
        rows = [
            {**i.as_dict(), "when": f"{cron_in_words(i.cron)} ({i.when})" if i.cron else i.when}
            for i in at["rows"]
        ]  # a schedule in words beside its cron
        return "intents", {"intents": rows, "paging": at}

    def _search(self, r: Request) -> tuple[str, dict[str, Any]]:
        q = r.query_params.get("q", "")
        return "search", {"q": q, "hits": views.search(self.engine, q)}

    # -- actions (each returns where to go back to, and what to say) ---------------------
    def _forget(self, form: dict[str, str]) -> tuple[str, str]:
        report = self.engine.curation.forget(key=form.get("key", ""))
        kept = report.history_kept  # said plainly: a pre-image still holds it
        note = f"; STILL HELD by pre-image(s) {', '.join(kept)}: forget again with --purge-history"
        return form.get("back", "/"), f"forgotten: {report.removed} line(s) removed" + (
            note if kept else ""
        )

    def _link(self, form: dict[str, str]) -> tuple[str, str]:
        """ "This replaces that" (issue 38): the owner links two journal lines."""
        done = self.engine.curation.link(form.get("newer", ""), form.get("older", ""))
        said = "already linked" if done.already else "linked"
        return form.get("back", "/"), f"{said}: {done.newer} replaces {done.older}"

    def _promote(self, form: dict[str, str]) -> tuple[str, str]:
        done = self.engine.dream_promote(form.get("key", ""))
        return "/dream", f"promoted {done.source} into MEMORY.md"

    def _reject(self, form: dict[str, str]) -> tuple[str, str]:
        done = self.engine.dream_reject(form.get("key", ""))
        return "/dream", f"rejected {done.source}: never promoted"

    def _restore(self, form: dict[str, str]) -> tuple[str, str]:
        chosen = self.engine.dream_restore(form.get("name") or None)
        return "/history", f"MEMORY.md restored from {chosen.name}"

    def _pick(self, form: dict[str, str]) -> tuple[str, str]:
        name = self.engine.sync.pick(form.get("id", ""), int(form.get("version", "0") or 0))
        return "/", f"{name}: kept version {form.get('version')} of {form.get('id')}"

    def _confirm(self, form: dict[str, str]) -> tuple[str, str]:
        self.engine.curation.pending.confirm(form.get("id", ""))
        return "/pending", f"request {form.get('id')} confirmed"

    def _reject_request(self, form: dict[str, str]) -> tuple[str, str]:
        self.engine.curation.pending.reject(form.get("id", ""))
        return "/pending", f"request {form.get('id')} rejected"

    def _confirm_intent(self, form: dict[str, str]) -> tuple[str, str]:
        done = self.engine.intents.confirm(form.get("id", ""))
        return "/intents", f"intent {done.id} confirmed: it is armed now"

    def _cancel_intent(self, form: dict[str, str]) -> tuple[str, str]:
        done = self.engine.intents.cancel(form.get("id", ""))
        return "/intents", f"intent {done.id} cancelled"


__all__ = ["COOKIE", "ReviewApp"]
