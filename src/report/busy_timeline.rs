//! The report's busy timeline: each device's span in cells, shaded by
//! the share its outermost ops cover (`device_ops`).

use xprof_query::ProfileSession;

use super::page::{Result, Section, ask, device_label, figure};
use super::svg::{self, Lane};

/// Resolution of the busy timeline: cells per device.
const TIMELINE_CELLS: usize = 120;

fn timeline_sql() -> String {
    format!(
        "WITH span AS (
  SELECT trace_id, device_id, min(ts_ps) AS lo, max(end_ps) AS hi, min(depth) AS top_depth FROM device_ops
  GROUP BY trace_id, device_id),
cells AS (
  SELECT o.trace_id, o.device_id, s.lo, greatest((s.hi - s.lo + {TIMELINE_CELLS} - 1) / {TIMELINE_CELLS}, 1) AS width,
         o.ts_ps, o.end_ps
  FROM device_ops o JOIN span s ON o.trace_id = s.trace_id AND o.device_id = s.device_id
  WHERE o.depth = s.top_depth),
split AS (
  SELECT trace_id, device_id, lo, width, ts_ps, end_ps,
         unnest(range((ts_ps - lo) / width, (greatest(end_ps - 1, ts_ps) - lo) / width + 1)) AS cell
  FROM cells)
SELECT trace_id, device_id, cell,
       least(sum(least(end_ps, lo + (cell + 1) * width) - greatest(ts_ps, lo + cell * width)), min(width)) AS busy_ps,
       min(width) AS width_ps, min(lo) AS lo_ps
FROM split GROUP BY trace_id, device_id, cell ORDER BY trace_id, device_id, cell"
    )
}

pub(super) async fn section(session: &ProfileSession, several: bool) -> Result<Option<Section>> {
    let sql = timeline_sql();
    let cells = ask(session, &sql).await?;
    if cells.rows() == 0 {
        return Ok(None);
    }
    let names = ask(
        session,
        "SELECT trace_id, device_id, name FROM devices ORDER BY trace_id, device_id",
    )
    .await?;
    let name_of: std::collections::HashMap<(i64, i64), String> = {
        let t = names.f64s("trace_id");
        let d = names.f64s("device_id");
        let n = names.strings("name");
        (0..names.rows())
            .map(|i| ((t[i] as i64, d[i] as i64), n[i].clone()))
            .collect()
    };
    let trace = cells.f64s("trace_id");
    let device = cells.f64s("device_id");
    let cell = cells.f64s("cell");
    let busy = cells.f64s("busy_ps");
    let width = cells.f64s("width_ps");
    let mut lanes: Vec<Lane> = Vec::new();
    let mut keys: Vec<(i64, i64)> = Vec::new();
    let mut max_span: f64 = 0.0;
    for i in 0..cells.rows() {
        let key = (trace[i] as i64, device[i] as i64);
        if keys.last() != Some(&key) {
            keys.push(key);
            let name = name_of.get(&key).cloned().unwrap_or_default();
            lanes.push(Lane {
                name: device_label(several, key.0 as f64, &name),
                cells: vec![0.0; TIMELINE_CELLS],
            });
            max_span = max_span.max(width[i] * TIMELINE_CELLS as f64);
        }
        if let Some(lane) = lanes.last_mut()
            && let Some(c) = lane.cells.get_mut(cell[i] as usize)
        {
            *c = (busy[i] / width[i]).clamp(0.0, 1.0);
        }
    }
    let chart = svg::heatmap(
        "Busy timeline per device",
        "time from each device's first op",
        0.0,
        max_span,
        "ps",
        &lanes,
    );
    Ok(Some(Section {
        id: "timeline",
        title: "Busy timeline".into(),
        views: vec!["device_ops"],
        body: figure(
            "device_ops",
            &chart,
            &sql,
            &format!(
                "Each device's span in {TIMELINE_CELLS} cells; a cell's shade is the share of it covered by the device's outermost ops (its lowest nesting depth; summed, capped at 100%)."
            ),
        ),
    }))
}
