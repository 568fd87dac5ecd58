-- XProf's op_profile tree by program, flattened: programs and IDLE, their
-- HLO categories, the ops of each; time, percent of device time with and
-- without idle, FLOPs, FLOP and HBM-bandwidth utilization against the
-- device's peaks.
-- @column trace_id: The converted input (`traces.trace_id`).
-- @column node_order: Place of the node in the tree's depth-first order, from 1, siblings by time,
--   largest first.
-- @column depth: Depth in the tree: 1 for a program or IDLE, 2 for a category, 3 for an op.
-- @column node_kind: `idle`, `program`, `category` or `op`.
-- @column name: The node's name: `IDLE`, the program's name, the HLO category, or the HLO op.
-- @column parent: Name of the parent node: the program for a category, the category for an op; NULL
--   at depth 1.
-- @column program_id: The program's id (`hlo_stats.program_id`); NULL for IDLE and for a program of
--   ops that carry none.
-- @column program: The program's name, `<module>(<program_id>)` from the `/host:metadata` plane,
--   else `main`; NULL for IDLE.
-- @column category: The HLO category (empty when the op has none); `IDLE` for IDLE; NULL on program
--   rows.
-- @column num_children: Children of the node, a count: categories of a program, ops of a category
--   (every one, not XProf's top 100); 0 for IDLE, ops, and programs without an id.
-- @column occurrences: Executions of the op, or of the category's ops, a count; 0 for programs and
--   IDLE.
-- @column time_ps: Time, in ps: for a program the self time of its ops; for a category or an op the
--   ops' whole time (leaf ops only); for IDLE the device time less all ops' self time, at least 0.
-- @column avg_time_ps: `time_ps` over `occurrences`, in ps; 0 when `occurrences` is 0.
-- @column time_pct: `time_ps` over `device_time_ps`, in percent (0 to 100); NULL when the device
--   time is 0.
-- @column time_excl_idle_pct: `time_ps` over the self time of all ops (device time without idle),
--   in percent (0 to 100); NULL for IDLE and when the ops' self time is 0.
-- @column flops: FLOP of the node's ops from the profile's cost model (stat `flops`), summed; 0 for
--   IDLE, programs without an id, and ops without counts.
-- @column model_flops: Model FLOP of the node's ops (stat `model_flops`), summed; 0 where `flops`
--   is.
-- @column bytes_accessed: Bytes accessed by the node's ops (stat `bytes_accessed`), summed, in
--   bytes; 0 where `flops` is.
-- @column flops_utilization: Achieved FLOP/s (`flops` over `time_ps`) over the device's peak
--   FLOP/s, capped at 1: a ratio from 0 to 1; 0 without FLOP, time or peak.
-- @column uncapped_flops_utilization: `flops_utilization` before the cap at 1: a ratio (above 1
--   when the counts exceed the peak).
-- @column hbm_bw_utilization: Achieved bandwidth (`bytes_accessed` over `time_ps`) over the
--   device's peak HBM bandwidth, capped at 1: a ratio from 0 to 1; 0 without bytes, time or peak.
-- @column device_kind: Kind of the trace's devices (`devices.kind`: `tpu`, `gpu`, ...), the same on
--   every row of a trace.
-- @column device_time_ps: The trace's total device time, idle included
--   (`hlo_stats.device_time_us`), in ps: the denominator of `time_pct`, the same on every row of a
--   trace.
--
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
program_names AS (
  SELECT m.trace_id,
         TRY_CAST(rtrim(split_part(m.name, '(', -1), ')') AS BIGINT UNSIGNED) AS program_id,
         max(m.name) AS program
  FROM event_metadata m
  JOIN devices d ON d.trace_id = m.trace_id AND d.device_id = m.device_id
  WHERE d.kind = 'metadata' AND m.name ~ '\([0-9]+\)$'
  GROUP BY 1, 2
),
-- Every level of the tree in one aggregation over `ops`, so that
-- `hlo_stats` runs once (DataFusion runs a CTE again for each reference,
-- and the tree's levels referred to it seven times): level 1 a trace
-- (its totals and IDLE), 2 a program, 3 a category, 4 an op. Categories
-- and ops count the leaf ops only (`time_ps <= self_time_ps`); a program
-- counts the self time of all its ops.
levels AS (
  SELECT o.*, o.time_ps <= o.self_time_ps AS is_leaf, l.level
  FROM ops o CROSS JOIN (VALUES (1), (2), (3), (4)) AS l(level)
),
grouped AS (
  SELECT trace_id, level,
         CASE WHEN level >= 2 THEN program_id END AS program_id,
         CASE WHEN level >= 3 THEN category END AS category,
         CASE WHEN level = 4 THEN hlo_op END AS hlo_op,
         sum(self_time_ps) AS self_time_ps,
         max(device_time_ps) AS device_time_ps,
         max(device_kind) AS device_kind,
         max(peak_tflops) AS peak_tflops, max(peak_hbm_gbps) AS peak_hbm_gbps,
         count(CASE WHEN is_leaf THEN 1 END) AS leaf_ops,
         count(DISTINCT CASE WHEN is_leaf THEN category END) AS leaf_categories,
         sum(CASE WHEN is_leaf THEN occurrences END) AS occurrences,
         sum(CASE WHEN is_leaf THEN time_ps END) AS time_ps,
         sum(CASE WHEN is_leaf THEN flops END) AS flops,
         sum(CASE WHEN is_leaf THEN model_flops END) AS model_flops,
         sum(CASE WHEN is_leaf THEN bytes_accessed END) AS bytes_accessed
  FROM levels
  GROUP BY 1, 2, 3, 4, 5
),
-- Each row with its program's time and peaks, its category's time and its
-- trace's totals (level 1 rows are a partition of their own: a program
-- may have a NULL id too).
placed AS (
  SELECT g.*,
         max(CASE WHEN level = 2 THEN self_time_ps END)
           OVER (PARTITION BY trace_id, level = 1, program_id) AS program_time_ps,
         max(CASE WHEN level = 2 THEN peak_tflops END)
           OVER (PARTITION BY trace_id, level = 1, program_id) AS program_peak_tflops,
         max(CASE WHEN level = 2 THEN peak_hbm_gbps END)
           OVER (PARTITION BY trace_id, level = 1, program_id) AS program_peak_hbm_gbps,
         max(CASE WHEN level = 3 THEN time_ps END)
           OVER (PARTITION BY trace_id, level <= 2, program_id, category) AS category_time_ps,
         max(CASE WHEN level = 1 THEN device_time_ps END) OVER (PARTITION BY trace_id) AS trace_device_time_ps,
         max(CASE WHEN level = 1 THEN self_time_ps END) OVER (PARTITION BY trace_id) AS trace_op_time_ps,
         max(CASE WHEN level = 1 THEN device_kind END) OVER (PARTITION BY trace_id) AS trace_device_kind,
         max(CASE WHEN level = 1 THEN peak_tflops END) OVER (PARTITION BY trace_id) AS trace_peak_tflops,
         max(CASE WHEN level = 1 THEN peak_hbm_gbps END) OVER (PARTITION BY trace_id) AS trace_peak_hbm_gbps
  FROM grouped g
),
nodes AS (
  SELECT CASE p.level WHEN 1 THEN 'idle' WHEN 2 THEN 'program' WHEN 3 THEN 'category' ELSE 'op' END
           AS node_kind,
         CASE p.level WHEN 1 THEN 1 WHEN 2 THEN 1 WHEN 3 THEN 2 ELSE 3 END AS depth,
         p.trace_id, p.program_id,
         CASE WHEN p.level >= 2 THEN coalesce(n.program, 'main') END AS program,
         -- (the string types the view has always had)
         arrow_cast(CASE WHEN p.level = 1 THEN 'IDLE' ELSE p.category END, 'Utf8View') AS category,
         arrow_cast(CASE p.level WHEN 1 THEN 'IDLE' WHEN 2 THEN coalesce(n.program, 'main')
                                 WHEN 3 THEN p.category ELSE p.hlo_op END, 'Utf8') AS name,
         arrow_cast(CASE p.level WHEN 3 THEN coalesce(n.program, 'main') WHEN 4 THEN p.category END,
                    'Utf8View') AS parent,
         CASE WHEN p.level >= 3 THEN p.occurrences ELSE 0 END AS occurrences,
         CASE p.level WHEN 1 THEN greatest(p.trace_device_time_ps - p.trace_op_time_ps, 0)
                      WHEN 2 THEN p.self_time_ps ELSE p.time_ps END AS time_ps,
         CASE WHEN p.has_children THEN coalesce(p.flops, 0) ELSE 0 END AS flops,
         CASE WHEN p.has_children THEN coalesce(p.model_flops, 0) ELSE 0 END AS model_flops,
         CASE WHEN p.has_children THEN coalesce(p.bytes_accessed, 0) ELSE 0 END AS bytes_accessed,
         CASE WHEN NOT p.has_children THEN 0
              WHEN p.level = 2 THEN p.leaf_categories WHEN p.level = 3 THEN p.leaf_ops
              ELSE 0 END AS num_children,
         CASE WHEN p.level >= 2 THEN p.program_peak_tflops END AS peak_tflops,
         CASE WHEN p.level >= 2 THEN p.program_peak_hbm_gbps END AS peak_hbm_gbps,
         CASE WHEN p.level = 1 THEN greatest(p.trace_device_time_ps - p.trace_op_time_ps, 0)
              ELSE p.program_time_ps END AS program_sort_ps,
         CASE WHEN p.level >= 3 THEN p.category_time_ps END AS category_sort_ps,
         p.trace_device_time_ps AS device_time_ps, p.trace_op_time_ps AS op_time_ps,
         p.trace_device_kind AS device_kind,
         p.trace_peak_tflops, p.trace_peak_hbm_gbps
  FROM (
    -- Categories and ops are shown for programs with an id only (a
    -- program without one has its time, no children), and with leaf ops
    -- only, as XProf's tree.
    SELECT *, level >= 2 AND program_id IS NOT NULL AS has_children FROM placed
  ) p
  LEFT JOIN program_names n ON n.trace_id = p.trace_id AND n.program_id = p.program_id
  WHERE p.level <= 2 OR (p.has_children AND p.leaf_ops > 0)
),
rated AS (
  SELECT n.*,
         -- 0 without FLOPs, time or a peak (IDLE, a GPU without a cost
         -- model), as XProf
         coalesce(n.flops / nullif(n.time_ps / 1e3, 0)
           / nullif(coalesce(n.peak_tflops, n.trace_peak_tflops) * 1e3, 0), 0) AS flops_util,
         coalesce(n.bytes_accessed / nullif(n.time_ps / 1e3, 0)
           / nullif(coalesce(n.peak_hbm_gbps, n.trace_peak_hbm_gbps), 0), 0) AS hbm_util
  FROM nodes n
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
