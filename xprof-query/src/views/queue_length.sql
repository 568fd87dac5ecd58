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
-- @column trace_id: the converted input (`traces.trace_id`), one Kineto trace.
-- @column rank: the trace's `distributedInfo.rank`; NULL when it has none.
-- @column stream: the GPU stream the launched operation runs on.
-- @column ts_ps: when the queue changes, ps from the trace start: a call's start or a GPU
--   event's start.
-- @column event_id: the runtime call (for `change` 1) or the GPU event (for -1).
-- @column change: 1 when a call launches an operation, -1 when that operation starts.
-- @column queue_length: operations launched on the stream and not yet started, from `ts_ps` to
--   the next row's (a count).
--
WITH calls AS (
  SELECT trace_id, event_id, ts_ps, correlation
  FROM _kineto_cpu_events
  WHERE correlation IS NOT NULL
    AND name IN ('cudaLaunchKernel', 'cudaLaunchKernelExC', 'cuLaunchKernel',
                 'cudaMemcpyAsync', 'cudaMemsetAsync',
                 'runFunction - job_prep_and_submit_for_execution',
                 'hipLaunchKernel', 'hipExtModuleLaunchKernel', 'hipMemcpyAsync',
                 'hipMemsetAsync', 'hipMemcpyWithStream')
),
-- Each launch and its GPU event, paired once; each pair is two changes.
pairs AS (
  SELECT c.trace_id, g.rank, g.stream, c.ts_ps AS call_ps, c.event_id AS call_id,
         g.ts_ps AS gpu_ps, g.event_id AS gpu_id
  FROM calls c
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
