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
-- @column trace_id: The converted input (`traces.trace_id`).
-- @column rank: The trace's rank (`distributedInfo.rank`); NULL when the trace has none.
-- @column kernel_type: HTA's label of the set of kernel types running at once: one type
--   (`COMPUTATION`, `COMMUNICATION`, `MEMORY`) or those running together joined by ` overlapping `.
-- @column time_ps: Time during which exactly those types ran, each type's intervals merged first,
--   in ps (above 0).
-- @column pct: `time_ps` over the rank's busy time (the union of its COMPUTATION, COMMUNICATION and
--   MEMORY events), in percent (0 to 100), not rounded.
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
-- The seven sets are a cross join with their labels, so `unions` (and
-- `kineto_gpu_events` under it) is computed once, not once per set.
sets AS (
  SELECT u.trace_id, u.rank, u.u7, l.kernel_type,
         CASE l.set_id
           WHEN 1 THEN u.u7 - u.u6
           WHEN 2 THEN u.u7 - u.u5
           WHEN 3 THEN u.u7 - u.u3
           WHEN 4 THEN u.u5 + u.u6 - u.u4 - u.u7
           WHEN 5 THEN u.u3 + u.u6 - u.u2 - u.u7
           WHEN 6 THEN u.u3 + u.u5 - u.u1 - u.u7
           ELSE u.u1 + u.u2 + u.u4 - u.u3 - u.u5 - u.u6 + u.u7
         END AS time_ps
  FROM unions u
  CROSS JOIN (VALUES
    (1, 'COMPUTATION'),
    (2, 'COMMUNICATION'),
    (3, 'MEMORY'),
    (4, 'COMPUTATION overlapping COMMUNICATION'),
    (5, 'COMPUTATION overlapping MEMORY'),
    (6, 'COMMUNICATION overlapping MEMORY'),
    (7, 'COMPUTATION overlapping COMMUNICATION overlapping MEMORY')
  ) AS l(set_id, kernel_type)
)
SELECT trace_id, rank, kernel_type, time_ps, 100.0 * time_ps / u7 AS pct
FROM sets
WHERE time_ps > 0
