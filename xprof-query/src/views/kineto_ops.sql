-- Every event of the PyTorch (Kineto) traces on a thread or stream lane
-- (CPU ops, runtime calls, annotations, GPU kernels, memcpy, memset:
-- what HTA's `TraceDiff` counts), with its `rank`, `category` (`cat`),
-- `stream` (-1 on the CPU) and HTA's `iteration`: for a CPU event, the
-- number N of the `ProfilerStep#N` whose span holds its start; for a GPU
-- event, the iteration of the CPU event of its `correlation` (its launch);
-- NULL when there is none. `first_iteration` is the smallest N of the
-- trace's step names, the iteration HTA's `compare_traces` compares by
-- default (`diff_kineto_ops`). As HTA, when the trace has two or more
-- step names, the CPU events from the start of the last step on, and the
-- GPU events they launched, are left out.
--
WITH args AS (
  SELECT trace_id, event_id,
         max(CASE WHEN key = 'stream' THEN int_value END) AS stream,
         max(CASE WHEN key = 'correlation' THEN int_value END) AS correlation,
         max(CASE WHEN key = 'cat' THEN str_value END) AS category
  FROM event_args
  WHERE key IN ('stream', 'correlation', 'cat')
  GROUP BY trace_id, event_id
),
ranks AS (
  SELECT trace_id, max(int_value) AS rank
  FROM device_args
  WHERE key = 'distributedInfo.rank'
  GROUP BY trace_id
),
ev AS (
  SELECT e.trace_id, e.event_id, e.name, e.ts_ps, e.dur_ps,
         coalesce(a.stream, -1) AS stream, a.correlation, a.category
  FROM events e
  JOIN traces t ON t.trace_id = e.trace_id AND t.source_format = 'chrome_trace'
  JOIN tracks k ON k.trace_id = e.trace_id AND k.track_id = e.track_id
  LEFT JOIN args a ON a.trace_id = e.trace_id AND a.event_id = e.event_id
  WHERE k.kind IN ('thread', 'stream', 'gpu_annotations', 'gpu_syncs')
),
steps AS (
  SELECT trace_id, name, ts_ps, dur_ps,
         TRY_CAST(regexp_match(name, 'ProfilerStep\s*#\s*(\d+)')[1] AS BIGINT) AS iteration
  FROM ev
  WHERE name LIKE '%ProfilerStep%' AND stream = -1
),
last_step AS (
  SELECT trace_id, count(DISTINCT name) AS names, max(ts_ps) AS last_step_ps,
         min(iteration) AS first_iteration
  FROM steps
  GROUP BY trace_id
),
cpu AS (
  SELECT v.*, s.first_iteration
  FROM ev v
  LEFT JOIN last_step s ON s.trace_id = v.trace_id
  WHERE v.stream = -1 AND (coalesce(s.names, 0) < 2 OR v.ts_ps < s.last_step_ps)
),
cpu_iteration AS (
  SELECT c.trace_id, c.event_id, max(p.iteration) AS iteration
  FROM cpu c
  JOIN steps p ON p.trace_id = c.trace_id AND p.ts_ps <= c.ts_ps AND c.ts_ps < p.ts_ps + p.dur_ps
  GROUP BY c.trace_id, c.event_id
),
cpu_ops AS (
  SELECT c.trace_id, c.event_id, c.name, c.category, c.stream, c.correlation, c.ts_ps, c.dur_ps,
         i.iteration, c.first_iteration
  FROM cpu c
  LEFT JOIN cpu_iteration i ON i.trace_id = c.trace_id AND i.event_id = c.event_id
),
launch_iteration AS (
  SELECT trace_id, correlation, max(iteration) AS iteration
  FROM cpu_ops
  WHERE correlation IS NOT NULL
  GROUP BY trace_id, correlation
),
gpu_ops AS (
  SELECT g.trace_id, g.event_id, g.name, g.category, g.stream, g.correlation, g.ts_ps, g.dur_ps,
         l.iteration, s.first_iteration
  FROM ev g
  LEFT JOIN launch_iteration l ON l.trace_id = g.trace_id AND l.correlation = g.correlation
  LEFT JOIN last_step s ON s.trace_id = g.trace_id
  WHERE g.stream <> -1 AND (coalesce(s.names, 0) < 2 OR l.correlation IS NOT NULL)
)
SELECT o.trace_id, r.rank, o.event_id, o.name, o.category, o.stream, o.correlation,
       o.ts_ps, o.dur_ps, o.iteration, o.first_iteration
FROM (SELECT * FROM cpu_ops UNION ALL SELECT * FROM gpu_ops) o
LEFT JOIN ranks r ON r.trace_id = o.trace_id
