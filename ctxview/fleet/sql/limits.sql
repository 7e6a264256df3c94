-- requests the API would reject, by reason, and requests within 10% of the model's context
SELECT
    coalesce(error_code, 'near_limit') AS what,
    count(*) AS requests,
    count(DISTINCT session_key) AS sessions,
    max(input_tokens / context_limit) AS max_fill
FROM requests
WHERE rejected OR input_tokens >= 0.9 * context_limit
GROUP BY what
ORDER BY requests DESC, what;
