-- Per kernel execution and bundle number: units issued, instructions, first
-- and last time; each gap in the bundle sequence (a scheduling bubble) as a
-- row of its own with its length in bundles and ps.
--
-- Per kernel execution and bundle number: units that issued in the bundle,
-- instructions, and when it started and ended (`row_kind = 'bundle'`); and
-- for each gap in the bundle sequence (bundle numbers skipped between two
-- bundles that issued: a scheduling bubble) a row of its own
-- (`row_kind = 'bubble'`) whose `bundle_number` is the first bundle
-- missing, with `gap_bundles` (how many) and `gap_ps` (from the end of the
-- bundle before to the start of the one after; 0 or less when the two
-- overlap in time).
WITH bundles AS (
  SELECT trace_id, device_id, kernel_event_id, kernel, bundle_number,
         count(DISTINCT unit) AS units, count(*) AS instructions,
         min(ts_ps) AS first_ps, max(ts_ps + dur_ps) AS end_ps
  FROM llo_instructions
  WHERE kernel_event_id IS NOT NULL AND bundle_number IS NOT NULL
  GROUP BY trace_id, device_id, kernel_event_id, kernel, bundle_number
),
ordered AS (
  SELECT b.*,
         lead(bundle_number) OVER w AS next_bundle,
         lead(first_ps) OVER w AS next_first_ps
  FROM bundles b
  WINDOW w AS (PARTITION BY trace_id, kernel_event_id ORDER BY bundle_number)
)
SELECT trace_id, device_id, kernel_event_id, kernel, 'bundle' AS row_kind, bundle_number,
       units, instructions, first_ps, end_ps,
       CAST(NULL AS BIGINT) AS gap_bundles, CAST(NULL AS BIGINT) AS gap_ps
FROM ordered
UNION ALL
SELECT trace_id, device_id, kernel_event_id, kernel, 'bubble', bundle_number + 1,
       0, 0, end_ps, next_first_ps,
       next_bundle - bundle_number - 1, next_first_ps - end_ps
FROM ordered
WHERE next_bundle > bundle_number + 1
