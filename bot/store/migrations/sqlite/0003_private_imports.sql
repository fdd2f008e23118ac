-- What a user imports from a file is theirs alone: it goes to ``imported`` (keyed by user), never to
-- the shared ``papers`` snapshots, which only the corpus writes. A saved row therefore no longer needs
-- a shared snapshot, so ``saved`` is rebuilt without that foreign key, and with an ``id`` that keeps
-- the insertion order stable (VACUUM may renumber the rowid of a table without one).
CREATE TABLE imported (
    user_id INTEGER NOT NULL,
    paper_id TEXT NOT NULL,
    title TEXT NOT NULL,
    authors TEXT NOT NULL,
    et_al INTEGER NOT NULL,
    area TEXT NOT NULL,
    abstract TEXT NOT NULL,
    url TEXT,
    PRIMARY KEY (user_id, paper_id)
);
CREATE TABLE saved_v3 (
    id INTEGER PRIMARY KEY,
    list_id INTEGER NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
    paper_id TEXT NOT NULL,
    user_id INTEGER NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    saved_at TEXT NOT NULL,
    UNIQUE (list_id, paper_id)
);
INSERT INTO saved_v3 (id, list_id, paper_id, user_id, note, saved_at)
    SELECT rowid, list_id, paper_id, user_id, note, saved_at FROM saved ORDER BY rowid;
DROP TABLE saved;
ALTER TABLE saved_v3 RENAME TO saved;
CREATE INDEX saved_by_user_list_time ON saved (user_id, list_id, saved_at);
CREATE INDEX saved_by_user_paper ON saved (user_id, paper_id);
CREATE INDEX saved_by_paper ON saved (paper_id);
