-- XProf's op_profile tree (grouped by program, its default) flattened: one
-- row per node. `depth` 1 holds the programs and the IDLE node, 2 the HLO
-- categories of a program, 3 the ops of a category. `node_order` is the
-- tree's depth-first order, siblings by time, largest first; `parent`
-- names the parent node (NULL at depth 1; the root is the trace).
-- Times: a program's time is the self time of its ops, a category's and
-- an op's the ops' whole time; ops with ops nested in them count only in
-- their program, as XProf. IDLE is the device time (idle included, as
-- `hlo_stats.device_time_us`) less all ops' self time.
-- `flops_utilization` is the achieved FLOP/s (`flops` per ns of time)
-- over the device's peak, capped at 1, as XProf's op_profile shows it;
-- `hbm_bw_utilization` is `bytes_accessed` per ns over the peak HBM
-- bandwidth, capped at 1 (XProf counts only the HBM part of an op's
-- memory breakdown there, and shows 0 without one).
-- A program is named as XProf names it, `<module>(<program_id>)` from the
-- `/host:metadata` plane, else `main`. Differences from XProf: every op is
-- a row (XProf keeps the top 100 children of a node; `num_children` counts
-- them all); ops sharing a `deduplicated_name` are not grouped under an
-- "and its duplicate(s)" node; the root row is left out (its time is the
-- sum of the depth-1 rows). Built on `hlo_stats`.
WITH ops AS (
  SELECT h.trace_id, h.program_id, h.hlo_op, coalesce(h.category, '') AS category,
         h.device_kind, h.occurrences,
         CAST(round(h.total_time_us * 1e6) AS BIGINT) AS time_ps,
         CAST(round(h.total_self_time_us * 1e6) AS BIGINT) AS self_time_ps,
         h.flops, h.model_flops, h.bytes_accessed, h.peak_tflops, h.peak_hbm_gbps,
         CAST(round(h.device_time_us * 1e6) AS BIGINT) AS device_time_ps
  FROM hlo_stats h
  WHERE h.hlo_op NOT LIKE 'region%'
),
leaf AS (
  SELECT * FROM ops WHERE time_ps <= self_time_ps
),
program_names AS (
  SELECT m.trace_id,
         TRY_CAST(rtrim(split_part(m.name, '(', -1), ')') AS BIGINT UNSIGNED) AS program_id,
         max(m.name) AS program
  FROM event_metadata m
  JOIN devices d ON d.trace_id = m.trace_id AND d.device_id = m.device_id
  WHERE d.kind = 'metadata' AND m.name ~ '\([0-9]+\)$'
  GROUP BY 1, 2
),
totals AS (
  SELECT trace_id, max(device_time_ps) AS device_time_ps, sum(self_time_ps) AS op_time_ps,
         max(device_kind) AS device_kind,
         max(peak_tflops) AS peak_tflops, max(peak_hbm_gbps) AS peak_hbm_gbps
  FROM ops GROUP BY trace_id
),
programs AS (
  SELECT o.trace_id, o.program_id,
         coalesce(max(n.program), 'main') AS program,
         sum(o.self_time_ps) AS time_ps,
         max(o.peak_tflops) AS peak_tflops, max(o.peak_hbm_gbps) AS peak_hbm_gbps
  FROM ops o
  LEFT JOIN program_names n ON n.trace_id = o.trace_id AND n.program_id = o.program_id
  GROUP BY o.trace_id, o.program_id
),
program_leaf AS (
  SELECT trace_id, program_id, sum(flops) AS flops, sum(model_flops) AS model_flops,
         sum(bytes_accessed) AS bytes_accessed, count(DISTINCT category) AS num_children
  FROM leaf GROUP BY trace_id, program_id
),
categories AS (
  SELECT trace_id, program_id, category,
         sum(occurrences) AS occurrences, sum(time_ps) AS time_ps,
         sum(flops) AS flops, sum(model_flops) AS model_flops,
         sum(bytes_accessed) AS bytes_accessed, count(*) AS num_children
  FROM leaf GROUP BY trace_id, program_id, category
),
nodes AS (
  SELECT 'program' AS node_kind, 1 AS depth, p.trace_id, p.program_id, p.program,
         CAST(NULL AS VARCHAR) AS category, p.program AS name, CAST(NULL AS VARCHAR) AS parent,
         CAST(0 AS BIGINT) AS occurrences, p.time_ps,
         coalesce(l.flops, 0) AS flops, coalesce(l.model_flops, 0) AS model_flops,
         coalesce(l.bytes_accessed, 0) AS bytes_accessed, coalesce(l.num_children, 0) AS num_children,
         p.peak_tflops, p.peak_hbm_gbps,
         p.time_ps AS program_sort_ps, CAST(NULL AS BIGINT) AS category_sort_ps
  FROM programs p
  LEFT JOIN program_leaf l ON l.trace_id = p.trace_id AND l.program_id = p.program_id
  UNION ALL
  SELECT 'category' AS node_kind, 2 AS depth, c.trace_id, c.program_id, p.program,
         c.category, c.category AS name, p.program AS parent,
         c.occurrences, c.time_ps, c.flops, c.model_flops, c.bytes_accessed, c.num_children,
         p.peak_tflops, p.peak_hbm_gbps,
         p.time_ps AS program_sort_ps, c.time_ps AS category_sort_ps
  FROM categories c
  JOIN programs p ON p.trace_id = c.trace_id AND p.program_id = c.program_id
  UNION ALL
  SELECT 'op' AS node_kind, 3 AS depth, o.trace_id, o.program_id, p.program,
         o.category, o.hlo_op AS name, o.category AS parent,
         o.occurrences, o.time_ps, o.flops, o.model_flops, o.bytes_accessed,
         CAST(0 AS BIGINT) AS num_children,
         o.peak_tflops, o.peak_hbm_gbps,
         p.time_ps AS program_sort_ps, c.time_ps AS category_sort_ps
  FROM leaf o
  JOIN programs p ON p.trace_id = o.trace_id AND p.program_id = o.program_id
  JOIN categories c
    ON c.trace_id = o.trace_id AND c.program_id = o.program_id AND c.category = o.category
  UNION ALL
  SELECT 'idle' AS node_kind, 1 AS depth, t.trace_id, CAST(NULL AS BIGINT) AS program_id,
         CAST(NULL AS VARCHAR) AS program, 'IDLE' AS category, 'IDLE' AS name,
         CAST(NULL AS VARCHAR) AS parent, CAST(0 AS BIGINT) AS occurrences,
         greatest(t.device_time_ps - t.op_time_ps, 0) AS time_ps,
         CAST(0 AS BIGINT) AS flops, CAST(0 AS BIGINT) AS model_flops,
         CAST(0 AS BIGINT) AS bytes_accessed, CAST(0 AS BIGINT) AS num_children,
         CAST(NULL AS DOUBLE) AS peak_tflops, CAST(NULL AS DOUBLE) AS peak_hbm_gbps,
         greatest(t.device_time_ps - t.op_time_ps, 0) AS program_sort_ps,
         CAST(NULL AS BIGINT) AS category_sort_ps
  FROM totals t
)
,
rated AS (
  SELECT n.*, t.device_time_ps, t.op_time_ps, t.device_kind,
         -- 0 without FLOPs, time or a peak (IDLE, a GPU without a cost
         -- model), as XProf
         coalesce(n.flops / nullif(n.time_ps / 1e3, 0)
           / nullif(coalesce(n.peak_tflops, t.peak_tflops) * 1e3, 0), 0) AS flops_util,
         coalesce(n.bytes_accessed / nullif(n.time_ps / 1e3, 0)
           / nullif(coalesce(n.peak_hbm_gbps, t.peak_hbm_gbps), 0), 0) AS hbm_util
  FROM nodes n
  JOIN totals t ON t.trace_id = n.trace_id
)
SELECT n.trace_id,
       row_number() OVER (
         PARTITION BY n.trace_id
         ORDER BY n.program_sort_ps DESC, n.program_id NULLS FIRST,
                  n.category_sort_ps DESC NULLS FIRST, n.category NULLS FIRST,
                  CASE WHEN n.depth = 3 THEN n.time_ps END DESC NULLS FIRST, n.name) AS node_order,
       n.depth, n.node_kind, n.name, n.parent, n.program_id, n.program, n.category,
       n.num_children, n.occurrences,
       n.time_ps,
       coalesce(CAST(n.time_ps AS DOUBLE) / nullif(n.occurrences, 0), 0) AS avg_time_ps,
       100.0 * n.time_ps / nullif(n.device_time_ps, 0) AS time_pct,
       CASE WHEN n.node_kind <> 'idle'
            THEN 100.0 * n.time_ps / nullif(n.op_time_ps, 0) END AS time_excl_idle_pct,
       -- 0 where the profile has no counts (a GPU op without a cost model), as XProf
       coalesce(n.flops, 0) AS flops, coalesce(n.model_flops, 0) AS model_flops,
       coalesce(n.bytes_accessed, 0) AS bytes_accessed,
       CASE WHEN n.flops_util > 1.0 THEN 1.0 ELSE n.flops_util END AS flops_utilization,
       n.flops_util AS uncapped_flops_utilization,
       CASE WHEN n.hbm_util > 1.0 THEN 1.0 ELSE n.hbm_util END AS hbm_bw_utilization,
       n.device_kind,
       n.device_time_ps
FROM rated n
