-- Target 4b: busy time of each step on each device (ops inside the step's interval).
SELECT t.device_id, e.step_event_id, count(*) AS ops, sum(e.dur_ps) AS busy_ps,
       max(e.ts_ps + e.dur_ps) - min(e.ts_ps) AS span_ps
FROM events e JOIN tracks t USING (trace_id, track_id)
WHERE t.kind = 'xla_ops' AND e.step_event_id IS NOT NULL
GROUP BY t.device_id, e.step_event_id
ORDER BY busy_ps DESC, t.device_id, e.step_event_id
LIMIT 100
