-- the tools that cost most: each request is counted to the tools whose results it sent
-- first (the model's turn their results asked for), split evenly between them
WITH uses AS (
    SELECT unnest(tools) AS tool, cost_usd / len(tools) AS cost_usd, input_tokens
    FROM requests
    WHERE len(tools) > 0
)
SELECT tool, count(*) AS requests, sum(cost_usd) AS cost_usd, sum(input_tokens) AS input_tokens
FROM uses
GROUP BY tool
ORDER BY cost_usd DESC NULLS LAST, tool
LIMIT getvariable('top');
