-- what everything cost, and what the prompt cache saved (the same tokens sent uncached)
SELECT
    count(DISTINCT session_key) AS sessions,
    count(*) AS requests,
    sum(cost_usd) AS cost_usd,
    sum(uncached_cost_usd) AS uncached_cost_usd,
    sum(uncached_cost_usd) - sum(cost_usd) AS cache_saved_usd,
    sum(break_lost_usd) AS break_lost_usd,
    sum(cache_read) / nullif(sum(input_tokens), 0) AS hit_rate,
    count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_requests,
    min(date) AS first_day,
    max(date) AS last_day
FROM requests;
