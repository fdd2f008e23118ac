-- One index for every process on this database: the generation the processes serve. The process
-- that builds (under the index lock) writes the row; the others poll it and open the file it names.
-- ``reconciled`` is the last generation whose reconcile of saved snapshots ran, so it runs once.
CREATE TABLE index_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL,
    corpus_path TEXT NOT NULL,
    params TEXT NOT NULL,
    cache_file TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    papers INTEGER NOT NULL,
    built_by TEXT NOT NULL,
    published_at TEXT NOT NULL,
    reconciled INTEGER NOT NULL DEFAULT 0
);
