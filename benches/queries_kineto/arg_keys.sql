-- What the trace carries: every arg key with its value type and how many events have it.
SELECT key, value_type, count(*) AS events, count(DISTINCT event_id) AS distinct_events
FROM event_args GROUP BY key, value_type ORDER BY events DESC, key, value_type
