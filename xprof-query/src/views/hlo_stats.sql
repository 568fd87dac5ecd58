-- Per (program_id, HLO op): occurrences, total and self time, self-time
-- percent and cumulative percent, FLOP rates, memory bandwidth, operational
-- intensity, bound_by, rank: XProf's hlo_stats.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column rank: position of the row in its trace by total self time, largest first (ties by
--   `hlo_op`, then `program_id`); 1 is the first.
-- @column program_id: the ops' `program_id` stat (unsigned, as XLA writes it); NULL where the ops
--   carry none.
-- @column hlo_op: the op's name: on GPUs the `hlo_op` stat (its part after the last `::`),
--   elsewhere the event's `display_name`.
-- @column hlo_op_name: the instruction name in `expression` (the text before ` = `, without its
--   `%`), else `hlo_op`.
-- @column category: HLO category: for a GPU op found in `hlo_instructions`, its instruction's;
--   else the `hlo_category` stat; NULL when neither is known.
-- @column expression: the op's HLO text: for a GPU op found in `hlo_instructions`, its
--   instruction's; else `hlo_ops.expression` (the event metadata name); NULL when not known.
-- @column tf_op: framework op (e.g. `jit(f)/dot_general`): for a GPU op found in
--   `hlo_instructions`, its instruction's; else the `tf_op` stat; NULL when not known.
-- @column source: `file:line` of the op's source: for a GPU op found in `hlo_instructions`, its
--   instruction's; else the `source` stat (`hlo_ops.source`); NULL when not known.
-- @column device_kind: kind of the device the ops ran on (`devices.kind`): `tpu`, `sparse_core`,
--   `custom`, `gpu`, or `host` (only in traces without accelerator ops).
-- @column occurrences: executions of the op: the sum of its events' `occurrences`, a count.
-- @column total_time_us: summed time of the op's executions, in µs: each event's
--   `device_duration_ps` when it has both device stats, else `dur_ps`.
-- @column avg_time_us: `total_time_us` over `occurrences`, in µs.
-- @column total_self_time_us: summed self time, in µs: on TPUs, SparseCores and custom devices
--   the time less that of the ops nested in it (by device spans, `op_parent`; at least 0),
--   elsewhere the whole time.
-- @column avg_self_time_us: `total_self_time_us` over `occurrences`, in µs.
-- @column self_time_pct: `total_self_time_us` over `device_time_us`, in percent (0 to 100); NULL
--   when the device time is 0.
-- @column cumulative_self_time_pct: self time of this row and of every row ranked before it in
--   the trace, over `device_time_us`, in percent (0 to 100); NULL when the device time is 0.
-- @column flops: FLOP of the op's executions: the `flops` stat (cost model, per execution) times
--   occurrences, summed; NULL when no event has the stat.
-- @column model_flops: model FLOP: the op's `model_flops` metadata stat (`hlo_ops`) where above
--   0, else its `flops`, times occurrences, summed; NULL when neither is known.
-- @column bytes_accessed: bytes the op accesses: the `bytes_accessed` stat (cost model, per
--   execution) times occurrences, summed, in bytes; NULL when no event has the stat.
-- @column model_gflops_per_s: `model_flops` per ns of total time, in GFLOP/s; 0 where there is no
--   FLOP count or no time.
-- @column measured_gflops_per_s: `flops` per ns of total time, in GFLOP/s (the FLOP are the cost
--   model's, the time measured); 0 where there is no FLOP count or no time.
-- @column memory_gibps: `bytes_accessed` per total time, in GiB/s; 0 where there is no byte count
--   or no time.
-- @column operational_intensity: `flops` over `bytes_accessed`, in FLOP per byte; 0 where either
--   is missing or the bytes are 0.
-- @column bound_by: `HBM` when the op's bandwidth is a larger share of `peak_hbm_gbps` than its
--   FLOP rate is of `peak_tflops`, else `Compute`; `Unknown` when both shares are 0 (no counts,
--   no time or no peaks).
-- @column peak_tflops: the device's peak compute (plane stat `peak_teraflops_per_second`), in
--   TFLOP/s; NULL when the profile does not record it.
-- @column peak_hbm_gbps: the device's peak HBM bandwidth (plane stat
--   `peak_hbm_bw_gigabytes_per_second`), in GB/s; NULL when the profile does not record it.
-- @column device_time_us: the trace's total device time, in µs: per device the larger of its ops'
--   summed self time and the span of its ops and steps (idle included), summed over the trace's
--   devices; the denominator of the percentages.
--
-- Per trace and (program_id, HLO op): XProf's hlo_stats table. An op's time
-- is its `device_duration_ps` when the event has both device stats, else
-- its duration. Self time subtracts the time of the ops nested in it on
-- TPUs, as XProf does: nesting by the ops' device spans, both ends
-- inclusive, in line order (`op_parent`; the `Async XLA Ops` line is not
-- an op line and nests nothing); on GPUs and the host it is the whole time
-- (XProf never nests kernels). Percentages are of the total device time: per
-- device the larger of the summed self time and the span of its ops and
-- steps, summed over the trace's devices (idle included, as XProf).
-- Rates: GFLOP/s is FLOP per ns of total time, memory bandwidth GiB/s
-- (0 where the profile has no FLOP or byte counts, or no time, as XProf);
-- `bound_by` compares FLOP/s and HBM bandwidth with the device's peaks
-- (`peak_tflops`, `peak_hbm_gbps`); `device_time_us` is the trace's total
-- device time, the percentages' denominator.
-- GPU ops take category, expression, framework op and source from their
-- HLO instruction (`hlo_instructions`), as XProf does, and an op that is no
-- instruction of its (known) program is left out, as XProf does.
-- Host rows (XLA on CPU) are an addition for traces without accelerator
-- ops: XProf's tool is empty there.
WITH accelerated AS (
  SELECT DISTINCT trace_id FROM device_ops WHERE device_kind <> 'host'
),
trace_kinds AS (
  -- One row per trace, joined as the build side: `NOT IN (subquery)`
  -- planned a mark join that held every op of every trace in memory.
  SELECT t.trace_id, a.trace_id IS NOT NULL AS accelerated
  FROM traces t
  LEFT JOIN accelerated a ON a.trace_id = t.trace_id
),
ops AS (
  SELECT o.*,
         coalesce(CASE WHEN o.device_offset_ps IS NOT NULL THEN o.device_duration_ps END,
                  o.dur_ps) AS time_ps,
         coalesce(CASE WHEN o.device_duration_ps IS NOT NULL THEN o.device_offset_ps END,
                  o.ts_ps) AS begin_ps
  FROM trace_kinds k
  JOIN device_ops o ON o.trace_id = k.trace_id
  WHERE o.device_kind <> 'host' OR NOT k.accelerated
),
nested AS (
  -- Only the ops that nest: a track is one device's, so each window
  -- partition holds ops of one kind, and the others (host and GPU ops,
  -- most of a fleet's) are never sorted for the window.
  SELECT o.trace_id, o.time_ps,
         op_parent(o.event_id, o.begin_ps, o.begin_ps + o.time_ps)
           OVER (PARTITION BY o.trace_id, o.track_id ORDER BY o.event_id) AS op_parent_id
  FROM ops o
  WHERE o.device_kind IN ('tpu', 'sparse_core', 'custom')
),
children AS (
  SELECT trace_id, op_parent_id, sum(time_ps) AS children_ps
  FROM nested WHERE op_parent_id IS NOT NULL
  GROUP BY trace_id, op_parent_id
),
timed AS (
  SELECT o.*,
         CASE WHEN o.device_kind IN ('tpu', 'sparse_core', 'custom')
              THEN greatest(o.time_ps - coalesce(c.children_ps, 0), 0)
              ELSE o.time_ps END AS self_time_ps
  FROM ops o
  LEFT JOIN children c ON c.trace_id = o.trace_id AND c.op_parent_id = o.event_id
),
spans AS (
  SELECT trace_id, device_id, begin_ps, begin_ps + time_ps AS end_ps, self_time_ps
  FROM timed
  UNION ALL
  SELECT e.trace_id, t.device_id,
         coalesce(CASE WHEN e.device_duration_ps IS NOT NULL THEN e.device_offset_ps END, e.ts_ps),
         coalesce(CASE WHEN e.device_duration_ps IS NOT NULL THEN e.device_offset_ps END, e.ts_ps)
           + coalesce(CASE WHEN e.device_offset_ps IS NOT NULL THEN e.device_duration_ps END, e.dur_ps),
         0
  FROM events e
  JOIN tracks t ON e.trace_id = t.trace_id AND e.track_id = t.track_id
  WHERE t.kind IN ('steps', 'sparse_core_steps')
),
device_time AS (
  SELECT s.trace_id, s.device_id,
         greatest(sum(s.self_time_ps), max(s.end_ps) - min(s.begin_ps)) AS total_ps
  FROM spans s
  JOIN (SELECT DISTINCT trace_id, device_id FROM timed) d
    ON d.trace_id = s.trace_id AND d.device_id = s.device_id
  GROUP BY s.trace_id, s.device_id
),
trace_time AS (
  SELECT trace_id, sum(total_ps) AS total_ps FROM device_time GROUP BY trace_id
),
per_op AS (
  SELECT o.trace_id, o.program_id,
         CASE WHEN o.device_kind = 'gpu' THEN split_part(o.hlo_op, '::', -1)
              ELSE coalesce(o.display_name, o.hlo_op) END AS hlo_op,
         max(CASE WHEN o.device_kind = 'gpu' AND o.is_hlo_instruction
                  THEN o.instruction_category ELSE o.hlo_category END) AS category,
         max(CASE WHEN o.device_kind = 'gpu' AND o.is_hlo_instruction
                  THEN o.instruction_expression ELSE h.expression END) AS expression,
         max(CASE WHEN o.device_kind = 'gpu' AND o.is_hlo_instruction
                  THEN o.instruction_tf_op ELSE o.tf_op END) AS tf_op,
         max(CASE WHEN o.device_kind = 'gpu' AND o.is_hlo_instruction
                  THEN o.instruction_source ELSE h.source END) AS source,
         max(o.device_kind) AS device_kind,
         sum(o.occurrences) AS occurrences,
         sum(o.time_ps) AS total_time_ps,
         sum(o.self_time_ps) AS total_self_time_ps,
         sum(o.flops * o.occurrences) AS flops,
         sum(CASE WHEN h.model_flops > 0 THEN h.model_flops ELSE o.flops END * o.occurrences) AS model_flops,
         sum(o.bytes_accessed * o.occurrences) AS bytes_accessed,
         max(d.peak_tflops) AS peak_tflops,
         max(d.peak_hbm_gbps) AS peak_hbm_gbps
  FROM timed o
  JOIN devices d ON d.trace_id = o.trace_id AND d.device_id = o.device_id
  LEFT JOIN hlo_ops h
    ON h.trace_id = o.trace_id AND h.device_id = o.device_id AND h.metadata_id = o.metadata_id
  WHERE (o.hlo_op IS NOT NULL OR o.device_kind <> 'gpu')
    AND NOT (o.device_kind = 'gpu' AND coalesce(o.is_hlo_instruction, true) = false)
  GROUP BY o.trace_id, o.program_id,
           CASE WHEN o.device_kind = 'gpu' THEN split_part(o.hlo_op, '::', -1)
                ELSE coalesce(o.display_name, o.hlo_op) END
),
rated AS (
  SELECT p.*,
         CASE WHEN strpos(p.expression, ' = ') > 0
              THEN ltrim(split_part(p.expression, ' = ', 1), '%')
              ELSE p.hlo_op END AS hlo_op_name,
         coalesce(p.flops / nullif(p.total_time_ps / 1e3, 0), 0) AS measured_gflops_per_s,
         coalesce(p.model_flops / nullif(p.total_time_ps / 1e3, 0), 0) AS model_gflops_per_s,
         coalesce(p.bytes_accessed / nullif(p.total_time_ps / 1e3, 0) / 1.073741824, 0) AS memory_gibps,
         coalesce(CAST(p.flops AS DOUBLE) / nullif(p.bytes_accessed, 0), 0) AS operational_intensity,
         coalesce(p.flops / nullif(p.total_time_ps / 1e3, 0) / nullif(p.peak_tflops * 1e3, 0), 0)
           AS compute_util,
         coalesce(p.bytes_accessed / nullif(p.total_time_ps / 1e3, 0) / nullif(p.peak_hbm_gbps, 0), 0)
           AS hbm_util
  FROM per_op p
)
SELECT r.trace_id,
       row_number() OVER (PARTITION BY r.trace_id ORDER BY r.total_self_time_ps DESC, r.hlo_op, r.program_id) AS rank,
       r.program_id, r.hlo_op, r.hlo_op_name, r.category, r.expression, r.tf_op, r.source,
       r.device_kind, r.occurrences,
       r.total_time_ps / 1e6 AS total_time_us,
       r.total_time_ps / 1e6 / r.occurrences AS avg_time_us,
       r.total_self_time_ps / 1e6 AS total_self_time_us,
       r.total_self_time_ps / 1e6 / r.occurrences AS avg_self_time_us,
       100.0 * r.total_self_time_ps / nullif(tt.total_ps, 0) AS self_time_pct,
       100.0 * sum(r.total_self_time_ps) OVER (
         PARTITION BY r.trace_id ORDER BY r.total_self_time_ps DESC, r.hlo_op, r.program_id
         ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) / nullif(tt.total_ps, 0) AS cumulative_self_time_pct,
       r.flops, r.model_flops, r.bytes_accessed,
       r.model_gflops_per_s, r.measured_gflops_per_s, r.memory_gibps, r.operational_intensity,
       CASE WHEN r.compute_util = 0 AND r.hbm_util = 0 THEN 'Unknown'
            WHEN r.hbm_util > r.compute_util THEN 'HBM'
            ELSE 'Compute' END AS bound_by,
       r.peak_tflops, r.peak_hbm_gbps,
       tt.total_ps / 1e6 AS device_time_us
FROM rated r
JOIN trace_time tt ON tt.trace_id = r.trace_id
