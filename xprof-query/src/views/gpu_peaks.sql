-- The project's table of GPU peak rates, by architecture (as Proton's
-- `device_info.arch` and XSpace's compute capability name it) and SM/CU
-- count (which tells apart parts of one architecture): dense (no
-- sparsity) tensor-core TFLOP/s per operand width from the vendors'
-- datasheets (NVIDIA H100/H200/B200/A100, AMD MI300X/MI300A), and the
-- nominal memory bandwidth. `flops8` of a Proton profile is counted against
-- `fp8_tflops`, `flops16` against `fp16_tflops` (FP16/BF16), `flops32` and
-- `flops` (no width) against `tf32_tflops`, `flops64` against
-- `fp64_tflops`. H100 SXM and H200 share their compute peaks; their memory
-- differs, which is why `proton_kernels` prefers the bandwidth the profile
-- records (`devices.peak_hbm_gbps`) to `hbm_gbps` here.
SELECT * FROM (VALUES
  ('80',     108, 'CUDA', 'A100 SXM',     CAST(NULL AS DOUBLE), 312.0,  156.0,  19.5,  2039.0),
  ('90',     132, 'CUDA', 'H100 SXM',     1978.9,               989.4,  494.7,  66.9,  3350.0),
  ('90',     132, 'CUDA', 'H200 SXM',     1978.9,               989.4,  494.7,  66.9,  4800.0),
  ('90',     114, 'CUDA', 'H100 PCIe',    1513.0,               756.5,  378.0,  51.2,  2000.0),
  ('100',    148, 'CUDA', 'B200',         4500.0,               2250.0, 1125.0, 40.0,  8000.0),
  ('gfx942', 304, 'HIP',  'MI300X',       2614.9,               1307.4, 653.7,  163.4, 5300.0),
  ('gfx942', 228, 'HIP',  'MI300A',       1961.2,               980.6,  490.3,  122.6, 5300.0)
) AS peaks(arch, sm_count, device_type, model, fp8_tflops, fp16_tflops, tf32_tflops,
           fp64_tflops, hbm_gbps)
