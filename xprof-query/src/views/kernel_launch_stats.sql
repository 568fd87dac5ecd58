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
-- @column trace_id: the converted input (`traces.trace_id`), one Kineto trace.
-- @column rank: the trace's `distributedInfo.rank`; NULL when it has none.
-- @column correlation: the `correlation` arg pairing the call with its GPU event.
-- @column launch_event_id: the runtime call (`events.event_id`).
-- @column launch_name: the call's name (`cudaLaunchKernel`, ...).
-- @column launch_ps: the call's start, ps from the trace start.
-- @column event_id: the GPU event it launched (`events.event_id`).
-- @column name: the GPU event's name.
-- @column stream: the GPU event's stream.
-- @column ts_ps: the GPU event's start, ps from the trace start.
-- @column cpu_duration_ps: the call's duration, in ps.
-- @column gpu_duration_ps: the GPU event's duration, in ps.
-- @column launch_delay_ps: from the end of the call to the GPU start, in ps; 0 when the GPU
--   started first.
-- @column short_kernel: the call took at most 50 µs and the GPU event less than the call.
-- @column runtime_outlier: the call took over 50 µs.
-- @column launch_delay_outlier: the launch delay is over 100 µs.
--
WITH cpu AS (
  SELECT trace_id, event_id, name, ts_ps, dur_ps, correlation
  FROM _kineto_cpu_events
  WHERE correlation IS NOT NULL
),
launched AS (
  SELECT DISTINCT trace_id, correlation
  FROM cpu
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
  FROM cpu c
  JOIN launched l ON l.trace_id = c.trace_id AND l.correlation = c.correlation
  JOIN kineto_gpu_events g ON g.trace_id = c.trace_id AND g.correlation = c.correlation
)
SELECT trace_id, rank, correlation, launch_event_id, launch_name, launch_ps,
       event_id, name, stream, ts_ps, cpu_duration_ps, gpu_duration_ps, launch_delay_ps,
       cpu_duration_ps <= 50000000 AND gpu_duration_ps < cpu_duration_ps AS short_kernel,
       cpu_duration_ps > 50000000 AS runtime_outlier,
       launch_delay_ps > 100000000 AS launch_delay_outlier
FROM pairs
