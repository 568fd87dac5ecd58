-- Per HLO op: operational intensity, achieved FLOP/s and bandwidth, the
-- device's peaks, ridge point, attainable FLOP/s at the op's intensity,
-- efficiencies: XProf's roofline_model per-op rows.
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
