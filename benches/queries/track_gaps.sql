-- Issue 12, target 4: idle gaps between consecutive top-level events of
-- each track (a window over 50 M rows; events are stored sorted by
-- (track_id, ts_ps)).
SELECT track_id, count(*) AS gaps, sum(gap_ps) AS idle_ps, max(gap_ps) AS longest_ps
FROM (
  SELECT track_id,
         ts_ps - lag(ts_ps + dur_ps) OVER (PARTITION BY track_id ORDER BY ts_ps) AS gap_ps
  FROM events
  WHERE depth = 0
) AS g
WHERE gap_ps > 0
GROUP BY track_id
ORDER BY idle_ps DESC, track_id
LIMIT 20
