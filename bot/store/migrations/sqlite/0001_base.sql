-- Base tables. ``name_key`` is the case-folded name (uniqueness), ``name`` the display spelling.
CREATE TABLE lists (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (user_id, name_key)
);
CREATE TABLE papers (
    paper_id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    authors TEXT NOT NULL,
    et_al INTEGER NOT NULL,
    area TEXT NOT NULL,
    abstract TEXT NOT NULL,
    url TEXT,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL
);
CREATE TABLE saved (
    list_id INTEGER NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
    paper_id TEXT NOT NULL REFERENCES papers (paper_id),
    user_id INTEGER NOT NULL,
    saved_at TEXT NOT NULL,
    PRIMARY KEY (list_id, paper_id)
);
