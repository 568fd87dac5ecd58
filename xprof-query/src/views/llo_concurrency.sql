-- Per kernel execution: time memory units (VLD/VST/DMA) and compute units
-- (VALU/EUP/XLU/MXU) are busy together, each alone, and neither (XProf's
-- memory/compute concurrency, per kernel).
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
