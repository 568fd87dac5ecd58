-- One row per op or kernel execution on a device: the intervals that busy
-- time is made of. On TPUs, SparseCores and custom accelerators: every event
-- of the `XLA Ops` and `Sparse Core Ops` lines (the op lines XProf reads;
-- a Pallas kernel on the `PALLAS` line is on `XLA Ops` too); on GPUs: every
-- event of a stream (kernels and memory copies); on the host (XLA on CPU):
-- host-thread events that carry an `hlo_op` stat.
SELECT e.trace_id, t.device_id, d.name AS device_name, d.kind AS device_kind,
       e.track_id, t.name AS track_name, e.event_id, e.metadata_id, e.parent_id,
       e.name, e.display_name, e.hlo_op, e.hlo_module, e.program_id,
       e.hlo_category, e.tf_op,
       e.ts_ps, e.dur_ps, e.ts_ps + e.dur_ps AS end_ps, e.self_ps, e.depth,
       e.device_offset_ps, e.device_duration_ps,
       e.occurrences, e.flops, e.bytes_accessed, e.correlation_id,
       e.step_event_id, e.module_event_id
FROM events e
JOIN tracks t ON e.trace_id = t.trace_id AND e.track_id = t.track_id
JOIN devices d ON t.trace_id = d.trace_id AND t.device_id = d.device_id
WHERE (d.kind IN ('tpu', 'sparse_core', 'custom')
       AND t.kind IN ('xla_ops', 'sparse_core_ops'))
   OR (d.kind = 'gpu' AND t.kind = 'stream')
   OR (d.kind = 'host' AND t.kind = 'thread' AND e.hlo_op IS NOT NULL)
