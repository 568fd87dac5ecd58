-- One row per scope instance inside a kernel: Proton instrumentation-mode
-- and Mosaic GPU traces (kernel, SM, CTA, warp or warpgroup, line, scope,
-- call stack, start and end cycles as recorded, times derived from the
-- recorded clock) and TPU LLO regions (`LLO Ops`, `Pallas Primitives`,
-- `Source code`) with the kernel event containing them.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column event_id: the scope instance's event (`events.event_id`).
-- @column kernel: the kernel: for Proton the `<kernel>` of the process name `<kernel> Core<sm>
--   CTA<cta>`, for Mosaic GPU the `<func>` of the file name, for TPU rows the short name
--   (`display_name`) of the containing `XLA Ops`/`PALLAS` event.
-- @column sm_id: the SM: Proton's `Core<sm>`, Mosaic GPU's `pid` less 1; NULL on TPU rows.
-- @column cta_id: the CTA, Proton's `CTA<cta>`; NULL on Mosaic GPU and TPU rows.
-- @column warp_id: the warp, from Proton's thread name `warp <w> (line <l>)`; NULL on Mosaic GPU
--   and TPU rows.
-- @column line: the `<l>` of Proton's thread name `warp <w> (line <l>)`, separating overlapping
--   scopes of a warp; NULL on Mosaic GPU and TPU rows.
-- @column scope: the scope's name (the event name): a Proton or Mosaic GPU scope, an LLO op, a
--   Pallas primitive, a source line or a TraceMe stage or scope.
-- @column call_stack: the scope's enclosing scopes as Proton writes them (its `call_stack` arg, a
--   JSON array, outermost first); NULL on other rows or when absent.
-- @column start_cycle: start as the trace's own cycle count (`ts_ps` plus the file's origin, over
--   1000, rounded); NULL on TPU rows.
-- @column end_cycle: end as the trace's own cycle count, as `start_cycle`; NULL on TPU rows.
-- @column cycles: `end_cycle - start_cycle`, in clock cycles (SM clock cycles in a Mosaic GPU
--   trace); NULL on TPU rows.
-- @column frequency_mhz: the clock recorded for the scope (Proton's `Frequency (MHz)` arg), in
--   MHz; NULL when none is recorded and on Mosaic GPU and TPU rows.
-- @column start_ps: Proton rows: `start_cycle` converted to ps at `frequency_mhz` (rounded), NULL
--   without a frequency; TPU rows: the event's start, in ps from the trace start; NULL on Mosaic
--   GPU rows.
-- @column dur_ps: Proton rows: `cycles` converted to ps at `frequency_mhz` (rounded), NULL
--   without a frequency; TPU rows: the event's duration, in ps; NULL on Mosaic GPU rows.
-- @column source: what recorded the scope: `proton`, `mosaic_gpu`, `llo_ops`,
--   `pallas_primitives`, `source_code` or `traceme`.
-- @column warpgroup_id: Mosaic GPU's warpgroup (`tid` less 1, its index in the grid); NULL on
--   other rows.
-- @column kernel_event_id: on TPU rows, the `XLA Ops`/`PALLAS` event containing the scope
--   (`events.event_id`); NULL on other rows.
--
-- One row per scope instance of an intra-kernel, cycle-level trace:
--
-- - Proton's instrumentation mode (`source` = 'proton'): a Chrome trace
--   whose processes are "<kernel> Core<sm> CTA<cta>" and whose threads are
--   "warp <w> (line <l>)", `ts`/`dur` in kilo-cycles;
-- - Mosaic GPU's profiler (`source` = 'mosaic_gpu', traces of
--   `source_format` 'mosaic_gpu'): B/E pairs per SM (`pid` = 1 + SM id) and
--   warpgroup (`tid` = 1 + its index in the grid), the kernel being the
--   `<func>` of the file name `<func>-<time_ns>-trace.json`; CTA, warp and
--   line are not recorded (NULL), `warpgroup_id` is.
--
-- Cycles are kept as cycles: `start_cycle` and `end_cycle` are the trace's
-- own counts (`ts_ps` plus the file's origin, `xprof_sql.ts_origin_ps` of
-- `Trace Metadata`, over 1000, rounded: one "µs" of the file is 1000
-- counts); `cycles` is their difference. In a Mosaic GPU trace a count is
-- the warpgroup's start on the global timer (ns) plus SM clock cycles since,
-- so `cycles` is SM clock cycles. `start_ps`/`dur_ps` are derived from the
-- recorded clock (`Frequency (MHz)`) and NULL when the trace records none.
-- - TPU LLO regions (`source` = 'llo_ops', 'pallas_primitives' or
--   'source_code': events of the `LLO Ops`, `Pallas Primitives` and
--   `Source code`/`Source Lines` lines inside a kernel) and the Mosaic
--   pipeline stages and named scopes of a kernel-profiling capture
--   (`source` = 'traceme': `XLA TraceMe` events inside a kernel, such as
--   `ep_run_kernel`, `ep_wait_in` and the user's `acc`, nested by
--   `events.parent_id`), attributed to the
--   `XLA Ops`/`PALLAS` event containing them (`kernel_event_id`; `kernel` is
--   its short name). These are timed, not counted in cycles: `start_ps` and
--   `dur_ps` are the events' own, the cycle columns NULL.
--
-- `call_stack` is the scope's enclosing scopes as Proton writes them (a JSON
-- array, outermost first); Mosaic GPU scopes nest by B/E instead, so theirs
-- is NULL and `events.parent_id` of `event_id` gives the enclosing scope.
WITH origin AS (
  SELECT a.trace_id, a.int_value AS origin_ps
  FROM device_args a
  JOIN devices d ON d.trace_id = a.trace_id AND d.device_id = a.device_id
  WHERE d.name = 'Trace Metadata' AND a.key = 'xprof_sql.ts_origin_ps'
),
scopes AS (
  SELECT e.trace_id, e.event_id, e.name AS scope, e.ts_ps, e.dur_ps,
         regexp_match(d.name, '^(.*) Core([0-9]+) CTA([0-9]+)') AS pid_parts,
         regexp_match(t.name, '^warp ([0-9]+) \(line ([0-9]+)\)') AS tid_parts
  FROM events e
  JOIN tracks t ON t.trace_id = e.trace_id AND t.track_id = e.track_id
  JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id
  WHERE d.name LIKE '% Core% CTA%' AND t.name LIKE 'warp %'
),
mosaic AS (
  SELECT e.trace_id, e.event_id, e.name AS scope,
         (e.ts_ps + o.origin_ps + 500) / 1000 AS start_cycle,
         (e.ts_ps + e.dur_ps + o.origin_ps + 500) / 1000 AS end_cycle,
         regexp_match(tr.source_path, '([^/\\]+)-[0-9]+-trace\.json(\.gz)?$')[1] AS kernel,
         CAST(d.plane_id - 1 AS INT) AS sm_id, CAST(t.line_id - 1 AS INT) AS warpgroup_id
  FROM events e
  JOIN traces tr ON tr.trace_id = e.trace_id
  JOIN tracks t ON t.trace_id = e.trace_id AND t.track_id = e.track_id
  JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id
  JOIN origin o ON o.trace_id = e.trace_id
  WHERE tr.source_format = 'mosaic_gpu' AND d.kind = 'other' AND t.kind = 'thread'
),
llo AS (
  SELECT e.trace_id, e.event_id, k.display_name AS kernel, e.name AS scope,
         e.ts_ps, e.dur_ps, e.kernel_event_id,
         CASE t.kind WHEN 'source' THEN 'source_code' ELSE t.kind END AS source
  FROM events e
  JOIN tracks t ON t.trace_id = e.trace_id AND t.track_id = e.track_id
  JOIN events k ON k.trace_id = e.trace_id AND k.event_id = e.kernel_event_id
  WHERE t.kind IN ('llo_ops', 'pallas_primitives', 'source', 'traceme')
),
args AS (
  SELECT a.trace_id, a.event_id,
         max(CASE WHEN a.key = 'call_stack' THEN a.str_value END) AS call_stack,
         max(CASE WHEN a.key = 'Frequency (MHz)'
                  THEN coalesce(a.double_value, CAST(a.int_value AS DOUBLE)) END) AS frequency_mhz
  FROM event_args a
  JOIN scopes s ON s.trace_id = a.trace_id AND s.event_id = a.event_id
  WHERE a.key IN ('call_stack', 'Frequency (MHz)')
  GROUP BY a.trace_id, a.event_id
),
cycles AS (
  SELECT s.trace_id, s.event_id, s.scope, s.pid_parts, s.tid_parts,
         (s.ts_ps + o.origin_ps + 500) / 1000 AS start_cycle,
         (s.ts_ps + s.dur_ps + o.origin_ps + 500) / 1000 AS end_cycle,
         a.call_stack, a.frequency_mhz
  FROM scopes s
  JOIN origin o ON o.trace_id = s.trace_id
  LEFT JOIN args a ON a.trace_id = s.trace_id AND a.event_id = s.event_id
  WHERE s.pid_parts IS NOT NULL AND s.tid_parts IS NOT NULL
)
SELECT trace_id, event_id, pid_parts[1] AS kernel,
       TRY_CAST(pid_parts[2] AS INT) AS sm_id, TRY_CAST(pid_parts[3] AS INT) AS cta_id,
       TRY_CAST(tid_parts[1] AS INT) AS warp_id, TRY_CAST(tid_parts[2] AS INT) AS line,
       scope, call_stack, start_cycle, end_cycle, end_cycle - start_cycle AS cycles,
       frequency_mhz,
       CASE WHEN frequency_mhz > 0
            THEN CAST(round(start_cycle * 1e6 / frequency_mhz) AS BIGINT) END AS start_ps,
       CASE WHEN frequency_mhz > 0
            THEN CAST(round((end_cycle - start_cycle) * 1e6 / frequency_mhz) AS BIGINT) END AS dur_ps,
       'proton' AS source, CAST(NULL AS INT) AS warpgroup_id,
       CAST(NULL AS BIGINT) AS kernel_event_id
FROM cycles
UNION ALL
SELECT trace_id, event_id, kernel, sm_id, CAST(NULL AS INT), CAST(NULL AS INT), CAST(NULL AS INT),
       scope, CAST(NULL AS VARCHAR), start_cycle, end_cycle, end_cycle - start_cycle,
       CAST(NULL AS DOUBLE), CAST(NULL AS BIGINT), CAST(NULL AS BIGINT),
       'mosaic_gpu', warpgroup_id, CAST(NULL AS BIGINT)
FROM mosaic
UNION ALL
SELECT trace_id, event_id, kernel, CAST(NULL AS INT), CAST(NULL AS INT), CAST(NULL AS INT),
       CAST(NULL AS INT), scope, CAST(NULL AS VARCHAR), CAST(NULL AS BIGINT), CAST(NULL AS BIGINT),
       CAST(NULL AS BIGINT), CAST(NULL AS DOUBLE), ts_ps, dur_ps, source, CAST(NULL AS INT),
       kernel_event_id
FROM llo
