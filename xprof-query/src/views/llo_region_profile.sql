-- Per kernel and LLO region that fired: measured entries and time (sum,
-- mean, p50, share of the kernel) next to the static unit occupancy of
-- the bundles that time executes (`self_*`, the region's own segment) and
-- of its whole nested range (`nested_*`), with named scope, JAX primitive
-- and source line of each.
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
