-- Per kernel, unit and instruction: count, total time, kernel executions
-- and share of the kernel's instructions (XProf's instruction_mix, per
-- kernel).
-- @column trace_id: The converted input (`traces.trace_id`).
-- @column kernel: The kernel's short name (`llo_instructions.kernel`); NULL for instructions
--   outside a kernel.
-- @column unit: Functional unit (`llo_instructions.unit`: `VALU`, `MXU0`, ...).
-- @column name: Instruction name (`llo_instructions.name`).
-- @column instructions: Instructions of that name issued on the unit in the kernel, over all its
--   executions, a count.
-- @column total_ps: Sum of their durations, in ps.
-- @column kernel_executions: Kernel executions (distinct `kernel_event_id`) they were issued in, a
--   count.
-- @column pct_of_kernel: `instructions` over all instructions of the kernel (every unit and name),
--   in percent (0 to 100).
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
