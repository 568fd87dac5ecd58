-- Per kernel execution and functional unit: instructions, busy time (union
-- of intervals), busy fraction of the kernel's duration, and the unit that
-- dominates.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column device_id: the TPU device (`devices.device_id`).
-- @column kernel_event_id: the kernel execution: the `XLA Ops`/`PALLAS` event containing the
--   instructions (`events.event_id`).
-- @column kernel: the kernel's short name (`display_name` of that event).
-- @column kernel_ts_ps: kernel start, in ps from the trace start.
-- @column kernel_dur_ps: kernel duration, in ps.
-- @column unit: the functional unit of the instruction lane (`SALU`, `VALU`, `EUP`, `XLU`, `VLD`,
--   `VST`, `MXU<n>`, ...; `LLO` for the `LLO Instructions` line).
-- @column instructions: instructions the unit issued in this execution, a count.
-- @column busy_ps: time at least one of the unit's instructions ran (union of their intervals),
--   in ps; NULL when none of them has a duration.
-- @column busy_fraction: `busy_ps` over `kernel_dur_ps`, a ratio from 0 to 1; NULL when the
--   kernel's duration is 0.
-- @column first_bundle: smallest `bundle_number` of the unit's instructions in this execution;
--   NULL when none carries one.
-- @column last_bundle: largest `bundle_number` of the unit's instructions in this execution; NULL
--   when none carries one.
-- @column dominant: true for the unit with the most busy time in this kernel execution (every
--   unit tied for it), false otherwise.
-- @column measured: always NULL: between trace points times are interpolated from the compiler's
--   cycle model, and no stat says which were measured.
--
-- Per kernel execution (the `XLA Ops`/`PALLAS` event containing LLO
-- instructions) and functional unit: instructions issued, busy time (the
-- union of the unit's instruction intervals, `busy_ps`), and the busy
-- fraction of the kernel's duration; `dominant` marks the unit busiest in
-- that kernel. Times are as the trace gives them: between trace points
-- they are interpolated from the compiler's cycle model (`measured` is
-- NULL, see `llo_instructions`).
WITH per_unit AS (
  SELECT i.trace_id, i.device_id, i.kernel_event_id, i.kernel, i.unit,
         count(*) AS instructions,
         busy_ps(i.ts_ps, i.ts_ps + i.dur_ps) AS busy_ps,
         min(i.bundle_number) AS first_bundle, max(i.bundle_number) AS last_bundle
  FROM llo_instructions i
  WHERE i.kernel_event_id IS NOT NULL
  GROUP BY i.trace_id, i.device_id, i.kernel_event_id, i.kernel, i.unit
)
SELECT u.trace_id, u.device_id, u.kernel_event_id, u.kernel, k.ts_ps AS kernel_ts_ps,
       k.dur_ps AS kernel_dur_ps, u.unit, u.instructions, u.busy_ps,
       CAST(u.busy_ps AS DOUBLE) / nullif(k.dur_ps, 0) AS busy_fraction,
       u.first_bundle, u.last_bundle,
       rank() OVER (PARTITION BY u.trace_id, u.kernel_event_id ORDER BY u.busy_ps DESC) = 1 AS dominant,
       CAST(NULL AS BOOLEAN) AS measured
FROM per_unit u
JOIN events k ON k.trace_id = u.trace_id AND k.event_id = u.kernel_event_id
