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
-- @column trace_id: the converted input (`traces.trace_id`), one Kineto trace.
-- @column rank: the trace's `distributedInfo.rank`; NULL when it has none.
-- @column event_id: the event (`events.event_id`).
-- @column name: the event's name.
-- @column category: the event's `cat` arg (`cpu_op`, `cuda_runtime`, `kernel`, ...); NULL when
--   absent.
-- @column stream: the GPU stream of a GPU event; -1 on the CPU.
-- @column correlation: the `correlation` arg pairing a runtime call with the GPU event it
--   launched; NULL when absent.
-- @column ts_ps: start, ps from the trace start.
-- @column dur_ps: duration, in ps.
-- @column iteration: HTA's iteration: N of the `ProfilerStep#N` holding a CPU event's start, or
--   of the CPU event that launched a GPU event; NULL when there is none.
-- @column first_iteration: the smallest N of the trace's `ProfilerStep#N` names (what
--   `diff_kineto_ops` compares by default); NULL when it has none.
--
WITH ranks AS (
  SELECT trace_id, max(int_value) AS rank
  FROM device_args
  WHERE key = 'distributedInfo.rank'
  GROUP BY trace_id
),
lanes AS (
  SELECT trace_id, track_id
  FROM tracks
  WHERE kind IN ('thread', 'stream', 'gpu_annotations', 'gpu_syncs')
),
cpu AS (
  SELECT c.*
  FROM _kineto_cpu_events c
  JOIN lanes k ON k.trace_id = c.trace_id AND k.track_id = c.track_id
),
cpu_iteration AS (
  SELECT c.trace_id, c.event_id, max(p.iteration) AS iteration
  FROM cpu c
  JOIN _kineto_steps p
    ON p.trace_id = c.trace_id AND p.ts_ps <= c.ts_ps AND c.ts_ps < p.ts_ps + p.dur_ps
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
  FROM _kineto_events g
  JOIN lanes k ON k.trace_id = g.trace_id AND k.track_id = g.track_id
  LEFT JOIN launch_iteration l ON l.trace_id = g.trace_id AND l.correlation = g.correlation
  LEFT JOIN _kineto_last_step s ON s.trace_id = g.trace_id
  WHERE g.stream <> -1 AND (coalesce(s.names, 0) < 2 OR l.correlation IS NOT NULL)
)
SELECT o.trace_id, r.rank, o.event_id, o.name, o.category, o.stream, o.correlation,
       o.ts_ps, o.dur_ps, o.iteration, o.first_iteration
FROM (SELECT * FROM cpu_ops UNION ALL SELECT * FROM gpu_ops) o
LEFT JOIN ranks r ON r.trace_id = o.trace_id
