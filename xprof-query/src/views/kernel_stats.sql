-- GPU kernels per name, launch shape (registers, shared memory, grid,
-- block), op and tensor-core flags: occurrences, total/avg/min/max
-- duration, occupancy: XProf's kernel_stats.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column rank: the group's place in its trace by total duration, largest first (1 first).
-- @column kernel_name: the kernel's name (the event name).
-- @column registers_per_thread: registers per thread (`regs:` of the `kernel_details` stat); 0 when
--   not given.
-- @column static_shmem_bytes: static shared memory per block (`static_shared:`), in bytes; 0 when
--   not given.
-- @column dynamic_shmem_bytes: dynamic shared memory per block (`dynamic_shared:`), in bytes; 0
--   when not given.
-- @column shmem_bytes: `static_shmem_bytes + dynamic_shmem_bytes`, in bytes.
-- @column block_dim: block shape as `x,y,z` (threads per block along each axis; 1,1,1 when not
--   given).
-- @column grid_dim: grid shape as `x,y,z` (blocks along each axis; 1,1,1 when not given).
-- @column occupancy_pct: occupancy of the group's first execution (`occ_pct:` of `kernel_details`),
--   in percent (0 to 100); NULL when not given.
-- @column is_op_tensor_core_eligible: whether the op could use tensor cores, as XProf decides: a
--   kernel with a `tf_op` stat that uses them, or an op name XProf lists (convolutions, MatMul,
--   XlaDot, ...).
-- @column is_kernel_using_tensor_core: whether the kernel name matches XProf's tensor-core kernel
--   patterns (`hmma`, `xmma_gemm`, `h1688`, ...).
-- @column op_name: the framework op that launched the kernel: the op name of its HLO instruction's
--   framework op when the trace holds it, else of its `tf_op` stat; empty when neither names one.
-- @column occurrences: executions in the group (a count).
-- @column total_duration_us: sum of the executions' durations, each truncated to whole ns, in µs.
-- @column avg_duration_us: total duration over occurrences, truncated to whole ns, in µs.
-- @column min_duration_us: the shortest execution, in µs (whole ns).
-- @column max_duration_us: the longest execution, in µs (whole ns).
-- @column first_event_id: the smallest `event_id` among the group's executions.
--
-- GPU kernels grouped as XProf's kernel_stats tool groups them: per trace,
-- kernel name, launch shape (grid, block, registers, shared memory), the
-- framework op that launched it and the tensor-core flags. Only stream
-- events with a `kernel_details` stat and a non-zero duration count. The
-- op is the framework op of the kernel's HLO instruction when the trace
-- holds it (`hlo_instructions.tf_op`), else of the kernel's `tf_op` stat
-- (`parse_tf_op`), as XProf; it is tensor-core eligible when a kernel with
-- a `tf_op` uses tensor cores or either op's name is one XProf lists
-- (convolutions, MatMul, XlaDot, ...).
-- Durations are whole ns as XProf keeps them (`dur_ps // 1000`); the
-- occupancy is that of the group's first execution (not part of the key).
WITH kernels AS (
  SELECT o.trace_id, o.event_id, o.name AS kernel_name, o.ts_ps,
         o.dur_ps / 1000 AS dur_ns,
         parse_kernel_details(a.details) AS k,
         coalesce(o.tf_op, '') <> '' AS has_tf_op,
         CASE WHEN coalesce(o.tf_op, '') = '' THEN ''
              ELSE parse_tf_op(o.tf_op)['name'] END AS event_op_name,
         CASE WHEN o.is_hlo_instruction
              THEN parse_tf_op(o.instruction_tf_op)['name'] END AS instruction_op_name,
         regexp_like(o.name, '16816|c1688|conv1x1|conv2d_c1_k1|dgrad_1x1_stride_2x2|direct_group|first_layer_wgrad_kernel|h1688|h884|hmma|i16832|i8816|s884|s1688|xmma_gemm|xmma_implicit_gemm|xmma_sparse_conv|xmma_sparse_gemm|xmma_warp_specialized_implicit_gemm') AS is_kernel_using_tensor_core
  FROM device_ops o
  JOIN (SELECT trace_id, event_id, max(str_value) AS details
        FROM event_args WHERE key = 'kernel_details'
        GROUP BY trace_id, event_id) a
    ON a.trace_id = o.trace_id AND a.event_id = o.event_id
  WHERE o.device_kind = 'gpu' AND o.dur_ps > 0
),
shaped AS (
  SELECT trace_id, event_id, kernel_name, ts_ps, dur_ns,
         coalesce(instruction_op_name, event_op_name) AS op_name,
         is_kernel_using_tensor_core,
         -- Either op name on its own line, so one multi-line (`m`) match
         -- tests both (`$` ends a line); the event's is '' without a tf_op.
         (has_tf_op AND is_kernel_using_tensor_core)
         OR regexp_like(event_op_name || chr(10) || coalesce(instruction_op_name, ''), '(Conv2D|Conv2DBackpropFilter|Conv2DBackpropInput|Conv3D|DepthwiseConv2dNative|DepthwiseConv2dNativeBackpropFilter|DepthwiseConv2dNativeBackpropInput|/MatMul|FusedMatMul|/CudnnRNN|XlaDot|XlaDotV2)$|BatchMatMul|CudnnRNNV|CudnnRNNForward|CudnnRNNBackprop', 'm')
           AS is_op_tensor_core_eligible,
         coalesce(k['registers_per_thread'], 0) AS registers_per_thread,
         coalesce(k['static_shmem_bytes'], 0) AS static_shmem_bytes,
         coalesce(k['dynamic_shmem_bytes'], 0) AS dynamic_shmem_bytes,
         coalesce(k['grid_x'], 1) AS grid_x, coalesce(k['grid_y'], 1) AS grid_y,
         coalesce(k['grid_z'], 1) AS grid_z,
         coalesce(k['block_x'], 1) AS block_x, coalesce(k['block_y'], 1) AS block_y,
         coalesce(k['block_z'], 1) AS block_z,
         k['occupancy_pct'] AS occupancy_pct
  FROM kernels
),
grouped AS (
  SELECT trace_id, kernel_name, registers_per_thread, static_shmem_bytes,
         dynamic_shmem_bytes, grid_x, grid_y, grid_z, block_x, block_y, block_z,
         is_kernel_using_tensor_core, is_op_tensor_core_eligible, op_name,
         first_value(occupancy_pct ORDER BY ts_ps, event_id) AS occupancy_pct,
         count(*) AS occurrences,
         sum(dur_ns) AS total_duration_ns,
         min(dur_ns) AS min_duration_ns,
         max(dur_ns) AS max_duration_ns,
         min(event_id) AS first_event_id
  FROM shaped
  GROUP BY trace_id, kernel_name, registers_per_thread, static_shmem_bytes,
           dynamic_shmem_bytes, grid_x, grid_y, grid_z, block_x, block_y, block_z,
           is_kernel_using_tensor_core, is_op_tensor_core_eligible, op_name
)
SELECT trace_id,
       row_number() OVER (
         PARTITION BY trace_id
         ORDER BY total_duration_ns DESC, kernel_name, grid_x, grid_y, grid_z,
                  block_x, block_y, block_z, registers_per_thread,
                  static_shmem_bytes, dynamic_shmem_bytes,
                  is_kernel_using_tensor_core, is_op_tensor_core_eligible, op_name
       ) AS rank,
       kernel_name, registers_per_thread, static_shmem_bytes, dynamic_shmem_bytes,
       static_shmem_bytes + dynamic_shmem_bytes AS shmem_bytes,
       CAST(block_x AS VARCHAR) || ',' || CAST(block_y AS VARCHAR) || ',' || CAST(block_z AS VARCHAR) AS block_dim,
       CAST(grid_x AS VARCHAR) || ',' || CAST(grid_y AS VARCHAR) || ',' || CAST(grid_z AS VARCHAR) AS grid_dim,
       occupancy_pct, is_op_tensor_core_eligible, is_kernel_using_tensor_core,
       op_name, occurrences,
       total_duration_ns / 1e3 AS total_duration_us,
       (total_duration_ns / occurrences) / 1e3 AS avg_duration_us,
       min_duration_ns / 1e3 AS min_duration_us,
       max_duration_ns / 1e3 AS max_duration_us,
       first_event_id
FROM grouped
