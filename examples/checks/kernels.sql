-- Ready checks for TPU kernels, two compiles compared (docs/analyses.md,
-- "A compiler engineer's walk"): `xprof-sql check NEW_DUMP_FOLDER
-- --baseline OLD_DUMP_FOLDER --rules examples/checks/kernels.sql`, with
-- thresholds set by `--set NAME=VALUE`. Dump folders compare with dump
-- folders, captures with captures (`llo_kernels`). Each rule returns the
-- kernels or regions that break it, with the numbers; every rule reads
-- ${baseline}, so without `--baseline` each reports "no data". A rule
-- passes only when it had kernels to judge (its `-- data:` line).

-- check: kernel_bundle_regressions
-- No kernel's schedule grew by more than max_bundle_growth_pct percent
-- of its bundles against the baseline compile. Judges the kernels both
-- sides compiled.
-- data: SELECT hlo_op FROM diff_llo_kernels('${baseline}', '${current}') WHERE only_in IS NULL AND a_bundles IS NOT NULL AND b_bundles IS NOT NULL
SELECT hlo_op, a_bundles AS base_bundles, b_bundles AS now_bundles,
       100.0 * (b_bundles - a_bundles) / a_bundles AS growth_pct
FROM diff_llo_kernels('${baseline}', '${current}')
WHERE only_in IS NULL
  AND b_bundles > a_bundles * (1 + ${max_bundle_growth_pct:5} / 100.0)
ORDER BY growth_pct DESC, hlo_op;

-- check: kernel_new_spills
-- No kernel spills or fills where the baseline compile of it did not
-- (spill and fill slots of the final schedule). Judges the kernels both
-- sides compiled whose schedule units are known.
-- data: SELECT hlo_op FROM diff_llo_kernels('${baseline}', '${current}') WHERE only_in IS NULL AND a_spill_slots IS NOT NULL AND b_spill_slots IS NOT NULL
SELECT hlo_op, a_spill_slots AS base_spill_slots, b_spill_slots AS now_spill_slots,
       a_fill_slots AS base_fill_slots, b_fill_slots AS now_fill_slots
FROM diff_llo_kernels('${baseline}', '${current}')
WHERE only_in IS NULL
  AND ((a_spill_slots = 0 AND b_spill_slots > 0) OR (a_fill_slots = 0 AND b_fill_slots > 0))
ORDER BY b_spill_slots DESC, hlo_op;

-- check: kernel_mxu_occupancy_drops
-- No kernel's static MXU occupancy (over its whole schedule) fell by
-- more than max_mxu_drop_pts percentage points against the baseline
-- compile. Judges the kernels both sides compiled with MXU use known.
-- data: SELECT hlo_op FROM diff_llo_kernels('${baseline}', '${current}') WHERE only_in IS NULL AND a_mxu_pct IS NOT NULL AND b_mxu_pct IS NOT NULL
SELECT hlo_op, a_mxu_pct AS base_mxu_pct, b_mxu_pct AS now_mxu_pct,
       b_mxu_pct - a_mxu_pct AS change_pts
FROM diff_llo_kernels('${baseline}', '${current}')
WHERE only_in IS NULL AND b_mxu_pct < a_mxu_pct - ${max_mxu_drop_pts:2}
ORDER BY change_pts, hlo_op;

-- check: new_kernels
-- No kernel is compiled that the baseline did not compile (a kernel
-- with no baseline to judge it by). Judges where both sides compiled
-- kernels.
-- data: SELECT 1 FROM diff_llo_kernels('${baseline}', '${current}') HAVING count(a_bundles) > 0 AND count(b_bundles) > 0
SELECT hlo_op, b_bundles AS now_bundles
FROM diff_llo_kernels('${baseline}', '${current}')
WHERE only_in = 'b'
ORDER BY hlo_op;
