-- HTA's launch queue length (`get_queue_length_time_series`), per Kineto
-- trace (rank) and GPU stream: the number of operations launched on the
-- stream and not yet started, over time. Each runtime launch call
-- (HTA's list: `cudaLaunchKernel`, `cudaLaunchKernelExC`,
-- `cuLaunchKernel`, `cudaMemcpyAsync`, `cudaMemsetAsync`, MTIA's
-- `runFunction - job_prep_and_submit_for_execution`, ROCm's
-- `hipLaunchKernel`, `hipExtModuleLaunchKernel`, `hipMemcpyAsync`,
-- `hipMemsetAsync`, `hipMemcpyWithStream`) whose GPU event is in
-- `kineto_gpu_events` adds one at the call's start (`change` 1, on the
-- GPU event's stream); that GPU event's start takes one away (`change`
-- -1). `queue_length` is the running sum in time order (a call before a
-- GPU start at the same time), a step function: it holds from `ts_ps` to
-- the next row's. `event_id` is the call's or the GPU event's. As HTA,
-- when the trace has two or more `ProfilerStep` names, calls from the
-- start of the last step on are left out. HTA answers for rank 0 unless
-- asked; this view answers for every rank.
--
WITH args AS (
  SELECT trace_id, event_id,
         max(CASE WHEN key = 'stream' THEN int_value END) AS stream,
         max(CASE WHEN key = 'correlation' THEN int_value END) AS correlation
  FROM event_args
  WHERE key IN ('stream', 'correlation')
  GROUP BY trace_id, event_id
),
calls AS (
  SELECT e.trace_id, e.event_id, e.ts_ps, a.correlation
  FROM events e
  JOIN traces t ON t.trace_id = e.trace_id AND t.source_format = 'chrome_trace'
  JOIN args a ON a.trace_id = e.trace_id AND a.event_id = e.event_id
  WHERE a.correlation IS NOT NULL AND coalesce(a.stream, -1) = -1
    AND e.name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC', 'cuLaunchKernel',
                   'cudaMemcpyAsync', 'cudaMemsetAsync',
                   'runFunction - job_prep_and_submit_for_execution',
                   'hipLaunchKernel', 'hipExtModuleLaunchKernel', 'hipMemcpyAsync',
                   'hipMemsetAsync', 'hipMemcpyWithStream')
),
steps AS (
  SELECT e.trace_id, e.name, e.ts_ps
  FROM events e
  JOIN traces t ON t.trace_id = e.trace_id AND t.source_format = 'chrome_trace'
  LEFT JOIN args a ON a.trace_id = e.trace_id AND a.event_id = e.event_id
  WHERE e.name LIKE '%ProfilerStep%' AND coalesce(a.stream, -1) = -1
),
last_step AS (
  SELECT trace_id, count(DISTINCT name) AS names, max(ts_ps) AS last_step_ps
  FROM steps
  GROUP BY trace_id
),
kept AS (
  SELECT c.*
  FROM calls c
  LEFT JOIN last_step s ON s.trace_id = c.trace_id
  WHERE coalesce(s.names, 0) < 2 OR c.ts_ps < s.last_step_ps
),
changes AS (
  SELECT c.trace_id, g.rank, g.stream, c.ts_ps, c.event_id, 1 AS change
  FROM kept c
  JOIN kineto_gpu_events g ON g.trace_id = c.trace_id AND g.correlation = c.correlation
  UNION ALL
  SELECT g.trace_id, g.rank, g.stream, g.ts_ps, g.event_id, -1 AS change
  FROM kineto_gpu_events g
  WHERE EXISTS (SELECT 1 FROM kept c WHERE c.trace_id = g.trace_id AND c.correlation = g.correlation)
)
SELECT trace_id, rank, stream, ts_ps, event_id, change,
       sum(change) OVER (PARTITION BY trace_id, stream ORDER BY ts_ps, change DESC, event_id
                         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS queue_length
FROM changes
