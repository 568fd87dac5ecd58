-- Per device: ops, span from first op to last, busy time as the union of op
-- intervals (overlaps once), idle, busy percent.
-- @column trace_id: The converted input (`traces.trace_id`).
-- @column device_id: The device (`devices.device_id`).
-- @column device_name: The device's name (`devices.name`, e.g. `/device:GPU:0`).
-- @column device_kind: The device's kind (`devices.kind`: `tpu`, `gpu`, `sparse_core`, `custom`,
--   `host`).
-- @column ops: Op and kernel executions on the device (rows of `device_ops`), a count.
-- @column first_ps: Start of the first op, in ps from the trace start.
-- @column last_ps: End of the last op, in ps from the trace start.
-- @column span_ps: `last_ps` less `first_ps`, in ps.
-- @column op_time_ps: Sum of the ops' durations, in ps (overlapping ops each count in full).
-- @column busy_ps: Time at least one op of the device ran, in ps: the union of the ops' intervals
--   (overlaps counted once).
-- @column idle_ps: `span_ps` less `busy_ps`, in ps: time in the span with no op running.
-- @column busy_pct: `busy_ps` over `span_ps`, in percent (0 to 100); NULL when the span is 0.
--
SELECT trace_id, device_id, device_name, device_kind,
       count(*) AS ops,
       min(ts_ps) AS first_ps,
       max(end_ps) AS last_ps,
       max(end_ps) - min(ts_ps) AS span_ps,
       sum(dur_ps) AS op_time_ps,
       busy_ps(ts_ps, end_ps) AS busy_ps,
       max(end_ps) - min(ts_ps) - busy_ps(ts_ps, end_ps) AS idle_ps,
       100.0 * busy_ps(ts_ps, end_ps) / nullif(max(end_ps) - min(ts_ps), 0) AS busy_pct
FROM device_ops
GROUP BY trace_id, device_id, device_name, device_kind
