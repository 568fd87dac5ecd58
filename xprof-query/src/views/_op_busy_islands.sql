-- Helper of the async and concurrency views: the busy islands of the TPU
-- op lines, their events' intervals merged where they overlap or touch
-- (the union of them, the interval-merging rule written once), per
-- `scope`: `device_compute` merges a device's `XLA Ops` and `Sparse Core
-- Ops` events that are no async op (what `async_overlap` counts as
-- compute), `track` each `XLA Ops` or `Sparse Core Ops` line's events, async
-- ops included (an engine's busy time in `engine_concurrency`). Events of
-- no length are left out.
-- @column scope: `device_compute` or `track`.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column group_id: the device (`devices.device_id`) for `device_compute`, the line
--   (`tracks.track_id`) for `track`.
-- @column start_ps: start of the island, ps from the trace start.
-- @column end_ps: end of the island, ps from the trace start.
--
WITH spans AS (
  SELECT 'device_compute' AS scope, trace_id, device_id AS group_id, start_ps, end_ps
  FROM _tpu_op_events
  WHERE line_name <> 'Async XLA Ops' AND role IS NULL AND end_ps > start_ps
  UNION ALL
  SELECT 'track' AS scope, trace_id, track_id AS group_id, start_ps, end_ps
  FROM _tpu_op_events
  WHERE line_name <> 'Async XLA Ops' AND end_ps > start_ps
),
ordered AS (
  SELECT scope, trace_id, group_id, start_ps, end_ps,
         max(end_ps) OVER (PARTITION BY scope, trace_id, group_id ORDER BY start_ps, end_ps
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_end_ps
  FROM spans
),
islands AS (
  SELECT scope, trace_id, group_id, start_ps, end_ps,
         sum(CASE WHEN start_ps > before_end_ps THEN 1 ELSE 0 END)
           OVER (PARTITION BY scope, trace_id, group_id ORDER BY start_ps, end_ps
                 ROWS UNBOUNDED PRECEDING) AS island
  FROM ordered
)
SELECT scope, trace_id, group_id, min(start_ps) AS start_ps, max(end_ps) AS end_ps
FROM islands
GROUP BY scope, trace_id, group_id, island
