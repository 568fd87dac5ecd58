-- Target 4a: the 50 ops (kernels) with the most total time, on device op tracks.
SELECT e.name, count(*) AS n, sum(e.dur_ps) AS total_ps
FROM events e JOIN tracks t USING (trace_id, track_id)
WHERE t.kind IN ('xla_ops', 'stream')
GROUP BY e.name
ORDER BY total_ps DESC, e.name
LIMIT 50
