-- Ready checks for `xprof-sql check` (docs/analyses.md, "Profiles as
-- performance tests"). Copy the ones you want, or run this file and set
-- their parameters with `--set NAME=VALUE`; each rule returns the rows
-- that break it. Rules that read ${baseline} need `--baseline PROFILE…`
-- (without one they report "no data"). A rule that returns no rows passes
-- only when it had rows to judge: those of its `-- data:` line, else its
-- query without its outermost WHERE and HAVING; else it reports "no data"
-- (exit status 3), never a pass.

-- check: op_regressions
-- No HLO op got more than max_slowdown_pct slower than in the baseline
-- (ops that took at least min_base_us there). Judges the ops both sides
-- ran.
-- data: SELECT hlo_op FROM diff_hlo_stats('${baseline}', '${current}') WHERE only_in IS NULL
SELECT hlo_op, category, a_self_time_us AS base_us, b_self_time_us AS now_us,
       100.0 * (ratio - 1) AS delta_pct
FROM diff_hlo_stats('${baseline}', '${current}')
WHERE ratio > 1 + ${max_slowdown_pct:5} / 100.0 AND a_self_time_us >= ${min_base_us:100}
ORDER BY diff DESC;

-- check: kernel_regressions
-- No GPU kernel got more than max_slowdown_pct slower than in the
-- baseline (kernels that took at least min_base_us there). Judges the
-- kernels both sides ran: an H100 run against an MI300 baseline that
-- share no kernel has no data.
-- data: SELECT kernel_name FROM diff_kernel_stats('${baseline}', '${current}') WHERE only_in IS NULL
SELECT kernel_name, a_total_duration_us AS base_us, b_total_duration_us AS now_us,
       100.0 * (ratio - 1) AS delta_pct
FROM diff_kernel_stats('${baseline}', '${current}')
WHERE ratio > 1 + ${max_slowdown_pct:5} / 100.0 AND a_total_duration_us >= ${min_base_us:100}
ORDER BY diff DESC;

-- check: new_ops
-- No HLO op appears that the baseline did not run (judged where the
-- baseline ran HLO ops).
-- data: SELECT hlo_op FROM diff_hlo_stats('${baseline}', '${current}') WHERE only_in IS DISTINCT FROM 'b'
SELECT hlo_op, category, b_self_time_us AS now_us
FROM diff_hlo_stats('${baseline}', '${current}')
WHERE only_in = 'b'
ORDER BY b_self_time_us DESC;

-- check: vanished_ops
-- No HLO op of the baseline is gone (judged where the current profiles
-- ran HLO ops).
-- data: SELECT hlo_op FROM diff_hlo_stats('${baseline}', '${current}') WHERE only_in IS DISTINCT FROM 'a'
SELECT hlo_op, category, a_self_time_us AS base_us
FROM diff_hlo_stats('${baseline}', '${current}')
WHERE only_in = 'a'
ORDER BY a_self_time_us DESC;

-- check: step_time_p90
-- The step time's p90 (nearest rank) stays under max_p90_ms on every
-- device.
WITH s AS (
  SELECT trace_id, device_id, dur_ps,
         row_number() OVER (PARTITION BY trace_id, device_id ORDER BY dur_ps) AS k,
         count(*) OVER (PARTITION BY trace_id, device_id) AS n
  FROM step_stats WHERE trace_id IN (${current}))
SELECT trace_id, device_id, dur_ps / 1e9 AS p90_ms, n AS steps
FROM s
WHERE k = CAST(ceil(0.9 * n) AS BIGINT) AND dur_ps > ${max_p90_ms:12} * 1e9
ORDER BY p90_ms DESC;

-- check: idle_share
-- No device is idle more than max_idle_pct of its span.
SELECT trace_id, device_name, 100.0 - busy_pct AS idle_pct
FROM device_busy
WHERE trace_id IN (${current}) AND 100.0 - busy_pct > ${max_idle_pct:50}
ORDER BY idle_pct DESC;

-- check: region_occupancy_floor
-- The LLO regions whose named scope ends in `scope` keep at least
-- min_pct static occupancy of `unit` (mxu, valu, vld, vst, salu, xlu, eup).
SELECT hlo_op, region_id, name, named_scope, ${unit:mxu}_pct AS occupancy_pct
FROM llo_region_profile
WHERE trace_id IN (${current}) AND named_scope LIKE '%${scope:acc}'
  AND ${unit:mxu}_pct < ${min_pct:70}
ORDER BY occupancy_pct;

-- check: launch_delay_ceiling
-- No kernel waits more than max_launch_delay_us from its launch call to
-- its start on the device.
SELECT name, count(*) AS launches, max(launch_delay_ps) / 1e6 AS max_delay_us
FROM kernel_launch
WHERE trace_id IN (${current})
GROUP BY name
HAVING max(launch_delay_ps) > ${max_launch_delay_us:1000} * 1e6
ORDER BY max_delay_us DESC;

-- check: kineto_op_regressions
-- No PyTorch op or GPU kernel of the first profiler step got more than
-- max_slowdown_pct slower than in the baseline (those that took at least
-- min_base_us there; HTA's TraceDiff). Judges the names both sides ran.
-- data: SELECT name FROM diff_kineto_ops('${baseline}', '${current}') WHERE only_in IS NULL
SELECT name, a_total_duration_us AS base_us, b_total_duration_us AS now_us,
       100.0 * (ratio - 1) AS delta_pct
FROM diff_kineto_ops('${baseline}', '${current}')
WHERE ratio > 1 + ${max_slowdown_pct:5} / 100.0 AND a_total_duration_us >= ${min_base_us:100}
ORDER BY diff DESC;

-- check: kernel_share_ceiling
-- No one GPU kernel (by name) takes more than max_share_pct of its
-- trace's kernel time (gpu_kernels).
WITH k AS (
  SELECT trace_id, name, sum(dur_ps) AS kernel_ps
  FROM gpu_kernels WHERE trace_id IN (${current})
  GROUP BY trace_id, name),
s AS (
  SELECT trace_id, name, kernel_ps,
         100.0 * kernel_ps / sum(kernel_ps) OVER (PARTITION BY trace_id) AS share_pct
  FROM k)
SELECT trace_id, name, kernel_ps / 1e6 AS kernel_us, share_pct
FROM s
WHERE share_pct > ${max_share_pct:50}
ORDER BY share_pct DESC;

-- check: gpu_idle_share
-- No rank's GPU is idle more than max_idle_pct of its kernel span (HTA's
-- temporal breakdown).
SELECT trace_id, rank, idle_pct
FROM temporal_breakdown
WHERE trace_id IN (${current}) AND idle_pct > ${max_idle_pct:50}
ORDER BY idle_pct DESC;

-- check: comm_overlap_floor
-- Each rank overlaps at least min_overlap_pct of its communication with
-- computation (HTA's comm_comp_overlap; ranks that communicate).
-- data: SELECT rank FROM comm_comp_overlap WHERE trace_id IN (${current}) AND comm_ps > 0
SELECT trace_id, rank, overlap_pct
FROM comm_comp_overlap
WHERE trace_id IN (${current}) AND comm_ps > 0 AND overlap_pct < ${min_overlap_pct:10}
ORDER BY overlap_pct;
