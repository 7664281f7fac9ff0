"""``reverie ui``: a local review page for the owner (Starlette, served by uvicorn).

Who can use it, and how that is enforced:

- it binds 127.0.0.1 only, and answers only requests whose ``Host`` is that address
  (or ``localhost``) on its port, so a web page cannot reach it by DNS rebinding;
- the URL it prints carries a random token; the first visit trades it for an HttpOnly,
  SameSite=Strict cookie, and every request without that cookie is refused (403);
- every state change is a POST carrying a CSRF token (derived from the session token)
  in the form; a POST without it, or with a wrong one, is refused (403) and changes
  nothing;
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

from ..dreaming import curate
from ..engine import Reverie
from ..errors import ReverieError
from ..storage.locks import held
from . import views
from .templates import CSS, ENV

COOKIE = "reverie_review"
NAV = (
    ("/", "Memory"),
    ("/files", "Journals"),
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
        self.csrf = hmac.new(self.token.encode(), b"csrf", hashlib.sha256).hexdigest()
        self.port = port
        self._lock = threading.Lock()
        routes = [
            Route("/", self.page(self._memory)),
            Route("/files", self.page(self._files)),
            Route("/file", self.page(self._file)),
            Route("/dream", self.page(self._dream)),
            Route("/history", self.page(self._history)),
            Route("/pending", self.page(self._pending)),
            Route("/intents", self.page(self._intents)),
            Route("/search", self.page(self._search)),
            Route("/forget", self.action(self._forget), methods=["POST"]),
            Route("/dream/promote", self.action(self._promote), methods=["POST"]),
            Route("/dream/reject", self.action(self._reject), methods=["POST"]),
            Route("/history/restore", self.action(self._restore), methods=["POST"]),
            Route("/pending/confirm", self.action(self._confirm), methods=["POST"]),
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
        if hmac.compare_digest(request.cookies.get(COOKIE, ""), self.token):
            return None
        given = request.query_params.get("token", "")
        if request.method == "GET" and hmac.compare_digest(given, self.token):
            back = RedirectResponse(request.url.path, status_code=303)
            back.set_cookie(COOKIE, self.token, httponly=True, samesite="strict")
            return back
        return PlainTextResponse("refused: open the URL that `reverie ui` printed", status_code=403)

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
            here = request.url.path
            html = ENV.get_template(name).render(
                title=dict(NAV).get(here, name),
                css=CSS,
                nav=NAV,
                here=here,
                csrf=self.csrf,
                flash=request.query_params.get("done", ""),
                **data,
            )
            return HTMLResponse(
                html, headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
            )

        return endpoint

    def action(self, do: Callable[[dict[str, str]], tuple[str, str]]) -> Any:
        async def endpoint(request: Request) -> Response:
            refused = self._refusal(request)
            if refused is not None:
                return refused
            form = {k: str(v) for k, v in (await request.form()).items()}
            if not hmac.compare_digest(form.get("csrf", ""), self.csrf):
                return PlainTextResponse("refused: missing or wrong CSRF token", status_code=403)
            try:
                with self._lock:
                    back, said = do(form)
            except (ReverieError, ValueError) as exc:
                back, said = form.get("back", "/"), f"refused: {exc}"
            if not back.startswith("/") or back.startswith("//"):
                back = "/"
            sep = "&" if "?" in back else "?"
            return RedirectResponse(f"{back}{sep}{urlencode({'done': said})}", status_code=303)

        return endpoint

    # -- pages ---------------------------------------------------------------------------
    def _memory(self, _r: Request) -> tuple[str, dict[str, Any]]:
        trusted = self.engine.curation.trusted.folders()
        return "memory", {"files": views.curated(self.engine), "trusted": trusted}

    def _files(self, _r: Request) -> tuple[str, dict[str, Any]]:
        return "files", {"files": views.episodic_files(self.engine)}

    def _file(self, r: Request) -> tuple[str, dict[str, Any]]:
        return "file", {"data": views.file_lines(self.engine, r.query_params.get("path", ""))}

    def _dream(self, _r: Request) -> tuple[str, dict[str, Any]]:
        return "dream", {"data": views.candidates(self.engine)}

    def _history(self, _r: Request) -> tuple[str, dict[str, Any]]:
        return "history", {"images": views.history(self.engine)}

    def _pending(self, _r: Request) -> tuple[str, dict[str, Any]]:
        return "pending", {"requests": self.engine.curation.pending.requests()}

    def _intents(self, _r: Request) -> tuple[str, dict[str, Any]]:
        return "intents", {"intents": [i.as_dict() for i in self.engine.intents.listing(all=True)]}

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

    def _dream_locked(self, fn: Callable[[Any, str], dict[str, Any]], key: str) -> dict[str, Any]:
        with held(self.engine.workspace.dream_lock, wait=30, busy="a dream is running"):
            return fn(self.engine.dreamer, key)

    def _promote(self, form: dict[str, str]) -> tuple[str, str]:
        data = self._dream_locked(curate.promote, form.get("key", ""))
        return "/dream", f"promoted {data['source']} into MEMORY.md"

    def _reject(self, form: dict[str, str]) -> tuple[str, str]:
        data = self._dream_locked(curate.reject, form.get("key", ""))
        return "/dream", f"rejected {data['source']}: never promoted"

    def _restore(self, form: dict[str, str]) -> tuple[str, str]:
        chosen = self.engine.dreamer.restore(form.get("name") or None)
        return "/history", f"MEMORY.md restored from {chosen.name}"

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
