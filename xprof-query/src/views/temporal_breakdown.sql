-- HTA's temporal breakdown, per Kineto trace (rank): over its GPU events
-- (`kineto_gpu_events`), the span from the first start to the last end
-- (`kernel_ps`), the time no GPU event runs in it (`idle_ps`), the time
-- some COMPUTATION kernel runs (`compute_ps`, the union of their
-- intervals) and the rest of the busy time (`non_compute_ps`), each also
-- as a percent of the span (HTA rounds these to 2 places).
-- @column trace_id: the converted input (`traces.trace_id`): one Kineto trace.
-- @column rank: the trace's rank (`distributedInfo.rank`); NULL when the trace records none.
-- @column idle_ps: time in the span during which no GPU event runs, in ps.
-- @column compute_ps: time during which some COMPUTATION kernel runs (the union of their
--   intervals), in ps.
-- @column non_compute_ps: busy time (some GPU event runs) during which no COMPUTATION kernel runs,
--   in ps.
-- @column kernel_ps: the span from the first GPU event's start to the last one's end, in ps.
-- @column idle_pct: `idle_ps` over `kernel_ps`, in percent (0 to 100, not rounded); NULL when the
--   span is 0.
-- @column compute_pct: `compute_ps` over `kernel_ps`, in percent (0 to 100, not rounded); NULL when
--   the span is 0.
-- @column non_compute_pct: `non_compute_ps` over `kernel_ps`, in percent (0 to 100, not rounded);
--   NULL when the span is 0.
--
WITH span AS (
  SELECT trace_id, rank, min(ts_ps) AS first_ps, max(end_ps) AS last_ps,
         busy_ps(ts_ps, end_ps) AS run_ps
  FROM kineto_gpu_events
  GROUP BY trace_id, rank
),
compute AS (
  SELECT trace_id, busy_ps(ts_ps, end_ps) AS compute_ps
  FROM kineto_gpu_events
  WHERE kernel_type = 'COMPUTATION'
  GROUP BY trace_id
),
parts AS (
  SELECT s.trace_id, s.rank, s.last_ps - s.first_ps AS kernel_ps,
         s.last_ps - s.first_ps - s.run_ps AS idle_ps,
         coalesce(c.compute_ps, 0) AS compute_ps,
         s.run_ps - coalesce(c.compute_ps, 0) AS non_compute_ps
  FROM span s
  LEFT JOIN compute c ON c.trace_id = s.trace_id
)
SELECT trace_id, rank, idle_ps, compute_ps, non_compute_ps, kernel_ps,
       100.0 * idle_ps / nullif(kernel_ps, 0) AS idle_pct,
       100.0 * compute_ps / nullif(kernel_ps, 0) AS compute_pct,
       100.0 * non_compute_ps / nullif(kernel_ps, 0) AS non_compute_pct
FROM parts
