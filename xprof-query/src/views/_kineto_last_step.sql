-- Helper of the Kineto views: per Chrome trace, what HTA's last-step rule
-- needs: how many step names it has and where its last step starts.
-- @column trace_id: the converted input (`traces.trace_id`).
-- @column names: distinct `ProfilerStep` names of the trace (HTA drops the last step when there
--   are two or more).
-- @column last_step_ps: start of the last step, ps from the trace start.
-- @column first_iteration: the smallest step number N of the trace's `ProfilerStep#N` names.
--
SELECT trace_id, count(DISTINCT name) AS names, max(ts_ps) AS last_step_ps,
       min(iteration) AS first_iteration
FROM _kineto_steps
GROUP BY trace_id
