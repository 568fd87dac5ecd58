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
-- Each launch and its GPU event, paired once; each pair is two changes.
pairs AS (
  SELECT c.trace_id, g.rank, g.stream, c.ts_ps AS call_ps, c.event_id AS call_id,
         g.ts_ps AS gpu_ps, g.event_id AS gpu_id
  FROM kept c
  JOIN kineto_gpu_events g ON g.trace_id = c.trace_id AND g.correlation = c.correlation
),
changes AS (
  SELECT p.trace_id, p.rank, p.stream,
         CASE WHEN d.change = 1 THEN p.call_ps ELSE p.gpu_ps END AS ts_ps,
         CASE WHEN d.change = 1 THEN p.call_id ELSE p.gpu_id END AS event_id,
         d.change
  FROM pairs p
  CROSS JOIN (VALUES (1), (-1)) AS d(change)
)
SELECT trace_id, rank, stream, ts_ps, event_id, change,
       sum(change) OVER (PARTITION BY trace_id, stream ORDER BY ts_ps, change DESC, event_id
                         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS queue_length
FROM changes
