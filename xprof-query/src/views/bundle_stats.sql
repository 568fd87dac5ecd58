-- Per kernel execution and bundle number: units issued, instructions, first
-- and last time; each gap in the bundle sequence (a scheduling bubble) as a
-- row of its own with its length in bundles and ps.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column device_id: the TPU device (plane) of the kernel execution; joins `devices`.
-- @column kernel_event_id: the `XLA Ops`/`PALLAS` event of the kernel execution.
-- @column kernel: the kernel's short name (the display name of that event).
-- @column row_kind: `bundle` for a bundle that issued instructions, `bubble` for a gap in the
--   bundle sequence.
-- @column bundle_number: the bundle number of the instructions; on a `bubble` row, the first bundle
--   missing.
-- @column units: distinct units that issued an instruction in the bundle (a count); 0 on `bubble`
--   rows.
-- @column instructions: instructions issued in the bundle (a count); 0 on `bubble` rows.
-- @column first_ps: start of the bundle's first instruction, in ps from the trace start; on a
--   `bubble` row, the end of the bundle before the gap.
-- @column end_ps: latest end of the bundle's instructions, in ps from the trace start; on a
--   `bubble` row, the start of the bundle after the gap.
-- @column gap_bundles: on a `bubble` row, the bundles missing (a count); NULL on `bundle` rows.
-- @column gap_ps: on a `bubble` row, the time from the end of the bundle before to the start of the
--   one after, in ps (0 or less when they overlap); NULL on `bundle` rows.
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
