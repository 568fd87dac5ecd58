-- The step of each host event and of the GPU kernels it launched, as
-- XProf's Events DB `step` (GroupTfEvents' `group_id`): step root (`_r`),
-- step name, step number; also for host-only profiles. Defined by this SQL,
-- computed by a walk in memory that gives its rows
-- (xprof_query::event_steps).
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column event_id: the event that belongs to the step: a host event or a GPU op
--   (`events.event_id`).
-- @column step_group_id: number of the step in its trace, from 0, in the order of the step roots'
--   starts (ties by event id): XProf's `group_id`.
-- @column step_root_event_id: `event_id` of the step's root: the event with stat `_r` that the
--   event descends from and that starts earliest.
-- @column step_name: the step's name: `<root name> <iter_num>`, else `<root name> <step_num>`,
--   else `<root name> <step_group_id>` (e.g. `train 0`), as XProf's Events DB `step`.
--
-- The step of each event, as XProf's Events DB gives it (its `step`
-- column, from the `group_id` XProf's GroupTfEvents assigns): host events
-- and the GPU kernels they launch, also in host-only profiles. One row per
-- event that has a step. Rules (tests/fixtures/xspace/expected/NOTES.md):
-- an event's children are the events nested in it on its track
-- (`parent_id`), the events consuming what it produces (stats `_ct`/`_c`
-- equal to its `_pt`/`_p`), and for a host event with a `correlation_id`
-- the GPU ops with the same id. Step roots are the events with stat `_r`
-- (JAX's StepTraceAnnotation, TF's step markers); an event belongs to the
-- earliest-starting root it descends from, and a root inside another
-- root's step starts no step of its own. The step is named after its root:
-- `<root name> <iter_num, else step_num, else the step's number>`
-- (`train 0`). Ids compare as XProf's unsigned 64-bit values. Chains are
-- followed at most 64 hops deep.
-- Device steps of TPUs (the `Steps` line) are `events.step_event_id` and
-- `step_stats`, not this view.
WITH RECURSIVE
ids AS (
  SELECT trace_id, event_id, key,
         CASE WHEN value_type = 'uint' THEN CAST(uint_value AS DECIMAL(20, 0))
              WHEN int_value < 0
                THEN CAST(int_value AS DECIMAL(20, 0)) + CAST(18446744073709551616 AS DECIMAL(21, 0))
              ELSE CAST(int_value AS DECIMAL(20, 0)) END AS id
  FROM event_stats
  WHERE key IN ('_pt', '_p', '_ct', '_c', '_r', 'iter_num', 'step_num', 'correlation_id')
),
contexts AS (
  SELECT trace_id, event_id,
         max(CASE WHEN key = '_pt' THEN id END) AS producer_type,
         max(CASE WHEN key = '_p' THEN id END) AS producer_id,
         max(CASE WHEN key = '_ct' THEN id END) AS consumer_type,
         max(CASE WHEN key = '_c' THEN id END) AS consumer_id,
         max(CASE WHEN key = '_r' THEN id END) AS is_root,
         max(CASE WHEN key = 'iter_num' THEN id END) AS iter_num,
         max(CASE WHEN key = 'step_num' THEN id END) AS step_num,
         max(CASE WHEN key = 'correlation_id' THEN id END) AS correlation_id
  FROM ids GROUP BY trace_id, event_id
),
edges AS (
  SELECT trace_id, parent_id AS from_id, event_id AS to_id
  FROM events WHERE parent_id IS NOT NULL
  UNION ALL
  SELECT p.trace_id, p.event_id, c.event_id
  FROM contexts p
  JOIN contexts c ON c.trace_id = p.trace_id AND c.consumer_type = p.producer_type
                 AND c.consumer_id = p.producer_id AND c.event_id <> p.event_id
  UNION ALL
  SELECT h.trace_id, h.event_id, o.event_id
  FROM contexts h
  JOIN events he ON he.trace_id = h.trace_id AND he.event_id = h.event_id
  JOIN tracks ht ON ht.trace_id = he.trace_id AND ht.track_id = he.track_id
  JOIN devices hd ON hd.trace_id = ht.trace_id AND hd.device_id = ht.device_id
  JOIN device_ops o ON o.trace_id = h.trace_id AND CAST(o.correlation_id AS DECIMAL(20, 0)) = h.correlation_id
  WHERE hd.kind = 'host' AND o.device_kind = 'gpu'
),
roots AS (
  SELECT e.trace_id, e.event_id, e.ts_ps, e.name
  FROM events e
  JOIN contexts c ON c.trace_id = e.trace_id AND c.event_id = e.event_id
  WHERE c.is_root > 0
),
reach AS (
  SELECT trace_id, event_id AS root_id, event_id, 0 AS hops FROM roots
  UNION ALL
  SELECT r.trace_id, r.root_id, g.to_id, r.hops + 1
  FROM reach r JOIN edges g ON g.trace_id = r.trace_id AND g.from_id = r.event_id
  WHERE r.hops < 64
),
first_root AS (
  SELECT r.trace_id, r.event_id,
         first_value(r.root_id ORDER BY o.ts_ps, r.root_id) AS root_id
  FROM reach r JOIN roots o ON o.trace_id = r.trace_id AND o.event_id = r.root_id
  GROUP BY r.trace_id, r.event_id
),
groups AS (
  SELECT o.trace_id, o.event_id AS root_id,
         row_number() OVER (PARTITION BY o.trace_id ORDER BY o.ts_ps, o.event_id) - 1 AS group_id,
         o.name || ' ' || CAST(coalesce(c.iter_num, c.step_num) AS VARCHAR) AS named
  FROM roots o
  JOIN first_root f ON f.trace_id = o.trace_id AND f.event_id = o.event_id AND f.root_id = o.event_id
  JOIN contexts c ON c.trace_id = o.trace_id AND c.event_id = o.event_id
)
SELECT f.trace_id, f.event_id, g.group_id AS step_group_id, f.root_id AS step_root_event_id,
       coalesce(g.named, o.name || ' ' || CAST(g.group_id AS VARCHAR)) AS step_name
FROM first_root f
JOIN groups g ON g.trace_id = f.trace_id AND g.root_id = f.root_id
JOIN roots o ON o.trace_id = f.trace_id AND o.event_id = f.root_id
