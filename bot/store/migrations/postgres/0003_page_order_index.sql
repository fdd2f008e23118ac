-- Paging a list newest first orders by (saved_at, id): with id in the index, PostgreSQL reads a page
-- straight off the index backwards instead of sorting the whole list (SQLite's rowid already is).
CREATE INDEX saved_page_order ON saved (user_id, list_id, saved_at DESC, id DESC);
DROP INDEX saved_by_user_list_time;
