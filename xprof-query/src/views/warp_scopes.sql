-- Per kernel and scope of an intra-kernel trace: instances, SMs, CTAs and
-- warps; cycles min/avg/max and spread; cycles per warp.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column kernel: the kernel (`kernel_scopes.kernel`).
-- @column scope: the scope's name.
-- @column instances: scope instances recorded (a count).
-- @column sms: distinct SMs that ran the scope (a count).
-- @column ctas: distinct CTAs that ran the scope (a count); 0 in a Mosaic GPU trace (not recorded).
-- @column warps: distinct (CTA, warp) pairs that ran the scope (a count); in a Mosaic GPU trace,
--   distinct warpgroups.
-- @column total_cycles: cycles of all its instances, summed, in clock cycles.
-- @column min_cycles: the fewest cycles of one instance, in clock cycles.
-- @column avg_cycles: the mean cycles of one instance, in clock cycles.
-- @column max_cycles: the most cycles of one instance, in clock cycles.
-- @column cycles_spread: `max_cycles - min_cycles`, in clock cycles: how unevenly the warps fared.
-- @column cycles_per_warp: `total_cycles` over `warps`: the cycles one warp (warpgroup) spent in
--   the scope, on average.
-- @column first_cycle: the earliest `start_cycle` of its instances, in the trace's own cycle
--   counts.
-- @column last_cycle: the latest `end_cycle` of its instances, in the trace's own cycle counts.
--
-- Per kernel and scope of a cycle-level intra-kernel trace (`kernel_scopes`
-- rows from Proton and Mosaic GPU; LLO regions are timed, not counted in
-- cycles, and are left out): how many
-- instances, on how many SMs, CTAs and warps; cycles per instance (min,
-- average, max, and their spread, max less min); and `cycles_per_warp`, the
-- total cycles over the number of distinct (CTA, warp) pairs that ran the
-- scope: the cost of the scope to one warp, averaged over warps. In a Mosaic
-- GPU trace the lane recorded is a warpgroup: `warps` counts warpgroups and
-- `ctas` is 0 (not recorded).
SELECT trace_id, kernel, scope,
       count(*) AS instances,
       count(DISTINCT sm_id) AS sms,
       count(DISTINCT cta_id) AS ctas,
       count(DISTINCT coalesce(CAST(cta_id AS BIGINT) * 65536 + warp_id, warpgroup_id)) AS warps,
       sum(cycles) AS total_cycles,
       min(cycles) AS min_cycles,
       avg(CAST(cycles AS DOUBLE)) AS avg_cycles,
       max(cycles) AS max_cycles,
       max(cycles) - min(cycles) AS cycles_spread,
       CAST(sum(cycles) AS DOUBLE)
         / count(DISTINCT coalesce(CAST(cta_id AS BIGINT) * 65536 + warp_id, warpgroup_id)) AS cycles_per_warp,
       min(start_cycle) AS first_cycle,
       max(end_cycle) AS last_cycle
FROM kernel_scopes
WHERE source IN ('proton', 'mosaic_gpu')
GROUP BY trace_id, kernel, scope
