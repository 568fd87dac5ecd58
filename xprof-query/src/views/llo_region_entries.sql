-- One row per LLO region-entry marker of a TPU kernel-profiling capture
-- (`Tensor Core` line): the kernel execution it fired in, region id, bundle
-- address, entry time, and the measured time to the next marker of the same
-- kernel execution (or to the kernel's end).
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column device_id: the TPU device (plane) of the marker; joins `devices`.
-- @column event_id: the marker's event (`events.event_id`), a zero-length `bundle.<id>` event.
-- @column kernel_event_id: the `XLA Ops` event (kernel execution) containing the marker; NULL when
--   none does.
-- @column hlo_op: the kernel's short name (the display name of that event); NULL without a kernel.
-- @column hlo_module: the name of the kernel's `XLA Modules` event without its `(<program id>)`;
--   NULL without a kernel or module.
-- @column program_id: the kernel event's `program_id` stat; NULL when absent.
-- @column entry: the marker's place in its kernel execution, by time (0 first); NULL without a
--   kernel.
-- @column instrumentation_id: stat `instrumentation_id`, else the number in the name `bundle.<id>`
--   (static); NULL when neither gives one.
-- @column region_id: `instrumentation_id` less 2^27 (134217728): the LLO region id of
--   `llo_regions`, the compiler's dumps and `_counters_`.
-- @column address: the absolute bundle address, the `0x…` of stat `long_name` (static); NULL when
--   absent or not hex.
-- @column kernel_bundle: `address` less the address of the kernel execution's first marker: the
--   bundle counted from the kernel's first (inferred); NULL without a kernel or an address.
-- @column long_name: stat `long_name` as written (`[<id>]  0x<addr>: bundle.<id>`); NULL when
--   absent.
-- @column ts_ps: when the marker fired (the region was entered), in ps from the trace start
--   (measured).
-- @column dur_ps: time to the next marker of the same kernel execution, or to the kernel's end for
--   its last marker, in ps (measured); a few ns says a predicated body did not run; NULL without a
--   kernel.
--
-- One row per LLO region-entry marker of a TPU kernel-profiling capture
-- (libtpu's `--xla_enable_custom_call_region_trace`): the zero-length
-- `bundle.<id>` events of the `Tensor Core` line
-- (`tracks.kind = 'llo_region_markers'`).
--
-- Static, as written: `instrumentation_id` (the stat, else the number in
-- the name), `region_id` = instrumentation_id - 2^27 (the LLO region id
-- that `llo_regions`, the compiler's dumps and `_counters_` use), and
-- `address`, the absolute bundle address in `long_name`
-- (`[<id>]  0x<addr>: bundle.<id>`); `kernel_bundle` is `address` less the
-- address of the kernel execution's first marker (region 0 marks the
-- kernel's first bundle: inferred, so `address` stays beside it).
--
-- Measured: `ts_ps`, and `dur_ps`, the time to the next marker of the same
-- kernel execution, or to the kernel's end for its last marker; `entry` is
-- the marker's place in its kernel execution (0 first). A marker of a
-- predicated region fires when the branch is reached, also when the body
-- is skipped: a `dur_ps` of a few ns says the body did not run.
--
-- `kernel_event_id` is the `XLA Ops` event containing the marker,
-- `hlo_op` its short name, `program_id` its program and `hlo_module` the
-- name of its `XLA Modules` event without the `(<program id>)`: with
-- `hlo_op`, what joins the marker to its `llo_programs` row.
WITH markers AS (
  SELECT e.trace_id, t.device_id, e.event_id, e.kernel_event_id, e.name, e.ts_ps
  FROM events e
  JOIN tracks t ON t.trace_id = e.trace_id AND t.track_id = e.track_id
  WHERE t.kind = 'llo_region_markers'
),
args AS (
  SELECT a.trace_id, a.event_id,
         max(CASE WHEN a.key = 'instrumentation_id'
                  THEN coalesce(TRY_CAST(a.uint_value AS BIGINT), a.int_value) END) AS instrumentation_id,
         max(CASE WHEN a.key = 'long_name' THEN a.str_value END) AS long_name
  FROM event_args a
  JOIN markers m ON m.trace_id = a.trace_id AND m.event_id = a.event_id
  WHERE a.key IN ('instrumentation_id', 'long_name')
  GROUP BY a.trace_id, a.event_id
),
typed AS (
  SELECT m.trace_id, m.device_id, m.event_id, m.kernel_event_id, m.ts_ps,
         coalesce(a.instrumentation_id,
                  TRY_CAST(regexp_match(CAST(m.name AS VARCHAR), '^bundle\.([0-9]+)$')[1] AS BIGINT))
           AS instrumentation_id,
         a.long_name,
         from_hex(regexp_match(a.long_name, '0x([0-9a-fA-F]+)')[1]) AS address
  FROM markers m
  LEFT JOIN args a ON a.trace_id = m.trace_id AND a.event_id = m.event_id
),
ordered AS (
  SELECT t.*,
         lead(t.ts_ps) OVER w AS next_ts_ps,
         CAST(row_number() OVER w AS BIGINT) - 1 AS entry,
         first_value(t.address) OVER w AS first_address
  FROM typed t
  WINDOW w AS (PARTITION BY t.trace_id, t.kernel_event_id ORDER BY t.ts_ps, t.event_id)
)
SELECT o.trace_id, o.device_id, o.event_id, o.kernel_event_id,
       CAST(k.display_name AS VARCHAR) AS hlo_op,
       regexp_replace(CAST(mo.name AS VARCHAR), '\([0-9]+\)$', '') AS hlo_module, k.program_id,
       CASE WHEN o.kernel_event_id IS NOT NULL THEN o.entry END AS entry,
       o.instrumentation_id, o.instrumentation_id - 134217728 AS region_id,
       o.address,
       CASE WHEN o.kernel_event_id IS NOT NULL THEN o.address - o.first_address END AS kernel_bundle,
       o.long_name, o.ts_ps,
       CASE WHEN o.kernel_event_id IS NOT NULL
            THEN coalesce(o.next_ts_ps, k.ts_ps + k.dur_ps) - o.ts_ps END AS dur_ps
FROM ordered o
LEFT JOIN events k ON k.trace_id = o.trace_id AND k.event_id = o.kernel_event_id
LEFT JOIN events mo ON mo.trace_id = k.trace_id AND mo.event_id = k.module_event_id
