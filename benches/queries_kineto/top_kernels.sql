-- HTA's kernel table in plain SQL: the 20 kernels with the most GPU time (Kineto `cat` = kernel).
SELECT e.name, count(*) AS launches, sum(e.dur_ps) AS total_ps, max(e.dur_ps) AS max_ps
FROM events e JOIN event_args a ON a.trace_id = e.trace_id AND a.event_id = e.event_id
WHERE a.key = 'cat' AND a.str_value = 'kernel'
GROUP BY e.name ORDER BY total_ps DESC, e.name LIMIT 20
