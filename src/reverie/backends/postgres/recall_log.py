"""The recall log on PostgreSQL (issue 23): one tenant's rows of the shared database's
``recall_events`` and ``recall_store`` (migration 4 of
:mod:`reverie.backends.postgres.schema`), with ``tenant_id`` in every key and every
query. Nothing of it lives in the state dir.

The same rows and bounds as the SQLite log (:mod:`reverie.backends.sqlite.recall_log`):
per key at most 32 query hashes, 16 recall days, 8 concept tags and an 800-char
snippet; at most ``MAX_EVENTS`` events per tenant, the oldest dropped first. Each
search is one transaction; a store row is updated by one ``INSERT ... ON CONFLICT DO
UPDATE`` (the row lock it takes orders concurrent searches of one key, so none loses
its event), the keys in sorted order so two searches never deadlock. The tenant's
event count is a row of its own (``recall_counts``), updated last, so the bound costs
no count of the events on every search; a tenant's rows removed by hand go from all
three tables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...recall import log
from ...recall.evidence import MAX_QUERY_HASHES, MAX_RECALL_DAYS, RecallStats
from ...recall.log import COLUMNS, STORE_COLUMNS, RecallHit, Recording
from ...recall.log_port import RecallRows

if TYPE_CHECKING:
    from .schema import Database


def _appended(column: str, cap: int) -> str:
    """``column`` with the new row's value appended unless it holds it already, cut to
    its last ``cap`` items (:func:`reverie.backends.sqlite.recall_log._bounded`)."""
    old, new = f"s.{column}", f"excluded.{column}[1]"
    return (
        f"CASE WHEN {new} = ANY({old}) THEN {old} "
        f"ELSE ({old} || {new})[greatest(1, cardinality({old}) + 2 - {int(cap)}):] END"
    )


EVENT_SQL = (
    "INSERT INTO recall_events(tenant_id, key, query_hash, score, day, ts) "
    "VALUES (%s, %s, %s, %s, %s, %s) RETURNING id"
)
# a new key: its first row; a known one: one more recall (the tags stay the first ones)
STORE_SQL = (
    "INSERT INTO recall_store AS s (tenant_id, key, seq, path, start_line, end_line, "
    "recall_count, total_score, max_score, first_recalled, last_recalled, query_hashes, "
    "recall_days, concept_tags, snippet, origin, session_kind, observed) VALUES "
    "(%s, %s, %s, %s, %s, %s, 1, %s, %s, %s, %s, ARRAY[%s], ARRAY[%s], %s, %s, %s, %s, %s) "
    "ON CONFLICT (tenant_id, key) DO UPDATE SET recall_count = s.recall_count + 1, "
    "total_score = s.total_score + excluded.total_score, "
    "max_score = greatest(s.max_score, excluded.max_score), "
    "last_recalled = excluded.last_recalled, "
    f"query_hashes = {_appended('query_hashes', MAX_QUERY_HASHES)}, "
    f"recall_days = {_appended('recall_days', MAX_RECALL_DAYS)}, "
    "snippet = excluded.snippet, origin = excluded.origin"
)
COUNT_SQL = (
    "INSERT INTO recall_counts AS c (tenant_id, events) VALUES (%s, %s) ON CONFLICT "
    "(tenant_id) DO UPDATE SET events = c.events + excluded.events RETURNING events"
)
TRIM_SQL = (
    "DELETE FROM recall_events WHERE tenant_id = %s AND id IN (SELECT id FROM "
    "recall_events WHERE tenant_id = %s ORDER BY id LIMIT %s)"
)


class PgRecallLog(Recording):
    """:class:`~reverie.recall.log_port.RecallLogPort` of tenant ``tenant``."""

    backend = "postgres"

    def __init__(self, db: Database, tenant: str) -> None:
        self.db, self.tenant = db, tenant

    def close(self) -> None:
        """The database (shared by the tenants) is closed by its owner."""

    def record(self, query: str, hits: Iterable[RecallHit], *, now: datetime) -> int:
        """Record the episodic hits of one search, in one transaction."""
        rows = log.episodic(hits)
        if not rows:
            return 0
        qh, day, ts = log.stamps(query, now)
        t = self.tenant
        with self.db.transaction() as conn, conn.cursor() as cur:
            # no wait for the WAL flush (as SQLite's synchronous = NORMAL: a crash may
            # lose the last few recall events, never corrupt the log)
            cur.execute("SET LOCAL synchronous_commit = off")
            events = [(t, h.key, qh, h.score, day, ts) for h in rows]
            cur.executemany(EVENT_SQL, events, returning=True)
            ids = [int(row[0]) for _ in cur.results() for row in cur.fetchall()]
            # a new key's row ordered as its first event (as SQLite's rowid), its lock
            # taken in key order (stable: a key hit twice keeps its order)
            ordered = sorted(zip(ids, rows, strict=True), key=lambda p: p[1].key)
            cur.executemany(STORE_SQL, [self._store_row(h, i, qh, day, ts) for i, h in ordered])
            (kept,) = conn.execute(COUNT_SQL, (t, len(rows))).fetchone()
            if kept > log.MAX_EVENTS:
                self._trim(conn, int(kept) - log.MAX_EVENTS)
        return len(rows)

    def _store_row(self, h: RecallHit, seq: int, qh: str, day: str, ts: str) -> tuple[Any, ...]:
        """:data:`STORE_SQL`'s values (it sets the count and the lists' first items)."""
        key, *row = log.first_row(h, qh, day, ts)  # path, start, end, count, total, max, ...
        return (self.tenant, key, seq, *row[:3], *row[4:8], qh, day, *row[10:])

    def _trim(self, conn: Any, excess: int) -> None:
        """The oldest ``excess`` events go (the count row is locked by this transaction)."""
        t = self.tenant
        gone = conn.execute(TRIM_SQL, (t, t, excess)).rowcount
        if gone < excess:  # the count ran ahead of the rows (deleted by hand): recount
            conn.execute(
                "UPDATE recall_counts SET events = (SELECT count(*) FROM recall_events "
                "WHERE tenant_id = %s) WHERE tenant_id = %s",
                (t, t),
            )
        else:
            self._uncount(conn, gone)

    def _uncount(self, conn: Any, gone: int) -> None:
        conn.execute(
            "UPDATE recall_counts SET events = greatest(0, events - %s) WHERE tenant_id = %s",
            (gone, self.tenant),
        )

    def stats(self, keys: Sequence[str] | None = None) -> list[RecallStats]:
        """The tenant's aggregated store as dreaming reads it (first recalled first)."""
        sql = f"SELECT {COLUMNS} FROM recall_store WHERE tenant_id = %s"
        params: tuple[Any, ...] = (self.tenant,)
        if keys is not None:
            sql, params = f"{sql} AND key = ANY(%s)", (self.tenant, list(keys))
        with self.db.connection() as conn:
            rows = conn.execute(f"{sql} ORDER BY seq", params).fetchall()
        return [log.as_stats(r) for r in rows]

    def drop(self, match: Callable[[str, str], bool], *, dry_run: bool = False) -> list[str]:
        """Forget the signals of every row of this tenant ``match(key, snippet)``
        selects: its aggregate and every event of its key, in one transaction (the
        rows locked while they are matched, in the key order a search locks them in, so
        a search meanwhile waits and never deadlocks). Returns the keys (first
        recalled first)."""
        lock = "" if dry_run else " FOR UPDATE"
        t = self.tenant
        with self.db.transaction() as conn:
            rows = conn.execute(  # (C: code point order, as Python sorts the search's keys)
                "SELECT key, snippet, seq FROM recall_store WHERE tenant_id = %s "
                f'ORDER BY key COLLATE "C"{lock}',
                (t,),
            ).fetchall()
            rows.sort(key=lambda r: int(r[2]))
            keys = [str(k) for k, snip, _seq in rows if match(str(k), str(snip))]
            if keys and not dry_run:
                conn.execute(  # the count row before the events, as a search's trim takes them
                    "SELECT events FROM recall_counts WHERE tenant_id = %s FOR UPDATE", (t,)
                )
                conn.execute(
                    "DELETE FROM recall_store WHERE tenant_id = %s AND key = ANY(%s)", (t, keys)
                )
                gone = conn.execute(
                    "DELETE FROM recall_events WHERE tenant_id = %s AND key = ANY(%s)", (t, keys)
                ).rowcount
                self._uncount(conn, gone)
        return keys

    def count_events(self) -> int:
        with self.db.connection() as conn:
            row = conn.execute(
                "SELECT count(*) FROM recall_events WHERE tenant_id = %s", (self.tenant,)
            ).fetchone()
        return int(row[0])

    def export(self) -> RecallRows:
        with self.db.connection() as conn:
            store = conn.execute(
                f"SELECT {STORE_COLUMNS} FROM recall_store WHERE tenant_id = %s ORDER BY seq",
                (self.tenant,),
            ).fetchall()
            events = conn.execute(
                "SELECT key, query_hash, score, day, ts FROM recall_events WHERE tenant_id = %s "
                "ORDER BY id",
                (self.tenant,),
            ).fetchall()
        return RecallRows([tuple(r) for r in store], [tuple(e) for e in events])

    def adopt(self, rows: RecallRows) -> None:
        t = self.tenant
        marks = ", ".join(["%s"] * 18)
        with self.db.transaction() as conn, conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO recall_store (tenant_id, seq, {STORE_COLUMNS}) VALUES ({marks})",
                [
                    (t, n, *r[:9], *(list(v) for v in r[9:12]), *r[12:])
                    for n, r in enumerate(rows.store)
                ],
            )
            cur.executemany(EVENT_SQL.replace(" RETURNING id", ""), [(t, *e) for e in rows.events])
            conn.execute(COUNT_SQL, (t, len(rows.events)))

    def scrub(self) -> bool:
        """VACUUM the two tables a forget deletes from: the dead rows' space is
        reclaimed and they leave the indexes (as :meth:`PgIndex.scrub` does; the
        server's WAL and backups age out on their own schedule)."""
        with self.db.connection() as conn:  # (autocommit: VACUUM runs outside a transaction)
            conn.execute("VACUUM recall_store, recall_events")
        return True


__all__ = ["PgRecallLog"]
