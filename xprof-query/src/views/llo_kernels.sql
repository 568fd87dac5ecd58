-- Per compiled TPU kernel: its static schedule in numbers (bundles, unit
-- occupancy, spill and fill slots, memory, peak registers) and, in a
-- capture that ran it, its measured time per execution. One row per trace
-- and HLO op: a kernel's dump files of one compile (`source = 'dump'`), or
-- a decoded `llo_proto` program of a capture (`source = 'capture'`). The
-- row `diff_llo_kernels` compares between two compiles.
-- @column trace_id: The kernel's trace: a dump's files of one compile, or the capture holding the
--   program.
-- @column hlo_op: The kernel: its HLO op (the dump's file names; `llo_programs.hlo_op`).
-- @column source: `dump` (a compiler dump folder) or `capture` (a kernel-profiling capture's
--   decoded program).
-- @column hlo_module: The HLO module (`llo_programs.hlo_module`); NULL for a dump, whose files
--   name none.
-- @column bundles: Bundles of the final schedule: the dump's addressed bundle lines (the
--   final-bundles file, else the per-bundle utilization rows), or `llo_programs.bundles`.
-- @column empty_bundles: Bundles with no slot used: in a dump, bundles with no op but pseudo-ops
--   (the entry bundle counts, as the compiler's schedule analysis counts it); in a capture,
--   bundles with no unit used in `llo_bundle_units`. NULL where the schedule's ops are not known.
-- @column mxu_pct: Static MXU occupancy of the whole schedule, in percent: 100 * slots used /
--   (capacity * bundles), over the bundles of the dump's per-bundle utilization file (the
--   compiler's own count) or of the program; NULL where the unit's capacity is not known.
-- @column valu_pct: Static VALU occupancy, in percent, as `mxu_pct`.
-- @column vld_pct: Static VLD (vector load) occupancy, in percent, as `mxu_pct`.
-- @column vst_pct: Static VST (vector store) occupancy, in percent, as `mxu_pct`.
-- @column salu_pct: Static SALU (scalar) occupancy, in percent, as `mxu_pct`.
-- @column xlu_pct: Static XLU (cross-lane) occupancy, in percent, as `mxu_pct`.
-- @column eup_pct: Static EUP occupancy, in percent, as `mxu_pct`.
-- @column spill_slots: Spill stores scheduled (the `SPILL` unit's slots used, summed over the
--   bundles); NULL where the schedule's units are not known.
-- @column fill_slots: Fill loads scheduled (the `FILL` unit's slots), as `spill_slots`.
-- @column vmem_bytes: Bytes of the kernel's VMEM allocations (`llo_dump_allocations`,
--   `llo_allocations`); NULL where none is known.
-- @column smem_bytes: Bytes of its SMEM allocations, as `vmem_bytes`.
-- @column peak_vregs: Most vector registers (`VREG`) live in any bundle
--   (`llo_register_pressure`); NULL for a dump.
-- @column peak_sregs: Most scalar registers (`SREG`) live in any bundle, as `peak_vregs`.
-- @column peak_pregs: Most predicate registers (`PREG`) live in any bundle, as `peak_vregs`.
-- @column executions: Executions measured in the capture (its `XLA Ops` events of the kernel, in
--   its module where both are known); NULL for a dump or a capture that did not run it.
-- @column mean_us: Mean measured time per execution, in µs; NULL where `executions` is.
--
-- Occupancy is over the whole schedule; per region, and paired with
-- measured region time, it is `llo_region_profile`. A capture's program
-- decoded on several devices is read from its first (lowest device and
-- metadata id). The dump is of an uninstrumented compile, the capture's
-- programs of an instrumented one: compare dumps with dumps, captures
-- with captures.
WITH dump_kernels AS (
  SELECT trace_id, hlo_op FROM llo_dump_bundles
  UNION
  SELECT trace_id, hlo_op FROM llo_dump_bundle_units
  UNION
  SELECT trace_id, hlo_op FROM llo_dump_schedule
  UNION
  SELECT trace_id, hlo_op FROM llo_dump_allocations
),
dump_bundle_lines AS (
  SELECT trace_id, hlo_op, count(*) AS bundles
  FROM llo_dump_bundles WHERE address IS NOT NULL GROUP BY trace_id, hlo_op
),
dump_busy AS (
  SELECT trace_id, hlo_op, count(DISTINCT address) AS busy_bundles
  FROM llo_dump_ops WHERE unit <> 'PSEUDO' GROUP BY trace_id, hlo_op
),
dump_unit_rows AS (
  SELECT trace_id, hlo_op, count(DISTINCT address) AS bundles
  FROM llo_dump_bundle_units GROUP BY trace_id, hlo_op
),
dump_memory AS (
  SELECT trace_id, hlo_op,
         sum(size_bytes) FILTER (WHERE memory_space = 'vmem') AS vmem_bytes,
         sum(size_bytes) FILTER (WHERE memory_space = 'smem') AS smem_bytes
  FROM llo_dump_allocations GROUP BY trace_id, hlo_op
),
dumps AS (
  SELECT k.trace_id, k.hlo_op, 'dump' AS source, CAST(NULL AS VARCHAR) AS hlo_module,
         coalesce(l.bundles, u.bundles) AS bundles,
         l.bundles - coalesce(b.busy_bundles, 0) AS empty_bundles,
         u.bundles AS unit_bundles, m.vmem_bytes, m.smem_bytes,
         CAST(NULL AS BIGINT) AS peak_vregs, CAST(NULL AS BIGINT) AS peak_sregs,
         CAST(NULL AS BIGINT) AS peak_pregs
  FROM dump_kernels k
  LEFT JOIN dump_bundle_lines l ON l.trace_id = k.trace_id AND l.hlo_op = k.hlo_op
  LEFT JOIN dump_busy b ON b.trace_id = k.trace_id AND b.hlo_op = k.hlo_op
  LEFT JOIN dump_unit_rows u ON u.trace_id = k.trace_id AND u.hlo_op = k.hlo_op
  LEFT JOIN dump_memory m ON m.trace_id = k.trace_id AND m.hlo_op = k.hlo_op
),
dump_units AS (
  SELECT trace_id, hlo_op, unit, sum(used) AS used, max(capacity) AS capacity
  FROM llo_dump_bundle_units GROUP BY trace_id, hlo_op, unit
),
ranked_programs AS (
  SELECT trace_id, hlo_op, device_id, metadata_id, hlo_module, bundles,
         row_number() OVER (PARTITION BY trace_id, hlo_op ORDER BY device_id, metadata_id) AS nth
  FROM llo_programs WHERE decode_status = 'ok'
),
programs AS (SELECT * FROM ranked_programs WHERE nth = 1),
program_units AS (
  SELECT u.trace_id, u.hlo_op, u.bundle, u.unit, u.used, u.capacity
  FROM llo_bundle_units u
  JOIN programs p ON p.trace_id = u.trace_id AND p.device_id = u.device_id
   AND p.metadata_id = u.metadata_id
),
capture_units AS (
  SELECT trace_id, hlo_op, unit, sum(used) AS used, max(capacity) AS capacity
  FROM program_units GROUP BY trace_id, hlo_op, unit
),
capture_unit_known AS (SELECT DISTINCT trace_id, hlo_op FROM program_units),
capture_busy AS (
  SELECT trace_id, hlo_op, count(DISTINCT bundle) AS busy_bundles
  FROM program_units WHERE used > 0 GROUP BY trace_id, hlo_op
),
capture_memory AS (
  SELECT a.trace_id, a.hlo_op,
         sum(a.size_bytes) FILTER (WHERE a.memory_space = 'vmem') AS vmem_bytes,
         sum(a.size_bytes) FILTER (WHERE a.memory_space = 'smem') AS smem_bytes
  FROM llo_allocations a
  JOIN programs p ON p.trace_id = a.trace_id AND p.device_id = a.device_id
   AND p.metadata_id = a.metadata_id
  GROUP BY a.trace_id, a.hlo_op
),
capture_registers AS (
  SELECT r.trace_id, r.hlo_op,
         max(r.live) FILTER (WHERE r.register_type = 'VREG') AS peak_vregs,
         max(r.live) FILTER (WHERE r.register_type = 'SREG') AS peak_sregs,
         max(r.live) FILTER (WHERE r.register_type = 'PREG') AS peak_pregs
  FROM llo_register_pressure r
  JOIN programs p ON p.trace_id = r.trace_id AND p.device_id = r.device_id
   AND p.metadata_id = r.metadata_id
  GROUP BY r.trace_id, r.hlo_op
),
captures AS (
  SELECT p.trace_id, p.hlo_op, 'capture' AS source, p.hlo_module, p.bundles,
         CASE WHEN k.trace_id IS NOT NULL THEN p.bundles - coalesce(b.busy_bundles, 0) END
           AS empty_bundles,
         p.bundles AS unit_bundles, m.vmem_bytes, m.smem_bytes, r.peak_vregs, r.peak_sregs, r.peak_pregs
  FROM programs p
  LEFT JOIN capture_unit_known k ON k.trace_id = p.trace_id AND k.hlo_op = p.hlo_op
  LEFT JOIN capture_busy b ON b.trace_id = p.trace_id AND b.hlo_op = p.hlo_op
  LEFT JOIN capture_memory m ON m.trace_id = p.trace_id AND m.hlo_op = p.hlo_op
  LEFT JOIN capture_registers r ON r.trace_id = p.trace_id AND r.hlo_op = p.hlo_op
),
ops AS (
  SELECT o.trace_id, CAST(o.display_name AS VARCHAR) AS display_name,
         split_part(CAST(o.hlo_op AS VARCHAR), '::', -1) AS hlo_op,
         regexp_replace(CAST(m.name AS VARCHAR), '\([0-9]+\)$', '') AS hlo_module, o.dur_ps
  FROM device_ops o
  LEFT JOIN events m ON m.trace_id = o.trace_id AND m.event_id = o.module_event_id
),
measured AS (
  SELECT p.trace_id, p.hlo_op, count(*) AS executions, avg(o.dur_ps) / 1e6 AS mean_us
  FROM programs p
  JOIN ops o ON o.trace_id = p.trace_id AND (o.display_name = p.hlo_op OR o.hlo_op = p.hlo_op)
   AND (o.hlo_module IS NULL OR p.hlo_module IS NULL OR o.hlo_module = p.hlo_module)
  GROUP BY p.trace_id, p.hlo_op
),
kernels AS (SELECT * FROM dumps UNION ALL SELECT * FROM captures),
units AS (SELECT * FROM dump_units UNION ALL SELECT * FROM capture_units),
unit_totals AS (
  SELECT trace_id, hlo_op,
         max(CASE WHEN unit = 'MXU' THEN used END) AS mxu_used,
         max(CASE WHEN unit = 'MXU' THEN capacity END) AS mxu_capacity,
         max(CASE WHEN unit = 'VALU' THEN used END) AS valu_used,
         max(CASE WHEN unit = 'VALU' THEN capacity END) AS valu_capacity,
         max(CASE WHEN unit = 'VLD' THEN used END) AS vld_used,
         max(CASE WHEN unit = 'VLD' THEN capacity END) AS vld_capacity,
         max(CASE WHEN unit = 'VST' THEN used END) AS vst_used,
         max(CASE WHEN unit = 'VST' THEN capacity END) AS vst_capacity,
         max(CASE WHEN unit = 'SALU' THEN used END) AS salu_used,
         max(CASE WHEN unit = 'SALU' THEN capacity END) AS salu_capacity,
         max(CASE WHEN unit = 'XLU' THEN used END) AS xlu_used,
         max(CASE WHEN unit = 'XLU' THEN capacity END) AS xlu_capacity,
         max(CASE WHEN unit = 'EUP' THEN used END) AS eup_used,
         max(CASE WHEN unit = 'EUP' THEN capacity END) AS eup_capacity,
         coalesce(max(CASE WHEN unit = 'SPILL' THEN used END), 0) AS spill_slots,
         coalesce(max(CASE WHEN unit = 'FILL' THEN used END), 0) AS fill_slots
  FROM units GROUP BY trace_id, hlo_op
)
SELECT k.trace_id, k.hlo_op, k.source, k.hlo_module, k.bundles, k.empty_bundles,
       100.0 * u.mxu_used / nullif(u.mxu_capacity * k.unit_bundles, 0) AS mxu_pct,
       100.0 * u.valu_used / nullif(u.valu_capacity * k.unit_bundles, 0) AS valu_pct,
       100.0 * u.vld_used / nullif(u.vld_capacity * k.unit_bundles, 0) AS vld_pct,
       100.0 * u.vst_used / nullif(u.vst_capacity * k.unit_bundles, 0) AS vst_pct,
       100.0 * u.salu_used / nullif(u.salu_capacity * k.unit_bundles, 0) AS salu_pct,
       100.0 * u.xlu_used / nullif(u.xlu_capacity * k.unit_bundles, 0) AS xlu_pct,
       100.0 * u.eup_used / nullif(u.eup_capacity * k.unit_bundles, 0) AS eup_pct,
       u.spill_slots, u.fill_slots, k.vmem_bytes, k.smem_bytes,
       k.peak_vregs, k.peak_sregs, k.peak_pregs, m.executions, m.mean_us
FROM kernels k
LEFT JOIN unit_totals u ON u.trace_id = k.trace_id AND u.hlo_op = k.hlo_op
LEFT JOIN measured m ON m.trace_id = k.trace_id AND m.hlo_op = k.hlo_op
