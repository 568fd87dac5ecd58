-- Helper of the async and concurrency views: every event of the TPU op
-- lines (`XLA Ops`, `Sparse Core Ops`, `Async XLA Ops`, on any device)
-- with its instruction name and, for an async op, its role and key.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column device_id: its device (`devices.device_id`).
-- @column device_name: the device's name (`/device:TPU:0`).
-- @column track_id: its line (`tracks.track_id`).
-- @column line_name: the line's name: `XLA Ops`, `Sparse Core Ops` or `Async XLA Ops`.
-- @column event_id: the event (`events.event_id`).
-- @column start_ps: start, ps from the trace start.
-- @column end_ps: end (start plus duration), ps from the trace start.
-- @column instruction: the HLO instruction: the event's name less a leading `%` and what follows
--   ` = `.
-- @column role: `start` or `done` for an async op (`<base>-start[.N]`, `<base>-done[.N]`; a
--   `send`/`recv` is a start), NULL for any other op.
-- @column async_key: what pairs an async op's start with its done (`<base>[.N]`); NULL for
--   other ops.
-- @column op: the op family, the last part of the base name that is not a number
--   (`all-gather.4-start` is `all-gather`).
--
WITH op_events AS (
  SELECT e.trace_id, t.device_id, d.name AS device_name, t.track_id,
         CAST(t.name AS VARCHAR) AS line_name,
         e.event_id, e.ts_ps AS start_ps, e.ts_ps + e.dur_ps AS end_ps,
         CASE WHEN starts_with(trim(CAST(e.name AS VARCHAR)), '%')
              THEN trim(split_part(substr(trim(CAST(e.name AS VARCHAR)), 2), ' = ', 1))
              ELSE trim(CAST(e.name AS VARCHAR)) END AS instruction
  FROM events e
  JOIN tracks t ON t.trace_id = e.trace_id AND t.track_id = e.track_id
  JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id
  WHERE t.name IN ('XLA Ops', 'Sparse Core Ops', 'Async XLA Ops')
),
matches AS (
  SELECT o.*,
         regexp_match(instruction, '^(.+)-(start|done)(\.[0-9]+)?$') AS start_done,
         regexp_match(instruction, '^(send|recv)(\.[0-9]+)?$') AS send_recv
  FROM op_events o
)
SELECT trace_id, device_id, device_name, track_id, line_name, event_id, start_ps, end_ps,
       instruction,
       CASE WHEN start_done IS NOT NULL THEN start_done[2]
            WHEN send_recv IS NOT NULL THEN 'start' END AS role,
       CASE WHEN start_done IS NOT NULL THEN start_done[1] || coalesce(start_done[3], '')
            WHEN send_recv IS NOT NULL THEN instruction END AS async_key,
       split_part(regexp_replace(coalesce(start_done[1], send_recv[1], instruction),
                                 '(\.[0-9]*)+$', ''), '.', -1) AS op
FROM matches
