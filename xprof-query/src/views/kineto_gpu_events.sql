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
chrome AS (
  SELECT trace_id FROM traces WHERE source_format = 'chrome_trace'
),
steps AS (
  SELECT e.trace_id, e.name, e.ts_ps
  FROM events e
  JOIN chrome c ON c.trace_id = e.trace_id
  LEFT JOIN args a ON a.trace_id = e.trace_id AND a.event_id = e.event_id
  WHERE e.name LIKE '%ProfilerStep%' AND coalesce(a.stream, -1) = -1
),
last_step AS (
  SELECT trace_id, count(DISTINCT name) AS names, max(ts_ps) AS last_step_ps
  FROM steps GROUP BY trace_id
),
launches AS (
  SELECT e.trace_id, a.correlation, min(e.ts_ps) AS launch_ps
  FROM events e
  JOIN args a ON a.trace_id = e.trace_id AND a.event_id = e.event_id
  WHERE a.correlation IS NOT NULL AND coalesce(a.stream, -1) = -1
  GROUP BY e.trace_id, a.correlation
),
gpu AS (
  SELECT e.trace_id, e.event_id, e.track_id, e.name, e.ts_ps, e.dur_ps,
         e.ts_ps + e.dur_ps AS end_ps, a.stream, a.correlation, a.category
  FROM events e
  JOIN chrome c ON c.trace_id = e.trace_id
  JOIN args a ON a.trace_id = e.trace_id AND a.event_id = e.event_id
  WHERE a.stream IS NOT NULL AND a.stream <> -1
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
LEFT JOIN last_step s ON s.trace_id = g.trace_id
LEFT JOIN launches l ON l.trace_id = g.trace_id AND l.correlation = g.correlation
WHERE coalesce(s.names, 0) < 2 OR l.launch_ps < s.last_step_ps
