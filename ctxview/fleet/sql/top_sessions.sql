-- the sessions that cost most (rank 'waste': that lost most to cache breaks)
WITH per AS (
    SELECT
        session_key,
        count(*) AS requests,
        count(DISTINCT agent) AS agents,
        sum(cost_usd) AS cost_usd,
        sum(break_lost_usd) AS lost_usd,
        sum(cache_read) / nullif(sum(input_tokens), 0) AS hit_rate
    FROM requests
    GROUP BY session_key
)
SELECT per.*, s.session_id, s.project, s.provider, s.title, s.file
FROM per LEFT JOIN sessions AS s USING (session_key)
ORDER BY
    CASE WHEN getvariable('rank') = 'waste' THEN per.lost_usd ELSE per.cost_usd END
        DESC NULLS LAST,
    per.session_key
LIMIT getvariable('top');
