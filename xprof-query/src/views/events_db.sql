-- XProf's Events DB (`create_events_db`): its rows and 31 columns
-- (`device`, `start_ns`, `self_time_ns`, `step`, `category`, `hlo_op`,
-- `trace_args`, ...), so queries written for XProf's `Events` view run
-- unchanged (`--schema events_db` names it `events`).
-- @column device: XProf's device: `cpu:0` for the `/host:CPU` plane, `gpu:<XPlane.id>` on GPU
--   planes, the plane name without `/device:` on TPU planes (`TPU:0`), the whole plane name on
--   `/device:CUSTOM:` planes.
-- @column stream_id: on device rows, the low 32 bits of `XLine.id` (unsigned); NULL on host rows.
-- @column thread_id: on host rows, the low 32 bits of `XLine.id` (unsigned); NULL on device rows.
-- @column thread_name: on host rows, the thread's line name (`XLine.name`); NULL on device rows.
-- @column correlation_id: on host and GPU stream rows, the low 32 bits of stat `correlation_id`
--   (host launch to GPU kernel); NULL elsewhere or when absent.
-- @column kernel_name: the event metadata name (never the display name), prefixed `HLO Module:` on
--   `XLA Modules` lines (GPU, TPU) and `step:` on a TPU `Steps` line.
-- @column kernel_details: on GPU stream rows, stat `kernel_details` (`regs:… static_shared:…
--   dynamic_shared:… grid:x,y,z block:x,y,z occ_pct:…`); NULL elsewhere or when absent.
-- @column tf_op_name: the framework op's name: on host rows parsed from the event name when it is a
--   TensorFlow op (`scope/name:Type`), else NULL; on GPU stream rows from the framework op of the
--   kernel's HLO instruction (NULL when not found); on GPU `XLA Ops`/`XLA Modules`, TPU and custom
--   rows the stat `tf_op` up to its first `:` (NULL without the stat).
-- @column tf_op_type: the framework op's type, from the same source as `tf_op_name`: the parsed
--   type on host rows, the type of the instruction's framework op on GPU stream rows, the stat
--   `tf_op` after its first `:` on device XLA lines (empty when it has none); NULL where that
--   source is missing.
-- @column hlo_op: on GPU stream rows, stat `hlo_op` after its last `::`; on TPU `XLA Ops` rows, the
--   event's display name; NULL elsewhere.
-- @column hlo_module: on GPU stream rows, stat `hlo_module`; on TPU `XLA Ops` rows, the name of the
--   enclosing `XLA Modules` event; NULL elsewhere.
-- @column start_ns: start in ns as XProf computes it: the line's `timestamp_ns` plus the event
--   offset over 1000, in double, truncated; not rebased (relative to whatever the line timestamps
--   are relative to).
-- @column end_ns: end in ns: `start_ns` plus the duration over 1000, in double, truncated.
-- @column self_time_ns: duration in ns, truncated; on TPU TensorCore planes (`Steps`, `XLA
--   Modules`, `XLA Ops`) less the durations of the events nested in it on its line, at least 0.
-- @column step: on host and GPU stream rows, the step name from `event_steps` (`train 0`); on TPU
--   `XLA Ops` rows, `step:` and the name of the enclosing `Steps` event; NULL elsewhere or outside
--   any step.
-- @column category: `host` on host rows, `device` on GPU stream rows, else the line name (`XLA
--   Ops`, `XLA Modules`, `Steps`, ...).
-- @column flops: on GPU `XLA Ops`/`XLA Modules`, TPU and custom rows, stat `flops` (a FLOP count);
--   NULL elsewhere or when absent.
-- @column memory_accessed: on the same rows as `flops`, stat `bytes_accessed`, in bytes; NULL
--   elsewhere or when absent.
-- @column input_tensors: on GPU stream rows whose HLO instruction is found, the shapes of its
--   operands in order, without layouts (`f32[1024]`); NULL otherwise.
-- @column output_tensors: on GPU stream rows whose HLO instruction is found, its result shape
--   without layout, as a one-element list; NULL otherwise.
-- @column trace_args: the stats no column holds, `key=value` joined by `,` in key order (on devices
--   the metadata's stats, then the event's; on the host the event's own), a double as `%g`, bytes
--   as `<opaque bytes>`, with `step_name=` added on a host step root; NULL when none is left.
-- @column hlo_fingerprint: XLA's fingerprint of the HLO instruction in XProf; always NULL here (not
--   reproduced).
-- @column flow: on host rows, stat `flow` as written (unsigned 64 bits); NULL elsewhere or when
--   absent.
-- @column source_line: stat `source` (`file:line`) on host, GPU `XLA Ops`/`XLA Modules`, TPU and
--   custom rows; NULL on GPU stream rows or when absent.
-- @column dcn_src_slice_id: XProf's source slice of a DCN message event; always NULL here (no DCN
--   event is decoded).
-- @column dcn_dst_slice_id: XProf's destination slice of a DCN message event; always NULL here.
-- @column dcn_src_logical_device_id: XProf's source logical device of a DCN message event; always
--   NULL here.
-- @column dcn_dst_logical_device_id: XProf's destination logical device of a DCN message event;
--   always NULL here.
-- @column dcn_collective_name: XProf's collective name of a DCN message event; always NULL here.
-- @column dcn_duration_us: XProf's duration of a DCN message event, in µs; always NULL here.
-- @column dcn_payload_size_bytes: XProf's payload of a DCN message event, in bytes; always NULL
--   here.
--
-- XProf's Events DB (`xprof create_events_db`, XProf 2.24.2) as a view:
-- the rows, the 31 columns (names, types, order) and their meanings, so
-- the DuckDB queries written against XProf's `Events` view run unchanged
-- (`--schema events_db` names this view `events`). The rules are in
-- tests/fixtures/xspace/expected/NOTES.md and gpu/expected/NOTES.md:
-- - rows: every event of the `/host:CPU` plane; on GPU planes the events
--   of `XLA Modules`/`XLA Ops` lines and of the streams (not `_counters_`
--   nor the derived lines, ids 0xdeadbeef and up); on TPU TensorCore
--   planes (`/device:TPU:N`) the `Steps`, `XLA Modules` and `XLA Ops`
--   lines (not `Async XLA Ops`, `_counters_`), every line of SparseCore
--   and other TPU planes; every line of `/device:CUSTOM:` planes. Nothing
--   else (`/host:metadata`, ...).
-- - times in ns as XProf computes them (`XEventVisitor::TimestampNs`:
--   the line's timestamp plus offset / 1000 in double, truncated), not
--   rebased; `self_time_ns` is the whole duration, except on TPU op lines
--   where the ops nested in an op are subtracted (`op_parent`).
-- - `step`: host events and the GPU kernels they launched get the step
--   of `event_steps`; TPU ops `step:` and their `Steps` event's name.
-- Not reproduced: `hlo_fingerprint` (XLA's fingerprint of the HLO
-- instruction) and the `dcn_*` columns are NULL; `trace_args` lists the
-- same stats as XProf's (on devices the metadata's first; `step_name` on
-- step roots, as XProf's grouping adds it), in name order
-- rather than XProf's stored order, without the `is_eager` stats XProf's
-- event grouping adds.
WITH origins AS (
  -- The converter shifts epoch-time files so ts 0 is the profile start;
  -- XProf keeps the raw line times (xspace::emit).
  SELECT t.trace_id,
         CASE WHEN min(t.timestamp_ns) > 100000000000000000
              THEN coalesce(max(tr.start_unix_ns), min(t.timestamp_ns)) ELSE 0 END AS origin_ns
  FROM tracks t JOIN traces tr ON tr.trace_id = t.trace_id
  GROUP BY t.trace_id
),
lines AS (
  SELECT t.trace_id, t.track_id, t.device_id, t.line_id, t.timestamp_ns,
         CAST(t.name AS VARCHAR) AS line_name, d.name AS plane_name, d.plane_id,
         CASE WHEN d.name = '/host:CPU' THEN 'host'
              WHEN d.name LIKE '/device:GPU:%'
                   AND (t.name LIKE 'XLA Modules%' OR t.name LIKE 'XLA Ops%') THEN 'gpu_xla'
              WHEN d.name LIKE '/device:GPU:%' THEN 'gpu_stream'
              WHEN d.name LIKE '/device:TPU:%' THEN 'tpu'
              WHEN d.name LIKE '/device:CUSTOM:%' THEN 'custom' END AS parser,
         d.name ~ '^/device:TPU:[0-9]+$' AS tensor_core
  FROM tracks t
  JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id
),
kept AS (
  SELECT * FROM lines
  WHERE parser IS NOT NULL
    AND NOT (parser = 'gpu_stream'
             AND (line_name = '_counters_' OR line_id BETWEEN 3735928559 AND 3735928559 + 63))
    AND NOT (parser = 'tpu' AND tensor_core AND line_name NOT IN ('Steps', 'XLA Modules', 'XLA Ops'))
),
stats AS (
  SELECT trace_id, event_id,
         max(CASE WHEN key = 'kernel_details' THEN str_value END) AS kernel_details,
         max(CASE WHEN key = 'flow' THEN coalesce(uint_value, CAST(int_value AS BIGINT UNSIGNED)) END) AS flow,
         max(CASE WHEN key = 'source' THEN str_value END) AS source
  FROM event_stats
  WHERE key IN ('kernel_details', 'flow', 'source')
  GROUP BY trace_id, event_id
),
instructions AS (
  -- The HLO instruction of each GPU kernel: framework op and tensor shapes.
  SELECT i.trace_id, i.program_id, i.computation, i.name, i.tf_op, i.operands,
         regexp_replace(i.shape, '\{[^}]*\}', '', 'g') AS output_tensor
  FROM hlo_instructions i
  JOIN (SELECT DISTINCT e.trace_id, e.program_id, split_part(CAST(e.hlo_op AS VARCHAR), '::', -1) AS name
        FROM events e JOIN kept l ON l.trace_id = e.trace_id AND l.track_id = e.track_id
        WHERE l.parser = 'gpu_stream' AND e.hlo_op IS NOT NULL) k
    ON k.trace_id = i.trace_id AND k.program_id = i.program_id AND k.name = i.name
),
operand_shapes AS (
  SELECT u.trace_id, u.program_id, u.name,
         array_agg(regexp_replace(o.shape, '\{[^}]*\}', '', 'g') ORDER BY u.pos) AS input_tensors
  -- Every operand, by position (as many as the instruction has).
  FROM (SELECT trace_id, program_id, computation, name, pos, operands[pos] AS operand
        FROM (SELECT trace_id, program_id, computation, name, operands,
                     unnest(range(1, CAST(cardinality(operands) AS BIGINT) + 1)) AS pos
              FROM instructions)) u
  JOIN hlo_instructions o
    ON o.trace_id = u.trace_id AND o.program_id = u.program_id AND o.computation = u.computation
   AND o.name = u.operand
  GROUP BY u.trace_id, u.program_id, u.name
),
base AS (
  SELECT e.trace_id, e.event_id, e.track_id, l.parser, l.tensor_core, l.line_name, l.line_id,
         l.plane_name, l.plane_id,
         CAST(e.name AS VARCHAR) AS name, CAST(e.display_name AS VARCHAR) AS display_name,
         CAST(CAST(l.timestamp_ns AS DOUBLE)
              + CAST(e.ts_ps - (l.timestamp_ns - o.origin_ns) * 1000 AS DOUBLE) / 1000.0 AS BIGINT) AS start_ns,
         e.dur_ps, e.correlation_id, e.flops, e.bytes_accessed, e.program_id,
         CAST(e.hlo_op AS VARCHAR) AS hlo_op, CAST(e.hlo_module AS VARCHAR) AS hlo_module,
         CAST(e.tf_op AS VARCHAR) AS tf_op,
         e.step_event_id, e.module_event_id,
         -- For the native provider, which reads the metadata's stats itself.
         l.device_id, e.metadata_id
  FROM events e
  JOIN kept l ON l.trace_id = e.trace_id AND l.track_id = e.track_id
  JOIN origins o ON o.trace_id = e.trace_id
),
nested AS (
  -- TPU TensorCore op lines: the ops nested in each op, by ns times.
  SELECT trace_id, parent, sum(dur_ps / 1000) AS children_ns
  FROM (SELECT trace_id, dur_ps,
               op_parent(event_id, start_ns, start_ns + dur_ps / 1000)
                 OVER (PARTITION BY trace_id, track_id ORDER BY event_id) AS parent
        FROM base WHERE parser = 'tpu' AND tensor_core AND dur_ps > 0)
  WHERE parent IS NOT NULL
  GROUP BY trace_id, parent
),
args AS (
  -- The stats no column holds, `key=value` joined with ',' in key order:
  -- the host's own stats; on devices the metadata's, then the event's.
  -- Two sorted lists per event rather than `string_agg(… ORDER BY …)`,
  -- which DataFusion 55 runs with an accumulator object per event (88 s
  -- and 8 GiB on the 2.2 M events of the real 102 MiB profile); `array_agg`
  -- keeps its groups in columns. Key and value are joined by U+0001 while
  -- sorting (sorting `key=value` would put `arg0=…` before `arg=…`), then
  -- by '=' (a U+0001 inside a value would become '=' too). Stats of the
  -- same key are in value order.
  SELECT trace_id, event_id,
         nullif(replace(concat_ws(',',
           array_to_string(array_sort(array_agg(entry) FILTER (WHERE from_metadata)), ','),
           array_to_string(array_sort(array_agg(entry) FILTER (WHERE NOT from_metadata)), ',')),
           chr(1), '='), '') AS trace_args
  FROM (
    SELECT s.trace_id, s.event_id, s.origin = 'metadata' AS from_metadata,
           s.key || chr(1) ||
           CASE s.value_type
             WHEN 'int' THEN CAST(s.int_value AS VARCHAR)
             WHEN 'uint' THEN CAST(s.uint_value AS VARCHAR)
             -- absl::StrCat of a double: `%g`, six significant digits.
             WHEN 'double' THEN format_g(s.double_value)
             WHEN 'bytes' THEN '<opaque bytes>'
             ELSE s.str_value END AS entry
    FROM event_stats s
    JOIN base b ON b.trace_id = s.trace_id AND b.event_id = s.event_id
    WHERE CASE WHEN b.parser = 'host'
               THEN s.origin = 'event' AND s.key NOT IN ('group_id', 'correlation_id', 'flow', 'source')
               WHEN b.parser = 'gpu_stream'
               THEN s.key NOT IN ('tf_op', 'hlo_op', 'hlo_module', 'program_id', 'group_id',
                                  'correlation_id', 'kernel_details', 'tensor_shapes', 'source_info')
               ELSE s.key NOT IN ('flops', 'bytes_accessed', 'tf_op', 'source', 'source_info') END
  ) e
  GROUP BY trace_id, event_id
),
step_roots AS (
  -- XProf's event grouping adds `step_name` to the stats of a step's root.
  SELECT trace_id, step_root_event_id AS event_id, max(step_name) AS step_name
  FROM event_steps GROUP BY trace_id, step_root_event_id
),
-- @shared-ctes-end: the native view (views/events_db/) runs each of its
-- inputs as the CTEs above this line and a SELECT of its own.
rows AS (
SELECT
  CASE b.parser WHEN 'host' THEN 'cpu:0'
                WHEN 'tpu' THEN substr(b.plane_name, length('/device:') + 1)
                WHEN 'custom' THEN b.plane_name
                ELSE 'gpu:' || CAST(b.plane_id AS VARCHAR) END AS device,
  CASE WHEN b.parser <> 'host' THEN CAST(b.line_id & 4294967295 AS INT UNSIGNED) END AS stream_id,
  CASE WHEN b.parser = 'host' THEN CAST(b.line_id & 4294967295 AS INT UNSIGNED) END AS thread_id,
  CASE WHEN b.parser = 'host' THEN b.line_name END AS thread_name,
  CAST(CASE WHEN b.parser IN ('host', 'gpu_stream') THEN b.correlation_id & 4294967295 END
       AS INT UNSIGNED) AS correlation_id,
  CASE WHEN b.parser IN ('gpu_xla', 'tpu') AND b.line_name LIKE 'XLA Modules%' THEN 'HLO Module:' || b.name
       WHEN b.parser = 'tpu' AND b.line_name = 'Steps' THEN 'step:' || b.name
       ELSE b.name END AS kernel_name,
  CASE WHEN b.parser = 'gpu_stream' THEN s.kernel_details END AS kernel_details,
  CASE WHEN b.parser = 'host' AND parse_tf_op(b.name)['type'] <> ''
            AND parse_tf_op(b.name)['kind'] = 'tensorflow' AND b.name LIKE '%:%'
         THEN parse_tf_op(b.name)['name']
       WHEN b.parser = 'gpu_stream' THEN parse_tf_op(i.tf_op)['name']
       WHEN b.parser IN ('gpu_xla', 'tpu', 'custom') AND strpos(b.tf_op, ':') > 0
         THEN substr(b.tf_op, 1, strpos(b.tf_op, ':') - 1)
       WHEN b.parser IN ('gpu_xla', 'tpu', 'custom') THEN b.tf_op END AS tf_op_name,
  CASE WHEN b.parser = 'host' AND parse_tf_op(b.name)['type'] <> ''
            AND parse_tf_op(b.name)['kind'] = 'tensorflow' AND b.name LIKE '%:%'
         THEN parse_tf_op(b.name)['type']
       WHEN b.parser = 'gpu_stream' THEN parse_tf_op(i.tf_op)['type']
       WHEN b.parser IN ('gpu_xla', 'tpu', 'custom') AND strpos(b.tf_op, ':') > 0
         THEN substr(b.tf_op, strpos(b.tf_op, ':') + 1)
       WHEN b.parser IN ('gpu_xla', 'tpu', 'custom') AND b.tf_op IS NOT NULL THEN '' END AS tf_op_type,
  CASE WHEN b.parser = 'gpu_stream' THEN split_part(b.hlo_op, '::', -1)
       WHEN b.parser = 'tpu' AND b.line_name = 'XLA Ops' THEN b.display_name END AS hlo_op,
  CASE WHEN b.parser = 'gpu_stream' THEN b.hlo_module
       WHEN b.parser = 'tpu' AND b.line_name = 'XLA Ops' THEN CAST(m.name AS VARCHAR) END AS hlo_module,
  CAST(b.start_ns AS BIGINT UNSIGNED) AS start_ns,
  CAST(CAST(CAST(b.start_ns AS DOUBLE) + b.dur_ps / 1000.0 AS BIGINT) AS BIGINT UNSIGNED) AS end_ns,
  CAST(CASE WHEN b.parser = 'tpu' AND b.tensor_core
            THEN greatest(b.dur_ps / 1000 - coalesce(n.children_ns, 0), 0)
            ELSE b.dur_ps / 1000 END AS BIGINT UNSIGNED) AS self_time_ns,
  CASE WHEN b.parser IN ('host', 'gpu_stream') THEN st.step_name
       WHEN b.parser = 'tpu' AND b.line_name = 'XLA Ops' THEN 'step:' || CAST(sp.name AS VARCHAR) END AS step,
  CASE b.parser WHEN 'host' THEN 'host' WHEN 'gpu_stream' THEN 'device' ELSE b.line_name END AS category,
  CAST(CASE WHEN b.parser IN ('gpu_xla', 'tpu', 'custom') THEN b.flops END AS BIGINT UNSIGNED) AS flops,
  CAST(CASE WHEN b.parser IN ('gpu_xla', 'tpu', 'custom') THEN b.bytes_accessed END AS BIGINT UNSIGNED)
    AS memory_accessed,
  CASE WHEN b.parser = 'gpu_stream' AND i.name IS NOT NULL THEN os.input_tensors END AS input_tensors,
  CASE WHEN b.parser = 'gpu_stream' AND i.name IS NOT NULL THEN make_array(i.output_tensor) END
    AS output_tensors,
  CASE WHEN r.step_name IS NOT NULL AND b.parser = 'host'
       THEN concat_ws(',', a.trace_args, 'step_name=' || r.step_name)
       ELSE a.trace_args END AS trace_args,
  CAST(NULL AS BIGINT UNSIGNED) AS hlo_fingerprint,
  CASE WHEN b.parser = 'host' THEN s.flow END AS flow,
  CASE WHEN b.parser IN ('host', 'gpu_xla', 'tpu', 'custom') THEN s.source END AS source_line,
  CAST(NULL AS BIGINT) AS dcn_src_slice_id,
  CAST(NULL AS BIGINT) AS dcn_dst_slice_id,
  CAST(NULL AS BIGINT) AS dcn_src_logical_device_id,
  CAST(NULL AS BIGINT) AS dcn_dst_logical_device_id,
  CAST(NULL AS VARCHAR) AS dcn_collective_name,
  CAST(NULL AS BIGINT UNSIGNED) AS dcn_duration_us,
  CAST(NULL AS BIGINT UNSIGNED) AS dcn_payload_size_bytes
FROM base b
LEFT JOIN stats s ON s.trace_id = b.trace_id AND s.event_id = b.event_id
LEFT JOIN args a ON a.trace_id = b.trace_id AND a.event_id = b.event_id
LEFT JOIN step_roots r ON r.trace_id = b.trace_id AND r.event_id = b.event_id
LEFT JOIN nested n ON n.trace_id = b.trace_id AND n.parent = b.event_id
LEFT JOIN event_steps st ON st.trace_id = b.trace_id AND st.event_id = b.event_id
LEFT JOIN events sp ON sp.trace_id = b.trace_id AND sp.event_id = b.step_event_id
LEFT JOIN events m ON m.trace_id = b.trace_id AND m.event_id = b.module_event_id
LEFT JOIN instructions i
  ON b.parser = 'gpu_stream' AND i.trace_id = b.trace_id AND i.program_id = b.program_id
 AND i.name = split_part(b.hlo_op, '::', -1)
LEFT JOIN operand_shapes os
  ON os.trace_id = i.trace_id AND os.program_id = i.program_id AND os.name = i.name
)
-- XProf's column types: strings as Utf8 (whatever DataFusion's own string
-- type), ids UInt32, times and counts UInt64.
SELECT arrow_cast(device, 'Utf8') AS device, stream_id, thread_id,
       arrow_cast(thread_name, 'Utf8') AS thread_name, correlation_id,
       arrow_cast(kernel_name, 'Utf8') AS kernel_name,
       arrow_cast(kernel_details, 'Utf8') AS kernel_details,
       arrow_cast(tf_op_name, 'Utf8') AS tf_op_name, arrow_cast(tf_op_type, 'Utf8') AS tf_op_type,
       arrow_cast(hlo_op, 'Utf8') AS hlo_op, arrow_cast(hlo_module, 'Utf8') AS hlo_module,
       start_ns, end_ns, self_time_ns, arrow_cast(step, 'Utf8') AS step,
       arrow_cast(category, 'Utf8') AS category, flops, memory_accessed,
       arrow_cast(input_tensors, 'List(Utf8)') AS input_tensors,
       arrow_cast(output_tensors, 'List(Utf8)') AS output_tensors,
       arrow_cast(trace_args, 'Utf8') AS trace_args, hlo_fingerprint, flow,
       arrow_cast(source_line, 'Utf8') AS source_line,
       dcn_src_slice_id, dcn_dst_slice_id, dcn_src_logical_device_id, dcn_dst_logical_device_id,
       arrow_cast(dcn_collective_name, 'Utf8') AS dcn_collective_name,
       dcn_duration_us, dcn_payload_size_bytes
FROM rows
