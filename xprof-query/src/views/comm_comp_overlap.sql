-- HTA's communication-computation overlap, per Kineto trace (rank): of
-- the time some COMMUNICATION kernel runs (the union of their intervals,
-- `comm_ps`), the share during which a COMPUTATION kernel runs too
-- (`overlap_pct`; NULL without communication, where HTA gives NaN; HTA
-- rounds it to 2 places). Over `kineto_gpu_events`.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column rank: the trace's rank (`distributedInfo.rank`); NULL when the trace has none.
-- @column comm_ps: time some COMMUNICATION kernel runs (the union of their intervals), in ps;
--   NULL when there is none.
-- @column compute_ps: time some COMPUTATION kernel runs (the union of their intervals), in ps;
--   NULL when there is none.
-- @column overlap_ps: time a COMMUNICATION and a COMPUTATION kernel run together, in ps
--   (`compute_ps + comm_ps` less the union of both; 0 when either is missing).
-- @column overlap_pct: `overlap_ps` over `comm_ps`, in percent (0 to 100), not rounded; NULL
--   without communication.
--
WITH unions AS (
  SELECT trace_id, rank,
         busy_ps(CASE WHEN kernel_type = 'COMPUTATION' THEN ts_ps END,
                 CASE WHEN kernel_type = 'COMPUTATION' THEN end_ps END) AS compute_ps,
         busy_ps(CASE WHEN kernel_type = 'COMMUNICATION' THEN ts_ps END,
                 CASE WHEN kernel_type = 'COMMUNICATION' THEN end_ps END) AS comm_ps,
         busy_ps(CASE WHEN kernel_type IN ('COMPUTATION', 'COMMUNICATION') THEN ts_ps END,
                 CASE WHEN kernel_type IN ('COMPUTATION', 'COMMUNICATION') THEN end_ps END)
           AS either_ps
  FROM kineto_gpu_events
  GROUP BY trace_id, rank
)
SELECT trace_id, rank, comm_ps, compute_ps,
       coalesce(compute_ps, 0) + coalesce(comm_ps, 0) - coalesce(either_ps, 0) AS overlap_ps,
       100.0 * (coalesce(compute_ps, 0) + coalesce(comm_ps, 0) - coalesce(either_ps, 0))
         / nullif(comm_ps, 0) AS overlap_pct
FROM unions
