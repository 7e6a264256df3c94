-- the prompt cache's hit rate per model: predicted, and as the API recorded it
SELECT
    model,
    count(*) AS requests,
    sum(cost_usd) AS cost_usd,
    sum(cache_read) / nullif(sum(input_tokens), 0) AS hit_rate,
    sum(recorded_cache_read)
        / nullif(sum(recorded_input_tokens + recorded_cache_read + recorded_cache_write), 0)
        AS recorded_hit_rate
FROM requests
GROUP BY model
ORDER BY cost_usd DESC NULLS LAST, model;
