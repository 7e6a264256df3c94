-- sessions: one row per session file, those with a request the filters keep
CREATE OR REPLACE TEMP VIEW sessions AS
SELECT *
FROM read_parquet(getvariable('dataset') || '/sessions/*.parquet')
WHERE session_key IN (SELECT session_key FROM requests);
