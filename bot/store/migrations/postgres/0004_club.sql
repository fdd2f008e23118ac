-- /club (SQLite migration 5; PostgreSQL 4): each server's shared reading list, with who added each paper and
-- when, and a snapshot of the paper as it was then.
CREATE TABLE club_papers (
    guild_id BIGINT NOT NULL,
    paper_id TEXT NOT NULL,
    title TEXT NOT NULL,
    authors TEXT NOT NULL,
    et_al INTEGER NOT NULL,
    area TEXT NOT NULL,
    abstract TEXT NOT NULL,
    url TEXT,
    note TEXT NOT NULL DEFAULT '',
    added_by BIGINT NOT NULL,
    added_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (guild_id, paper_id)
);
CREATE INDEX club_by_guild_time ON club_papers (guild_id, added_at);
