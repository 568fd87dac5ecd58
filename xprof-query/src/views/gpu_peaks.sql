-- The project's table of GPU peaks by architecture and SM count (A100, H100
-- SXM/PCIe, H200, B200, MI300X/A): dense tensor TFLOP/s for FP8, FP16/BF16,
-- TF32, FP64, and memory bandwidth.
-- @column arch: GPU architecture as Proton's `device_info.arch` names it: the CUDA compute
--   capability without the dot (`80`, `90`, `100`) or the AMD target (`gfx942`).
-- @column sm_count: streaming multiprocessors (AMD: compute units) of the part, which tell apart
--   parts of one architecture (a count).
-- @column device_type: `CUDA` (NVIDIA) or `HIP` (AMD).
-- @column model: the part's name (`A100 SXM`, `H100 SXM`, `H200 SXM`, `H100 PCIe`, `B200`,
--   `MI300X`, `MI300A`).
-- @column fp8_tflops: dense FP8 tensor-core peak, in TFLOP/s (Proton's `flops8` counts against it);
--   NULL where the part has no FP8 (A100).
-- @column fp16_tflops: dense FP16/BF16 tensor-core peak, in TFLOP/s (Proton's `flops16`).
-- @column tf32_tflops: dense TF32 tensor-core peak, in TFLOP/s (Proton's `flops32` and `flops`
--   without a width).
-- @column fp64_tflops: FP64 tensor-core (AMD: matrix) peak, in TFLOP/s (Proton's `flops64`).
-- @column hbm_gbps: nominal memory bandwidth from the datasheet, in GB/s.
-- @column source: the vendor document the row's numbers are read from, with the figures as it gives
--   them.
--
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
-- records (`devices.peak_hbm_gbps`) to `hbm_gbps` here. `source` names
-- the vendor document each row's numbers are read from (dense rates: the
-- documents' sparsity figures halved where only those are given).
SELECT * FROM (VALUES
  ('80',     108, 'CUDA', 'A100 SXM',     CAST(NULL AS DOUBLE), 312.0,  156.0,  19.5,  2039.0,
   'NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM: FP16/BF16 Tensor Core 312 TFLOPS, TF32 156, FP64 Tensor Core 19.5 (dense); 2,039 GB/s; no FP8'),
  ('90',     132, 'CUDA', 'H100 SXM',     1978.9,               989.4,  494.7,  66.9,  3350.0,
   'NVIDIA H100 Tensor Core GPU Architecture whitepaper, H100 SXM5 dense: FP8 1978.9, FP16/BF16 989.4, TF32 494.7, FP64 Tensor Core 66.9 TFLOPS; H100 datasheet: 3.35 TB/s'),
  ('90',     132, 'CUDA', 'H200 SXM',     1978.9,               989.4,  494.7,  66.9,  4800.0,
   'NVIDIA H200 Tensor Core GPU datasheet: the H100 SXM compute (whitepaper dense figures), HBM3e 4.8 TB/s'),
  ('90',     114, 'CUDA', 'H100 PCIe',    1513.0,               756.5,  378.0,  51.2,  2000.0,
   'NVIDIA H100 Tensor Core GPU Architecture whitepaper, H100 PCIe dense: FP8 1513, FP16/BF16 756.5, TF32 378, FP64 Tensor Core 51.2 TFLOPS; H100 datasheet (PCIe 80GB): 2 TB/s'),
  ('100',    148, 'CUDA', 'B200',         4500.0,               2250.0, 1125.0, 40.0,  8000.0,
   'NVIDIA HGX B200 datasheet, per GPU (8 per board): FP8 9, FP16/BF16 4.5, TF32 2.25 PFLOPS with sparsity, halved for dense; FP64 40 TFLOPS; HBM3e 8 TB/s'),
  ('gfx942', 304, 'HIP',  'MI300X',       2614.9,               1307.4, 653.7,  163.4, 5300.0,
   'AMD Instinct MI300X data sheet: peak FP8 2614.9, FP16/BF16 1307.4, TF32 653.7, FP64 matrix 163.4 TFLOPS (dense); 5.3 TB/s'),
  ('gfx942', 228, 'HIP',  'MI300A',       1961.2,               980.6,  490.3,  122.6, 5300.0,
   'AMD Instinct MI300A data sheet: peak FP8 1961.2, FP16/BF16 980.6, TF32 490.3, FP64 matrix 122.6 TFLOPS (dense); 5.3 TB/s')
) AS peaks(arch, sm_count, device_type, model, fp8_tflops, fp16_tflops, tf32_tflops,
           fp64_tflops, hbm_gbps, source)
