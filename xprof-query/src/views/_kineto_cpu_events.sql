-- Helper of the Kineto views: the CPU events of each Chrome trace that
-- HTA analyses. HTA's last-step rule lives here: when the trace has two or
-- more `ProfilerStep` names, the events from the start of its last step on
-- are left out.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column event_id: the event (`events.event_id`).
-- @column track_id: its track (`tracks.track_id`).
-- @column name: the event's name.
-- @column ts_ps: start, ps from the trace start.
-- @column dur_ps: duration, in ps.
-- @column stream: -1 (a CPU event).
-- @column correlation: the `correlation` arg (a runtime call's, pairing it with the GPU event it
--   launched); NULL when absent.
-- @column category: the `cat` arg; NULL when absent.
-- @column first_iteration: the smallest step number N of the trace's `ProfilerStep#N` names; NULL
--   when it has none.
--
SELECT v.trace_id, v.event_id, v.track_id, v.name, v.ts_ps, v.dur_ps, v.stream, v.correlation,
       v.category, s.first_iteration
FROM _kineto_events v
LEFT JOIN _kineto_last_step s ON s.trace_id = v.trace_id
WHERE v.stream = -1 AND (coalesce(s.names, 0) < 2 OR v.ts_ps < s.last_step_ps)
