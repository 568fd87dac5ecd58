-- Per kernel and source line of its LLO instructions: instructions, busy
-- time, units used, kernel executions, bundle range.
--
-- Per kernel (short name) and source line (`source_info` of its
-- instructions): instructions, busy time (union of their intervals, per
-- kernel execution, summed), units used, kernel executions, and the bundle
-- range.
WITH per_execution AS (
  SELECT trace_id, kernel_event_id, kernel, source_file, source_line,
         count(*) AS instructions,
         busy_ps(ts_ps, ts_ps + dur_ps) AS busy_ps,
         min(bundle_number) AS first_bundle, max(bundle_number) AS last_bundle
  FROM llo_instructions
  WHERE source_file IS NOT NULL
  GROUP BY trace_id, kernel_event_id, kernel, source_file, source_line
),
units AS (
  SELECT trace_id, kernel, source_file, source_line,
         count(DISTINCT unit) AS units, array_agg(DISTINCT unit ORDER BY unit) AS unit_names
  FROM llo_instructions
  WHERE source_file IS NOT NULL
  GROUP BY trace_id, kernel, source_file, source_line
),
totals AS (
  SELECT trace_id, kernel, source_file, source_line,
         sum(instructions) AS instructions, sum(busy_ps) AS busy_ps,
         count(*) AS kernel_executions,
         min(first_bundle) AS first_bundle, max(last_bundle) AS last_bundle
  FROM per_execution
  GROUP BY trace_id, kernel, source_file, source_line
)
SELECT t.trace_id, t.kernel, t.source_file, t.source_line, t.instructions, t.busy_ps,
       u.units, u.unit_names, t.kernel_executions, t.first_bundle, t.last_bundle
FROM totals t
JOIN units u ON u.trace_id = t.trace_id AND (u.kernel IS NOT DISTINCT FROM t.kernel)
  AND u.source_file = t.source_file AND (u.source_line IS NOT DISTINCT FROM t.source_line)
