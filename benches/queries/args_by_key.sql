-- Issue 12, target 4: an event_args join filtering by stat key: time per
-- step number, from the events that carry a `step_num` stat.
SELECT a.int_value AS step_num, count(*) AS events, sum(e.dur_ps) AS total_ps
FROM event_args a JOIN events e USING (trace_id, event_id)
WHERE a.key = 'step_num'
GROUP BY a.int_value
ORDER BY total_ps DESC, step_num
LIMIT 20
