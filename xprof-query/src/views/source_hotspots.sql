-- Per kernel and source line of its LLO instructions: instructions, busy
-- time, units used, kernel executions, bundle range; from the instruction
-- lanes of an LLO bundle trace, or from a kernel-profiling capture's
-- program and region markers (`busy_from` says which).
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column kernel: the kernel: its short name (`display_name` of the `XLA Ops`/`PALLAS` event;
--   NULL for instructions outside any kernel) from instruction lanes, the program's HLO op from
--   region segments.
-- @column source_file: the source file of the instructions (`source_info` of the lanes, or the
--   program's source map).
-- @column source_line: the line in `source_file`; NULL where none is recorded.
-- @column instructions: instructions of the line, a count: issued, summed over executions
--   (`instruction_lanes`), or in the program, once (`region_segments`).
-- @column busy_ps: busy time, in ps: the union of the line's instruction intervals per kernel
--   execution, summed (`instruction_lanes`; NULL when none has a duration); or the measured time
--   of the region segments holding one of its instructions, summed over executions, 0 when none
--   fired (`region_segments`).
-- @column units: distinct units of the line's instructions, a count: lane units
--   (`instruction_lanes`) or `get_llo_analysis` units (`region_segments`).
-- @column unit_names: those units, sorted by name.
-- @column kernel_executions: kernel executions of the line's instructions (`instruction_lanes`),
--   or the most executions any of its segments' regions fired in, 0 when none fired
--   (`region_segments`); a count.
-- @column first_bundle: smallest bundle of the line's instructions; NULL when none carries one.
-- @column last_bundle: largest bundle of the line's instructions; NULL when none carries one.
-- @column busy_from: where the row comes from: `instruction_lanes` (an LLO bundle trace) or
--   `region_segments` (a kernel-profiling capture).
--
-- Per kernel (short name) and source line (`source_info` of its
-- instructions): instructions, busy time (union of their intervals, per
-- kernel execution, summed), units used, kernel executions, and the bundle
-- range. `busy_from` = 'instruction_lanes'.
--
-- A kernel-profiling capture has no instruction lanes: its rows come from
-- the program (`llo_program_instructions`, static) and the measured
-- region segments (`llo_region_profile`), `busy_from` =
-- 'region_segments': `instructions` are the line's instructions in the
-- program (once, not per execution), `busy_ps` the measured time of the
-- segments (`llo_region_segments`: a region's bundles from its marker to
-- the next) holding at least one of them, summed over all executions: the
-- time the line's instructions were among those executing, not a time
-- they alone took (lines sharing a segment share its time); `units` and
-- `unit_names` the `get_llo_analysis` units of its instructions. Only
-- kernels whose markers fired and whose program decoded answer.
WITH per_execution AS (
  SELECT trace_id, kernel_event_id, kernel, source_file, source_line,
         count(*) AS instructions,
         busy_ps(ts_ps, ts_ps + dur_ps) AS busy_ps,
         min(bundle_number) AS first_bundle, max(bundle_number) AS last_bundle
  FROM llo_instructions
  WHERE source_file IS NOT NULL
  GROUP BY trace_id, kernel_event_id, kernel, source_file, source_line
),
units AS (
  SELECT trace_id, kernel, source_file, source_line,
         count(DISTINCT unit) AS units, array_agg(DISTINCT unit ORDER BY unit) AS unit_names
  FROM llo_instructions
  WHERE source_file IS NOT NULL
  GROUP BY trace_id, kernel, source_file, source_line
),
totals AS (
  SELECT trace_id, kernel, source_file, source_line,
         sum(instructions) AS instructions, sum(busy_ps) AS busy_ps,
         count(*) AS kernel_executions,
         min(first_bundle) AS first_bundle, max(last_bundle) AS last_bundle
  FROM per_execution
  GROUP BY trace_id, kernel, source_file, source_line
),
program_lines AS (
  SELECT i.trace_id, i.metadata_id, i.hlo_op, i.source_file, i.source_line,
         count(*) AS instructions, count(DISTINCT i.unit) AS units,
         array_agg(DISTINCT i.unit ORDER BY i.unit) AS unit_names,
         min(i.bundle) AS first_bundle, max(i.bundle) AS last_bundle
  FROM llo_program_instructions i
  WHERE i.source_file IS NOT NULL
    AND EXISTS (SELECT 1 FROM llo_region_segments g
                WHERE g.trace_id = i.trace_id AND g.metadata_id = i.metadata_id)
  GROUP BY i.trace_id, i.metadata_id, i.hlo_op, i.source_file, i.source_line
),
segments AS (
  SELECT DISTINCT trace_id, metadata_id, region_id, segment_start_bundle, segment_limit_bundle
  FROM llo_region_segments
),
line_segments AS (
  SELECT DISTINCT i.trace_id, i.metadata_id, i.source_file, i.source_line, g.region_id
  FROM llo_program_instructions i
  JOIN segments g ON g.trace_id = i.trace_id AND g.metadata_id = i.metadata_id
    AND i.bundle >= g.segment_start_bundle AND i.bundle < g.segment_limit_bundle
  WHERE i.source_file IS NOT NULL
),
line_time AS (
  SELECT l.trace_id, l.metadata_id, l.source_file, l.source_line,
         sum(p.measured_ps) AS busy_ps, max(p.executions) AS kernel_executions
  FROM line_segments l
  JOIN llo_region_profile p ON p.trace_id = l.trace_id AND p.metadata_id = l.metadata_id
    AND p.region_id = l.region_id
  GROUP BY l.trace_id, l.metadata_id, l.source_file, l.source_line
)
SELECT t.trace_id, t.kernel, t.source_file, t.source_line, t.instructions, t.busy_ps,
       u.units, u.unit_names, t.kernel_executions, t.first_bundle, t.last_bundle,
       'instruction_lanes' AS busy_from
FROM totals t
JOIN units u ON u.trace_id = t.trace_id AND (u.kernel IS NOT DISTINCT FROM t.kernel)
  AND u.source_file = t.source_file AND (u.source_line IS NOT DISTINCT FROM t.source_line)
UNION ALL
SELECT l.trace_id, l.hlo_op AS kernel, l.source_file, l.source_line, l.instructions,
       coalesce(m.busy_ps, 0) AS busy_ps, l.units, l.unit_names,
       coalesce(m.kernel_executions, 0) AS kernel_executions, l.first_bundle, l.last_bundle,
       'region_segments' AS busy_from
FROM program_lines l
LEFT JOIN line_time m ON m.trace_id = l.trace_id AND m.metadata_id = l.metadata_id
  AND m.source_file = l.source_file AND (m.source_line IS NOT DISTINCT FROM l.source_line)
