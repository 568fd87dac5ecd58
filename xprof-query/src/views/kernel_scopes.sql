-- One row per scope instance of an intra-kernel, cycle-level trace: Proton's
-- instrumentation mode (a Chrome trace whose processes are
-- "<kernel> Core<sm> CTA<cta>" and whose threads are "warp <w> (line <l>)",
-- `ts`/`dur` in kilo-cycles). Cycles are kept as cycles: `start_cycle` and
-- `end_cycle` are the trace's own counts (`ts_ps` plus the file's origin,
-- `xprof_sql.ts_origin_ps` of `Trace Metadata`, over 1000: one "µs" of the
-- file is 1000 cycles); `cycles` is their difference. `start_ps`/`dur_ps`
-- are derived from the recorded clock (`Frequency (MHz)`) and NULL when the
-- trace records none. `call_stack` is the scope's enclosing scopes as
-- written (a JSON array, outermost first).
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
         (s.ts_ps + o.origin_ps) / 1000 AS start_cycle,
         (s.ts_ps + s.dur_ps + o.origin_ps) / 1000 AS end_cycle,
         a.call_stack, a.frequency_mhz
  FROM scopes s
  JOIN origin o ON o.trace_id = s.trace_id
  LEFT JOIN args a ON a.trace_id = s.trace_id AND a.event_id = s.event_id
  WHERE s.pid_parts IS NOT NULL AND s.tid_parts IS NOT NULL
)
SELECT trace_id, event_id, pid_parts[1] AS kernel,
       CAST(pid_parts[2] AS INT) AS sm_id, CAST(pid_parts[3] AS INT) AS cta_id,
       CAST(tid_parts[1] AS INT) AS warp_id, CAST(tid_parts[2] AS INT) AS line,
       scope, call_stack, start_cycle, end_cycle, end_cycle - start_cycle AS cycles,
       frequency_mhz,
       CASE WHEN frequency_mhz > 0
            THEN CAST(round(start_cycle * 1e6 / frequency_mhz) AS BIGINT) END AS start_ps,
       CASE WHEN frequency_mhz > 0
            THEN CAST(round((end_cycle - start_cycle) * 1e6 / frequency_mhz) AS BIGINT) END AS dur_ps
FROM cycles
