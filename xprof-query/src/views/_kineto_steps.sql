-- Helper of the Kineto views: the `ProfilerStep#N` events on the CPU of
-- each Chrome trace, with N.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column name: the step event's name (`ProfilerStep#12`).
-- @column ts_ps: its start, ps from the trace start.
-- @column dur_ps: its duration, in ps.
-- @column iteration: N of its name; NULL when the name has no number.
--
SELECT trace_id, name, ts_ps, dur_ps,
       TRY_CAST(regexp_match(name, 'ProfilerStep\s*#\s*(\d+)')[1] AS BIGINT) AS iteration
FROM _kineto_events
WHERE name LIKE '%ProfilerStep%' AND stream = -1
