-- strategies: one row per session and strategy (scan --compare), for the sessions kept
CREATE OR REPLACE TEMP VIEW strategies AS
SELECT *
FROM read_parquet(getvariable('dataset') || '/strategies/*.parquet')
WHERE session_key IN (SELECT session_key FROM requests);
