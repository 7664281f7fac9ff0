"""The optional reranking stage against a local stub of the ``/rerank`` wire format:
it reorders when it answers, and a slow, broken or garbled reranker leaves the hybrid
order exactly as it was, within the deadline, and says why (issue 9, item 5)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from conftest import Paths
from reverie.engine import Reverie
from reverie.recall.rerank import parse_scores, reorder


class Stub:
    """``mode``: ok (scores the documents in reverse), tei (bare list), slow, error, garbage."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append(body)
                n = len(body["documents"])
                if stub.mode == "slow":
                    time.sleep(5)
                if stub.mode == "error":
                    self.send_response(500)
                    self.end_headers()
                    return
                if stub.mode == "garbage":
                    payload = b'{"results": [{"index": 99, "relevance_score": "high"}]}'
                elif stub.mode == "tei":
                    payload = json.dumps(
                        [{"index": i, "score": float(i)} for i in range(n)]
                    ).encode()
                else:
                    payload = json.dumps(
                        {"results": [{"index": i, "relevance_score": float(i)} for i in range(n)]}
                    ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/rerank"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def stub() -> Iterator[Stub]:
    s = Stub()
    yield s
    s.server.shutdown()


def _engines(
    paths: Paths, engine_factory: Callable[..., Reverie], url: str
) -> tuple[Reverie, Reverie]:
    plain = engine_factory(embedder="fake")
    plain.init()
    for i in range(8):
        paths.write(
            f"memory/2026-04-{10 + i:02d}.md", f"# d\n\n- zqrr note {i} about the zqrr release\n"
        )
    plain.index()
    reranked = engine_factory(embedder="fake", rerank_url=url, rerank_timeout=0.5)
    return plain, reranked


@pytest.mark.parametrize("mode", ["ok", "tei"])
def test_an_answering_reranker_reorders_the_top(
    paths: Paths, engine_factory: Callable[..., Reverie], stub: Stub, mode: str
) -> None:
    stub.mode = mode
    plain, reranked = _engines(paths, engine_factory, stub.url)
    before = [h.key for h in plain.search("zqrr release", record=False).hits]
    response = reranked.search("zqrr release", record=False)
    after = [h.key for h in response.hits]
    assert stub.requests and stub.requests[0]["query"] == "zqrr release"
    assert after == list(reversed(before))  # the stub scores later documents higher
    assert all("rerank" in h.explain for h in response.hits)
    assert any("reranked by" in n for n in response.notes)


@pytest.mark.parametrize("mode", ["slow", "error", "garbage"])
def test_a_slow_or_broken_reranker_keeps_the_hybrid_order(
    paths: Paths, engine_factory: Callable[..., Reverie], stub: Stub, mode: str
) -> None:
    stub.mode = mode
    plain, reranked = _engines(paths, engine_factory, stub.url)
    before = [h.key for h in plain.search("zqrr release", record=False).hits]
    started = time.monotonic()
    response = reranked.search("zqrr release", record=False)
    assert time.monotonic() - started < 0.5 + 0.5  # the deadline, plus the search itself
    assert [h.key for h in response.hits] == before
    assert any("hybrid order kept" in n for n in response.notes)
    assert not any("rerank" in h.explain for h in response.hits)


def test_an_unreachable_reranker_keeps_the_hybrid_order(
    paths: Paths, engine_factory: Callable[..., Reverie]
) -> None:
    plain, reranked = _engines(paths, engine_factory, "http://127.0.0.1:9/rerank")
    before = [h.key for h in plain.search("zqrr release", record=False).hits]
    response = reranked.search("zqrr release", record=False)
    assert [h.key for h in response.hits] == before
    assert any("hybrid order kept" in n for n in response.notes)


def test_reply_parsing_and_reordering() -> None:
    assert parse_scores({"results": [{"index": 1, "relevance_score": 0.9}]}, 2) == {1: 0.9}
    assert parse_scores([{"index": 0, "score": 2}], 1) == {0: 2.0}
    for bad in ({}, {"results": "x"}, [{"index": 5, "score": 1}], [{"index": 0, "score": "a"}], []):
        with pytest.raises(ValueError):
            parse_scores(bad, 3)
    assert reorder([0, 1, 2, 3], {2: 0.9, 0: 0.1}) == [2, 0, 1, 3]
