-- Each host launch and the device op it started (`correlation_id` or flow):
-- launch delay and queueing.
-- @column trace_id: The converted input (`traces.trace_id`).
-- @column link: How the pair is linked (`flows.kind`): `correlation_id` or `flow` (XSpace `flow`
--   stat); a pair linked both ways is `correlation_id`.
-- @column flow_id: The link's id (`flows.flow_id`): the correlation id or the XSpace flow id.
-- @column launch_event_id: `event_id` of the launch on the host (the CUDA API call, the TPU program
--   launch).
-- @column launch_name: Name of the launch event.
-- @column launch_device_id: Device (plane) of the launch event, usually the host.
-- @column launch_track_id: Track (thread) of the launch event.
-- @column launch_ps: Start of the launch call, in ps from the trace start.
-- @column launch_dur_ps: Duration of the launch call, in ps.
-- @column event_id: `event_id` of the device op it started (kernel, memory copy, or `XLA Modules`
--   event).
-- @column name: Name of the device op.
-- @column device_id: Device the op ran on; never the launch's device.
-- @column track_id: Track of the device op (a GPU stream, a TPU line).
-- @column ts_ps: Start of the device op, in ps from the trace start.
-- @column dur_ps: Duration of the device op, in ps.
-- @column launch_delay_ps: `ts_ps` less `launch_ps`, in ps: from the start of the launch call to
--   the start on the device.
-- @column queue_ps: `ts_ps` less the end of the launch call (`launch_ps` + `launch_dur_ps`), in ps;
--   negative when the device started before the call returned.
--
-- Each host launch paired with the device op it started, through the
-- `correlation_id` (GPU: the CUDA API call and its kernel or copy) or an
-- XSpace `flow` (e.g. a TPU program launch and its `XLA Modules` event).
-- `launch_delay_ps` counts from the start of the launch call to the start
-- on the device; `queue_ps` from the end of the call (negative when the
-- device started before the call returned). A pair linked both ways is one
-- row (link `correlation_id`).
WITH links AS (
  SELECT f.*,
         row_number() OVER (PARTITION BY f.trace_id, f.src_event_id, f.dst_event_id
                            ORDER BY f.kind, f.flow_id) AS link_rank
  FROM flows f
)
SELECT f.trace_id, f.kind AS link, f.flow_id,
       h.event_id AS launch_event_id, h.name AS launch_name,
       ht.device_id AS launch_device_id, h.track_id AS launch_track_id,
       h.ts_ps AS launch_ps, h.dur_ps AS launch_dur_ps,
       k.event_id, k.name, kt.device_id, k.track_id, k.ts_ps, k.dur_ps,
       k.ts_ps - h.ts_ps AS launch_delay_ps,
       k.ts_ps - (h.ts_ps + h.dur_ps) AS queue_ps
FROM links f
JOIN events h ON h.trace_id = f.trace_id AND h.event_id = f.src_event_id
JOIN tracks ht ON ht.trace_id = h.trace_id AND ht.track_id = h.track_id
JOIN events k ON k.trace_id = f.trace_id AND k.event_id = f.dst_event_id
JOIN tracks kt ON kt.trace_id = k.trace_id AND kt.track_id = k.track_id
WHERE ht.device_id <> kt.device_id AND f.link_rank = 1
