-- Per TPU counter sample: each unit's achieved instructions against its
-- peak (scalar, vector ALUs, loads, stores, MXU, XU, RPU over cycles),
-- XProf's utilization viewer with the facts file's counter names.
-- @column trace_id: The converted input (`traces.trace_id`).
-- @column device_id: The TPU or SparseCore device.
-- @column device_name: The device's name (`devices.name`).
-- @column track_id: The counter line's track (`tracks.kind = 'counters'`).
-- @column sample: Number of the sample on its track, from 0 in time order (the counters at one time
--   are one sample).
-- @column ts_ps: Sample time, in ps from the trace start.
-- @column name: The viewer's row: `Scalar Unit`, `Vector ALUs`, `Vector Stores`, `Vector Loads`,
--   `MXU`, `XU` or `RPU`.
-- @column unit: The functional unit in this project's names: `SALU`, `VALU`, `VST`, `VLD`, `MXU`,
--   `XLU` or `RPU`.
-- @column achieved: Instructions the unit's counters counted in the sample (`count_s0_instruction`
--   + `count_s1_instruction`, `count_matmul`, ...), a count.
-- @column peak: Instructions the unit could issue in the sample's cycles, a count: 2 × cycles
--   (scalar unit, vector ALUs), cycles / 8 (MXU), else cycles; above 0.
-- @column utilization: `achieved` over `peak`: a ratio (1 is the peak).
-- @column measured: Always TRUE: hardware counters.
--
-- Per TPU counter sample (a counter line's samples at one time): each
-- unit's achieved instructions against its peak, as XProf's utilization
-- viewer divides instruction counters by cycles, with the formulas and
-- counter names of shared/formats/tpu-llo.md:
--
-- | name | achieved | peak |
-- |---|---|---|
-- | Scalar Unit | count_s0_instruction + count_s1_instruction | 2 × cycles |
-- | Vector ALUs | count_v0_instruction + count_v1_instruction | 2 × cycles |
-- | Vector Stores | count_vector_store | cycles |
-- | Vector Loads | count_vector_load | cycles |
-- | MXU | count_matmul | cycles / 8 |
-- | XU | count_transpose | cycles |
-- | RPU | count_rpu_instruction | cycles |
--
-- `cycles` is the sample's `cycles` (or `count_cycles`, `cycle_count`)
-- counter; a sample without one has no rows. XProf 2.24.2's own viewer
-- reads v6e/v7x counters by hardware register id (not in the file's
-- names) with generation-specific formulas, so this view follows the
-- facts file and is not compared with it. Counters are measured.
WITH samples AS (
  SELECT c.trace_id, t.device_id, d.name AS device_name, c.track_id, c.ts_ps,
         lower(c.name) AS name, c.value
  FROM counters c
  JOIN tracks t ON t.trace_id = c.trace_id AND t.track_id = c.track_id
  JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id
  WHERE d.kind IN ('tpu', 'sparse_core') AND t.kind = 'counters'
),
per_sample AS (
  SELECT trace_id, device_id, device_name, track_id, ts_ps,
         max(CASE WHEN name IN ('cycles', 'count_cycles', 'cycle_count') THEN value END) AS cycles,
         sum(CASE WHEN name IN ('count_s0_instruction', 'count_s1_instruction') THEN value END) AS scalar,
         sum(CASE WHEN name IN ('count_v0_instruction', 'count_v1_instruction') THEN value END) AS vector,
         sum(CASE WHEN name = 'count_vector_store' THEN value END) AS stores,
         sum(CASE WHEN name = 'count_vector_load' THEN value END) AS loads,
         sum(CASE WHEN name = 'count_matmul' THEN value END) AS matmul,
         sum(CASE WHEN name = 'count_transpose' THEN value END) AS transpose,
         sum(CASE WHEN name = 'count_rpu_instruction' THEN value END) AS rpu
  FROM samples
  GROUP BY trace_id, device_id, device_name, track_id, ts_ps
),
rows_ AS (
  SELECT trace_id, device_id, device_name, track_id, ts_ps, 'Scalar Unit' AS name, 'SALU' AS unit, scalar AS achieved, 2 * cycles AS peak FROM per_sample
  UNION ALL SELECT trace_id, device_id, device_name, track_id, ts_ps, 'Vector ALUs', 'VALU', vector, 2 * cycles FROM per_sample
  UNION ALL SELECT trace_id, device_id, device_name, track_id, ts_ps, 'Vector Stores', 'VST', stores, cycles FROM per_sample
  UNION ALL SELECT trace_id, device_id, device_name, track_id, ts_ps, 'Vector Loads', 'VLD', loads, cycles FROM per_sample
  UNION ALL SELECT trace_id, device_id, device_name, track_id, ts_ps, 'MXU', 'MXU', matmul, cycles / 8 FROM per_sample
  UNION ALL SELECT trace_id, device_id, device_name, track_id, ts_ps, 'XU', 'XLU', transpose, cycles FROM per_sample
  UNION ALL SELECT trace_id, device_id, device_name, track_id, ts_ps, 'RPU', 'RPU', rpu, cycles FROM per_sample
)
SELECT trace_id, device_id, device_name, track_id,
       dense_rank() OVER (PARTITION BY trace_id, device_id, track_id ORDER BY ts_ps) - 1 AS sample,
       ts_ps, name, unit, achieved, peak, achieved / peak AS utilization,
       TRUE AS measured
FROM rows_
WHERE achieved IS NOT NULL AND peak > 0
