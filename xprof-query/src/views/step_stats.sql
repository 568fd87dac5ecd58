-- Per step and device: start, duration, ops, busy time (union of op
-- intervals within the step), idle; steps from the device's `Steps` line or
-- the host's step annotations.
-- @column trace_id: The converted input (`traces.trace_id`).
-- @column device_id: The device whose ops the row counts; for a step with no ops, the device of the
--   step marker (a TPU or the host).
-- @column step_event_id: `event_id` of the step marker: the device's `Steps` event or the host's
--   step annotation.
-- @column step_num: Step number: the marker's `step_num` stat, else (a device step) its name read
--   as a number; NULL when neither gives one.
-- @column step_name: The device step's event name, or for a host step the event name and its step
--   number (`train 0`).
-- @column step_source: `device` (the devices' `Steps` lines, TPU or SparseCore) or `host` (host
--   step annotations, used only in a trace with no device steps).
-- @column start_ps: Start of the step marker, in ps from the trace start.
-- @column dur_ps: Duration of the step marker, in ps.
-- @column ops: Ops of the step on this device, a count (0 for a step with none).
-- @column first_op_ps: Start of the step's first op on this device, in ps from the trace start;
--   NULL when it has no ops.
-- @column last_op_ps: End of the step's last op on this device, in ps from the trace start (GPU
--   kernels may end past the marker); NULL when it has no ops.
-- @column busy_ps: Union of the step's op intervals on this device, in ps (overlaps counted once);
--   0 when it has no ops.
-- @column idle_ps: `dur_ps` less `busy_ps`, at least 0, in ps.
--
-- Per step and device: the step marker's start and duration, the ops
-- that belong to the step, the first op's start and the last op's end,
-- busy time (union of the ops' intervals) and idle (duration less busy,
-- at least 0). Steps come from the devices' own `Steps` lines (TPU,
-- SparseCore) in a trace that has them, else from the host's step
-- annotations (events with a `step_num` stat, e.g.
-- JAX `StepTraceAnnotation`): ops on a device with a `Steps` line belong
-- to the step containing them, host ops to the host step they start in,
-- GPU kernels to the host step in which their launch (`correlation_id`)
-- started (so they may run past the marker's end).
WITH device_steps AS (
  SELECT e.trace_id, t.device_id, e.event_id AS step_event_id,
         coalesce(e.step_num, try_cast(e.name AS BIGINT)) AS step_num,
         e.name AS step_name, e.ts_ps AS start_ps, e.dur_ps,
         'device' AS step_source
  FROM events e
  JOIN tracks t ON e.trace_id = t.trace_id AND e.track_id = t.track_id
  WHERE t.kind IN ('steps', 'sparse_core_steps')
),
host_steps AS (
  SELECT e.trace_id, t.device_id, e.event_id AS step_event_id, e.step_num,
         e.name || ' ' || CAST(e.step_num AS VARCHAR) AS step_name,
         e.ts_ps AS start_ps, e.dur_ps, 'host' AS step_source
  FROM events e
  JOIN tracks t ON e.trace_id = t.trace_id AND e.track_id = t.track_id
  JOIN devices d ON t.trace_id = d.trace_id AND t.device_id = d.device_id
  WHERE d.kind = 'host' AND t.kind = 'thread' AND e.step_num IS NOT NULL
    AND e.trace_id NOT IN (SELECT trace_id FROM device_steps)
),
steps AS (
  SELECT * FROM device_steps
  UNION ALL
  SELECT * FROM host_steps
),
-- Host ops and GPU kernels are placed in the host step that started last
-- at or before their start (a kernel: its launch's start) by one ordered
-- pass, not a range join, then kept if they start before that step ends.
timed_points AS (
  SELECT trace_id, start_ps AS ts_ps, 0 AS ord, step_event_id,
         CAST(NULL AS BIGINT) AS event_id
  FROM host_steps
  UNION ALL
  SELECT trace_id, ts_ps, 1, CAST(NULL AS BIGINT), event_id
  FROM device_ops
  WHERE device_kind = 'host'
  UNION ALL
  SELECT o.trace_id, h.ts_ps, 1, CAST(NULL AS BIGINT), o.event_id
  FROM device_ops o
  JOIN flows f ON f.trace_id = o.trace_id AND f.dst_event_id = o.event_id
              AND f.kind = 'correlation_id'
  JOIN events h ON h.trace_id = f.trace_id AND h.event_id = f.src_event_id
  WHERE o.step_event_id IS NULL AND o.device_kind <> 'host'
),
-- `step_seq` counts the steps started so far: an op's is that of the
-- last step at or before it. (Not `last_value(…) IGNORE NULLS`: Apache
-- Ballista's plans lose IGNORE NULLS of window functions in
-- datafusion-proto 55, and the view then placed no op.)
placed AS (
  SELECT trace_id, ts_ps, event_id,
         sum(1 - ord) OVER (
           PARTITION BY trace_id ORDER BY ts_ps, ord
           ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS step_seq
  FROM timed_points
),
host_step_seq AS (
  SELECT trace_id, step_event_id, start_ps, dur_ps,
         CAST(row_number() OVER (PARTITION BY trace_id ORDER BY start_ps) AS BIGINT) AS step_seq
  FROM host_steps
),
op_steps AS (
  SELECT o.trace_id, o.device_id, o.device_name, o.event_id, o.ts_ps, o.end_ps,
         o.step_event_id
  FROM device_ops o
  WHERE o.step_event_id IS NOT NULL
  UNION ALL
  SELECT o.trace_id, o.device_id, o.device_name, o.event_id, o.ts_ps, o.end_ps,
         s.step_event_id
  FROM placed p
  JOIN host_step_seq s ON s.trace_id = p.trace_id AND s.step_seq = p.step_seq
  JOIN device_ops o ON o.trace_id = p.trace_id AND o.event_id = p.event_id
  WHERE p.event_id IS NOT NULL AND p.ts_ps < s.start_ps + s.dur_ps
)
SELECT s.trace_id, coalesce(o.device_id, s.device_id) AS device_id,
       s.step_event_id, s.step_num, s.step_name, s.step_source,
       s.start_ps, s.dur_ps,
       count(o.event_id) AS ops,
       min(o.ts_ps) AS first_op_ps,
       max(o.end_ps) AS last_op_ps,
       coalesce(busy_ps(o.ts_ps, o.end_ps), 0) AS busy_ps,
       greatest(s.dur_ps - coalesce(busy_ps(o.ts_ps, o.end_ps), 0), 0) AS idle_ps
FROM steps s
LEFT JOIN op_steps o ON o.trace_id = s.trace_id AND o.step_event_id = s.step_event_id
GROUP BY s.trace_id, coalesce(o.device_id, s.device_id), s.step_event_id,
         s.step_num, s.step_name, s.step_source, s.start_ps, s.dur_ps
