-- GPU time per profiler step: kernels placed in the `ProfilerStep#N` range (an interval join).
WITH steps AS (
  SELECT trace_id, name, ts_ps, ts_ps + dur_ps AS end_ps FROM events WHERE name LIKE 'ProfilerStep#%'),
kernels AS (
  SELECT e.trace_id, e.ts_ps, e.dur_ps FROM events e
  JOIN event_args a ON a.trace_id = e.trace_id AND a.event_id = e.event_id
  WHERE a.key = 'cat' AND a.str_value = 'kernel')
SELECT s.name, count(*) AS kernels, sum(k.dur_ps) AS gpu_ps
FROM steps s JOIN kernels k ON k.trace_id = s.trace_id AND k.ts_ps >= s.ts_ps AND k.ts_ps < s.end_ps
GROUP BY s.name ORDER BY s.name
