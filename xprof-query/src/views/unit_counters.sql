-- TPU counter samples (hardware counters on `_counters_`/`TC Stats`/`SC
-- Stats`/`CMN Stats`, the `LLO Utilization` series, the static per-region
-- `% util` series of a kernel-profiling capture) with the functional unit
-- each measures, whether it is measured or static, and for static samples
-- the LLO region they describe (the next marker's).
-- @column trace_id: The converted input (`traces.trace_id`).
-- @column device_id: The TPU or SparseCore device.
-- @column device_name: The device's name (`devices.name`).
-- @column track_id: The counter line's track.
-- @column line: Name of the counter line (`_counters_`, `TC Stats`, `SC Stats`, `CMN Stats`,
--   `LLO Utilization`).
-- @column event_id: The event the sample was read from.
-- @column name: Counter name (`counters.name`): the event name for `counter_value`, else
--   `event name/stat name` (`MXU/% util`).
-- @column ts_ps: Sample time, in ps from the trace start.
-- @column value: Sample value, in the counter's own unit (a count, bytes, a percent for `% util`).
-- @column unit: Functional unit the counter measures, from its name: `SALU`, `VALU`, `EUP`, `VLD`,
--   `VST`, `VMEM` (vector fills and spills), `XLU`, `MXU` or `RPU`; NULL for a counter of no known
--   unit (cycles, DMA bytes).
-- @column is_llo_utilization: Whether the sample is on the `LLO Utilization` line.
-- @column measured: FALSE for the static `% util`, `spills` and `fills` series of `_counters_` (the
--   compiler's slot occupancy of an LLO region, laid on the timeline); TRUE for everything else
--   (hardware counters).
-- @column kernel_event_id: The `XLA Ops`/`PALLAS` event containing the sample
--   (`events.kernel_event_id`); NULL when none.
-- @column region_id: For a static sample: the LLO region whose marker comes next in the same kernel
--   execution, whose value the sample carries; NULL after the kernel's last marker and for measured
--   samples.
--
-- Counter samples of TPU devices with the functional unit each measures:
-- the `LLO Utilization` series (`Scalar ALU`, `Vector ALU`, `Vector EUP`,
-- `Vector Fills`, `Vector Load`, `Vector Spills`, `Vector Store`, `XLU`;
-- every numeric stat of those events is a sample, as on `_counters_`
-- lines), hardware counters (`counter_value` events on `_counters_`,
-- `TC Stats`, `SC Stats`, `CMN Stats` lines) named as in
-- shared/formats/tpu-llo.md (`count_s0_instruction`, `count_v1_instruction`,
-- `count_matmul`, `count_transpose`, `count_rpu_instruction`, vector load and
-- store counts), and the per-unit series of a kernel-profiling capture
-- (`MXU/% util`, `Vector ALU/% util`, ..., `Vector Spills/spills`,
-- `Vector Fills/fills` on `_counters_`). `unit` is NULL for a counter of no
-- known unit (cycles, DMA bytes, ...): the row is still here.
--
-- `measured` says what a sample is. The `% util`/`spills`/`fills` series of
-- a kernel-profiling capture are FALSE: static, the compiler's slot
-- occupancy of one LLO region (`100 * sum(used) / (capacity * slots)` over
-- the region's schedule slots), laid on the timeline. Each such sample
-- carries the value of the region whose marker comes next in the same
-- kernel execution, `region_id` (NULL after the kernel's last marker):
-- key such values by region, not by time. Everything else is TRUE
-- (hardware counters) and has no `region_id`. `kernel_event_id` is the
-- `XLA Ops` event the sample starts in.
WITH samples AS (
  SELECT c.trace_id, t.device_id, d.name AS device_name, c.track_id, t.name AS line,
         c.event_id, c.name, lower(c.name) AS lname, c.ts_ps, c.value
  FROM counters c
  JOIN tracks t ON t.trace_id = c.trace_id AND t.track_id = c.track_id
  JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id
  WHERE d.kind IN ('tpu', 'sparse_core')
),
typed AS (
  SELECT s.*, e.kernel_event_id,
         s.line = '_counters_' AND (ends_with(s.name, '/% util') OR ends_with(s.name, '/spills')
                                    OR ends_with(s.name, '/fills')) AS is_static
  FROM samples s
  JOIN events e ON e.trace_id = s.trace_id AND e.event_id = s.event_id
),
markers AS (
  SELECT trace_id, kernel_event_id, ts_ps, entry, region_id
  FROM llo_region_entries
  WHERE kernel_event_id IS NOT NULL
),
-- Markers and static samples of each kernel execution in time order, a
-- marker before a sample at the same time: a sample's next marker is the
-- one after the markers counted so far.
timeline AS (
  SELECT trace_id, kernel_event_id, ts_ps, 0 AS ord, CAST(NULL AS BIGINT) AS event_id,
         CAST(NULL AS VARCHAR) AS name
  FROM markers
  UNION ALL
  SELECT trace_id, kernel_event_id, ts_ps, 1, event_id, name
  FROM typed
  WHERE is_static AND kernel_event_id IS NOT NULL
),
counted AS (
  SELECT trace_id, kernel_event_id, event_id, name, ord,
         sum(CASE WHEN ord = 0 THEN 1 ELSE 0 END) OVER (
           PARTITION BY trace_id, kernel_event_id ORDER BY ts_ps, ord
           ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS markers_before
  FROM timeline
),
keyed AS (
  SELECT c.trace_id, c.event_id, c.name, m.region_id
  FROM counted c
  JOIN markers m ON m.trace_id = c.trace_id AND m.kernel_event_id = c.kernel_event_id
    AND m.entry = c.markers_before
  WHERE c.ord = 1
)
SELECT s.trace_id, s.device_id, s.device_name, s.track_id, s.line, s.event_id, s.name,
       s.ts_ps, s.value,
       CASE
         WHEN s.lname LIKE 'scalar alu%' OR s.lname ~ '^count_s[0-9]+_instruction' THEN 'SALU'
         WHEN s.lname LIKE 'vector alu%' OR s.lname ~ '^count_v[0-9]+_instruction' THEN 'VALU'
         WHEN s.lname LIKE 'vector eup%' THEN 'EUP'
         WHEN s.lname LIKE 'vector load%' OR s.lname LIKE 'count_vector_load%' OR s.lname LIKE 'count_vld%' THEN 'VLD'
         WHEN s.lname LIKE 'vector store%' OR s.lname LIKE 'count_vector_store%' OR s.lname LIKE 'count_vst%' THEN 'VST'
         WHEN s.lname LIKE 'vector fills%' OR s.lname LIKE 'vector spills%' THEN 'VMEM'
         WHEN s.lname LIKE 'xlu%' OR s.lname LIKE 'count_transpose%' THEN 'XLU'
         WHEN s.lname LIKE 'mxu%' OR s.lname LIKE 'count_matmul%' THEN 'MXU'
         WHEN s.lname LIKE 'count_rpu_instruction%' THEN 'RPU'
       END AS unit,
       s.line = 'LLO Utilization' AS is_llo_utilization,
       NOT s.is_static AS measured,
       s.kernel_event_id,
       k.region_id
FROM typed s
LEFT JOIN keyed k ON k.trace_id = s.trace_id AND k.event_id = s.event_id AND k.name = s.name
