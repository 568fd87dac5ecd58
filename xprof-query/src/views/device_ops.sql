-- One row per op or kernel execution on a device (TPU `XLA Ops`/`PALLAS`,
-- GPU streams, host events with an `hlo_op`): what busy time is made of.
--
-- One row per op or kernel execution on a device: the intervals that busy
-- time is made of. On TPUs, SparseCores and custom accelerators: every event
-- of the `XLA Ops` and `Sparse Core Ops` lines (the op lines XProf reads;
-- a Pallas kernel on the `PALLAS` line is on `XLA Ops` too); on GPUs: every
-- event of a stream (kernels, memory copies and sets; PyTorch's
-- `gpu_user_annotation` ranges are on their own `gpu_annotations` tracks,
-- spans of a step or range, not device work); on the host (XLA on CPU):
-- host-thread events that carry an `hlo_op` stat.
-- The `instruction_*` columns describe the op's HLO instruction, found in
-- `hlo_instructions` by (program_id, hlo_op) when the trace holds the
-- program's HLO proto; `is_hlo_instruction` is NULL when it does not, and
-- false when the program is known but the op is none of its instructions
-- (a CUDA-graph `command_buffer`, for one), which XProf leaves out of its
-- GPU op tools.
WITH instructions AS (
  SELECT trace_id, program_id, name, max(category) AS category,
         max(expression) AS expression, max(tf_op) AS tf_op, max(source) AS source
  FROM hlo_instructions
  GROUP BY trace_id, program_id, name
),
programs AS (
  SELECT DISTINCT trace_id, program_id FROM hlo_instructions
)
SELECT e.trace_id, t.device_id, d.name AS device_name, d.kind AS device_kind,
       e.track_id, t.name AS track_name, e.event_id, e.metadata_id, e.parent_id,
       e.name, e.display_name, e.hlo_op, e.hlo_module, e.program_id,
       e.hlo_category, e.tf_op,
       e.ts_ps, e.dur_ps, e.ts_ps + e.dur_ps AS end_ps, e.self_ps, e.depth,
       e.device_offset_ps, e.device_duration_ps,
       e.occurrences, e.flops, e.bytes_accessed, e.correlation_id,
       e.step_event_id, e.module_event_id,
       i.category AS instruction_category, i.expression AS instruction_expression,
       i.tf_op AS instruction_tf_op, i.source AS instruction_source,
       CASE WHEN p.program_id IS NOT NULL THEN i.name IS NOT NULL END AS is_hlo_instruction
FROM events e
JOIN tracks t ON e.trace_id = t.trace_id AND e.track_id = t.track_id
JOIN devices d ON t.trace_id = d.trace_id AND t.device_id = d.device_id
LEFT JOIN programs p ON p.trace_id = e.trace_id AND p.program_id = e.program_id
LEFT JOIN instructions i
  ON i.trace_id = e.trace_id AND i.program_id = e.program_id
 AND i.name = split_part(e.hlo_op, '::', -1)
WHERE (d.kind IN ('tpu', 'sparse_core', 'custom')
       AND t.kind IN ('xla_ops', 'sparse_core_ops'))
   OR (d.kind = 'gpu' AND t.kind = 'stream')
   OR (d.kind = 'host' AND t.kind = 'thread' AND e.hlo_op IS NOT NULL)
