-- Per pair of engines (TensorCore and SparseCore op lines) of a TPU chip:
-- busy time of each and the time both were busy: XProf's
-- analyze_async_overlap concurrency.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column chip: the TPU chip, N of `/device:TPU:N`.
-- @column a_device_name: the first engine's device (`/device:TPU:0`,
--   `/device:TPU:0 SparseCore 1`).
-- @column a_line_name: the first engine's line: `XLA Ops` or `Sparse Core Ops`.
-- @column a_busy_ps: the first engine's busy time (the union of its events), in ps.
-- @column b_device_name: the second engine's device.
-- @column b_line_name: the second engine's line.
-- @column b_busy_ps: the second engine's busy time, in ps.
-- @column concurrent_ps: time both engines were busy, in ps.
-- @column concurrent_ratio: `concurrent_ps` over the shorter busy time, from 0 to 1 (0 when that
--   is 0).
--
-- XProf's `analyze_async_overlap` concurrency (XProf 2.24.2; rules in
-- tests/fixtures/tpu/expected/NOTES.md): per TPU chip, how long each pair
-- of its engines ran at the same time. An engine is a non-empty `XLA Ops`
-- or `Sparse Core Ops` line of a `/device:TPU:N` plane or of one of its
-- SparseCores (`/device:TPU:N SparseCore M`); its busy time is the union
-- of all its events (async ops included). One row per pair of engines of
-- a chip with two or more, `a` before `b` by (device name, line name):
-- `concurrent_ps` is the time both were busy, `concurrent_ratio` that
-- over the shorter busy time (0 when it is 0).
WITH engines AS (
  SELECT t.trace_id, t.track_id, d.name AS device_name, CAST(t.name AS VARCHAR) AS line_name,
         TRY_CAST(regexp_replace(d.name, '^/device:TPU:([0-9]+).*$', '\1') AS BIGINT) AS chip
  FROM tracks t
  JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id
  WHERE t.name IN ('XLA Ops', 'Sparse Core Ops')
    AND d.name ~ '^/device:TPU:([0-9]+)( SparseCore( [A-Za-z]+)? ([0-9]+))?$'
    AND t.event_count > 0
),
busy AS (
  SELECT trace_id, group_id AS track_id, start_ps, end_ps
  FROM _op_busy_islands
  WHERE scope = 'track'
),
engine_busy AS (
  SELECT g.trace_id, g.track_id, g.device_name, g.line_name, g.chip,
         coalesce(sum(b.end_ps - b.start_ps), 0) AS busy_ps,
         count(*) OVER (PARTITION BY g.trace_id, g.chip) AS engines
  FROM engines g
  LEFT JOIN busy b ON b.trace_id = g.trace_id AND b.track_id = g.track_id
  GROUP BY g.trace_id, g.track_id, g.device_name, g.line_name, g.chip
),
engine_pairs AS (
  SELECT a.trace_id, a.chip, a.track_id AS a_track_id, b.track_id AS b_track_id,
         a.device_name AS a_device_name, a.line_name AS a_line_name, a.busy_ps AS a_busy_ps,
         b.device_name AS b_device_name, b.line_name AS b_line_name, b.busy_ps AS b_busy_ps
  FROM engine_busy a
  JOIN engine_busy b
    ON b.trace_id = a.trace_id AND b.chip = a.chip
   AND (a.device_name < b.device_name OR (a.device_name = b.device_name AND a.line_name < b.line_name))
  WHERE a.engines >= 2
),
overlaps AS (
  SELECT p.trace_id, p.a_track_id, p.b_track_id,
         sum(least(x.end_ps, y.end_ps) - greatest(x.start_ps, y.start_ps)) AS concurrent_ps
  FROM engine_pairs p
  JOIN busy x ON x.trace_id = p.trace_id AND x.track_id = p.a_track_id
  JOIN busy y ON y.trace_id = p.trace_id AND y.track_id = p.b_track_id
   AND y.start_ps < x.end_ps AND y.end_ps > x.start_ps
  GROUP BY p.trace_id, p.a_track_id, p.b_track_id
)
SELECT p.trace_id, p.chip, p.a_device_name, p.a_line_name, p.a_busy_ps,
       p.b_device_name, p.b_line_name, p.b_busy_ps,
       coalesce(o.concurrent_ps, 0) AS concurrent_ps,
       coalesce(CAST(o.concurrent_ps AS DOUBLE) / nullif(least(p.a_busy_ps, p.b_busy_ps), 0), 0.0)
         AS concurrent_ratio
FROM engine_pairs p
LEFT JOIN overlaps o
  ON o.trace_id = p.trace_id AND o.a_track_id = p.a_track_id AND o.b_track_id = p.b_track_id
