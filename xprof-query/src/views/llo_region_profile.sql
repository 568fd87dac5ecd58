-- Per kernel and LLO region that fired: measured entries and time (sum,
-- mean, p50, share of the kernel) next to the region's static unit
-- occupancy, named scope, JAX primitive and source line.
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
-- name; NULL when the capture has no payload for the kernel): the region's
-- `name`, `kind`, bundle range, the `occupancy_pct` of each unit
-- (`mxu_pct`, `xlu_pct`, `valu_pct`, `eup_pct`, `vld_pct`, `vst_pct`,
-- `salu_pct`, as `llo_region_utilization`), and where its instructions
-- came from (`llo_regions`: the named scope, JAX primitive and source line
-- that most of the region's own instructions carry).
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
       r.named_scope, r.primitive, r.source_file, r.source_line
FROM entries e
JOIN totals t ON t.trace_id = e.trace_id AND t.hlo_op = e.hlo_op
  AND (t.hlo_module IS NOT DISTINCT FROM e.hlo_module)
LEFT JOIN programs p ON p.trace_id = e.trace_id AND p.hlo_op = e.hlo_op
  AND (p.hlo_module IS NOT DISTINCT FROM e.hlo_module)
LEFT JOIN regions r ON r.trace_id = p.trace_id AND r.metadata_id = p.metadata_id
  AND r.region_id = e.region_id
LEFT JOIN util u ON u.trace_id = p.trace_id AND u.metadata_id = p.metadata_id
  AND u.region_id = e.region_id
