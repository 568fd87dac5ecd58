-- HTA's GPU kernel-type breakdown, per Kineto trace (rank): how long
-- exactly each set of kernel types runs at once, over
-- `kineto_gpu_events` (COMPUTATION, COMMUNICATION and MEMORY; OTHER is
-- left out, as HTA leaves it). `kernel_type` is HTA's label: one type
-- (`COMPUTATION`) or the types running together joined by ` overlapping `
-- in that order (`COMPUTATION overlapping COMMUNICATION`). `time_ps` is
-- the time during which exactly those types run (each type's intervals
-- merged first); `pct` its share of the rank's busy time (HTA rounds it
-- to 1 place, and sums the times over ranks before its percentages).
-- Only sets that run for some time are rows.
--
-- Each set's time comes from the lengths of the unions of every
-- combination of types (inclusion-exclusion over the three types:
-- exactly {C} = |C ∪ M ∪ Y| − |M ∪ Y|, and so on).
--
WITH unions AS (
  SELECT trace_id, rank,
         coalesce(busy_ps(CASE WHEN kernel_type = 'COMPUTATION' THEN ts_ps END,
                          CASE WHEN kernel_type = 'COMPUTATION' THEN end_ps END), 0) AS u1,
         coalesce(busy_ps(CASE WHEN kernel_type = 'COMMUNICATION' THEN ts_ps END,
                          CASE WHEN kernel_type = 'COMMUNICATION' THEN end_ps END), 0) AS u2,
         coalesce(busy_ps(CASE WHEN kernel_type = 'MEMORY' THEN ts_ps END,
                          CASE WHEN kernel_type = 'MEMORY' THEN end_ps END), 0) AS u4,
         coalesce(busy_ps(CASE WHEN kernel_type IN ('COMPUTATION', 'COMMUNICATION') THEN ts_ps END,
                          CASE WHEN kernel_type IN ('COMPUTATION', 'COMMUNICATION') THEN end_ps END),
                  0) AS u3,
         coalesce(busy_ps(CASE WHEN kernel_type IN ('COMPUTATION', 'MEMORY') THEN ts_ps END,
                          CASE WHEN kernel_type IN ('COMPUTATION', 'MEMORY') THEN end_ps END),
                  0) AS u5,
         coalesce(busy_ps(CASE WHEN kernel_type IN ('COMMUNICATION', 'MEMORY') THEN ts_ps END,
                          CASE WHEN kernel_type IN ('COMMUNICATION', 'MEMORY') THEN end_ps END),
                  0) AS u6,
         coalesce(busy_ps(CASE WHEN kernel_type <> 'OTHER' THEN ts_ps END,
                          CASE WHEN kernel_type <> 'OTHER' THEN end_ps END), 0) AS u7
  FROM kineto_gpu_events
  GROUP BY trace_id, rank
),
sets AS (
  SELECT trace_id, rank, u7, 'COMPUTATION' AS kernel_type, u7 - u6 AS time_ps FROM unions
  UNION ALL
  SELECT trace_id, rank, u7, 'COMMUNICATION', u7 - u5 FROM unions
  UNION ALL
  SELECT trace_id, rank, u7, 'MEMORY', u7 - u3 FROM unions
  UNION ALL
  SELECT trace_id, rank, u7, 'COMPUTATION overlapping COMMUNICATION', u5 + u6 - u4 - u7 FROM unions
  UNION ALL
  SELECT trace_id, rank, u7, 'COMPUTATION overlapping MEMORY', u3 + u6 - u2 - u7 FROM unions
  UNION ALL
  SELECT trace_id, rank, u7, 'COMMUNICATION overlapping MEMORY', u3 + u5 - u1 - u7 FROM unions
  UNION ALL
  SELECT trace_id, rank, u7, 'COMPUTATION overlapping COMMUNICATION overlapping MEMORY',
         u1 + u2 + u4 - u3 - u5 - u6 + u7 FROM unions
)
SELECT trace_id, rank, kernel_type, time_ps, 100.0 * time_ps / u7 AS pct
FROM sets
WHERE time_ps > 0
