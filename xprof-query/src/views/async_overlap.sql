-- Per async window of a device (an `Async XLA Ops` event, or a start/done
-- pair of the op lines): span, time covered by the device's compute,
-- exposed time, overlap ratio and class (hidden, partial, exposed;
-- `unpaired` for a start or done without its pair): XProf's
-- analyze_async_overlap.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column device_id: the device (`devices.device_id`).
-- @column device_name: the device's name (`/device:TPU:0`).
-- @column window_source: `Async XLA Ops` (an event of that line) or `start_done_pairs` (a
--   start and a done of the op lines).
-- @column name: the window's instruction (the start op's, or the `Async XLA Ops` event's).
-- @column op: the op family (`all-gather.4-start` is `all-gather`).
-- @column start_event_id: the start op (`events.event_id`); NULL for an unpaired done.
-- @column done_event_id: the done op (`events.event_id`); NULL for an unpaired start.
-- @column start_ps: the window's start, ps from the trace start.
-- @column end_ps: the window's end, ps from the trace start; NULL when unpaired.
-- @column span_ps: `end_ps - start_ps`, in ps; NULL when unpaired.
-- @column covered_ps: time in the window the device computed (the union of its non-async
--   ops), in ps; NULL when unpaired.
-- @column exposed_ps: `span_ps - covered_ps`, in ps; NULL when unpaired.
-- @column overlap_ratio: `covered_ps / span_ps`, from 0 to 1; NULL when unpaired.
-- @column class: `hidden` (ratio 0.9 or more), `exposed` (0.1 or less), `partial`, or
--   `unpaired` (a start or done without its pair).
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
WITH roles AS (
  SELECT * FROM _tpu_op_events
),
busy AS (
  SELECT trace_id, group_id AS device_id, start_ps, end_ps
  FROM _op_busy_islands
  WHERE scope = 'device_compute'
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
