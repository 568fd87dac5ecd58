-- HTA's launch delay: each runtime call paired with its GPU event by `correlation`, per kernel name.
WITH corr AS (
  SELECT trace_id, event_id, int_value AS correlation FROM event_args WHERE key = 'correlation'),
gpu AS (
  SELECT trace_id, event_id FROM event_args WHERE key = 'stream' AND int_value <> -1)
SELECT k.name, count(*) AS launches, avg(k.ts_ps - (c.ts_ps + c.dur_ps)) AS avg_delay_ps
FROM corr kc JOIN gpu g ON g.trace_id = kc.trace_id AND g.event_id = kc.event_id
JOIN events k ON k.trace_id = kc.trace_id AND k.event_id = kc.event_id
JOIN corr cc ON cc.trace_id = kc.trace_id AND cc.correlation = kc.correlation AND cc.event_id <> kc.event_id
JOIN events c ON c.trace_id = cc.trace_id AND c.event_id = cc.event_id AND c.name = 'cudaLaunchKernel'
GROUP BY k.name ORDER BY avg_delay_ps DESC, k.name LIMIT 20
