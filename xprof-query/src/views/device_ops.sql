-- One row per op or kernel execution on a device (TPU `XLA Ops`/`PALLAS`,
-- GPU streams, host events with an `hlo_op`): what busy time is made of.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column device_id: the device (plane) that ran the op; joins `devices`.
-- @column device_name: the device's name (`devices.name`), e.g. `/device:TPU:0`, `/device:GPU:0`,
--   `/host:CPU`.
-- @column device_kind: the device's kind (`devices.kind`): `tpu`, `sparse_core`, `custom`, `gpu` or
--   `host`.
-- @column track_id: the track (line, stream or thread) of the op; joins `tracks`.
-- @column track_name: the track's name (`tracks.name`): `XLA Ops`, `Sparse Core Ops`, a GPU stream,
--   a host thread.
-- @column event_id: the op's event (`events.event_id`).
-- @column metadata_id: the event's metadata (`events.metadata_id`); joins `event_metadata` and
--   `hlo_ops`.
-- @column parent_id: `event_id` of the event enclosing the op on the same track; NULL for a
--   top-level event.
-- @column name: the event metadata name (on XLA op lines it can be the full HLO text).
-- @column display_name: the event metadata display name, or `name` when it has none (the short op
--   name on XLA op lines).
-- @column hlo_op: stat `hlo_op`, the HLO instruction the op runs; NULL when the event has none.
-- @column hlo_module: stat `hlo_module`; NULL when absent.
-- @column program_id: stat `program_id` (unsigned), the XLA program; NULL when absent.
-- @column hlo_category: stat `hlo_category`; NULL when absent.
-- @column tf_op: stat `tf_op`, the framework op (`jit(f)/dot_general`); NULL when absent.
-- @column ts_ps: start, in ps from the trace start.
-- @column dur_ps: duration, in ps (for an aggregated event, the sum over its occurrences).
-- @column end_ps: end, `ts_ps + dur_ps`, in ps from the trace start.
-- @column self_ps: duration less the durations of its direct children on the same track, in ps.
-- @column depth: nesting depth on the track: 0 for a top-level event.
-- @column device_offset_ps: stat `device_offset_ps` as written (not shifted), in ps; NULL when
--   absent.
-- @column device_duration_ps: stat `device_duration_ps`, in ps; NULL when absent (the analyses then
--   use `dur_ps`).
-- @column occurrences: 1, or `XEvent.num_occurrences` for an aggregated event (a count).
-- @column flops: stat `flops`: FLOP of one execution, from the compiler's cost model; NULL when
--   absent.
-- @column bytes_accessed: stat `bytes_accessed`: bytes accessed by one execution, from the
--   compiler's cost model; NULL when absent.
-- @column correlation_id: stat `correlation_id`, which pairs a GPU op with its host launch; NULL
--   when absent.
-- @column step_event_id: on device planes, the `Steps` event of the same device containing the op;
--   NULL elsewhere or outside any step.
-- @column module_event_id: on device planes, the `XLA Modules` event of the same device containing
--   the op; NULL elsewhere or outside any module.
-- @column instruction_category: XLA's category of the op's HLO instruction
--   (`hlo_instructions.category`), found by `program_id` and `hlo_op` (its part after the last
--   `::`); NULL when the instruction is not found.
-- @column instruction_expression: the HLO instruction as text, as XProf prints it
--   (`hlo_instructions.expression`); NULL when the instruction is not found.
-- @column instruction_tf_op: the framework op of the HLO instruction, `op_name:op_type`
--   (`hlo_instructions.tf_op`); NULL when the instruction is not found.
-- @column instruction_source: `file:line` of the HLO instruction (`hlo_instructions.source`); NULL
--   when the instruction is not found or has none.
-- @column is_hlo_instruction: whether the op is an instruction of its program (found in
--   `hlo_instructions`); NULL when the trace holds no HLO proto of the program, false for an op
--   that is none of its instructions (a CUDA-graph `command_buffer`).
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
