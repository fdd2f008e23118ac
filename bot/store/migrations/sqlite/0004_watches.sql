-- /watch: saved queries whose new matches are sent by DM after each reindex, and the users whose
-- DMs are closed (their watches pause until they next run a /watch command).
CREATE TABLE watches (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL,
    query TEXT NOT NULL,
    area TEXT NOT NULL DEFAULT '',
    author TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX watches_by_user ON watches (user_id, id);
CREATE TABLE watch_pauses (
    user_id INTEGER PRIMARY KEY,
    paused_at TEXT NOT NULL,
    told INTEGER NOT NULL DEFAULT 0
);
