-- Static: per LLO program, region and unit, the slots the compiler
-- scheduled over the region's bundles and the occupancy percent (the value
-- a kernel-profiling capture's `_counters_` line carries for the region,
-- shown beside it).
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column device_id: the device (plane) holding the program's `llo_proto` (`devices.device_id`).
-- @column metadata_id: the event metadata whose `llo_proto` stat holds the program; joins
--   `llo_programs`.
-- @column hlo_op: the program's HLO op: the `display_name` of its `XLA Ops` events.
-- @column region_id: the LLO region id (`llo_regions.region_id`), as in the `Tensor Core` markers
--   and `_counters_`.
-- @column name: XProf's node name of the region (`llo_regions.name`).
-- @column kind: XProf's node kind of the region (`llo_regions.kind`).
-- @column start_bundle: first bundle of the region's range.
-- @column limit_bundle: the bundle past the region's last.
-- @column unit: the functional unit (`llo_bundle_units.unit`: `MXU`, `XLU`, `VALU`, `EUP`, `VLD`,
--   `VST`, `SALU`, `SPILL`, `FILL`).
-- @column used: slots of the unit the compiler scheduled over the range's bundles (nested
--   regions' included), a count.
-- @column capacity: slots of the unit per bundle, a count; NULL for spills and fills.
-- @column bundles: bundles in the range (`limit_bundle - start_bundle`), a count.
-- @column occupancy_pct: `used` over `capacity` times `bundles`, in percent (0 to 100); NULL
--   without a capacity or for an empty range.
-- @column counter_pct: the largest static `% util` sample the capture's `_counters_` line carries
--   for the region and unit (`unit_counters`, over executions of the same HLO op and module), in
--   percent; NULL when the capture has none.
-- @column measured: always FALSE: the row is the compiler's schedule, not a measurement.
--
-- Static: per LLO program (`llo_programs`), region and functional unit,
-- how full the compiler scheduled the unit's slots over the region's
-- bundles: `used` slots of `capacity` per bundle over `bundles` bundles,
-- `occupancy_pct` = 100 * used / (capacity * bundles). Every bundle of
-- the range counts, empty ones too (nested regions' bundles are the
-- region's as well), as the compiler's `_counters_` values count them; so
-- `occupancy_pct` is the `% util` that libtpu lays on the timeline for the
-- region, which `counter_pct` shows beside it (the largest such sample of
-- the unit keyed to the region in `unit_counters`, NULL when the capture
-- has none). Nothing here was measured.
WITH per_unit AS (
  SELECT r.trace_id, r.device_id, r.metadata_id, r.hlo_op, r.region_id, r.name, r.kind,
         r.start_bundle, r.limit_bundle, u.unit,
         sum(u.used) AS used, max(u.capacity) AS capacity
  FROM llo_regions r
  JOIN llo_bundle_units u ON u.trace_id = r.trace_id AND u.device_id = r.device_id
    AND u.metadata_id = r.metadata_id
  WHERE r.region_id IS NOT NULL AND r.start_bundle IS NOT NULL
    AND u.bundle >= r.start_bundle AND u.bundle < r.limit_bundle
  GROUP BY r.trace_id, r.device_id, r.metadata_id, r.hlo_op, r.region_id, r.name, r.kind,
           r.start_bundle, r.limit_bundle, u.unit
),
programs AS (
  SELECT trace_id, metadata_id, hlo_module FROM llo_programs
),
counter_values AS (
  SELECT c.trace_id, e.hlo_op, e.hlo_module, c.region_id, c.unit, max(c.value) AS counter_pct
  FROM unit_counters c
  JOIN (SELECT DISTINCT trace_id, kernel_event_id, hlo_op, hlo_module FROM llo_region_entries) e
    ON e.trace_id = c.trace_id AND e.kernel_event_id = c.kernel_event_id
  WHERE NOT c.measured AND c.region_id IS NOT NULL AND c.unit IS NOT NULL
  GROUP BY c.trace_id, e.hlo_op, e.hlo_module, c.region_id, c.unit
)
SELECT p.trace_id, p.device_id, p.metadata_id, p.hlo_op, p.region_id, p.name, p.kind,
       p.start_bundle, p.limit_bundle, p.unit, p.used, p.capacity,
       p.limit_bundle - p.start_bundle AS bundles,
       CASE WHEN p.capacity > 0 AND p.limit_bundle > p.start_bundle
            THEN 100.0 * p.used / (p.capacity * (p.limit_bundle - p.start_bundle)) END AS occupancy_pct,
       c.counter_pct,
       FALSE AS measured
FROM per_unit p
JOIN programs g ON g.trace_id = p.trace_id AND g.metadata_id = p.metadata_id
LEFT JOIN counter_values c ON c.trace_id = p.trace_id AND c.hlo_op = p.hlo_op
  AND (c.hlo_module IS NOT DISTINCT FROM g.hlo_module) AND c.region_id = p.region_id
  AND c.unit = p.unit
