-- HTA's kernel launch statistics (`get_cuda_kernel_launch_stats`), per
-- Kineto trace (rank): one row per launch, a runtime call on the CPU
-- (`cudaLaunchKernel`, `cudaLaunchKernelExC`, MTIA's `runFunction -
-- job_prep_and_submit_for_execution`, `cudaMemcpyAsync`,
-- `cudaMemsetAsync`: HTA's list, with memory events) paired by
-- `correlation` with the GPU event of `kineto_gpu_events` it started.
-- `cpu_duration_ps` is the call's duration, `gpu_duration_ps` the GPU
-- event's, `launch_delay_ps` from the end of the call to the GPU start,
-- 0 when the GPU started first (HTA clips it). HTA's classes at its
-- default cutoffs: `short_kernel` (the call took at most 50 µs and the
-- GPU event less than the call), `runtime_outlier` (the call took over
-- 50 µs), `launch_delay_outlier` (the delay is over 100 µs). As HTA, when
-- the trace has two or more `ProfilerStep` names, calls from the start
-- of the last step on are left out. HTA answers for rank 0 unless asked;
-- this view answers for every rank.
--
WITH args AS (
  SELECT trace_id, event_id,
         max(CASE WHEN key = 'stream' THEN int_value END) AS stream,
         max(CASE WHEN key = 'correlation' THEN int_value END) AS correlation
  FROM event_args
  WHERE key IN ('stream', 'correlation')
  GROUP BY trace_id, event_id
),
cpu AS (
  SELECT e.trace_id, e.event_id, e.name, e.ts_ps, e.dur_ps, a.correlation
  FROM events e
  JOIN traces t ON t.trace_id = e.trace_id AND t.source_format = 'chrome_trace'
  JOIN args a ON a.trace_id = e.trace_id AND a.event_id = e.event_id
  WHERE a.correlation IS NOT NULL AND coalesce(a.stream, -1) = -1
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
  FROM cpu c
  LEFT JOIN last_step s ON s.trace_id = c.trace_id
  WHERE coalesce(s.names, 0) < 2 OR c.ts_ps < s.last_step_ps
),
launched AS (
  SELECT DISTINCT trace_id, correlation
  FROM kept
  WHERE name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC',
                 'runFunction - job_prep_and_submit_for_execution',
                 'cudaMemcpyAsync', 'cudaMemsetAsync')
),
pairs AS (
  SELECT c.trace_id, g.rank, c.correlation, c.event_id AS launch_event_id,
         c.name AS launch_name, c.ts_ps AS launch_ps,
         g.event_id, g.name, g.stream, g.ts_ps,
         c.dur_ps AS cpu_duration_ps, g.dur_ps AS gpu_duration_ps,
         greatest(g.ts_ps - c.ts_ps - c.dur_ps, 0) AS launch_delay_ps
  FROM kept c
  JOIN launched l ON l.trace_id = c.trace_id AND l.correlation = c.correlation
  JOIN kineto_gpu_events g ON g.trace_id = c.trace_id AND g.correlation = c.correlation
)
SELECT trace_id, rank, correlation, launch_event_id, launch_name, launch_ps,
       event_id, name, stream, ts_ps, cpu_duration_ps, gpu_duration_ps, launch_delay_ps,
       cpu_duration_ps <= 50000000 AND gpu_duration_ps < cpu_duration_ps AS short_kernel,
       cpu_duration_ps > 50000000 AS runtime_outlier,
       launch_delay_ps > 100000000 AS launch_delay_outlier
FROM pairs
