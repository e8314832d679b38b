-- A cancelled running job keeps the worker that held it (issue 35): the holder
-- (worker_id) is cleared at every end, and a cancel posts no result (result_from).
ALTER TABLE sw_jobs ADD COLUMN cancelled_from text;
