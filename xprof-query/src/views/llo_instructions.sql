-- One row per TPU LLO instruction (`<UNIT> Instructions` lanes, `LLO
-- Instructions`): unit, instruction name (with the
-- `msg`/`message`/`annotation`/`label` fallback), time, bundle number,
-- ordinal, unit id, LLO scopes as a list, Pallas primitive, source file and
-- line, call stack, details, and the kernel event containing it.
-- @column trace_id: The converted input (`traces.trace_id`).
-- @column event_id: The instruction's event (`events.event_id`).
-- @column track_id: Its lane: a `<UNIT> Instructions` track or the `LLO Instructions` line.
-- @column device_id: The TPU device it ran on.
-- @column unit: Functional unit of the lane (`tracks.unit`: `SALU`, `VALU`, `EUP`, `XLU`, `VLD`,
--   `VST`, `MXU<n>`); `LLO` on the `LLO Instructions` line.
-- @column unit_id: Stat `unit_id`; NULL when absent.
-- @column name: Instruction name: the event name; when that is only a number or `ID:…`, the first
--   non-empty `msg`, `message`, `annotation` or `label` stat.
-- @column ts_ps: Issue time, in ps from the trace start (interpolated between trace points).
-- @column dur_ps: Duration, in ps.
-- @column bundle_number: Stat `bundle_number`: the bundle the instruction was issued in; NULL when
--   absent.
-- @column instruction_ordinal: Stat `instruction_ordinal`; NULL when absent.
-- @column llo_scopes: Stat `llo_scopes` (a JSON list) as a list of scope names, outermost first;
--   empty for `[]`; NULL when absent.
-- @column pallas_primitive: Stat `pallas_primitive`: the JAX/Pallas primitive the instruction
--   lowers; NULL when absent.
-- @column source_file: Source file from stat `source_info` (`file.py:12` or `file.py:L12`); NULL
--   when absent or not of that form.
-- @column source_line: Source line number from stat `source_info`; NULL when absent or not of that
--   form.
-- @column source_call_stack: Stat `source_call_stack`, as written; NULL when absent.
-- @column details: Stat `details`, as written; NULL when absent.
-- @column measured: Always NULL: times between trace points are interpolated from the compiler's
--   cycle model, and no stat says which points were measured.
-- @column kernel_event_id: The `XLA Ops`/`PALLAS` event of the same device containing the
--   instruction; NULL when none does.
-- @column kernel: That kernel event's short name (`display_name`); NULL when no kernel contains it.
--
-- One row per instruction of a TPU LLO bundle trace: every event on a
-- `<UNIT> Instructions` lane (`tracks.kind = 'llo_unit'`) or the
-- `LLO Instructions` line, with its stats typed (own stats first, then its
-- metadata's, as `event_stats` gives them): `bundle_number`,
-- `instruction_ordinal`, `unit_id`, `llo_scopes` (the JSON list as
-- VARCHAR[], outermost first), `pallas_primitive`, `source_file` and
-- `source_line` parsed from `source_info` (`file.py:12` or `file.py:L12`),
-- `source_call_stack`, `details`. `name` falls back to the `msg`,
-- `message`, `annotation` or `label` stat when the event name is only a
-- number or `ID:…`. `kernel_event_id` is the `XLA Ops`/`PALLAS` event of
-- the same device containing the instruction, and `kernel` its short name,
-- so an instruction joins its HLO op, module, program and step.
-- `measured` is NULL: between trace points (every N bundles) times are
-- interpolated from the compiler's cycle model, and no public stat says
-- which points were measured.
WITH lanes AS (
  SELECT e.trace_id, e.event_id, e.track_id, t.device_id,
         coalesce(t.unit, 'LLO') AS unit, e.name AS raw_name,
         e.ts_ps, e.dur_ps, e.kernel_event_id
  FROM events e
  JOIN tracks t ON t.trace_id = e.trace_id AND t.track_id = e.track_id
  WHERE t.kind IN ('llo_unit', 'llo_instructions')
),
stats AS (
  SELECT s.trace_id, s.event_id,
         max(CASE WHEN s.key = 'bundle_number'
                  THEN coalesce(s.int_value, CAST(s.uint_value AS BIGINT), TRY_CAST(s.str_value AS BIGINT)) END) AS bundle_number,
         max(CASE WHEN s.key = 'instruction_ordinal'
                  THEN coalesce(s.int_value, CAST(s.uint_value AS BIGINT), TRY_CAST(s.str_value AS BIGINT)) END) AS instruction_ordinal,
         max(CASE WHEN s.key = 'unit_id'
                  THEN coalesce(s.int_value, CAST(s.uint_value AS BIGINT), TRY_CAST(s.str_value AS BIGINT)) END) AS unit_id,
         max(CASE WHEN s.key = 'llo_scopes' THEN s.str_value END) AS llo_scopes,
         max(CASE WHEN s.key = 'pallas_primitive' THEN s.str_value END) AS pallas_primitive,
         max(CASE WHEN s.key = 'source_info' THEN s.str_value END) AS source_info,
         max(CASE WHEN s.key = 'source_call_stack' THEN s.str_value END) AS source_call_stack,
         max(CASE WHEN s.key = 'details' THEN s.str_value END) AS details,
         max(CASE WHEN s.key = 'msg' THEN s.str_value END) AS msg,
         max(CASE WHEN s.key = 'message' THEN s.str_value END) AS message,
         max(CASE WHEN s.key = 'annotation' THEN s.str_value END) AS annotation,
         max(CASE WHEN s.key = 'label' THEN s.str_value END) AS label
  FROM event_stats s
  JOIN lanes l ON l.trace_id = s.trace_id AND l.event_id = s.event_id
  WHERE s.key IN ('bundle_number', 'instruction_ordinal', 'unit_id', 'llo_scopes',
                  'pallas_primitive', 'source_info', 'source_call_stack', 'details',
                  'msg', 'message', 'annotation', 'label')
  GROUP BY s.trace_id, s.event_id
)
SELECT l.trace_id, l.event_id, l.track_id, l.device_id, l.unit, s.unit_id,
       CASE WHEN l.raw_name ~ '^[0-9]+$' OR l.raw_name LIKE 'ID:%'
            THEN coalesce(nullif(s.msg, ''), nullif(s.message, ''), nullif(s.annotation, ''),
                          nullif(s.label, ''), l.raw_name)
            ELSE l.raw_name END AS name,
       l.ts_ps, l.dur_ps, s.bundle_number, s.instruction_ordinal,
       CASE WHEN s.llo_scopes IS NULL THEN NULL
            WHEN regexp_like(s.llo_scopes, '^\s*\[\s*\]\s*$') THEN make_array()
            ELSE string_to_array(
                   regexp_replace(regexp_replace(s.llo_scopes, '^\s*\[\s*"|"\s*\]\s*$', '', 'g'),
                                  '"\s*,\s*"', chr(31), 'g'),
                   chr(31)) END AS llo_scopes,
       s.pallas_primitive,
       regexp_match(s.source_info, '^([^:]+):[Ll]?([0-9]+)')[1] AS source_file,
       TRY_CAST(regexp_match(s.source_info, '^([^:]+):[Ll]?([0-9]+)')[2] AS BIGINT) AS source_line,
       s.source_call_stack, s.details,
       CAST(NULL AS BOOLEAN) AS measured,
       l.kernel_event_id, k.display_name AS kernel
FROM lanes l
LEFT JOIN stats s ON s.trace_id = l.trace_id AND s.event_id = l.event_id
LEFT JOIN events k ON k.trace_id = l.trace_id AND k.event_id = l.kernel_event_id
