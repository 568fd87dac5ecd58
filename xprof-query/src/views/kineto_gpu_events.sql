-- The GPU events of PyTorch Kineto traces that Holistic Trace Analysis
-- (HTA 0.5.0) analyses, one row each, with the trace's rank and HTA's
-- kernel type. An event is a GPU event when it has a `stream` arg other
-- than -1 (kernels, memcpy, memset, syncs). When the trace holds at least
-- two distinct `ProfilerStep` names, only the events launched (by the CPU
-- event with the same `correlation`) before the start of its last
-- profiler step are kept, as HTA drops the last step (HTA counts the
-- names over all ranks of a folder; here each trace answers alone).
-- `rank` is `distributedInfo.rank`. `kernel_type` is HTA's, by name:
-- `COMMUNICATION` (`nccl…Kernel`), `MEMORY` (`Memcpy…`, `Memset…`,
-- `dma…`), `OTHER` (any other name holding `Memcpy` or `Sync`), else
-- `COMPUTATION`. `category` is the event's `cat`; `launch_ps` the start
-- of the earliest CPU event with the same `correlation` (the runtime call
-- that launched it), NULL when there is none.
-- @column trace_id: the converted input (`traces.trace_id`), one Kineto trace.
-- @column rank: the trace's `distributedInfo.rank`; NULL when it has none.
-- @column stream: the event's `stream` arg (never -1).
-- @column event_id: the event (`events.event_id`).
-- @column track_id: its track (`tracks.track_id`).
-- @column name: the event's name (the kernel, `Memcpy HtoD (Pageable -> Device)`, ...).
-- @column ts_ps: start, ps from the trace start.
-- @column dur_ps: duration, in ps.
-- @column end_ps: `ts_ps + dur_ps`, ps from the trace start.
-- @column correlation: the `correlation` arg pairing it with its launch; NULL when absent.
-- @column category: the event's `cat` arg (`kernel`, `gpu_memcpy`, ...); NULL when absent.
-- @column launch_ps: start of the earliest kept CPU event with the same `correlation` (the
--   runtime call that launched it), ps from the trace start; NULL when there is none.
-- @column kernel_type: HTA's kernel type by name: `COMMUNICATION`, `MEMORY`, `OTHER` or
--   `COMPUTATION`.
--
WITH ranks AS (
  SELECT trace_id, max(int_value) AS rank
  FROM device_args
  WHERE key = 'distributedInfo.rank'
  GROUP BY trace_id
),
-- The CPU events kept by HTA's last-step rule: a GPU event is kept when
-- one of them launched it, or when the trace has fewer than two steps.
launches AS (
  SELECT trace_id, correlation, min(ts_ps) AS launch_ps
  FROM _kineto_cpu_events
  WHERE correlation IS NOT NULL
  GROUP BY trace_id, correlation
),
gpu AS (
  SELECT trace_id, event_id, track_id, name, ts_ps, dur_ps, ts_ps + dur_ps AS end_ps,
         stream, correlation, category
  FROM _kineto_events
  WHERE stream <> -1
)
SELECT g.trace_id, r.rank, g.stream, g.event_id, g.track_id, g.name, g.ts_ps, g.dur_ps, g.end_ps,
       g.correlation, g.category, l.launch_ps,
       CASE
         WHEN g.name ~ '^nccl.*Kernel' THEN 'COMMUNICATION'
         WHEN g.name ~ '^(Memcpy|Memset|dma)' THEN 'MEMORY'
         WHEN g.name LIKE '%Memcpy%' OR g.name LIKE '%Sync%' THEN 'OTHER'
         ELSE 'COMPUTATION'
       END AS kernel_type
FROM gpu g
LEFT JOIN ranks r ON r.trace_id = g.trace_id
LEFT JOIN _kineto_last_step s ON s.trace_id = g.trace_id
LEFT JOIN launches l ON l.trace_id = g.trace_id AND l.correlation = g.correlation
WHERE coalesce(s.names, 0) < 2 OR l.correlation IS NOT NULL
