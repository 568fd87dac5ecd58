-- Per kernel and LLO region that fired: measured entries and time (sum,
-- mean, p50, share of the kernel) next to the static unit occupancy of
-- the bundles that time executes (`self_*`, the region's own segment) and
-- of its whole nested range (`nested_*`), with named scope, JAX primitive
-- and source line of each.
-- @column trace_id: The converted input (`traces.trace_id`).
-- @column hlo_op: The kernel: the short name of the `XLA Ops` events the markers fired in
--   (`llo_region_entries.hlo_op`).
-- @column hlo_module: The kernel's HLO module: its `XLA Modules` event's name without
--   `(<program id>)`; NULL when none.
-- @column metadata_id: The `/host:metadata` event metadata holding the kernel's decoded `llo_proto`
--   (`llo_programs.metadata_id`); NULL when the capture has none, and then every static column is
--   NULL.
-- @column region_id: The LLO region id of the markers (`llo_region_entries.region_id`).
-- @column name: The region's name in the region tree (`llo_regions.name`).
-- @column kind: The region's kind in the region tree (`llo_regions.kind`: `region` or
--   `sub_region`).
-- @column start_bundle: First bundle of the region's nested range, children included
--   (`llo_regions.start_bundle`).
-- @column limit_bundle: Bundle past the last of the nested range (`llo_regions.limit_bundle`).
-- @column executions: Kernel executions the region fired in, a count.
-- @column entries: Entries of the region (markers fired), a count.
-- @column measured_ps: Measured time of the entries, in ps: the sum of their `dur_ps`, each from
--   the marker to the next marker of the kernel execution (or to the kernel's end).
-- @column mean_ps: Mean time per entry, in ps.
-- @column p50_ps: Median time per entry, in ps.
-- @column min_ps: Shortest entry, in ps.
-- @column max_ps: Longest entry, in ps.
-- @column measured_pct: `measured_ps` over the time all the kernel's markers cover (the sum of
--   `measured_ps` over its regions), in percent (0 to 100).
-- @column mxu_pct: Same as `nested_mxu_pct` (static MXU occupancy of the nested range, in percent),
--   kept under its first name; not the occupancy of the measured time.
-- @column xlu_pct: Same as `nested_xlu_pct` (static XLU occupancy of the nested range, in percent),
--   kept under its first name; not the occupancy of the measured time.
-- @column valu_pct: Same as `nested_valu_pct` (static VALU occupancy of the nested range, in
--   percent), kept under its first name; not the occupancy of the measured time.
-- @column eup_pct: Same as `nested_eup_pct` (static EUP occupancy of the nested range, in percent),
--   kept under its first name; not the occupancy of the measured time.
-- @column vld_pct: Same as `nested_vld_pct` (static VLD occupancy of the nested range, in percent),
--   kept under its first name; not the occupancy of the measured time.
-- @column vst_pct: Same as `nested_vst_pct` (static VST occupancy of the nested range, in percent),
--   kept under its first name; not the occupancy of the measured time.
-- @column salu_pct: Same as `nested_salu_pct` (static SALU occupancy of the nested range, in
--   percent), kept under its first name; not the occupancy of the measured time.
-- @column named_scope: Named scopes (outermost first, joined by `/`) most of the region's own
--   instructions carry (`llo_regions.named_scope`); NULL when none carries one.
-- @column primitive: JAX primitive most of the region's own instructions carry
--   (`llo_regions.primitive`); NULL when none carries one.
-- @column source_file: Source file most of the region's own instructions carry
--   (`llo_regions.source_file`); NULL when none carries one.
-- @column source_line: Source line most of the region's own instructions carry
--   (`llo_regions.source_line`); NULL when none carries one.
-- @column self_start_bundle: First bundle of the region's own segment: from the region's first
--   bundle to the first bundle of the next region, in bundle order, whose marker fired
--   (`llo_region_segments`); the bundles `measured_ps` executes.
-- @column self_limit_bundle: Bundle past the segment's last.
-- @column self_mxu_pct: Static MXU occupancy of the segment, in percent (0 to 100): 100 * used
--   slots / (capacity * segment bundles); NULL for an empty segment. Pair with `measured_ps`.
-- @column self_xlu_pct: Static XLU occupancy of the segment, in percent (0 to 100): 100 * used
--   slots / (capacity * segment bundles); NULL for an empty segment. Pair with `measured_ps`.
-- @column self_valu_pct: Static VALU occupancy of the segment, in percent (0 to 100): 100 * used
--   slots / (capacity * segment bundles); NULL for an empty segment. Pair with `measured_ps`.
-- @column self_eup_pct: Static EUP occupancy of the segment, in percent (0 to 100): 100 * used
--   slots / (capacity * segment bundles); NULL for an empty segment. Pair with `measured_ps`.
-- @column self_vld_pct: Static VLD occupancy of the segment, in percent (0 to 100): 100 * used
--   slots / (capacity * segment bundles); NULL for an empty segment. Pair with `measured_ps`.
-- @column self_vst_pct: Static VST occupancy of the segment, in percent (0 to 100): 100 * used
--   slots / (capacity * segment bundles); NULL for an empty segment. Pair with `measured_ps`.
-- @column self_salu_pct: Static SALU occupancy of the segment, in percent (0 to 100): 100 * used
--   slots / (capacity * segment bundles); NULL for an empty segment. Pair with `measured_ps`.
-- @column self_named_scope: Named scopes (outermost first, joined by `/`) most of the segment's
--   instructions carry; NULL when none carries one.
-- @column self_primitive: JAX primitive most of the segment's instructions carry; NULL when none
--   carries one.
-- @column self_source_file: Source file of the line most of the segment's instructions carry; NULL
--   when none carries one.
-- @column self_source_line: That source line; NULL when none carries one or it has no line.
-- @column self_source_lines: Every `file:line` (`file` alone without a line) of the segment's
--   instructions, most instructions first; NULL when none has one.
-- @column nested_mxu_pct: Static MXU occupancy of the region's nested range, children included, in
--   percent (0 to 100): 100 * used slots / (capacity * bundles)
--   (`llo_region_utilization.occupancy_pct`, the `_counters_` value).
-- @column nested_xlu_pct: Static XLU occupancy of the region's nested range, children included, in
--   percent (0 to 100): 100 * used slots / (capacity * bundles)
--   (`llo_region_utilization.occupancy_pct`, the `_counters_` value).
-- @column nested_valu_pct: Static VALU occupancy of the region's nested range, children included,
--   in percent (0 to 100): 100 * used slots / (capacity * bundles)
--   (`llo_region_utilization.occupancy_pct`, the `_counters_` value).
-- @column nested_eup_pct: Static EUP occupancy of the region's nested range, children included, in
--   percent (0 to 100): 100 * used slots / (capacity * bundles)
--   (`llo_region_utilization.occupancy_pct`, the `_counters_` value).
-- @column nested_vld_pct: Static VLD occupancy of the region's nested range, children included, in
--   percent (0 to 100): 100 * used slots / (capacity * bundles)
--   (`llo_region_utilization.occupancy_pct`, the `_counters_` value).
-- @column nested_vst_pct: Static VST occupancy of the region's nested range, children included, in
--   percent (0 to 100): 100 * used slots / (capacity * bundles)
--   (`llo_region_utilization.occupancy_pct`, the `_counters_` value).
-- @column nested_salu_pct: Static SALU occupancy of the region's nested range, children included,
--   in percent (0 to 100): 100 * used slots / (capacity * bundles)
--   (`llo_region_utilization.occupancy_pct`, the `_counters_` value).
--
-- The kernel author's table: per kernel (`hlo_op` of the `XLA Ops`
-- events) and LLO region that fired (`llo_region_entries`), what the
-- region cost at run time next to what the compiler planned for it.
--
-- Measured: `executions` (kernel runs it fired in), `entries`,
-- `measured_ps` (sum of `dur_ps`: entry to the next marker), `mean_ps`,
-- `p50_ps`, `min_ps`, `max_ps` per entry, and `measured_pct`, its share of
-- the time the kernel's markers cover.
--
-- Static (from the program's `llo_proto`, joined by `hlo_op` and module
-- name; NULL when the capture has no payload for the kernel), two ranges:
--
-- - `self_start_bundle`, `self_limit_bundle`: the region's segment, from
--   its marker to the next marker in bundle order (`llo_region_segments`),
--   the bundles `measured_ps` executes; `self_mxu_pct`, `self_xlu_pct`,
--   `self_valu_pct`, `self_eup_pct`, `self_vld_pct`, `self_vst_pct`,
--   `self_salu_pct` their occupancy per unit; `self_named_scope`,
--   `self_primitive`, `self_source_file`, `self_source_line` what most of
--   the segment's instructions carry, `self_source_lines` every
--   `file:line` of them (most instructions first; NULL when none has
--   one). Pair `measured_ps` with these.
-- - `start_bundle`, `limit_bundle`: the region's nested range, children
--   included; `nested_mxu_pct` ... `nested_salu_pct` its occupancy
--   (`llo_region_utilization`, the `_counters_` value). `mxu_pct` ...
--   `salu_pct` are the same nested numbers under their first names, kept
--   for SQL written against them: they are NOT the occupancy of the
--   measured time where the region holds marked children. `name`, `kind`,
--   `named_scope`, `primitive`, `source_file`, `source_line` are
--   `llo_regions`' (the region's own instructions, wherever they sit).
WITH entries AS (
  SELECT trace_id, hlo_op, hlo_module, region_id,
         count(DISTINCT kernel_event_id) AS executions, count(*) AS entries,
         sum(dur_ps) AS measured_ps, avg(dur_ps) AS mean_ps,
         CAST(median(dur_ps) AS BIGINT) AS p50_ps, min(dur_ps) AS min_ps, max(dur_ps) AS max_ps
  FROM llo_region_entries
  WHERE kernel_event_id IS NOT NULL
  GROUP BY trace_id, hlo_op, hlo_module, region_id
),
totals AS (
  SELECT trace_id, hlo_op, hlo_module, sum(measured_ps) AS total_ps
  FROM entries GROUP BY trace_id, hlo_op, hlo_module
),
programs AS (
  SELECT trace_id, metadata_id, hlo_op, hlo_module FROM llo_programs WHERE decode_status = 'ok'
),
regions AS (
  SELECT r.trace_id, r.metadata_id, r.region_id, r.name, r.kind, r.start_bundle, r.limit_bundle,
         r.named_scope, r.primitive, r.source_file, r.source_line
  FROM llo_regions r WHERE r.region_id IS NOT NULL
),
segments AS (
  SELECT trace_id, metadata_id, region_id,
         min(segment_start_bundle) AS self_start_bundle,
         min(segment_limit_bundle) AS self_limit_bundle,
         max(CASE WHEN unit = 'MXU' THEN self_occupancy_pct END) AS self_mxu_pct,
         max(CASE WHEN unit = 'XLU' THEN self_occupancy_pct END) AS self_xlu_pct,
         max(CASE WHEN unit = 'VALU' THEN self_occupancy_pct END) AS self_valu_pct,
         max(CASE WHEN unit = 'EUP' THEN self_occupancy_pct END) AS self_eup_pct,
         max(CASE WHEN unit = 'VLD' THEN self_occupancy_pct END) AS self_vld_pct,
         max(CASE WHEN unit = 'VST' THEN self_occupancy_pct END) AS self_vst_pct,
         max(CASE WHEN unit = 'SALU' THEN self_occupancy_pct END) AS self_salu_pct
  FROM llo_region_segments
  GROUP BY trace_id, metadata_id, region_id
),
segment_instructions AS (
  SELECT s.trace_id, s.metadata_id, s.region_id, i.named_scope, i.primitive,
         i.source_file, i.source_line
  FROM segments s
  JOIN llo_program_instructions i ON i.trace_id = s.trace_id AND i.metadata_id = s.metadata_id
  WHERE i.bundle >= s.self_start_bundle AND i.bundle < s.self_limit_bundle
),
segment_lines AS (
  SELECT trace_id, metadata_id, region_id, source_file, source_line, count(*) AS n,
         row_number() OVER (PARTITION BY trace_id, metadata_id, region_id
                            ORDER BY count(*) DESC, source_file, source_line) AS rank
  FROM segment_instructions WHERE source_file IS NOT NULL
  GROUP BY trace_id, metadata_id, region_id, source_file, source_line
),
segment_sources AS (
  SELECT trace_id, metadata_id, region_id,
         max(CASE WHEN rank = 1 THEN source_file END) AS self_source_file,
         max(CASE WHEN rank = 1 THEN source_line END) AS self_source_line,
         array_agg(CASE WHEN source_line IS NULL THEN source_file
                        ELSE concat(source_file, ':', CAST(source_line AS VARCHAR)) END
                   ORDER BY rank) AS self_source_lines
  FROM segment_lines
  GROUP BY trace_id, metadata_id, region_id
),
segment_scopes AS (
  SELECT trace_id, metadata_id, region_id, named_scope,
         row_number() OVER (PARTITION BY trace_id, metadata_id, region_id
                            ORDER BY count(*) DESC, named_scope) AS rank
  FROM segment_instructions WHERE named_scope IS NOT NULL
  GROUP BY trace_id, metadata_id, region_id, named_scope
),
segment_primitives AS (
  SELECT trace_id, metadata_id, region_id, primitive,
         row_number() OVER (PARTITION BY trace_id, metadata_id, region_id
                            ORDER BY count(*) DESC, primitive) AS rank
  FROM segment_instructions WHERE primitive IS NOT NULL
  GROUP BY trace_id, metadata_id, region_id, primitive
),
util AS (
  SELECT trace_id, metadata_id, region_id,
         max(CASE WHEN unit = 'MXU' THEN occupancy_pct END) AS mxu_pct,
         max(CASE WHEN unit = 'XLU' THEN occupancy_pct END) AS xlu_pct,
         max(CASE WHEN unit = 'VALU' THEN occupancy_pct END) AS valu_pct,
         max(CASE WHEN unit = 'EUP' THEN occupancy_pct END) AS eup_pct,
         max(CASE WHEN unit = 'VLD' THEN occupancy_pct END) AS vld_pct,
         max(CASE WHEN unit = 'VST' THEN occupancy_pct END) AS vst_pct,
         max(CASE WHEN unit = 'SALU' THEN occupancy_pct END) AS salu_pct
  FROM llo_region_utilization
  GROUP BY trace_id, metadata_id, region_id
)
SELECT e.trace_id, e.hlo_op, e.hlo_module, p.metadata_id, e.region_id,
       r.name, r.kind, r.start_bundle, r.limit_bundle,
       e.executions, e.entries, e.measured_ps, e.mean_ps, e.p50_ps, e.min_ps, e.max_ps,
       100.0 * e.measured_ps / nullif(t.total_ps, 0) AS measured_pct,
       u.mxu_pct, u.xlu_pct, u.valu_pct, u.eup_pct, u.vld_pct, u.vst_pct, u.salu_pct,
       r.named_scope, r.primitive, r.source_file, r.source_line,
       g.self_start_bundle, g.self_limit_bundle,
       g.self_mxu_pct, g.self_xlu_pct, g.self_valu_pct, g.self_eup_pct, g.self_vld_pct,
       g.self_vst_pct, g.self_salu_pct,
       sc.named_scope AS self_named_scope, pr.primitive AS self_primitive,
       so.self_source_file, so.self_source_line,
       so.self_source_lines,
       u.mxu_pct AS nested_mxu_pct, u.xlu_pct AS nested_xlu_pct, u.valu_pct AS nested_valu_pct,
       u.eup_pct AS nested_eup_pct, u.vld_pct AS nested_vld_pct, u.vst_pct AS nested_vst_pct,
       u.salu_pct AS nested_salu_pct
FROM entries e
JOIN totals t ON t.trace_id = e.trace_id AND t.hlo_op = e.hlo_op
  AND (t.hlo_module IS NOT DISTINCT FROM e.hlo_module)
LEFT JOIN programs p ON p.trace_id = e.trace_id AND p.hlo_op = e.hlo_op
  AND (p.hlo_module IS NOT DISTINCT FROM e.hlo_module)
LEFT JOIN regions r ON r.trace_id = p.trace_id AND r.metadata_id = p.metadata_id
  AND r.region_id = e.region_id
LEFT JOIN util u ON u.trace_id = p.trace_id AND u.metadata_id = p.metadata_id
  AND u.region_id = e.region_id
LEFT JOIN segments g ON g.trace_id = p.trace_id AND g.metadata_id = p.metadata_id
  AND g.region_id = e.region_id
LEFT JOIN segment_sources so ON so.trace_id = g.trace_id AND so.metadata_id = g.metadata_id
  AND so.region_id = g.region_id
LEFT JOIN segment_scopes sc ON sc.trace_id = g.trace_id AND sc.metadata_id = g.metadata_id
  AND sc.region_id = g.region_id AND sc.rank = 1
LEFT JOIN segment_primitives pr ON pr.trace_id = g.trace_id AND pr.metadata_id = g.metadata_id
  AND pr.region_id = g.region_id AND pr.rank = 1
