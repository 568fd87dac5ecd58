-- Per async window of a device (an `Async XLA Ops` event, or a start/done
-- pair of the op lines): span, time covered by the device's compute,
-- exposed time, overlap ratio and class (hidden, partial, exposed;
-- `unpaired` for a start or done without its pair): XProf's
-- analyze_async_overlap.
--
-- XProf's `analyze_async_overlap` (XProf 2.24.2; the rules are in
-- tests/fixtures/tpu/expected/NOTES.md) per async window: how much of an
-- async op (a copy, an all-reduce, a send) ran while the same device
-- computed. One row per window, plus one per start or done without its
-- pair (`class = 'unpaired'`, XProf's `unpaired_ops`).
-- - The lines read are those named `XLA Ops`, `Sparse Core Ops` and
--   `Async XLA Ops`, on any device. An op's instruction name is its event
--   name less a leading `%` and what follows ` = `.
-- - Windows: each event of a device's `Async XLA Ops` line when it has
--   one (`window_source = 'Async XLA Ops'`); otherwise `<base>-start[.N]`
--   and `<base>-done[.N]` (and `send`/`recv` with their `-done`) of the op
--   lines paired first in, first out by `<base>[.N]`, in start order
--   (`'start_done_pairs'`), the window running from the start op's start
--   to the done op's end.
-- - Compute: the union of the device's op-line events that are no async
--   op. `covered_ps` is that union within the window, `overlap_ratio`
--   covered / span; `class` is `hidden` at 0.9 or more, `exposed` at 0.1 or
--   less (XProf's default thresholds), else `partial`. Windows of no
--   length are left out, as XProf does.
-- - `op` is the op family: the last part of the base name that is not a
--   number (`all-gather.4-start` is `all-gather`).
-- Times are the events' ps (XProf goes through doubles of ns and may
-- differ by a ps where a time is not whole ns).
WITH op_events AS (
  SELECT e.trace_id, t.device_id, d.name AS device_name, CAST(t.name AS VARCHAR) AS line_name,
         e.event_id, e.ts_ps AS start_ps, e.ts_ps + e.dur_ps AS end_ps,
         CASE WHEN starts_with(trim(CAST(e.name AS VARCHAR)), '%')
              THEN trim(split_part(substr(trim(CAST(e.name AS VARCHAR)), 2), ' = ', 1))
              ELSE trim(CAST(e.name AS VARCHAR)) END AS instruction
  FROM events e
  JOIN tracks t ON t.trace_id = e.trace_id AND t.track_id = e.track_id
  JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id
  WHERE t.name IN ('XLA Ops', 'Sparse Core Ops', 'Async XLA Ops')
),
matches AS (
  SELECT o.*,
         regexp_match(instruction, '^(.+)-(start|done)(\.[0-9]+)?$') AS start_done,
         regexp_match(instruction, '^(send|recv)(\.[0-9]+)?$') AS send_recv
  FROM op_events o
),
roles AS (
  SELECT m.*,
         CASE WHEN start_done IS NOT NULL THEN start_done[2]
              WHEN send_recv IS NOT NULL THEN 'start' END AS role,
         CASE WHEN start_done IS NOT NULL THEN start_done[1] || coalesce(start_done[3], '')
              WHEN send_recv IS NOT NULL THEN instruction END AS async_key,
         split_part(regexp_replace(coalesce(start_done[1], send_recv[1], instruction),
                                   '(\.[0-9]*)+$', ''), '.', -1) AS op
  FROM matches m
),
compute AS (
  SELECT trace_id, device_id, start_ps, end_ps,
         max(end_ps) OVER (PARTITION BY trace_id, device_id ORDER BY start_ps, end_ps
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_end_ps
  FROM roles
  WHERE line_name <> 'Async XLA Ops' AND role IS NULL AND end_ps > start_ps
),
compute_islands AS (
  SELECT trace_id, device_id, start_ps, end_ps,
         sum(CASE WHEN start_ps > before_end_ps THEN 1 ELSE 0 END)
           OVER (PARTITION BY trace_id, device_id ORDER BY start_ps, end_ps ROWS UNBOUNDED PRECEDING) AS island
  FROM compute
),
busy AS (
  SELECT trace_id, device_id, min(start_ps) AS start_ps, max(end_ps) AS end_ps
  FROM compute_islands GROUP BY trace_id, device_id, island
),
async_lines AS (
  SELECT DISTINCT trace_id, device_id FROM roles WHERE line_name = 'Async XLA Ops'
),
line_windows AS (
  SELECT trace_id, device_id, device_name, 'Async XLA Ops' AS window_source,
         instruction AS name, op, start_ps, end_ps, event_id AS start_event_id,
         event_id AS done_event_id
  FROM roles WHERE line_name = 'Async XLA Ops'
),
sequence AS (
  -- Starts and dones of the op lines, in XProf's order: by start, then
  -- `Sparse Core Ops` before `XLA Ops`, then line order.
  SELECT r.*,
         row_number() OVER (PARTITION BY r.trace_id, r.device_id, r.async_key
                            ORDER BY r.start_ps, CASE r.line_name WHEN 'Sparse Core Ops' THEN 0 ELSE 1 END,
                                     r.event_id) AS position
  FROM roles r
  LEFT JOIN async_lines a ON a.trace_id = r.trace_id AND a.device_id = r.device_id
  WHERE r.line_name <> 'Async XLA Ops' AND r.role IS NOT NULL AND a.device_id IS NULL
),
counted AS (
  SELECT s.*,
         sum(CASE WHEN role = 'start' THEN 1 ELSE 0 END) OVER running AS starts_so_far,
         sum(CASE WHEN role = 'done' THEN 1 ELSE 0 END) OVER running AS dones_so_far
  FROM sequence s
  WINDOW running AS (PARTITION BY trace_id, device_id, async_key ORDER BY position
                     ROWS UNBOUNDED PRECEDING)
),
dropped AS (
  -- Dones with no open start are dropped, first in first out: after each
  -- event, how many dones were dropped so far.
  SELECT c.*,
         max(greatest(dones_so_far - starts_so_far, 0))
           OVER (PARTITION BY trace_id, device_id, async_key ORDER BY position
                 ROWS UNBOUNDED PRECEDING) AS dropped_so_far
  FROM counted c
),
matched AS (
  -- A done that was not dropped closes the start numbered like it.
  SELECT d.*, dones_so_far - dropped_so_far AS pair,
         dropped_so_far > coalesce(lag(dropped_so_far) OVER (
           PARTITION BY trace_id, device_id, async_key ORDER BY position), 0) AS is_dropped
  FROM dropped d
),
pairs AS (
  SELECT s.trace_id, s.device_id, s.device_name, 'start_done_pairs' AS window_source,
         s.instruction AS name, s.op, s.start_ps, d.end_ps,
         s.event_id AS start_event_id, d.event_id AS done_event_id
  FROM matched s
  JOIN matched d
    ON d.trace_id = s.trace_id AND d.device_id = s.device_id AND d.async_key = s.async_key
   AND d.role = 'done' AND NOT d.is_dropped AND d.pair = s.starts_so_far
  WHERE s.role = 'start'
),
unpaired AS (
  SELECT r.trace_id, r.device_id, r.device_name, 'start_done_pairs' AS window_source,
         r.instruction AS name, r.op, r.start_ps, CAST(NULL AS BIGINT) AS end_ps,
         CASE WHEN r.role = 'start' THEN r.event_id END AS start_event_id,
         CASE WHEN r.role = 'done' THEN r.event_id END AS done_event_id
  FROM matched r
  WHERE NOT EXISTS (
    SELECT 1 FROM pairs p
    WHERE p.trace_id = r.trace_id AND (p.start_event_id = r.event_id OR p.done_event_id = r.event_id))
),
windows AS (
  SELECT * FROM line_windows WHERE end_ps > start_ps
  UNION ALL
  SELECT * FROM pairs WHERE end_ps > start_ps
),
covered AS (
  SELECT w.trace_id, w.device_id, w.start_event_id, w.done_event_id,
         -- (least/greatest skip NULLs: a window no compute overlaps has no b)
         coalesce(sum(CASE WHEN b.start_ps IS NOT NULL
                           THEN least(b.end_ps, w.end_ps) - greatest(b.start_ps, w.start_ps) END), 0)
           AS covered_ps
  FROM windows w
  LEFT JOIN busy b
    ON b.trace_id = w.trace_id AND b.device_id = w.device_id
   AND b.start_ps < w.end_ps AND b.end_ps > w.start_ps
  GROUP BY w.trace_id, w.device_id, w.start_event_id, w.done_event_id
)
SELECT w.trace_id, w.device_id, w.device_name, w.window_source, w.name, w.op,
       w.start_event_id, w.done_event_id, w.start_ps, w.end_ps,
       w.end_ps - w.start_ps AS span_ps, c.covered_ps,
       w.end_ps - w.start_ps - c.covered_ps AS exposed_ps,
       CAST(c.covered_ps AS DOUBLE) / (w.end_ps - w.start_ps) AS overlap_ratio,
       CASE WHEN CAST(c.covered_ps AS DOUBLE) / (w.end_ps - w.start_ps) >= 0.9 THEN 'hidden'
            WHEN CAST(c.covered_ps AS DOUBLE) / (w.end_ps - w.start_ps) <= 0.1 THEN 'exposed'
            ELSE 'partial' END AS class
FROM windows w
JOIN covered c
  ON c.trace_id = w.trace_id AND c.device_id = w.device_id
 AND c.start_event_id = w.start_event_id AND c.done_event_id = w.done_event_id
UNION ALL
SELECT trace_id, device_id, device_name, window_source, name, op, start_event_id, done_event_id,
       start_ps, end_ps, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), CAST(NULL AS BIGINT),
       CAST(NULL AS DOUBLE), 'unpaired'
FROM unpaired
