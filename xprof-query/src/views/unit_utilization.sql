-- Per kernel execution and functional unit: instructions, busy time (union
-- of intervals), busy fraction of the kernel's duration, and the unit that
-- dominates.
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
