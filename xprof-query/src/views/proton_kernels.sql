-- Per node of a Proton tree (kernel or scope path): launches, time, average
-- time, GFLOP/s, TFLOP/s per width, GB/s, and utilization of the binding
-- resource against the device's peaks, as proton-viewer derives them.
-- @column trace_id: The converted input (`traces.trace_id`).
-- @column node_id: The node (`profile_nodes.node_id`): its place in a depth-first walk from the
--   root (0).
-- @column name: The node's `frame.name`: a kernel, a scope, or a Python frame; `ROOT` for the root.
-- @column path: Names from the root's child down to this node (the root's is empty).
-- @column depth: Depth in the tree: 0 for the root.
-- @column device_id: The `device_id` metric of the node's kernels as written (a string: the
--   device's ordinal).
-- @column device_type: The `device_type` metric of the node's kernels: `CUDA` or `HIP`.
-- @column model: GPU model from `gpu_peaks` (e.g. `H200 SXM`), matched by the device's arch and SM
--   count; NULL when the device is not in that table.
-- @column launches: Kernel launches (metric `count`) of the node, or of the timed nodes below it
--   for a node without its own time, a count.
-- @column time_ps: Kernel time (metric `time (ns)`), in ps: the node's own, or for a node without
--   its own time (a scope, the root) the sum of the timed nodes below it.
-- @column avg_time_ps: `time_ps` over `launches`, in ps; NULL when `launches` is 0.
-- @column flops: FLOP of no stated width (metric `flops`), summed as `time_ps`; NULL when none was
--   recorded.
-- @column flops8: 8-bit FLOP (metric `flops8`), summed as `time_ps`; NULL when none was recorded.
-- @column flops16: 16-bit FLOP (metric `flops16`), summed as `time_ps`; NULL when none was
--   recorded.
-- @column flops32: 32-bit FLOP (metric `flops32`), summed as `time_ps`; NULL when none was
--   recorded.
-- @column flops64: 64-bit FLOP (metric `flops64`), summed as `time_ps`; NULL when none was
--   recorded.
-- @column bytes: Bytes accessed (metric `bytes`), summed as `time_ps`, in bytes; NULL when none was
--   recorded.
-- @column gflop_per_s: FLOP of every width per second of `time_ps`, in GFLOP/s (0 without FLOP
--   counts); NULL when `time_ps` is 0.
-- @column tflop8_per_s: `flops8` per second of `time_ps`, in TFLOP/s; NULL without `flops8` or
--   time.
-- @column tflop16_per_s: `flops16` per second of `time_ps`, in TFLOP/s; NULL without `flops16` or
--   time.
-- @column tflop32_per_s: `flops32` per second of `time_ps`, in TFLOP/s; NULL without `flops32` or
--   time.
-- @column tflop64_per_s: `flops64` per second of `time_ps`, in TFLOP/s; NULL without `flops64` or
--   time.
-- @column gbyte_per_s: `bytes` per second of `time_ps`, in GB/s (10^9 bytes); NULL without `bytes`
--   or time.
-- @column util: proton-viewer's utilization, a ratio (1 is the peak): the larger of the sum over
--   widths of FLOP / peak FLOP/s (`flops` against the TF32 peak) and bytes / peak bandwidth, over
--   `time_ps`; a term whose peak is unknown counts as 0; NULL for a node with no FLOP or byte
--   counts.
--
-- Per node of a Proton tree profile (a kernel, or a scope path holding
-- kernels): launches, time, average time, and proton-viewer's derived
-- metrics. A node without its own time (a Python scope; the root, whose
-- time Proton writes as 0) adds up the timed nodes below it, found by path
-- (Proton merges same-named children, so paths are unique; timed nodes are
-- the kernels, which do not nest). Rates
-- are per second of kernel time: `gflop_per_s` (all widths), `tflop<w>_per_s`
-- per width, `gbyte_per_s`; `util` is proton-viewer's: the larger of
-- Σ flops_w / peak_w and bytes / peak bandwidth, over the time — the
-- fraction of the device's peak the node reached on its binding resource;
-- NULL for a node with no FLOP or byte counts.
-- Peaks: `gpu_peaks` for FLOP/s (matched by `arch` and SM count), the
-- profile's own `device_info` for bandwidth (`devices.peak_hbm_gbps`, else
-- `gpu_peaks.hbm_gbps`); NULL when the device is not in the table.
WITH timed AS (
  SELECT a.trace_id, a.node_id,
         sum(b.time_ps) AS time_ps, sum(b.count) AS launches,
         sum(b.flops) AS flops, sum(b.flops8) AS flops8, sum(b.flops16) AS flops16,
         sum(b.flops32) AS flops32, sum(b.flops64) AS flops64, sum(b.bytes) AS bytes,
         max(b.device_id) AS device_id, max(b.device_type) AS device_type
  FROM profile_nodes a
  JOIN profile_nodes b
    ON b.trace_id = a.trace_id AND b.time_ps > 0
   AND ((coalesce(a.time_ps, 0) > 0 AND b.node_id = a.node_id)
        OR (coalesce(a.time_ps, 0) = 0 AND b.depth > a.depth
            AND (cardinality(a.path) = 0
                 OR array_slice(b.path, 1, CAST(cardinality(a.path) AS BIGINT)) = a.path)))
  GROUP BY a.trace_id, a.node_id
),
device AS (
  SELECT d.trace_id, CAST(d.ordinal AS VARCHAR) AS device_id,
         CASE d.vendor WHEN 'NVIDIA' THEN 'CUDA' WHEN 'AMD' THEN 'HIP' END AS device_type,
         d.peak_hbm_gbps, p.model, p.fp8_tflops, p.fp16_tflops, p.tf32_tflops, p.fp64_tflops,
         p.hbm_gbps
  FROM devices d
  LEFT JOIN gpu_peaks p ON p.arch = d.type AND p.sm_count = d.core_count
   AND (p.model <> 'H200 SXM' OR d.peak_hbm_gbps > 4000)
   AND (p.model <> 'H100 SXM' OR coalesce(d.peak_hbm_gbps, 0) <= 4000)
  WHERE d.kind = 'gpu'
),
rates AS (
  SELECT n.trace_id, n.node_id, n.name, n.path, n.depth, t.launches, t.time_ps,
         t.flops, t.flops8, t.flops16, t.flops32, t.flops64, t.bytes,
         t.device_id, t.device_type, dv.model,
         CAST(t.time_ps AS DOUBLE) / 1e12 AS time_s,
         coalesce(dv.peak_hbm_gbps, dv.hbm_gbps) AS peak_gbps,
         dv.fp8_tflops, dv.fp16_tflops, dv.tf32_tflops, dv.fp64_tflops
  FROM profile_nodes n
  JOIN timed t ON t.trace_id = n.trace_id AND t.node_id = n.node_id
  LEFT JOIN device dv
    ON dv.trace_id = n.trace_id AND dv.device_id = t.device_id
   AND dv.device_type = t.device_type
)
SELECT trace_id, node_id, name, path, depth, device_id, device_type, model,
       launches, time_ps,
       CAST(time_ps AS DOUBLE) / nullif(launches, 0) AS avg_time_ps,
       flops, flops8, flops16, flops32, flops64, bytes,
       (coalesce(flops, 0) + coalesce(flops8, 0) + coalesce(flops16, 0)
        + coalesce(flops32, 0) + coalesce(flops64, 0)) / nullif(time_s, 0) / 1e9 AS gflop_per_s,
       flops8 / nullif(time_s, 0) / 1e12 AS tflop8_per_s,
       flops16 / nullif(time_s, 0) / 1e12 AS tflop16_per_s,
       flops32 / nullif(time_s, 0) / 1e12 AS tflop32_per_s,
       flops64 / nullif(time_s, 0) / 1e12 AS tflop64_per_s,
       bytes / nullif(time_s, 0) / 1e9 AS gbyte_per_s,
       CASE WHEN coalesce(flops, flops8, flops16, flops32, flops64, bytes) IS NOT NULL THEN
       greatest(
         coalesce(flops8 / (fp8_tflops * 1e12), 0)
           + coalesce(flops16 / (fp16_tflops * 1e12), 0)
           + coalesce((coalesce(flops32, 0) + coalesce(flops, 0)) / (tf32_tflops * 1e12), 0)
           + coalesce(flops64 / (fp64_tflops * 1e12), 0),
         coalesce(bytes / (peak_gbps * 1e9), 0)
       ) / nullif(time_s, 0) END AS util
FROM rates
