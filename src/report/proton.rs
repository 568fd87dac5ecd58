//! The report's Proton section: the kernels with the most time
//! (`proton_kernels`).

use xprof_query::ProfileSession;

use super::page::{Result, Section, ask, figure, table};
use super::svg::{self, Bar};

const PROTON_SQL: &str = "\
SELECT name, launches, time_ps, avg_time_ps, flops, bytes, gflop_per_s, gbyte_per_s, util
FROM proton_kernels WHERE depth > 0 ORDER BY time_ps DESC, name LIMIT 20";

pub(super) async fn section(session: &ProfileSession) -> Result<Option<Section>> {
    let kernels = ask(session, PROTON_SQL).await?;
    if kernels.rows() == 0 {
        return Ok(None);
    }
    let names = kernels.strings("name");
    let time = kernels.f64s("time_ps");
    let launches = kernels.f64s("launches");
    let rate = kernels.f64s("gflop_per_s");
    let bars: Vec<Bar> = (0..kernels.rows())
        .map(|i| Bar {
            label: names[i].clone(),
            value: time[i],
            tooltip: format!(
                "{}: {} in {} launches, {} FLOP/s",
                names[i],
                svg::format_si(time[i], "ps"),
                launches[i],
                svg::format_si(rate[i] * 1e9, "")
            ),
        })
        .collect();
    let mut body = figure(
        "proton_kernels",
        &svg::hbar_chart("Proton kernels by time", "ps", &bars),
        PROTON_SQL,
        "Triton Proton's kernels (tree profile) with achieved rates.",
    );
    body.push_str(&table(
        "proton_kernels",
        &kernels,
        &[
            ("kernel", "name", None),
            ("launches", "launches", Some("")),
            ("time", "time_ps", Some("ps")),
            ("avg", "avg_time_ps", Some("ps")),
            ("FLOPs", "flops", Some("")),
            ("bytes", "bytes", Some("B")),
            ("GFLOP/s", "gflop_per_s", Some("")),
            ("GB/s", "gbyte_per_s", Some("")),
            ("util", "util", Some("")),
        ],
        PROTON_SQL,
    ));
    Ok(Some(Section {
        id: "proton",
        title: "Proton kernels".into(),
        views: vec!["proton_kernels"],
        body,
    }))
}
