-- Per kernel, unit and instruction: count, total time, kernel executions
-- and share of the kernel's instructions (XProf's instruction_mix, per
-- kernel).
--
-- Per kernel (short name), unit and instruction: how many were issued, their
-- total time, and their share of the kernel's instructions: XProf's
-- `instruction_mix` query, per kernel and unit instead of for the whole
-- file.
SELECT trace_id, kernel, unit, name,
       count(*) AS instructions,
       sum(dur_ps) AS total_ps,
       count(DISTINCT kernel_event_id) AS kernel_executions,
       100.0 * count(*) / sum(count(*)) OVER (PARTITION BY trace_id, kernel) AS pct_of_kernel
FROM llo_instructions
GROUP BY trace_id, kernel, unit, name
