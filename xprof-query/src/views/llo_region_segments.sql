-- Static, per LLO program, region that fired and unit: the slots the
-- compiler scheduled over the region's own segment (the bundles from its
-- marker to the next marker, what each measured entry executes), beside
-- the same over its nested range (children included).
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column device_id: the plane holding the program (`/host:metadata`); joins `devices`.
-- @column metadata_id: the event metadata whose `llo_proto` stat holds the program; joins
--   `llo_programs`.
-- @column hlo_op: the program's HLO op (`llo_programs.hlo_op`).
-- @column region_id: the LLO region (`llo_regions.region_id`), one whose marker fired in the
--   capture.
-- @column name: the region's node name in XProf's region tree (`body`, `header_branch`,
--   `sub_region`, ...).
-- @column kind: the region's node kind (`llo_regions.kind`).
-- @column segment_start_bundle: the region's first bundle, where its segment starts.
-- @column segment_limit_bundle: the bundle past the segment's end: the first bundle of the next
--   fired region in bundle order, else the program's end (the larger of `llo_programs.bundles` and
--   the region's limit).
-- @column segment_bundles: bundles in the segment, `segment_limit_bundle - segment_start_bundle` (a
--   count; 0 for an empty segment).
-- @column nested_start_bundle: the first bundle of the region's nested range (the same as
--   `segment_start_bundle`).
-- @column nested_limit_bundle: the bundle past the nested range's end (`llo_regions.limit_bundle`);
--   NULL when not placed.
-- @column nested_bundles: bundles in the nested range, nested regions' included (a count); NULL
--   when `nested_limit_bundle` is.
-- @column unit: the functional unit (`MXU`, `XLU`, `VALU`, `EUP`, `VLD`, `VST`, `SALU`, `SPILL`,
--   `FILL`): every unit of the program's `llo_bundle_units`.
-- @column capacity: slots of the unit per bundle; NULL for spills and fills.
-- @column self_used: slots of the unit used over the segment's bundles, summed (a count; static).
-- @column self_occupancy_pct: `100 * self_used / (capacity * segment_bundles)`, in percent (0 to
--   100); NULL when the capacity is NULL or 0 or the segment is empty.
-- @column nested_used: slots of the unit used over the nested range, nested regions included
--   (`llo_region_utilization.used`, a count); NULL when the range holds no bundle.
-- @column nested_occupancy_pct: `100 * nested_used / (capacity * nested_bundles)`, in percent (0 to
--   100): `llo_region_utilization.occupancy_pct`, the value `_counters_` lays on the timeline; NULL
--   when that is.
-- @column instructions: the program's instructions scheduled in the segment
--   (`llo_program_instructions`, a count).
-- @column instructions_with_source: those of them that carry a source line (a count).
--
-- A region-entry marker's `dur_ps` (`llo_region_entries`) is the time from
-- the marker to the next one: the region's own stretch, before its first
-- marked child region, or before the next marked region starts. Its
-- static numbers are those of the same bundles, its *segment*: from the
-- region's first bundle to the first bundle of the next region, in bundle
-- order, whose marker fired in the capture (`llo_region_entries` of the
-- same `hlo_op` and module); the last region in bundle order runs to the
-- program's end (`llo_programs.bundles`). Regions starting at the same
-- bundle keep program order, the earlier one holding an empty segment
-- (`segment_bundles` 0, occupancy NULL). The region's first bundle stands
-- for its marker's place (the compiler's `Start region N`); the marker
-- instruction itself may sit a few bundles later.
--
-- `self_used` / `self_occupancy_pct` count the segment's bundles:
-- 100 * used / (capacity * segment_bundles). `nested_used` /
-- `nested_occupancy_pct` count the region's whole range
-- `[nested_start_bundle, nested_limit_bundle)`, nested regions included:
-- the `occupancy_pct` of `llo_region_utilization` and the value
-- `_counters_` lays on the timeline. Pair measured time with the `self_`
-- numbers: the nested range holds the children's bundles, whose time the
-- children's own entries measure. Nothing here was measured.
--
-- `instructions` are the program's instructions scheduled in the segment
-- (`llo_program_instructions`), `instructions_with_source` those of them
-- carrying a source line.
WITH programs AS (
  SELECT trace_id, device_id, metadata_id, hlo_op, hlo_module, bundles
  FROM llo_programs WHERE decode_status = 'ok'
),
fired AS (
  SELECT DISTINCT trace_id, hlo_op, hlo_module, region_id
  FROM llo_region_entries WHERE kernel_event_id IS NOT NULL
),
marked AS (
  SELECT r.trace_id, r.device_id, r.metadata_id, r.hlo_op, r.node, r.region_id, r.name, r.kind,
         r.start_bundle, r.limit_bundle, p.bundles
  FROM llo_regions r
  JOIN programs p ON p.trace_id = r.trace_id AND p.metadata_id = r.metadata_id
  JOIN fired f ON f.trace_id = r.trace_id AND f.hlo_op = r.hlo_op
    AND (f.hlo_module IS NOT DISTINCT FROM p.hlo_module) AND f.region_id = r.region_id
  WHERE r.region_id IS NOT NULL AND r.start_bundle IS NOT NULL
),
segments AS (
  SELECT m.*,
         coalesce(lead(m.start_bundle) OVER (PARTITION BY m.trace_id, m.metadata_id
                                             ORDER BY m.start_bundle, m.node),
                  greatest(m.bundles, m.limit_bundle)) AS segment_limit_bundle
  FROM marked m
),
self_units AS (
  SELECT s.trace_id, s.metadata_id, s.region_id, u.unit,
         sum(u.used) AS used, max(u.capacity) AS capacity
  FROM segments s
  JOIN llo_bundle_units u ON u.trace_id = s.trace_id AND u.device_id = s.device_id
    AND u.metadata_id = s.metadata_id
  WHERE u.bundle >= s.start_bundle AND u.bundle < s.segment_limit_bundle
  GROUP BY s.trace_id, s.metadata_id, s.region_id, u.unit
),
units AS (
  SELECT DISTINCT trace_id, metadata_id, unit, capacity FROM llo_bundle_units
),
nested AS (
  SELECT trace_id, metadata_id, region_id, unit, used, bundles, occupancy_pct
  FROM llo_region_utilization
),
instructions AS (
  SELECT s.trace_id, s.metadata_id, s.region_id, count(*) AS instructions,
         count(i.source_file) AS instructions_with_source
  FROM segments s
  JOIN llo_program_instructions i ON i.trace_id = s.trace_id AND i.device_id = s.device_id
    AND i.metadata_id = s.metadata_id
  WHERE i.bundle >= s.start_bundle AND i.bundle < s.segment_limit_bundle
  GROUP BY s.trace_id, s.metadata_id, s.region_id
)
SELECT s.trace_id, s.device_id, s.metadata_id, s.hlo_op, s.region_id, s.name, s.kind,
       s.start_bundle AS segment_start_bundle, s.segment_limit_bundle,
       s.segment_limit_bundle - s.start_bundle AS segment_bundles,
       s.start_bundle AS nested_start_bundle, s.limit_bundle AS nested_limit_bundle,
       s.limit_bundle - s.start_bundle AS nested_bundles,
       u.unit, u.capacity,
       coalesce(su.used, 0) AS self_used,
       CASE WHEN u.capacity > 0 AND s.segment_limit_bundle > s.start_bundle
            THEN 100.0 * coalesce(su.used, 0) / (u.capacity * (s.segment_limit_bundle - s.start_bundle))
       END AS self_occupancy_pct,
       n.used AS nested_used, n.occupancy_pct AS nested_occupancy_pct,
       coalesce(i.instructions, 0) AS instructions,
       coalesce(i.instructions_with_source, 0) AS instructions_with_source
FROM segments s
JOIN units u ON u.trace_id = s.trace_id AND u.metadata_id = s.metadata_id
LEFT JOIN self_units su ON su.trace_id = s.trace_id AND su.metadata_id = s.metadata_id
  AND su.region_id = s.region_id AND su.unit = u.unit
LEFT JOIN nested n ON n.trace_id = s.trace_id AND n.metadata_id = s.metadata_id
  AND n.region_id = s.region_id AND n.unit = u.unit
LEFT JOIN instructions i ON i.trace_id = s.trace_id AND i.metadata_id = s.metadata_id
  AND i.region_id = s.region_id
