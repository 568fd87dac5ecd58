//! The report's overview: the traces opened and each device's span and
//! busy share (`traces`, `device_busy`).

use xprof_query::ProfileSession;

use super::page::{COUNT, Result, Section, ask, device_label, figure, table};
use super::svg::{self, Bar};

const OVERVIEW_TRACES_SQL: &str = "\
SELECT trace_id, host, run, source_format, duration_ps, source_path
FROM traces ORDER BY trace_id";

const OVERVIEW_DEVICES_SQL: &str = "\
SELECT trace_id, device_name, device_kind, ops, span_ps, busy_ps, busy_pct
FROM device_busy ORDER BY trace_id, device_id";

pub(super) async fn section(session: &ProfileSession, several: bool) -> Result<Option<Section>> {
    let traces = ask(session, OVERVIEW_TRACES_SQL).await?;
    if traces.rows() == 0 {
        return Ok(None);
    }
    let mut body = table(
        "traces",
        &traces,
        &[
            ("trace", "trace_id", Some(COUNT)),
            ("host", "host", None),
            ("run", "run", None),
            ("format", "source_format", None),
            ("span", "duration_ps", Some("ps")),
            ("file", "source_path", None),
        ],
        OVERVIEW_TRACES_SQL,
    );
    let devices = ask(session, OVERVIEW_DEVICES_SQL).await?;
    if devices.rows() > 0 {
        let names = devices.strings("device_name");
        let traces_col = devices.f64s("trace_id");
        let busy_ps = devices.f64s("busy_ps");
        let span_ps = devices.f64s("span_ps");
        let pct = devices.f64s("busy_pct");
        let bars: Vec<Bar> = (0..devices.rows())
            .map(|i| Bar {
                label: device_label(several, traces_col[i], &names[i]),
                value: pct[i],
                tooltip: format!(
                    "{}: busy {} of {} ({:.1}%)",
                    names[i],
                    svg::format_si(busy_ps[i], "ps"),
                    svg::format_si(span_ps[i], "ps"),
                    pct[i]
                ),
            })
            .collect();
        body.push_str(&figure(
            "device_busy",
            &svg::hbar_chart("Busy fraction per device", "%", &bars),
            OVERVIEW_DEVICES_SQL,
            "Share of each device's span (first op start to last op end) in which an op ran.",
        ));
        body.push_str(&table(
            "device_busy",
            &devices,
            &[
                ("trace", "trace_id", Some(COUNT)),
                ("device", "device_name", None),
                ("kind", "device_kind", None),
                ("ops", "ops", Some(COUNT)),
                ("span", "span_ps", Some("ps")),
                ("busy", "busy_ps", Some("ps")),
                ("busy %", "busy_pct", Some("%")),
            ],
            OVERVIEW_DEVICES_SQL,
        ));
    }
    Ok(Some(Section {
        id: "overview",
        title: "Overview".into(),
        views: vec!["traces", "device_busy"],
        body,
    }))
}
