"""PostgreSQL's schema, as versioned, forward-only migrations (issue 23).

``reverie_migrations`` records each applied version; :func:`migrate` applies the
missing ones in order, each in its own transaction, under an advisory lock (two
servers starting together migrate once). :class:`.schema.Database` migrates on open.
"""

from __future__ import annotations

from typing import Any

LOCK_KEY = 0x52455645  # pg_advisory_xact_lock key of the migrations ("REVE")

MIGRATIONS: tuple[str, ...] = (
    # 1: the registry, chunks with their keyword text, side tables, meta
    """
    CREATE TABLE meta (
        tenant_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
        PRIMARY KEY (tenant_id, key)
    );
    CREATE TABLE sources (
        tenant_id TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL,
        size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, kind TEXT NOT NULL, day TEXT,
        generation INTEGER NOT NULL, chunks INTEGER NOT NULL, indexed_at TEXT NOT NULL,
        PRIMARY KEY (tenant_id, path)
    );
    CREATE TABLE chunks (
        tenant_id TEXT NOT NULL,
        id BIGINT GENERATED ALWAYS AS IDENTITY,
        path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
        part INTEGER NOT NULL DEFAULT 0, text TEXT NOT NULL, text_hash TEXT NOT NULL,
        kind TEXT NOT NULL, day TEXT, has_vector BOOLEAN NOT NULL DEFAULT false,
        -- the stemmed keyword text (reverie.tokens.keyword_body: the same stems as
        -- SQLite's FTS5 row, CJK as single characters), parsed by the 'simple' config
        body TSVECTOR NOT NULL,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX chunks_path ON chunks (tenant_id, path, start_line, part);
    CREATE INDEX chunks_body ON chunks USING gin (body);
    CREATE INDEX chunks_novec ON chunks (tenant_id, id) WHERE NOT has_vector;
    CREATE TABLE notes (
        tenant_id TEXT NOT NULL, chunk_id BIGINT NOT NULL, importance INTEGER,
        triggers TEXT NOT NULL DEFAULT '[]', projects TEXT NOT NULL DEFAULT '[]',
        PRIMARY KEY (tenant_id, chunk_id),
        FOREIGN KEY (tenant_id, chunk_id) REFERENCES chunks (tenant_id, id) ON DELETE CASCADE
    );
    CREATE TABLE provenance (
        tenant_id TEXT NOT NULL, chunk_id BIGINT NOT NULL,
        origin TEXT NOT NULL CHECK (origin IN ('owner', 'agent', 'untrusted', 'system')),
        session_kind TEXT, source TEXT NOT NULL,
        PRIMARY KEY (tenant_id, chunk_id),
        FOREIGN KEY (tenant_id, chunk_id) REFERENCES chunks (tenant_id, id) ON DELETE CASCADE
    );
    """,
    # 2: vectors (pgvector; one HNSW index per dimension count, made on first use)
    # and the embedding cache
    """
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE chunk_vectors (
        tenant_id TEXT NOT NULL, chunk_id BIGINT NOT NULL, dims INTEGER NOT NULL,
        embedding VECTOR NOT NULL,
        PRIMARY KEY (tenant_id, chunk_id),
        FOREIGN KEY (tenant_id, chunk_id) REFERENCES chunks (tenant_id, id) ON DELETE CASCADE
    );
    CREATE TABLE embed_cache (
        tenant_id TEXT NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
        pkey TEXT NOT NULL, hash TEXT NOT NULL, vec BYTEA NOT NULL, used BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, provider, model, pkey, hash)
    );
    CREATE INDEX embed_cache_used ON embed_cache (tenant_id, used);
    """,
    # the standing intents with their firings, and the requests waiting for the owner
    # (reverie.backends.postgres.intents, reverie.backends.postgres.requests); tenant_locks: one row per
    # tenant and store, locked (FOR UPDATE) by each change as SQLite's BEGIN IMMEDIATE
    # locks its file, its version bumped by each change that wrote
    """
    CREATE TABLE tenant_locks (
        tenant_id TEXT NOT NULL, store TEXT NOT NULL, version BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, store)
    );
    CREATE TABLE intents (
        tenant_id TEXT NOT NULL, id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('time', 'event', 'wish')),
        status TEXT NOT NULL
            CHECK (status IN ('pending', 'armed', 'done', 'expired', 'cancelled')),
        text TEXT NOT NULL,
        origin TEXT NOT NULL CHECK (origin IN ('owner', 'agent')),
        proposed_by TEXT NOT NULL, created TEXT NOT NULL, confirmed TEXT, ended TEXT,
        at TEXT, cron TEXT, tz TEXT NOT NULL DEFAULT '', triggers TEXT NOT NULL DEFAULT '[]',
        review_by TEXT, expires TEXT, cooldown_s DOUBLE PRECISION NOT NULL,
        budget INTEGER NOT NULL, fired INTEGER NOT NULL DEFAULT 0, last_fired TEXT,
        next_turn TEXT, next_notify TEXT,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX intents_status ON intents (tenant_id, status, kind);
    CREATE TABLE firings (
        tenant_id TEXT NOT NULL, id BIGINT GENERATED ALWAYS AS IDENTITY,
        intent_id TEXT NOT NULL, at TEXT NOT NULL,
        channel TEXT NOT NULL CHECK (channel IN ('turn', 'notify')),
        detail TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (tenant_id, id),
        FOREIGN KEY (tenant_id, intent_id) REFERENCES intents (tenant_id, id)
    );
    CREATE INDEX firings_intent ON firings (tenant_id, intent_id);
    CREATE TABLE requests (
        tenant_id TEXT NOT NULL, id TEXT NOT NULL, seq BIGINT GENERATED ALWAYS AS IDENTITY,
        kind TEXT NOT NULL CHECK (kind IN ('forget', 'correct', 'directive')),
        text TEXT NOT NULL, new_text TEXT, at TEXT NOT NULL, requested_by TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'confirmed', 'rejected')),
        decided TEXT, key TEXT, reason TEXT,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX requests_order ON requests (tenant_id, seq);
    """,
    # 4: the recall log (reverie.backends.postgres.recall_log): SQLite's two tables per tenant, the
    # store's lists as arrays, its rows in first-recalled order (seq: the id of the
    # event that made it), and each tenant's event count (the MAX_EVENTS bound without
    # counting the events on every search)
    """
    CREATE TABLE recall_events (
        tenant_id TEXT NOT NULL, id BIGINT GENERATED ALWAYS AS IDENTITY,
        key TEXT NOT NULL, query_hash TEXT NOT NULL, score DOUBLE PRECISION NOT NULL,
        day TEXT NOT NULL, ts TEXT NOT NULL,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE INDEX recall_events_key ON recall_events (tenant_id, key);
    CREATE TABLE recall_store (
        tenant_id TEXT NOT NULL, key TEXT NOT NULL, seq BIGINT NOT NULL,
        path TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
        recall_count INTEGER NOT NULL, total_score DOUBLE PRECISION NOT NULL,
        max_score DOUBLE PRECISION NOT NULL,
        first_recalled TEXT NOT NULL, last_recalled TEXT NOT NULL,
        query_hashes TEXT[] NOT NULL, recall_days TEXT[] NOT NULL,
        concept_tags TEXT[] NOT NULL, snippet TEXT NOT NULL, origin TEXT NOT NULL,
        session_kind TEXT, observed TEXT,
        PRIMARY KEY (tenant_id, key)
    );
    CREATE INDEX recall_store_seq ON recall_store (tenant_id, seq);
    CREATE TABLE recall_counts (
        tenant_id TEXT PRIMARY KEY, events BIGINT NOT NULL
    );
    """,
    # 5: version links (issue 38): the earlier line a chunk's line replaces (path@hash)
    """CREATE TABLE links (tenant_id TEXT NOT NULL, chunk_id BIGINT NOT NULL, line INTEGER
    NOT NULL, target TEXT NOT NULL, FOREIGN KEY (tenant_id, chunk_id) REFERENCES chunks
    (tenant_id, id) ON DELETE CASCADE); CREATE INDEX links_target ON links (tenant_id, target);""",
    # 6: a request may be a version link the owner confirms (issue 38: memory_link over
    # the owner's line)
    """ALTER TABLE requests DROP CONSTRAINT IF EXISTS requests_kind_check;
    ALTER TABLE requests ADD CONSTRAINT requests_kind_check
        CHECK (kind IN ('forget', 'correct', 'directive', 'link'));""",
    # 7: the keyword column and its GIN index go: the keyword lane is the in-memory BM25
    # fed from the chunks' text (reverie.storage.index.keyword), and nothing read them;
    # each insert paid for their postings (issue 41, point 4)
    """DROP INDEX IF EXISTS chunks_body; ALTER TABLE chunks DROP COLUMN IF EXISTS body;""",
)
SCHEMA_VERSION = len(MIGRATIONS)


def applied(conn: Any) -> int:
    """The highest migration applied (0: an empty database)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS reverie_migrations "
        "(version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
    )
    row = conn.execute("SELECT coalesce(max(version), 0) FROM reverie_migrations").fetchone()
    return int(row[0])


def migrate(conn: Any, *, to: int = SCHEMA_VERSION) -> list[int]:
    """Apply the missing migrations up to ``to``, in order, one transaction each.
    Returns the versions applied now. ``conn``: a psycopg connection (autocommit)."""
    done: list[int] = []
    for version in range(1, to + 1):
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
            if applied(conn) >= version:
                continue
            conn.execute(MIGRATIONS[version - 1])
            conn.execute("INSERT INTO reverie_migrations(version) VALUES (%s)", (version,))
            done.append(version)
    return done


def hnsw_index(conn: Any, dims: int) -> None:
    """The HNSW index of ``dims``-wide vectors, on their half-precision form (half the
    memory; scores are recomputed in full precision from the column)."""
    d = int(dims)
    if conn.execute("SELECT to_regclass(%s)", (f"chunk_vectors_hnsw_{d}",)).fetchone()[0]:
        return
    # one creator at a time: two tenants' first syncs creating the same index at once
    # deadlock otherwise (each waits for the other's catalog row, then for its table lock)
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS chunk_vectors_hnsw_{d} ON chunk_vectors USING hnsw "
        f"((embedding::halfvec({d})) halfvec_cosine_ops) WHERE dims = {d}"
    )


__all__ = ["LOCK_KEY", "MIGRATIONS", "SCHEMA_VERSION", "applied", "hnsw_index", "migrate"]
