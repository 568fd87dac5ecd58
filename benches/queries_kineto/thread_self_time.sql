-- Perfetto's standard-library shape: per thread, how deep the slices nest and where self time goes.
SELECT t.name AS thread, count(*) AS slices, max(e.depth) AS max_depth, sum(e.self_ps) AS self_ps
FROM events e JOIN tracks t USING (trace_id, track_id)
WHERE t.kind = 'thread'
GROUP BY t.name ORDER BY self_ps DESC, thread
