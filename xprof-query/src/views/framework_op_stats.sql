-- Per framework op (`tf_op` split into type and operation), device rows
-- with an IDLE row and host rows: occurrences, total and self time,
-- percentages, rates, bound_by: XProf's framework_op_stats.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column rank: position of the row in its trace: the `Device` rows first, then the `Host` rows,
--   each by total self time, largest first (ties by `operation`); 1 is the first.
-- @column host_or_device: `Device` (summed from `hlo_stats`) or `Host` (host-thread framework
--   ops).
-- @column type: the framework op's type as `parse_tf_op` splits it (e.g. a TensorFlow op type);
--   `Unknown` when it has none, `IDLE` on the idle rows.
-- @column operation: the framework op's name as `parse_tf_op` gives it (e.g.
--   `jit(f)/dot_general`); on a device row whose ops carry no `tf_op`, the HLO op; `IDLE` on the
--   idle rows.
-- @column occurrences: executions: on device rows the largest `occurrences` of the operation's
--   `hlo_stats` rows, on host rows the sum of its events' `occurrences`; 0 on the idle rows.
-- @column total_time_us: summed time, in µs: device rows sum the `hlo_stats` total times, host
--   rows the events' durations; on an idle row, the idle time.
-- @column avg_time_us: `total_time_us` over `occurrences`, in µs; 0 when `occurrences` is 0 (the
--   idle rows).
-- @column total_self_time_us: summed self time, in µs: device rows sum the `hlo_stats` self
--   times, host rows the durations less those of the framework ops directly inside; on an idle
--   row, the idle time.
-- @column avg_self_time_us: `total_self_time_us` over `occurrences`, in µs; 0 when `occurrences`
--   is 0 (the idle rows).
-- @column self_time_pct: `total_self_time_us` over the time of its side, in percent (0 to 100):
--   the device time, idle included, for `Device` rows; the host ops' self time plus host idle for
--   `Host` rows; 0 when that time is 0.
-- @column cumulative_self_time_pct: self time of this row and of the rows of its side ranked
--   before it, over the side's time, in percent (0 to 100); 0 when that time is 0.
-- @column measured_gflops_per_s: the operation's `flops` (cost model) per ns of total time, in
--   GFLOP/s; 0 without a FLOP count or time (host and idle rows).
-- @column model_gflops_per_s: the operation's `model_flops` per ns of total time, in GFLOP/s; 0
--   without a FLOP count or time (host and idle rows).
-- @column memory_gibps: the operation's `bytes_accessed` per total time, in GiB/s; 0 without a
--   byte count or time (host and idle rows).
-- @column operational_intensity: `flops` over `bytes_accessed`, in FLOP per byte; 0 where either
--   is missing or the bytes are 0.
-- @column bound_by: `HBM` when the bandwidth is a larger share of the device's peak HBM bandwidth
--   than the FLOP rate is of its peak FLOP/s, else `Compute`; `Unknown` when both shares are 0
--   (host and idle rows, no counts or no peaks).
--
-- Per framework op (the `tf_op` of device ops, e.g. `jit(f)/dot_general`,
-- split by `parse_tf_op` into operation and type as XProf does), on the
-- device and on the host: XProf's framework_op_stats table with idle.
-- Device rows sum the `hlo_stats` rows of each operation (occurrences: the
-- largest of them) plus one `IDLE` row (device time less op self time);
-- percentages are of the device time, idle included. Host rows are the
-- host-thread events whose name (or `tf_op` stat) parses as a framework
-- op (TensorFlow `name:Type`, JAX, dataset or memcpy; `parse_tf_op`), self
-- time less the framework ops that are their direct children, plus one
-- host `IDLE` row: per thread, the span from its first framework op to the
-- end of its last less their self time, summed over threads (0 without
-- host ops), as XProf; host percentages are of the host ops' self time
-- and that idle time. Rank runs over device rows, then host rows, by self
-- time.
WITH device_side AS (
  SELECT trace_id,
         CASE WHEN coalesce(tf_op, '') = '' THEN hlo_op
              ELSE parse_tf_op(tf_op)['name'] END AS operation,
         CASE WHEN coalesce(tf_op, '') = '' THEN 'Unknown'
              ELSE coalesce(nullif(parse_tf_op(tf_op)['type'], ''), 'Unknown') END AS type,
         occurrences, total_time_us, total_self_time_us, flops, model_flops,
         bytes_accessed, peak_tflops, peak_hbm_gbps, device_time_us
  FROM hlo_stats
  WHERE device_kind <> 'host'
),
-- Device rows in one aggregation over `device_side`, so that `hlo_stats`
-- runs once (DataFusion runs a CTE again for each reference): level 2 an
-- operation, level 1 a trace, which becomes its `IDLE` row (the device
-- time, idle included, less the ops' self time). Where no device op is an
-- hlo_stats row (GPU kernels that are no HLO instruction of their program,
-- left out as XProf leaves them) the trace's `IDLE` row is the whole span
-- of the device's ops, all of it idle, as XProf: a candidate of lower
-- priority, kept only for traces without hlo_stats rows.
device_candidates AS (
  SELECT trace_id, level, 1 AS priority,
         CASE WHEN level = 1 THEN 'IDLE' ELSE first_value(type) END AS type,
         arrow_cast(CASE WHEN level = 1 THEN 'IDLE' ELSE level_operation END, 'Utf8') AS operation,
         CASE WHEN level = 1 THEN 0 ELSE max(occurrences) END AS occurrences,
         CASE WHEN level = 1 THEN max(device_time_us) - sum(total_self_time_us)
              ELSE sum(total_time_us) END AS total_time_us,
         CASE WHEN level = 1 THEN max(device_time_us) - sum(total_self_time_us)
              ELSE sum(total_self_time_us) END AS total_self_time_us,
         CASE WHEN level = 2 THEN sum(flops) END AS flops,
         CASE WHEN level = 2 THEN sum(model_flops) END AS model_flops,
         CASE WHEN level = 2 THEN sum(bytes_accessed) END AS bytes_accessed,
         CASE WHEN level = 2 THEN max(peak_tflops) END AS peak_tflops,
         CASE WHEN level = 2 THEN max(peak_hbm_gbps) END AS peak_hbm_gbps,
         max(device_time_us) AS side_time_us
  FROM (SELECT d.*, l.level, CASE WHEN l.level = 2 THEN d.operation END AS level_operation
        FROM device_side d CROSS JOIN (VALUES (1), (2)) AS l(level))
  GROUP BY trace_id, level, level_operation
  UNION ALL
  SELECT trace_id, 1, 2, 'IDLE', 'IDLE', 0,
         sum(greatest(op_time_ps, span_ps)) / 1e6, sum(greatest(op_time_ps, span_ps)) / 1e6,
         NULL, NULL, NULL, NULL, NULL, sum(greatest(op_time_ps, span_ps)) / 1e6
  FROM device_busy
  WHERE device_kind <> 'host'
  GROUP BY trace_id
),
device_rows AS (
  SELECT trace_id, 'Device' AS host_or_device, type, operation, occurrences,
         total_time_us, total_self_time_us, flops, model_flops, bytes_accessed,
         peak_tflops, peak_hbm_gbps, side_time_us
  FROM (SELECT *, min(priority) OVER (PARTITION BY trace_id) AS kept_priority
        FROM device_candidates)
  WHERE priority = kept_priority
),
host_events AS (
  SELECT e.trace_id, e.event_id, e.parent_id, e.track_id, e.ts_ps, e.dur_ps, e.occurrences,
         parse_tf_op(coalesce(nullif(e.tf_op, ''), e.name)) AS op,
         coalesce(e.tf_op, '') <> '' AS has_tf_op
  FROM events e
  JOIN tracks t ON e.trace_id = t.trace_id AND e.track_id = t.track_id
  JOIN devices d ON t.trace_id = d.trace_id AND t.device_id = d.device_id
  WHERE d.kind = 'host' AND t.kind = 'thread'
    -- only names that can parse as a framework op reach parse_tf_op
    AND (strpos(e.name, ':') > 0 OR coalesce(e.tf_op, '') <> ''
         OR lower(e.name) LIKE 'memcpy%')
),
host_ops AS (
  SELECT * FROM host_events WHERE has_tf_op OR op['kind'] <> 'unknown'
),
host_nested AS (
  SELECT trace_id, parent_id, sum(dur_ps) AS children_ps
  FROM host_ops WHERE parent_id IS NOT NULL
  GROUP BY trace_id, parent_id
),
host_self AS (
  SELECT h.*, greatest(h.dur_ps - coalesce(n.children_ps, 0), 0) AS self_ps
  FROM host_ops h
  LEFT JOIN host_nested n ON n.trace_id = h.trace_id AND n.parent_id = h.event_id
),
host_lines AS (
  SELECT trace_id, track_id, sum(self_ps) AS self_ps,
         max(ts_ps + dur_ps) - min(ts_ps) AS span_ps
  FROM host_self GROUP BY trace_id, track_id
),
host_idle AS (
  SELECT d.trace_id, coalesce(sum(greatest(l.self_ps, l.span_ps) - l.self_ps), 0) / 1e6 AS idle_us
  FROM (SELECT DISTINCT trace_id FROM devices WHERE kind = 'host') d
  LEFT JOIN host_lines l ON l.trace_id = d.trace_id
  GROUP BY d.trace_id
),
host_grouped AS (
  SELECT trace_id, 'Host' AS host_or_device,
         coalesce(nullif(op['type'], ''), 'Unknown') AS type, op['name'] AS operation,
         sum(occurrences) AS occurrences,
         sum(dur_ps) / 1e6 AS total_time_us,
         sum(self_ps) / 1e6 AS total_self_time_us,
         CAST(NULL AS BIGINT) AS flops, CAST(NULL AS BIGINT) AS model_flops,
         CAST(NULL AS BIGINT) AS bytes_accessed,
         CAST(NULL AS DOUBLE) AS peak_tflops, CAST(NULL AS DOUBLE) AS peak_hbm_gbps
  FROM host_self
  GROUP BY trace_id, coalesce(nullif(op['type'], ''), 'Unknown'), op['name']
  UNION ALL
  SELECT trace_id, 'Host' AS host_or_device, 'IDLE' AS type, 'IDLE' AS operation,
         0 AS occurrences, idle_us AS total_time_us, idle_us AS total_self_time_us,
         NULL AS flops, NULL AS model_flops, NULL AS bytes_accessed,
         NULL AS peak_tflops, NULL AS peak_hbm_gbps
  FROM host_idle
),
host_rows AS (
  SELECT g.*, sum(total_self_time_us) OVER (PARTITION BY trace_id) AS side_time_us
  FROM host_grouped g
),
all_rows AS (
  SELECT * FROM device_rows
  UNION ALL
  SELECT * FROM host_rows
)
SELECT trace_id,
       row_number() OVER (
         PARTITION BY trace_id
         ORDER BY host_or_device, total_self_time_us DESC, operation) AS rank,
       host_or_device, type, operation, occurrences,
       total_time_us,
       coalesce(total_time_us / nullif(occurrences, 0), 0) AS avg_time_us,
       total_self_time_us,
       coalesce(total_self_time_us / nullif(occurrences, 0), 0) AS avg_self_time_us,
       coalesce(100.0 * total_self_time_us / nullif(side_time_us, 0), 0) AS self_time_pct,
       coalesce(100.0 * sum(total_self_time_us) OVER (
         PARTITION BY trace_id, host_or_device
         ORDER BY total_self_time_us DESC, operation
         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) / nullif(side_time_us, 0), 0)
         AS cumulative_self_time_pct,
       coalesce(flops / nullif(total_time_us * 1e3, 0), 0) AS measured_gflops_per_s,
       coalesce(model_flops / nullif(total_time_us * 1e3, 0), 0) AS model_gflops_per_s,
       coalesce(bytes_accessed / nullif(total_time_us * 1e3, 0) / 1.073741824, 0) AS memory_gibps,
       coalesce(CAST(flops AS DOUBLE) / nullif(bytes_accessed, 0), 0) AS operational_intensity,
       CASE WHEN coalesce(flops / nullif(total_time_us * 1e3, 0) / nullif(peak_tflops * 1e3, 0), 0) = 0
             AND coalesce(bytes_accessed / nullif(total_time_us * 1e3, 0) / nullif(peak_hbm_gbps, 0), 0) = 0
            THEN 'Unknown'
            WHEN bytes_accessed / nullif(total_time_us * 1e3, 0) / nullif(peak_hbm_gbps, 0)
               > coalesce(flops / nullif(total_time_us * 1e3, 0) / nullif(peak_tflops * 1e3, 0), 0)
            THEN 'HBM'
            ELSE 'Compute' END AS bound_by
FROM all_rows
