-- the projects that cost most
SELECT
    project,
    count(DISTINCT session_key) AS sessions,
    count(*) AS requests,
    sum(cost_usd) AS cost_usd,
    sum(break_lost_usd) AS lost_usd,
    sum(cache_read) / nullif(sum(input_tokens), 0) AS hit_rate
FROM requests
GROUP BY project
ORDER BY cost_usd DESC NULLS LAST, project
LIMIT getvariable('top');
