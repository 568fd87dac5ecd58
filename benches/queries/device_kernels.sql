-- Issue 12, target 4: the 50 (device, op) pairs with the most total time
-- on device op tracks: a grouping by an integer and a dictionary string.
SELECT t.device_id, e.name, count(*) AS n, sum(e.dur_ps) AS total_ps
FROM events e JOIN tracks t USING (trace_id, track_id)
WHERE t.kind IN ('xla_ops', 'stream')
GROUP BY t.device_id, e.name
ORDER BY total_ps DESC, t.device_id, e.name
LIMIT 50
