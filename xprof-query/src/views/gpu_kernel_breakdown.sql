-- HTA's per-kernel breakdown, per Kineto trace (rank) and kernel type
-- (COMPUTATION, COMMUNICATION, MEMORY; over `kineto_gpu_events`): each
-- kernel name's total time and its launches' longest, shortest, mean
-- and standard deviation (sample; 0 for one launch). Where a type has
-- more than 10 names, HTA's "others" grouping applies: names ordered by
-- total time (ties by name), a name goes to `others` when it is past the
-- tenth or when the running total up to it exceeds the 0.8 quantile
-- (linear interpolation, as pandas) of the running totals.
-- `names` is how many kernel names a row holds (more than 1 only for
-- `others`); `launches` how many launches. The statistics are over
-- launches on every row; HTA, once it groups, gives them over the names'
-- totals instead (docs/analyses.md shows the difference).
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column rank: the trace's rank (`distributedInfo.rank`); NULL when the trace has none.
-- @column kernel_type: HTA's kernel type: `COMPUTATION`, `COMMUNICATION` or `MEMORY`.
-- @column name: the kernel name, or `others` for HTA's grouping of the names past the tenth or
--   past the 0.8 quantile of the running totals.
-- @column names: kernel names the row holds, a count (1, more only for `others`).
-- @column launches: GPU events (launches) the row holds, a count.
-- @column sum_ps: total duration of the launches, in ps.
-- @column max_ps: longest launch, in ps.
-- @column min_ps: shortest launch, in ps.
-- @column mean_ps: mean launch duration, in ps.
-- @column stddev_ps: sample standard deviation of the launch durations, in ps; 0 for one launch.
--
WITH per_name AS (
  SELECT trace_id, rank, kernel_type, name, dur_ps
  FROM kineto_gpu_events
  WHERE kernel_type <> 'OTHER'
),
totals AS (
  SELECT trace_id, rank, kernel_type, name, sum(dur_ps) AS total_ps
  FROM per_name
  GROUP BY trace_id, rank, kernel_type, name
),
ranked AS (
  SELECT trace_id, rank, kernel_type, name, total_ps,
         row_number() OVER (PARTITION BY trace_id, rank, kernel_type
                            ORDER BY total_ps DESC, name) AS position,
         sum(total_ps) OVER (PARTITION BY trace_id, rank, kernel_type
                             ORDER BY total_ps DESC, name
                             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running_ps,
         count(*) OVER (PARTITION BY trace_id, rank, kernel_type) AS type_names
  FROM totals
),
-- pandas' quantile(0.8) of the running totals: position (n − 1) · 0.8
-- (0-based), interpolated between its two neighbours, read with window
-- functions over `ranked` (a join back to it would compute
-- `kineto_gpu_events` again for each reference).
cut AS (
  SELECT *,
         CAST(floor((type_names - 1) * 0.8) AS BIGINT) + 1 AS lo_position,
         (type_names - 1) * 0.8 - floor((type_names - 1) * 0.8) AS fraction
  FROM ranked
),
quantile AS (
  SELECT *,
         max(CASE WHEN position = lo_position THEN running_ps END)
           OVER (PARTITION BY trace_id, rank, kernel_type) AS lo_ps,
         max(CASE WHEN position = lo_position + 1 THEN running_ps END)
           OVER (PARTITION BY trace_id, rank, kernel_type) AS hi_ps
  FROM cut
),
grouped AS (
  SELECT trace_id, rank, kernel_type, name,
         CASE WHEN type_names > 10
                   AND (CAST(running_ps AS DOUBLE)
                          > CAST(lo_ps AS DOUBLE)
                            + (CAST(coalesce(hi_ps, lo_ps) AS DOUBLE) - CAST(lo_ps AS DOUBLE)) * fraction
                        OR position > 10)
              THEN 'others' ELSE name END AS group_name
  FROM quantile
)
SELECT p.trace_id, p.rank, p.kernel_type, g.group_name AS name,
       count(DISTINCT p.name) AS names, count(*) AS launches,
       sum(p.dur_ps) AS sum_ps, max(p.dur_ps) AS max_ps, min(p.dur_ps) AS min_ps,
       avg(CAST(p.dur_ps AS DOUBLE)) AS mean_ps,
       coalesce(stddev(CAST(p.dur_ps AS DOUBLE)), 0.0) AS stddev_ps
FROM per_name p
JOIN grouped g ON g.trace_id = p.trace_id AND (g.rank IS NOT DISTINCT FROM p.rank)
  AND g.kernel_type = p.kernel_type AND g.name = p.name
GROUP BY p.trace_id, p.rank, p.kernel_type, g.group_name
