-- /club: each server's shared reading list, with who added each paper and when, and a snapshot of
-- the paper as it was then (so the list and its exports survive the paper leaving the corpus).
CREATE TABLE club_papers (
    guild_id INTEGER NOT NULL,
    paper_id TEXT NOT NULL,
    title TEXT NOT NULL,
    authors TEXT NOT NULL,
    et_al INTEGER NOT NULL,
    area TEXT NOT NULL,
    abstract TEXT NOT NULL,
    url TEXT,
    note TEXT NOT NULL DEFAULT '',
    added_by INTEGER NOT NULL,
    added_at TEXT NOT NULL,
    PRIMARY KEY (guild_id, paper_id)
);
CREATE INDEX club_by_guild_time ON club_papers (guild_id, added_at);
