-- Notes, the in-corpus flag of snapshots, and the indexes paging and per-user lookups need.
ALTER TABLE saved ADD COLUMN note TEXT NOT NULL DEFAULT '';
-- Snapshots written by v1 were taken from the live corpus; the next reconcile corrects them.
ALTER TABLE papers ADD COLUMN in_corpus INTEGER NOT NULL DEFAULT 1;
-- Paging a list newest-first walks this index backwards (rowid breaks saved_at ties).
CREATE INDEX saved_by_user_list_time ON saved (user_id, list_id, saved_at);
CREATE INDEX saved_by_user_paper ON saved (user_id, paper_id);
-- Orphan-snapshot pruning and the papers -> saved foreign key look saved rows up by paper.
CREATE INDEX saved_by_paper ON saved (paper_id);
