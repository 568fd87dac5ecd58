-- Per HLO op: operational intensity, achieved FLOP/s and bandwidth, the
-- device's peaks, ridge point, attainable FLOP/s at the op's intensity,
-- efficiencies: XProf's roofline_model per-op rows.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column rank: the op's place in its trace by total self time, largest first (1 first), as
--   `hlo_stats.rank`.
-- @column program_id: the op's XLA program (stat `program_id`); NULL when its events carry none.
-- @column category: the op's HLO category (stat `hlo_category`; on GPUs its HLO instruction's);
--   NULL when unknown.
-- @column hlo_op: the HLO op's name.
-- @column occurrences: executions of the op (a count).
-- @column total_time_us: time of all its executions, in µs (each execution's `device_duration_ps`
--   when the event carries both device stats, else its duration).
-- @column avg_time_us: `total_time_us` per occurrence, in µs.
-- @column total_self_time_us: self time of all its executions, in µs: on TPUs less the time of the
--   ops nested in it, elsewhere the whole time.
-- @column avg_self_time_us: `total_self_time_us` per occurrence, in µs.
-- @column self_time_pct: total self time over the trace's total device time (idle included,
--   `hlo_stats.device_time_us`), in percent (0 to 100).
-- @column cumulative_self_time_pct: `self_time_pct` summed over this op and the ops ranked before
--   it, in percent (0 to 100).
-- @column total_time_per_core_us: `total_time_us` over the number of accelerator devices of the
--   trace that ran ops, in µs; NULL in a trace with host ops only.
-- @column total_time_pct: `total_time_us` over the trace's total device time (idle included), in
--   percent.
-- @column measured_gflops_per_s: achieved FLOP rate: the op's FLOP (stat `flops` times occurrences)
--   per ns of total time, in GFLOP/s; 0 without FLOP counts.
-- @column model_gflops_per_s: the same with the stat `model_flops` where it is positive, else
--   `flops`, in GFLOP/s; 0 without FLOP counts.
-- @column memory_gibps: bytes accessed (stat `bytes_accessed` times occurrences) over total time,
--   in GiB/s; 0 without byte counts.
-- @column operational_intensity: FLOP per byte accessed, in FLOP/byte; 0 without FLOP or byte
--   counts.
-- @column bound_by: `HBM` when the op uses a larger fraction of the device's peak HBM bandwidth
--   than of its peak FLOP rate, `Compute` otherwise, `Unknown` when both fractions are 0 (no counts
--   or no peaks).
-- @column peak_gflops_per_s: the device's peak FLOP rate (`devices.peak_tflops` times 1000), in
--   GFLOP/s; NULL when the profile does not record it.
-- @column peak_hbm_gibps: the device's peak HBM bandwidth (`devices.peak_hbm_gbps` over
--   1.073741824), in GiB/s; NULL when the profile does not record it.
-- @column ridge_point: peak GFLOP/s over peak HBM GB/s, in FLOP/byte: the intensity at which the
--   roofline turns flat; NULL when either peak is unknown.
-- @column attainable_gflops_per_s: the roofline at the op's intensity: the lesser of the peak FLOP
--   rate and `operational_intensity` times the peak HBM GB/s, in GFLOP/s; an unknown peak is left
--   out, NULL when both are unknown.
-- @column compute_efficiency: `measured_gflops_per_s` over `peak_gflops_per_s`, a ratio (1 at the
--   peak); NULL without a FLOP peak.
-- @column hbm_bw_utilization: `memory_gibps` over `peak_hbm_gibps`, a ratio (1 at the peak); NULL
--   without a bandwidth peak.
-- @column roofline_efficiency: the larger of `compute_efficiency` and `hbm_bw_utilization`, a ratio
--   (1 on the roofline); NULL when both are NULL.
--
-- Per HLO op: where it sits on the roofline of its device, as XProf's
-- roofline_model tool gives it (its per-op rows of the whole profile).
-- Peak FLOP/s and HBM bandwidth come from the device's plane stats
-- (`devices.peak_tflops`, `peak_hbm_gbps`); the ridge point is peak
-- GFLOP/s over peak GB/s (FLOP/byte); `attainable_gflops_per_s` is the
-- roofline at the op's operational intensity; efficiencies are fractions
-- of the peaks (`roofline_efficiency` the larger). Built on `hlo_stats`.
WITH cores AS (
  SELECT trace_id, count(DISTINCT device_id) AS device_count
  FROM device_ops WHERE device_kind <> 'host'
  GROUP BY trace_id
),
peaks AS (
  SELECT h.*, c.device_count,
         h.peak_tflops * 1e3 AS peak_gflops_per_s,
         h.peak_hbm_gbps / 1.073741824 AS peak_hbm_gibps
  FROM hlo_stats h
  LEFT JOIN cores c ON c.trace_id = h.trace_id
)
SELECT trace_id, rank, program_id, category, hlo_op, occurrences,
       total_time_us, avg_time_us, total_self_time_us, avg_self_time_us,
       self_time_pct, cumulative_self_time_pct,
       total_time_us / nullif(device_count, 0) AS total_time_per_core_us,
       100.0 * total_time_us / nullif(device_time_us, 0) AS total_time_pct,
       measured_gflops_per_s, model_gflops_per_s, memory_gibps,
       operational_intensity, bound_by,
       peak_gflops_per_s, peak_hbm_gibps,
       peak_gflops_per_s / nullif(peak_hbm_gbps, 0) AS ridge_point,
       least(peak_gflops_per_s, operational_intensity * peak_hbm_gbps) AS attainable_gflops_per_s,
       measured_gflops_per_s / nullif(peak_gflops_per_s, 0) AS compute_efficiency,
       memory_gibps / nullif(peak_hbm_gibps, 0) AS hbm_bw_utilization,
       greatest(measured_gflops_per_s / nullif(peak_gflops_per_s, 0),
                memory_gibps / nullif(peak_hbm_gibps, 0)) AS roofline_efficiency
FROM peaks
