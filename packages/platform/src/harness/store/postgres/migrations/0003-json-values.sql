-- The job store: job values as json text (NUL and lone surrogates kept), the policy
-- timeout as a column.
-- jsonb refuses what JSON allows: the escape \u0000 and lone surrogates (\ud800)
-- cannot become jsonb text. json keeps the text exactly as sent (checked for
-- syntax only), so every value a caller or a handler can send is kept byte for byte.
-- Nothing reads inside these columns but the take statement, which needs the
-- policy's executionTimeout: kept as a column, read once at submission, so that no
-- json operator has to de-escape a job's input.
ALTER TABLE sw_jobs ADD COLUMN policy_timeout_ms bigint;
UPDATE sw_jobs SET policy_timeout_ms = (request->'policy'->>'executionTimeout')::bigint;
ALTER TABLE sw_jobs
  ALTER COLUMN request TYPE json USING request::json,
  ALTER COLUMN output TYPE json USING output::json,
  ALTER COLUMN error TYPE json USING error::json;
ALTER TABLE sw_chunks ALTER COLUMN chunk TYPE json USING chunk::json;
