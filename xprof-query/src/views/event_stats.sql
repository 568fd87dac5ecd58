-- Every stat of every event: its own (`origin = 'event'`) and those of its
-- metadata it does not override (`origin = 'metadata'`).
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column event_id: the event the stat belongs to (`events.event_id`).
-- @column key: stat name.
-- @column value_type: which value the stat had on the wire: `int`, `uint`, `double`, `str`,
--   `bytes`, `ref` (resolved to its string in `str_value`), `compressed_str` (inflated into
--   `str_value`) or `none`.
-- @column int_value: the stat's `int64_value`; NULL for other value types.
-- @column uint_value: the stat's `uint64_value`, or the raw id of a `ref_value`; NULL otherwise.
-- @column double_value: the stat's `double_value`; NULL for other value types.
-- @column str_value: the stat's `str_value`, the resolved string of a `ref_value`, or the
--   inflated `compressed_str_value`; NULL otherwise.
-- @column bytes_value: the stat's `bytes_value`, kept as is; NULL for other value types.
-- @column origin: where the stat comes from: `event` (the event's own stat, `event_args`) or
--   `metadata` (a stat of its event metadata, `metadata_args`, that the event does not override).
--
-- Every stat of every event as XProf sees it: the event's own stats, plus
-- the stats of its metadata that the event does not override.
SELECT a.trace_id, a.event_id, a.key, a.value_type,
       a.int_value, a.uint_value, a.double_value, a.str_value, a.bytes_value,
       'event' AS origin
FROM event_args a
UNION ALL
SELECT e.trace_id, e.event_id, m.key, m.value_type,
       m.int_value, m.uint_value, m.double_value, m.str_value, m.bytes_value,
       'metadata' AS origin
FROM events e
JOIN tracks t ON e.trace_id = t.trace_id AND e.track_id = t.track_id
JOIN metadata_args m
  ON e.trace_id = m.trace_id AND t.device_id = m.device_id AND e.metadata_id = m.metadata_id
WHERE NOT EXISTS (
  SELECT 1 FROM event_args o
  WHERE o.trace_id = e.trace_id AND o.event_id = e.event_id AND o.key = m.key
)
