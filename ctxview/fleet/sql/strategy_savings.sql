-- what each strategy would have saved over the sessions' own requests (scan --compare)
SELECT
    strategy,
    count(*) AS sessions,
    sum(baseline_cost_usd) AS baseline_cost_usd,
    sum(cost_usd) AS cost_usd,
    sum(baseline_cost_usd - cost_usd) AS saved_usd,
    sum(rejected_requests) AS rejected_requests
FROM strategies
GROUP BY strategy
ORDER BY saved_usd DESC NULLS LAST, strategy;
