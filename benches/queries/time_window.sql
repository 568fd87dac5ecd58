-- Target 4c: a 1% time window of one op track (track 23: XLA Ops of the
-- fifth TPU plane of the synthetic benchmark input). Events are sorted by
-- (track_id, ts_ps), so row-group statistics and the page index skip the rest.
SELECT count(*) AS n, sum(dur_ps) AS busy_ps, min(ts_ps) AS first_ps
FROM events
WHERE track_id = 23 AND ts_ps >= 6600000000000 AND ts_ps < 6732000000000
