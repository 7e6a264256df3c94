-- cost and hit rate per day
SELECT
    date,
    count(*) AS requests,
    sum(cost_usd) AS cost_usd,
    sum(break_lost_usd) AS lost_usd,
    sum(cache_read) / nullif(sum(input_tokens), 0) AS hit_rate
FROM requests
GROUP BY date
ORDER BY date;
