-- Per kernel execution: time memory units (VLD/VST/DMA) and compute units
-- (VALU/EUP/XLU/MXU) are busy together, each alone, and neither (XProf's
-- memory/compute concurrency, per kernel).
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column device_id: the TPU device (`devices.device_id`).
-- @column kernel_event_id: the kernel execution: the `XLA Ops`/`PALLAS` event containing the
--   instructions (`events.event_id`).
-- @column kernel: the kernel's short name (`display_name` of that event).
-- @column kernel_dur_ps: kernel duration, in ps.
-- @column memory_busy_ps: time some memory unit (`VLD`, `VST`, a `DMA*` lane) ran an instruction
--   (union of intervals), in ps; 0 when none did.
-- @column compute_busy_ps: time some compute unit (`VALU`, `EUP`, `XLU`, `MXU*`) ran an
--   instruction (union of intervals), in ps; 0 when none did.
-- @column overlap_ps: time memory and compute units were busy together, in ps.
-- @column memory_only_ps: time memory units were busy and no compute unit was, in ps.
-- @column compute_only_ps: time compute units were busy and no memory unit was, in ps.
-- @column neither_ps: kernel duration less the time either class was busy, in ps (scalar-only
--   time counts here).
-- @column overlap_pct: `overlap_ps` over `kernel_dur_ps`, in percent (0 to 100); NULL when the
--   kernel's duration is 0.
-- @column measured: always NULL: between trace points times are interpolated from the compiler's
--   cycle model, and no stat says which were measured.
--
-- Per kernel execution: time in which memory units (`VLD`, `VST`, and any
-- `DMA*` lane) and compute units (`VALU`, `EUP`, `XLU`, `MXU*`) are busy
-- together (`overlap_ps`), each alone, and neither (`neither_ps`: the
-- kernel's duration less the union of both; scalar-only time counts as
-- neither), from the unions of their instruction intervals: XProf's
-- memory/compute concurrency detector, per kernel.
WITH classed AS (
  SELECT trace_id, device_id, kernel_event_id, kernel, ts_ps, ts_ps + dur_ps AS end_ps,
         CASE WHEN unit IN ('VLD', 'VST') OR unit LIKE 'DMA%' THEN 'memory'
              WHEN unit IN ('VALU', 'EUP', 'XLU') OR unit LIKE 'MXU%' THEN 'compute' END AS class
  FROM llo_instructions
  WHERE kernel_event_id IS NOT NULL
),
busy AS (
  SELECT trace_id, device_id, kernel_event_id, kernel,
         coalesce(busy_ps(CASE WHEN class = 'memory' THEN ts_ps END,
                          CASE WHEN class = 'memory' THEN end_ps END), 0) AS memory_busy_ps,
         coalesce(busy_ps(CASE WHEN class = 'compute' THEN ts_ps END,
                          CASE WHEN class = 'compute' THEN end_ps END), 0) AS compute_busy_ps,
         coalesce(busy_ps(CASE WHEN class IS NOT NULL THEN ts_ps END,
                          CASE WHEN class IS NOT NULL THEN end_ps END), 0) AS either_busy_ps
  FROM classed
  GROUP BY trace_id, device_id, kernel_event_id, kernel
)
SELECT b.trace_id, b.device_id, b.kernel_event_id, b.kernel, k.dur_ps AS kernel_dur_ps,
       b.memory_busy_ps, b.compute_busy_ps,
       b.memory_busy_ps + b.compute_busy_ps - b.either_busy_ps AS overlap_ps,
       b.either_busy_ps - b.compute_busy_ps AS memory_only_ps,
       b.either_busy_ps - b.memory_busy_ps AS compute_only_ps,
       k.dur_ps - b.either_busy_ps AS neither_ps,
       100.0 * (b.memory_busy_ps + b.compute_busy_ps - b.either_busy_ps) / nullif(k.dur_ps, 0) AS overlap_pct,
       CAST(NULL AS BOOLEAN) AS measured
FROM busy b
JOIN events k ON k.trace_id = b.trace_id AND k.event_id = b.kernel_event_id
