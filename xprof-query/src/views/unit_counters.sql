-- Counter samples of TPU devices with the functional unit each measures:
-- the `LLO Utilization` series (`Scalar ALU`, `Vector ALU`, `Vector EUP`,
-- `Vector Fills`, `Vector Load`, `Vector Spills`, `Vector Store`, `XLU`;
-- every numeric stat of those events is a sample, as on `_counters_`
-- lines) and hardware counters (`counter_value` events on `_counters_`,
-- `TC Stats`, `SC Stats`, `CMN Stats` lines) named as in
-- shared/formats/tpu-llo.md (`count_s0_instruction`, `count_v1_instruction`,
-- `count_matmul`, `count_transpose`, `count_rpu_instruction`, vector load and
-- store counts). `unit` is NULL for a counter of no known unit (cycles,
-- DMA bytes, ...): the row is still here.
WITH samples AS (
  SELECT c.trace_id, t.device_id, d.name AS device_name, c.track_id, t.name AS line,
         c.event_id, c.name, lower(c.name) AS lname, c.ts_ps, c.value
  FROM counters c
  JOIN tracks t ON t.trace_id = c.trace_id AND t.track_id = c.track_id
  JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id
  WHERE d.kind IN ('tpu', 'sparse_core')
)
SELECT trace_id, device_id, device_name, track_id, line, event_id, name, ts_ps, value,
       CASE
         WHEN lname LIKE 'scalar alu%' OR lname ~ '^count_s[0-9]+_instruction' THEN 'SALU'
         WHEN lname LIKE 'vector alu%' OR lname ~ '^count_v[0-9]+_instruction' THEN 'VALU'
         WHEN lname LIKE 'vector eup%' THEN 'EUP'
         WHEN lname LIKE 'vector load%' OR lname LIKE 'count_vector_load%' OR lname LIKE 'count_vld%' THEN 'VLD'
         WHEN lname LIKE 'vector store%' OR lname LIKE 'count_vector_store%' OR lname LIKE 'count_vst%' THEN 'VST'
         WHEN lname LIKE 'vector fills%' OR lname LIKE 'vector spills%' THEN 'VMEM'
         WHEN lname LIKE 'xlu%' OR lname LIKE 'count_transpose%' THEN 'XLU'
         WHEN lname LIKE 'count_matmul%' THEN 'MXU'
         WHEN lname LIKE 'count_rpu_instruction%' THEN 'RPU'
       END AS unit,
       line = 'LLO Utilization' AS is_llo_utilization
FROM samples
