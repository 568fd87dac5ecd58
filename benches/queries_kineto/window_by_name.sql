-- XProf Events DB's example shape: the longest ops of one name family inside a time window.
SELECT name, ts_ps, dur_ps FROM events
WHERE name LIKE 'aten::%' AND ts_ps BETWEEN 1000000000000 AND 3000000000000
ORDER BY dur_ps DESC, ts_ps LIMIT 50
