-- Helper of the Kineto views: every event of a Chrome trace (PyTorch
-- Kineto) with the three args they read as columns, the args pivot
-- written once.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column event_id: the event (`events.event_id`).
-- @column track_id: its track (`tracks.track_id`).
-- @column name: the event's name.
-- @column ts_ps: start, ps from the trace start.
-- @column dur_ps: duration, in ps.
-- @column stream: the `stream` arg, -1 when the event has none (a CPU event; GPU events carry
--   their stream).
-- @column correlation: the `correlation` arg that pairs a runtime call with the GPU event it
--   launched; NULL when absent.
-- @column category: the `cat` arg (`kernel`, `cuda_runtime`, `cpu_op`, ...); NULL when absent.
--
WITH args AS (
  SELECT trace_id, event_id,
         max(CASE WHEN key = 'stream' THEN int_value END) AS stream,
         max(CASE WHEN key = 'correlation' THEN int_value END) AS correlation,
         max(CASE WHEN key = 'cat' THEN str_value END) AS category
  FROM event_args
  WHERE key IN ('stream', 'correlation', 'cat')
  GROUP BY trace_id, event_id
)
SELECT e.trace_id, e.event_id, e.track_id, e.name, e.ts_ps, e.dur_ps,
       coalesce(a.stream, -1) AS stream, a.correlation, a.category
FROM events e
JOIN traces t ON t.trace_id = e.trace_id AND t.source_format = 'chrome_trace'
LEFT JOIN args a ON a.trace_id = e.trace_id AND a.event_id = e.event_id
