-- One row per GPU kernel execution from any source (XSpace GPU streams,
-- PyTorch Kineto, Proton's kernel timeline): device, stream, start,
-- duration, grid/block/registers/shared memory when recorded, and the host
-- launch it pairs with.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column source_format: input format of the trace (`traces.source_format`): `xspace` or
--   `chrome_trace`.
-- @column host: host name of the trace (`traces.host`, the file stem).
-- @column device_id: the GPU device (`devices.device_id`).
-- @column device_name: the device's name, e.g. `/device:GPU:0` or, in a Chrome trace, `GPU 0`.
-- @column device_ordinal: the device number from its name (`devices.ordinal`); NULL when the name
--   has none.
-- @column track_id: the stream track the kernel ran on (`tracks.track_id`).
-- @column stream_id: the stream's `tracks.line_id`: the XLine id, or in a Chrome trace its `tid`.
-- @column stream_name: the stream track's name.
-- @column event_id: the kernel execution (`events.event_id`).
-- @column name: the kernel's name.
-- @column ts_ps: kernel start, in ps from the trace start.
-- @column dur_ps: kernel duration, in ps.
-- @column end_ps: kernel end (`ts_ps + dur_ps`), in ps from the trace start.
-- @column grid_x: grid size along x, in blocks; NULL when the source does not record it.
-- @column grid_y: grid size along y, in blocks; NULL when the source does not record it.
-- @column grid_z: grid size along z, in blocks; NULL when the source does not record it.
-- @column block_x: block size along x, in threads; NULL when the source does not record it.
-- @column block_y: block size along y, in threads; NULL when the source does not record it.
-- @column block_z: block size along z, in threads; NULL when the source does not record it.
-- @column registers_per_thread: registers per thread, a count; NULL when the source does not
--   record it.
-- @column shared_memory_bytes: shared memory per block, in bytes (XSpace: static plus dynamic;
--   Kineto: the `shared memory` arg); NULL when the source does not record it.
-- @column correlation_id: the kernel's `correlation_id` stat, pairing it with its host launch
--   (the CUDA API call); NULL when it has none.
-- @column launch_event_id: the host launch event paired with the kernel through `correlation_id`
--   (`flows`; the smallest event id when several); NULL when there is none.
-- @column launch_name: the launch event's name (e.g. `cudaLaunchKernel`); NULL without a launch.
-- @column launch_ps: start of the launch event, in ps from the trace start; NULL without a
--   launch.
-- @column launch_delay_ps: kernel start less the launch's start, in ps; NULL without a launch.
--
-- One row per GPU kernel execution, whatever the source: XSpace GPU
-- streams (stream events with a `kernel_details` stat, as XProf's
-- kernel_stats counts them) and Chrome traces (PyTorch Kineto, Proton's
-- kernel timeline: events whose `cat` is `kernel`). Launch shape where the
-- source records it (XSpace: `kernel_details`; Kineto: the `grid`,
-- `block`, `registers per thread` and `shared memory` args; NULL
-- otherwise), and the host launch paired with the kernel through its
-- `correlation_id` (the CUDA API call), with the delay from the launch's
-- start to the kernel's.
WITH xspace_kernels AS (
  SELECT trace_id, event_id, parse_kernel_details(max(str_value)) AS k
  FROM event_args
  WHERE key = 'kernel_details'
  GROUP BY trace_id, event_id
),
chrome_args AS (
  SELECT trace_id, event_id,
         max(CASE WHEN key = 'cat' THEN str_value END) AS cat,
         max(CASE WHEN key = 'grid' THEN str_value END) AS grid,
         max(CASE WHEN key = 'block' THEN str_value END) AS block,
         max(CASE WHEN key = 'registers per thread' THEN int_value END) AS registers_per_thread,
         max(CASE WHEN key = 'shared memory' THEN int_value END) AS shared_memory_bytes
  FROM event_args
  WHERE key IN ('cat', 'grid', 'block', 'registers per thread', 'shared memory')
  GROUP BY trace_id, event_id
),
kernels AS (
  SELECT trace_id, event_id,
         k['grid_x'] AS grid_x, k['grid_y'] AS grid_y, k['grid_z'] AS grid_z,
         k['block_x'] AS block_x, k['block_y'] AS block_y, k['block_z'] AS block_z,
         k['registers_per_thread'] AS registers_per_thread,
         k['static_shmem_bytes'] + k['dynamic_shmem_bytes'] AS shared_memory_bytes
  FROM xspace_kernels
  UNION ALL
  SELECT trace_id, event_id,
         TRY_CAST(trim(split_part(btrim(grid, '[]'), ',', 1)) AS BIGINT),
         TRY_CAST(trim(split_part(btrim(grid, '[]'), ',', 2)) AS BIGINT),
         TRY_CAST(trim(split_part(btrim(grid, '[]'), ',', 3)) AS BIGINT),
         TRY_CAST(trim(split_part(btrim(block, '[]'), ',', 1)) AS BIGINT),
         TRY_CAST(trim(split_part(btrim(block, '[]'), ',', 2)) AS BIGINT),
         TRY_CAST(trim(split_part(btrim(block, '[]'), ',', 3)) AS BIGINT),
         registers_per_thread, shared_memory_bytes
  FROM chrome_args
  WHERE cat = 'kernel'
),
launches AS (
  SELECT trace_id, dst_event_id AS event_id, min(src_event_id) AS launch_event_id
  FROM flows
  WHERE kind = 'correlation_id' AND src_event_id IS NOT NULL AND dst_event_id IS NOT NULL
  GROUP BY trace_id, dst_event_id
)
SELECT e.trace_id, tr.source_format, tr.host, t.device_id, d.name AS device_name,
       d.ordinal AS device_ordinal, e.track_id, t.line_id AS stream_id,
       t.name AS stream_name, e.event_id, e.name, e.ts_ps, e.dur_ps,
       e.ts_ps + e.dur_ps AS end_ps,
       k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
       k.registers_per_thread, k.shared_memory_bytes, e.correlation_id,
       l.launch_event_id, h.name AS launch_name, h.ts_ps AS launch_ps,
       e.ts_ps - h.ts_ps AS launch_delay_ps
FROM kernels k
JOIN events e ON e.trace_id = k.trace_id AND e.event_id = k.event_id
JOIN tracks t ON t.trace_id = e.trace_id AND t.track_id = e.track_id
JOIN devices d ON d.trace_id = t.trace_id AND d.device_id = t.device_id
JOIN traces tr ON tr.trace_id = e.trace_id
LEFT JOIN launches l ON l.trace_id = e.trace_id AND l.event_id = e.event_id
LEFT JOIN events h ON h.trace_id = l.trace_id AND h.event_id = l.launch_event_id
WHERE d.kind = 'gpu'
