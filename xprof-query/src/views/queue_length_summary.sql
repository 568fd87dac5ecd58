-- HTA's launch queue length summary (`get_queue_length_summary`), per
-- Kineto trace (rank) and GPU stream: over the values of `queue_length`
-- (one per change, not weighted by how long each held, as HTA counts
-- them), how many (`changes`), their mean, sample standard deviation,
-- least, 25th, 50th and 75th percentiles (linear between the two nearest
-- values, as pandas' `describe`) and greatest.
-- @column trace_id: the converted input (`traces.trace_id`): one Kineto trace.
-- @column rank: the trace's rank (`distributedInfo.rank`); NULL when the trace records none.
-- @column stream: the GPU stream (the events' `stream` arg).
-- @column changes: values of `queue_length` on the stream, one per launch call and per GPU start (a
--   count).
-- @column mean_length: mean of those values, each change counted once (not weighted by time), in
--   launches waiting.
-- @column stddev_length: sample standard deviation of those values, in launches; NULL when there is
--   only one.
-- @column min_length: the least value, in launches waiting.
-- @column p25_length: the 25th percentile of the values, linear between the two nearest (as pandas'
--   `describe`), in launches.
-- @column median_length: the 50th percentile of the values, linear between the two nearest, in
--   launches.
-- @column p75_length: the 75th percentile of the values, linear between the two nearest, in
--   launches.
-- @column max_length: the greatest value, in launches waiting.
--
WITH numbered AS (
  SELECT trace_id, rank, stream, CAST(queue_length AS DOUBLE) AS len,
         row_number() OVER (PARTITION BY trace_id, stream ORDER BY queue_length) - 1 AS idx,
         count(*) OVER (PARTITION BY trace_id, stream) AS n
  FROM queue_length
),
picked AS (
  SELECT trace_id, rank, stream, count(*) AS changes, avg(len) AS mean_length,
         stddev(len) AS stddev_length, min(len) AS min_length, max(len) AS max_length,
         max(n) AS n,
         max(CASE WHEN idx = floor(0.25 * (n - 1)) THEN len END) AS p25_lo,
         max(CASE WHEN idx = ceil(0.25 * (n - 1)) THEN len END) AS p25_hi,
         max(CASE WHEN idx = floor(0.5 * (n - 1)) THEN len END) AS p50_lo,
         max(CASE WHEN idx = ceil(0.5 * (n - 1)) THEN len END) AS p50_hi,
         max(CASE WHEN idx = floor(0.75 * (n - 1)) THEN len END) AS p75_lo,
         max(CASE WHEN idx = ceil(0.75 * (n - 1)) THEN len END) AS p75_hi
  FROM numbered
  GROUP BY trace_id, rank, stream
)
SELECT trace_id, rank, stream, changes, mean_length, stddev_length, min_length,
       p25_lo + (0.25 * (n - 1) - floor(0.25 * (n - 1))) * (p25_hi - p25_lo) AS p25_length,
       p50_lo + (0.5 * (n - 1) - floor(0.5 * (n - 1))) * (p50_hi - p50_lo) AS median_length,
       p75_lo + (0.75 * (n - 1) - floor(0.75 * (n - 1))) * (p75_hi - p75_lo) AS p75_length,
       max_length
FROM picked
