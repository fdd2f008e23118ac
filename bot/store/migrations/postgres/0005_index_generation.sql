-- One index for every process on this database (SQLite migration 6; PostgreSQL 5): the generation the
-- processes serve. The process that builds (under the index advisory lock) writes the row and
-- NOTIFYs paperbot_index; the others listen (and poll) and open the file it names. ``reconciled`` is
-- the last generation whose reconcile of saved snapshots ran, so it runs once.
CREATE TABLE index_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation BIGINT NOT NULL,
    corpus_path TEXT NOT NULL,
    params TEXT NOT NULL,
    cache_file TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    papers INTEGER NOT NULL,
    built_by TEXT NOT NULL,
    published_at TIMESTAMPTZ NOT NULL,
    reconciled BIGINT NOT NULL DEFAULT 0
);
