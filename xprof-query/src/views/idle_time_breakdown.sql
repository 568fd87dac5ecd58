-- HTA's idle-time breakdown, per Kineto trace (rank) and GPU stream:
-- over the kernels, memcpys and memsets of `kineto_gpu_events` (by
-- `cat`: kernel, gpu_memcpy, gpu_memset, their older names, and
-- mtia_ccp_events), each one's gap after the one before it on its stream
-- (in start order; the gap is negative when they overlap), classed as
-- HTA classes it: `host_wait` when the runtime call that launched it
-- began after the one before it ended (the GPU waited for the host),
-- else `kernel_wait` when the gap is under 30 µs, else `other`. The
-- first of a stream has no gap and counts as `other` with nothing.
-- `idle_ps` is the sum of the class's gaps, `gaps` how many, and
-- `idle_ratio` its share of the stream's idle time (HTA rounds both to 2
-- places; NULL where the stream has none). HTA answers for rank 0
-- unless asked; this view answers for every rank.
-- @column trace_id: The converted input (`traces.trace_id`).
-- @column rank: The trace's rank (`distributedInfo.rank`); NULL when the trace has none.
-- @column stream: The GPU stream (the events' `stream` arg).
-- @column idle_category: HTA's class of the gaps: `host_wait` (the launch began after the previous
--   event ended), `kernel_wait` (a gap under 30 µs), or `other`.
-- @column idle_ps: Sum of the class's gaps on the stream, in ps (a gap is negative when events
--   overlap); 0 when it has none.
-- @column gaps: Gaps in the class, a count (the stream's first event has no gap and is not
--   counted).
-- @column idle_ratio: `idle_ps` over the stream's idle time in all classes: a ratio, from 0 to 1
--   when no gap is negative, not rounded; NULL when the stream's idle time is 0.
--
WITH work AS (
  SELECT trace_id, rank, stream, event_id, ts_ps, end_ps, launch_ps
  FROM kineto_gpu_events
  WHERE category IN ('kernel', 'Kernel', 'gpu_memset', 'Memset', 'gpu_memcpy', 'Memcpy',
                     'mtia_ccp_events')
),
gaps AS (
  SELECT trace_id, rank, stream, ts_ps, launch_ps,
         lag(end_ps) OVER (PARTITION BY trace_id, stream ORDER BY ts_ps, event_id) AS prev_end_ps
  FROM work
),
classed AS (
  SELECT trace_id, rank, stream, ts_ps - prev_end_ps AS gap_ps,
         CASE WHEN launch_ps > prev_end_ps THEN 'host_wait'
              WHEN ts_ps - prev_end_ps < 30000000 THEN 'kernel_wait'
              ELSE 'other' END AS idle_category
  FROM gaps
),
sums AS (
  SELECT trace_id, rank, stream, idle_category,
         coalesce(sum(gap_ps), 0) AS idle_ps, count(gap_ps) AS gaps
  FROM classed
  GROUP BY trace_id, rank, stream, idle_category
)
SELECT trace_id, rank, stream, idle_category, idle_ps, gaps,
       CAST(idle_ps AS DOUBLE)
         / nullif(sum(idle_ps) OVER (PARTITION BY trace_id, stream), 0) AS idle_ratio
FROM sums
