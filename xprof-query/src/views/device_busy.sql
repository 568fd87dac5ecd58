-- Per device: ops, span from first op to last, busy time as the union of op
-- intervals (overlaps once), idle, busy percent.
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
