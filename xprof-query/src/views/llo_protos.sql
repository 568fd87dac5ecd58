-- The static LLO modules (`llo_proto` stats) a TPU profile carries: where,
-- their program when known, size, and the bytes as they are (not decoded).
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column device_id: the device (plane) carrying the stat: the plane itself, its event metadata,
--   or the event's track (`devices.device_id`).
-- @column device_name: that device's name (e.g. `/host:metadata`).
-- @column event_id: the event carrying the stat; NULL for a plane or event-metadata stat.
-- @column program: the program: the event metadata's name `<module>(<module id>)::<HLO op>`, or
--   the event's name; NULL for a plane stat.
-- @column bytes: size of the payload, in bytes.
-- @column payload: the `llo_proto` bytes as written, not decoded.
--
-- The static LLO modules a TPU profile carries as `llo_proto` stats: of
-- the `/host:metadata` plane, of its event metadata (a kernel-profiling
-- capture: one per program, named `<module>(<module id>)::<HLO op>`, in
-- `program`, with `metadata_id`), or of events (named by the event): their
-- size, with the bytes kept as they are. `llo_programs` and the other
-- `llo_*` tables hold what the converter decoded of them.
SELECT a.trace_id, a.device_id, d.name AS device_name, CAST(NULL AS BIGINT) AS event_id,
       CAST(NULL AS VARCHAR) AS program, byte_length(a.bytes_value) AS bytes,
       a.bytes_value AS payload
FROM device_args a
JOIN devices d ON d.trace_id = a.trace_id AND d.device_id = a.device_id
WHERE a.key = 'llo_proto'
UNION ALL
SELECT a.trace_id, t.device_id, d.name AS device_name, a.event_id,
       CAST(e.name AS VARCHAR) AS program, byte_length(a.bytes_value) AS bytes,
       a.bytes_value AS payload
FROM event_args a
JOIN events e ON e.trace_id = a.trace_id AND e.event_id = a.event_id
JOIN tracks t ON t.trace_id = e.trace_id AND t.track_id = e.track_id
JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id
WHERE a.key = 'llo_proto'
UNION ALL
SELECT a.trace_id, a.device_id, d.name AS device_name, CAST(NULL AS BIGINT) AS event_id,
       m.name AS program, byte_length(a.bytes_value) AS bytes, a.bytes_value AS payload
FROM metadata_args a
JOIN event_metadata m ON m.trace_id = a.trace_id AND m.device_id = a.device_id
  AND m.metadata_id = a.metadata_id
JOIN devices d ON d.trace_id = a.trace_id AND d.device_id = a.device_id
WHERE a.key = 'llo_proto'
