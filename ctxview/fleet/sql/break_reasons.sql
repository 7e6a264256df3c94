-- dollars lost per cache-break reason: the previous prompt sent again and written, not read
SELECT
    break_reason AS reason,
    count(*) AS breaks,
    sum(break_lost_usd) AS lost_usd,
    sum(cache_write_5m + cache_write_1h) AS tokens_written
FROM requests
WHERE cache_break
GROUP BY break_reason
ORDER BY lost_usd DESC NULLS LAST, breaks DESC, reason;
