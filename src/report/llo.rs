//! The report's TPU kernel (LLO) section: unit utilization, issuing
//! bundles and source hotspots (`unit_utilization`, `llo_instructions`,
//! `source_hotspots`).

use xprof_query::ProfileSession;

use super::page::{Result, Section, ask, figure, table};
use super::svg::{self, Bar, Lane};

const UNITS_SQL: &str = "\
SELECT kernel, unit, avg(busy_fraction) AS busy_fraction, count(*) AS executions,
       min(first_bundle) AS first_bundle, max(last_bundle) AS last_bundle
FROM unit_utilization GROUP BY kernel, unit ORDER BY kernel, unit";

const BUNDLES_SQL: &str = "\
WITH k AS (SELECT kernel, max(bundle_number) + 1 AS bundles FROM llo_instructions GROUP BY kernel)
SELECT i.kernel, i.unit, (i.bundle_number * 40) / k.bundles AS cell,
       count(DISTINCT i.bundle_number) AS issuing, min(k.bundles) AS bundles
FROM llo_instructions i JOIN k ON i.kernel = k.kernel
GROUP BY i.kernel, i.unit, cell ORDER BY i.kernel, i.unit, cell";

const HOTSPOTS_SQL: &str = "\
SELECT kernel, source_file, source_line, instructions, busy_ps, unit_names
FROM source_hotspots ORDER BY busy_ps DESC, kernel, source_file, source_line LIMIT 15";

pub(super) async fn section(session: &ProfileSession) -> Result<Option<Section>> {
    let units = ask(session, UNITS_SQL).await?;
    if units.rows() == 0 {
        return Ok(None);
    }
    let mut body = String::new();
    let kernel = units.strings("kernel");
    let unit = units.strings("unit");
    let frac = units.f64s("busy_fraction");
    let bars: Vec<Bar> = (0..units.rows())
        .map(|i| Bar {
            label: format!("{} {}", kernel[i], unit[i]),
            value: frac[i] * 100.0,
            tooltip: format!(
                "{} on {}: busy {:.1}% of the kernel",
                kernel[i],
                unit[i],
                frac[i] * 100.0
            ),
        })
        .collect();
    body.push_str(&figure(
        "unit_utilization",
        &svg::hbar_chart("Unit utilization per kernel", "%", &bars),
        UNITS_SQL,
        "Share of the kernel's time each functional unit issues (mean over executions).",
    ));
    // Units × bundle ranges: the share of a range's bundles that issue on
    // the unit.
    let bundles = ask(session, BUNDLES_SQL).await?;
    if bundles.rows() > 0 {
        let kernel = bundles.strings("kernel");
        let unit = bundles.strings("unit");
        let cell = bundles.f64s("cell");
        let issuing = bundles.f64s("issuing");
        let total = bundles.f64s("bundles");
        let mut start = 0;
        while start < bundles.rows() {
            let end = (start..bundles.rows())
                .find(|&i| kernel[i] != kernel[start])
                .unwrap_or(bundles.rows());
            let n_bundles = total[start];
            let mut lanes: Vec<Lane> = Vec::new();
            for i in start..end {
                if lanes.last().is_none_or(|l| l.name != unit[i]) {
                    lanes.push(Lane {
                        name: unit[i].clone(),
                        cells: vec![0.0; 40],
                    });
                }
                let c = cell[i] as usize;
                // Bundles falling in cell c.
                let lo = (c as f64 * n_bundles / 40.0).ceil();
                let hi = ((c + 1) as f64 * n_bundles / 40.0).ceil();
                let in_cell = (hi - lo).max(1.0);
                if let Some(lane) = lanes.last_mut()
                    && let Some(v) = lane.cells.get_mut(c)
                {
                    *v = (issuing[i] / in_cell).clamp(0.0, 1.0);
                }
            }
            body.push_str(&figure(
                "llo_instructions",
                &svg::heatmap(
                    &format!("{}: units × bundles", kernel[start]),
                    "bundle",
                    0.0,
                    n_bundles,
                    "",
                    &lanes,
                ),
                BUNDLES_SQL,
                "Share of each range of the compiled program's bundles in which the unit issues an instruction.",
            ));
            start = end;
        }
    }
    let hotspots = ask(session, HOTSPOTS_SQL).await?;
    if hotspots.rows() > 0 {
        body.push_str(&table(
            "source_hotspots",
            &hotspots,
            &[
                ("kernel", "kernel", None),
                ("file", "source_file", None),
                ("line", "source_line", Some("")),
                ("instructions", "instructions", Some("")),
                ("busy", "busy_ps", Some("ps")),
                ("units", "unit_names", None),
            ],
            HOTSPOTS_SQL,
        ));
    }
    Ok(Some(Section {
        id: "llo",
        title: "TPU kernels (LLO)".into(),
        views: vec!["unit_utilization", "llo_instructions", "source_hotspots"],
        body,
    }))
}
