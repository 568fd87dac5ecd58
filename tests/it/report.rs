//! `xprof-sql report`: the HTML report of every committed fixture opens in
//! headless Chromium with no script error, and the numbers it draws are
//! the views' answers, read back from the browser's DOM.
//!
//! Chromium is Debian's `chromium` (`.ci/run` installs it). Without it the
//! browser checks fail, unless `XPROF_SQL_NO_BROWSER=1` says to skip them
//! (the test then says so on stderr).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

fn fixtures() -> Vec<PathBuf> {
    vec![
        fixture("../../examples/data/jax_cpu_mlp.xplane.pb"),
        cpu_fixture("jax_cpu_mlp_20steps_w256"),
        gpu_fixture("jax_gpu"),
        gpu_fixture("jax_pallas"),
        fixture("gpu/torch_kineto.json"),
        fixture("gpu/proton_tree.hatchet"),
        fixture("tpu/synthetic_llo.xplane.pb"),
        fixture("tpu/synthetic_capture.xplane.pb"),
    ]
}

fn report_of(input: &Path, out: &Path) {
    let output = Command::new(env!("CARGO_BIN_EXE_xprof-sql"))
        .args([
            "report",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{input:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// What the test adds to a copy of the page before Chromium opens it:
/// each mark's laid-out size, as the browser computed it
/// (`getBoundingClientRect`), in `data-drawn-width` and
/// `data-drawn-height`, and how many marks it measured in
/// `<body data-measured>`; where each legend entry's swatch and text
/// are; where each region bar's label and the bar are
/// (`data-drawn-left`/`-right`, `data-drawn-bar-left`/`-right` on the
/// label); and each table cell's text width against its box
/// (`data-drawn-scroll-width`, `data-drawn-client-width`: wider is cut).
const MEASURE: &str = "<script>\
    let measured = 0;\
    for (const m of document.querySelectorAll('[data-chart] [data-value]')) {\
      const box = m.getBoundingClientRect();\
      m.setAttribute('data-drawn-width', box.width);\
      m.setAttribute('data-drawn-height', box.height);\
      measured += 1;\
    }\
    document.body.dataset.measured = measured;\
    for (const g of document.querySelectorAll('.legend-entry')) {\
      const text = g.querySelector('text').getBoundingClientRect();\
      const swatch = g.querySelector('rect').getBoundingClientRect();\
      g.setAttribute('data-drawn-swatch-left', swatch.left);\
      g.setAttribute('data-drawn-text-right', text.right);\
      g.setAttribute('data-drawn-top', swatch.top);\
    }\
    for (const bar of document.querySelectorAll('rect.region')) {\
      const text = bar.parentNode.querySelector('text');\
      if (!text) continue;\
      const box = text.getBoundingClientRect();\
      const drawn = bar.getBoundingClientRect();\
      text.setAttribute('data-drawn-left', box.left);\
      text.setAttribute('data-drawn-right', box.right);\
      text.setAttribute('data-drawn-bar-left', drawn.left);\
      text.setAttribute('data-drawn-bar-right', drawn.right);\
    }\
    for (const cell of document.querySelectorAll('td[data-col]')) {\
      cell.setAttribute('data-drawn-scroll-width', cell.scrollWidth);\
      cell.setAttribute('data-drawn-client-width', cell.clientWidth);\
    }\
    </script>";

/// The DOM after the page loaded and ran its script (and [`MEASURE`]), as
/// Chromium serializes it.
fn dom_of(chromium: &Path, html: &Path) -> String {
    let page = std::fs::read_to_string(html).unwrap();
    let at = page.rfind("</body>").expect("the page ends its body");
    let measured = html.with_extension("measured.html");
    std::fs::write(
        &measured,
        format!("{}{MEASURE}{}", &page[..at], &page[at..]),
    )
    .unwrap();
    let html = measured.as_path();
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", profile.path().display()),
            "--dump-dom",
            &format!("file://{}", html.display()),
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The `data-value`s of the marks inside the element carrying `attr`
/// (`data-chart="hlo_stats"`), in document order.
fn values_in(dom: &str, attr: &str) -> Vec<f64> {
    let Some(start) = dom.find(attr) else {
        return Vec::new();
    };
    let rest = &dom[start..];
    let end = rest.find("</figure>").unwrap_or(rest.len());
    rest[..end]
        .split("data-value=\"")
        .skip(1)
        .map(|v| v[..v.find('"').unwrap()].parse::<f64>().unwrap())
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn assert_values(dom: &str, chart: &str, want: &[f64], input: &Path) {
    let got = values_in(dom, &format!("data-chart=\"{chart}\""));
    assert_eq!(
        got.len(),
        want.len(),
        "{input:?} {chart}: {got:?} vs {want:?}"
    );
    for (g, w) in got.iter().zip(want) {
        assert!(close(*g, *w), "{input:?} {chart}: {got:?} vs {want:?}");
    }
}

/// The marks of `chart` as (`data-value`, laid-out size) pairs, the size
/// being `data-drawn-width` or `data-drawn-height` ([`MEASURE`]).
fn drawn_sizes(dom: &str, chart: &str, size: &str) -> Vec<(f64, f64)> {
    let attr = format!("data-chart=\"{chart}\"");
    let Some(start) = dom.find(&attr) else {
        return Vec::new();
    };
    let rest = &dom[start..];
    let rest = &rest[..rest.find("</figure>").unwrap_or(rest.len())];
    rest.split("<rect ")
        .skip(1)
        .filter(|mark| mark.contains("data-value=\""))
        .map(|mark| {
            let read = |name: &str| -> f64 {
                let at = mark
                    .find(name)
                    .unwrap_or_else(|| panic!("{chart}: no {name}"))
                    + name.len();
                mark[at..at + mark[at..].find('"').unwrap()]
                    .parse()
                    .unwrap()
            };
            (read("data-value=\""), read(&format!("{size}=\"")))
        })
        .collect()
}

/// A horizontal bar chart as the browser laid it out: each bar's width is
/// its value on one scale (up to the 0.1 px the SVG rounds to).
fn assert_bars_proportional(dom: &str, chart: &str, input: &Path) {
    let bars = drawn_sizes(dom, chart, "data-drawn-width");
    let Some(&(top_value, top_width)) = bars.iter().max_by(|a, b| a.0.total_cmp(&b.0)) else {
        return;
    };
    assert!(
        top_value > 0.0 && top_width > 50.0,
        "{input:?} {chart}: {bars:?}"
    );
    for &(value, width) in &bars {
        let want = value / top_value * top_width;
        assert!(
            (width - want).abs() <= 0.15,
            "{input:?} {chart}: a bar of {value} is {width} px wide, not {want}: {bars:?}"
        );
    }
}

fn f64s(rows: &[Row], key: &str) -> Vec<f64> {
    rows.iter()
        .map(|r| r.get(key).and_then(|v| v.as_f64()).unwrap_or(f64::NAN))
        .collect()
}

#[tokio::test]
async fn every_fixture_report_opens_and_shows_the_views_numbers() {
    let browser = chromium();
    if browser.is_none() {
        assert!(
            std::env::var_os("XPROF_SQL_NO_BROWSER").is_some(),
            "Chromium is not installed (apt-get install chromium); set XPROF_SQL_NO_BROWSER=1 to skip the browser checks"
        );
        eprintln!("report: no Chromium, browser checks skipped (XPROF_SQL_NO_BROWSER)");
    }
    let dir = tempfile::tempdir().unwrap();
    let mut charts_seen = std::collections::BTreeSet::new();
    for input in fixtures() {
        let out = dir.path().join(format!(
            "{}.html",
            input.file_name().unwrap().to_string_lossy()
        ));
        report_of(&input, &out);
        let html = std::fs::read_to_string(&out).unwrap();
        assert!(html.len() < 2 << 20, "{input:?}: {} bytes", html.len());
        // Self-contained: nothing fetched from anywhere.
        for needle in ["http://", "https://", "src=\"//", "<link"] {
            let outside_svg_ns = html.replace("http://www.w3.org/2000/svg", "");
            assert!(
                !outside_svg_ns.contains(needle),
                "{input:?} refers to {needle}"
            );
        }
        let Some(browser) = &browser else { continue };
        let dom = dom_of(browser, &out);
        // The page's script set it at load, with no error recorded.
        assert!(
            dom.contains("data-errors=\"\""),
            "{input:?}: script errors, or the script did not run, in {}",
            &dom[..dom.len().min(2000)]
        );
        let measured: usize = {
            let at = dom.find("data-measured=\"").unwrap() + "data-measured=\"".len();
            dom[at..at + dom[at..].find('"').unwrap()].parse().unwrap()
        };
        assert!(measured > 0, "{input:?}: no mark measured");
        assert_eq!(
            measured,
            dom.matches("data-drawn-width=").count(),
            "{input:?}"
        );
        for chart in [
            "device_busy",
            "hlo_stats",
            "kernel_stats",
            "unit_utilization",
            "proton_kernels",
            "llo_region_profile",
            "gpu_kernels",
        ] {
            assert_bars_proportional(&dom, chart, &input);
        }
        // The TPU unit and Proton kernel sections: the views' numbers.
        let units = query_rows(
            std::slice::from_ref(&input),
            "SELECT avg(busy_fraction) * 100 AS pct FROM unit_utilization \
             GROUP BY kernel, unit ORDER BY kernel, unit",
        )
        .await;
        assert_values(&dom, "unit_utilization", &f64s(&units, "pct"), &input);
        let proton = query_rows(
            std::slice::from_ref(&input),
            "SELECT time_ps FROM proton_kernels WHERE depth > 0 ORDER BY time_ps DESC, name LIMIT 20",
        )
        .await;
        assert_values(&dom, "proton_kernels", &f64s(&proton, "time_ps"), &input);
        for chart in [
            "device_busy",
            "hlo_stats",
            "kernel_stats",
            "step_stats",
            "unit_utilization",
            "proton_kernels",
            "gpu_kernels",
        ] {
            if dom.contains(&format!("data-chart=\"{chart}\"")) {
                charts_seen.insert(chart);
            }
        }
        // Busy fraction per device: device_busy's busy_pct.
        let busy = query_rows(
            std::slice::from_ref(&input),
            "SELECT busy_pct FROM device_busy ORDER BY trace_id, device_id",
        )
        .await;
        assert_values(&dom, "device_busy", &f64s(&busy, "busy_pct"), &input);
        // Top HLO ops: hlo_stats' self time (µs, drawn in ps).
        let hlo = query_rows(
            std::slice::from_ref(&input),
            "SELECT total_self_time_us * 1e6 AS ps FROM hlo_stats \
             ORDER BY total_self_time_us DESC, trace_id, rank LIMIT 15",
        )
        .await;
        assert_values(&dom, "hlo_stats", &f64s(&hlo, "ps"), &input);
        let kernels = query_rows(
            std::slice::from_ref(&input),
            "SELECT total_duration_us * 1e6 AS ps FROM kernel_stats \
             ORDER BY total_duration_us DESC, trace_id, rank LIMIT 15",
        )
        .await;
        assert_values(&dom, "kernel_stats", &f64s(&kernels, "ps"), &input);
        // Top GPU kernels of the Chrome traces (Kineto's): gpu_kernels.
        let chrome_kernels = query_rows(
            std::slice::from_ref(&input),
            "SELECT sum(dur_ps) AS total_ps FROM gpu_kernels WHERE source_format = 'chrome_trace' \
             GROUP BY name ORDER BY total_ps DESC, name LIMIT 15",
        )
        .await;
        assert_values(
            &dom,
            "gpu_kernels",
            &f64s(&chrome_kernels, "total_ps"),
            &input,
        );
        // Busy timeline: a lane of cells per device of device_ops; on the
        // XLA CPU captures (one thread of ops, outermost at depth 1) the
        // cells' busy shares add up to device_busy's busy time.
        let devices = query_rows(
            std::slice::from_ref(&input),
            "SELECT b.busy_ps FROM device_busy b \
             JOIN (SELECT DISTINCT trace_id, device_id FROM device_ops) o USING (trace_id, device_id) \
             ORDER BY b.trace_id, b.device_id",
        )
        .await;
        let cells = values_in(&dom, "data-chart=\"device_ops\"");
        assert_eq!(cells.len(), 120 * devices.len(), "{input:?} timeline cells");
        if input.to_string_lossy().contains("jax_cpu_mlp") {
            let widths: Vec<f64> = {
                let start = dom.find("data-chart=\"device_ops\"").unwrap();
                let rest = &dom[start..start + dom[start..].find("</figure>").unwrap()];
                let attr = |name: &str| -> Vec<f64> {
                    rest.split(name)
                        .skip(1)
                        .map(|v| v[..v.find('"').unwrap()].parse::<f64>().unwrap())
                        .collect()
                };
                attr("data-end=\"")
                    .iter()
                    .zip(attr("data-start=\""))
                    .map(|(e, s)| e - s)
                    .collect()
            };
            let drawn: f64 = cells.iter().zip(&widths).map(|(v, w)| v * w).sum();
            let busy = f64s(&devices, "busy_ps")[0];
            assert!(
                (drawn - busy).abs() <= 1e-6 * busy,
                "{input:?}: timeline {drawn} vs busy {busy}"
            );
        }
        // Step time: busy and idle of each step, stacked.
        let steps = query_rows(
            std::slice::from_ref(&input),
            "WITH d AS (SELECT device_id FROM step_stats GROUP BY device_id ORDER BY count(*) DESC, device_id LIMIT 1) \
             SELECT busy_ps, idle_ps FROM step_stats WHERE device_id = (SELECT device_id FROM d) \
             ORDER BY step_num, start_ps",
        )
        .await;
        let stacked: Vec<f64> = steps
            .iter()
            .flat_map(|r| {
                [r.get("busy_ps"), r.get("idle_ps")]
                    .into_iter()
                    .filter_map(|v| v.and_then(|v| v.as_f64()))
                    .filter(|v| *v > 0.0)
            })
            .collect();
        assert_values(&dom, "step_stats", &stacked, &input);
    }
    if browser.is_some() {
        // The fixtures cover every section that has a chart.
        for chart in [
            "device_busy",
            "hlo_stats",
            "kernel_stats",
            "step_stats",
            "unit_utilization",
            "proton_kernels",
            "gpu_kernels",
        ] {
            assert!(
                charts_seen.contains(chart),
                "no fixture drew {chart}: {charts_seen:?}"
            );
        }
    }
}

#[test]
fn sections_without_data_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.html");
    report_of(&fixture("gpu/proton_tree.hatchet"), &out);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("id=\"proton\""));
    for absent in ["id=\"steps\"", "id=\"llo\"", "data-chart=\"hlo_stats\""] {
        assert!(!html.contains(absent), "{absent} shown for a Proton tree");
    }
    // The SQL behind a chart is on the page.
    assert!(html.contains("FROM proton_kernels"));
}

/// The attribute `name` of every element of `html` that has it, in order.
fn attrs(html: &str, name: &str) -> Vec<String> {
    let needle = format!(" {name}=\"");
    html.match_indices(&needle)
        .map(|(at, _)| {
            let rest = &html[at + needle.len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

/// The part of `dom` from the figure whose `data-chart` is `chart` to its
/// end.
fn figure_of<'a>(dom: &'a str, chart: &str) -> &'a str {
    let start = dom
        .find(&format!("data-chart=\"{chart}\""))
        .unwrap_or_else(|| panic!("no {chart} figure"));
    let rest = &dom[start..];
    &rest[..rest.find("</figure>").unwrap()]
}

/// The custom-kernel section on the synthetic kernel-profiling capture,
/// read back from the DOM after Chromium laid it out: the region bars of
/// every drawn execution are the measured entries (count, durations,
/// starts, nesting), the hover and the heat cells the static occupancy of
/// each region's own segment (`llo_region_segments`: the bundles its
/// measured time executes), the bundle picture one cell per bundle × unit
/// with `llo_bundle_units`' value, the segments marked and the one with
/// the most measured time outlined, and source lines whose shares add to
/// 100%; the page stays small.
#[tokio::test]
async fn the_kernel_section_shows_regions_occupancy_and_bundles() {
    let input = fixture("tpu/synthetic_capture.xplane.pb");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("capture.html");
    report_of(&input, &out);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.len() < 2 << 20, "{} bytes", html.len());
    let Some(browser) = chromium() else {
        assert!(std::env::var_os("XPROF_SQL_NO_BROWSER").is_some());
        return;
    };
    let dom = dom_of(&browser, &out);
    assert!(dom.contains("data-errors=\"\""), "script errors");
    assert!(dom.contains("id=\"kernels\""));
    let q = |sql: &'static str| {
        let input = input.clone();
        async move { query_rows(&[input], sql).await }
    };
    // Region bars: executions slowest first, entries in order.
    let entries = q("WITH runs AS (SELECT DISTINCT e.kernel_event_id, k.dur_ps \
                     FROM llo_region_entries e JOIN events k \
                     ON k.trace_id = e.trace_id AND k.event_id = e.kernel_event_id), \
                     ranked AS (SELECT kernel_event_id, row_number() OVER \
                     (ORDER BY dur_ps DESC, kernel_event_id) AS rank FROM runs) \
                     SELECT r.rank, e.dur_ps, e.entry, e.region_id FROM llo_region_entries e \
                     JOIN ranked r USING (kernel_event_id) WHERE r.rank <= 8 \
                     ORDER BY r.rank, e.entry")
    .await;
    let timeline = figure_of(&dom, "llo_region_entries");
    let executions = attrs(timeline, "data-execution");
    let runs: std::collections::BTreeSet<i64> = entries.iter().map(|r| i(r, "rank")).collect();
    assert_eq!(executions.len(), runs.len(), "one chart per execution");
    assert!(runs.len() >= 2, "the capture has several executions");
    let drawn: Vec<f64> = values_in(&dom, "data-chart=\"llo_region_entries\"");
    assert_eq!(
        drawn,
        entries
            .iter()
            .map(|r| i(r, "dur_ps") as f64)
            .collect::<Vec<_>>()
    );
    let labels = attrs(timeline, "data-label");
    for (label, r) in labels.iter().zip(&entries) {
        assert!(
            label.starts_with(&format!("R{} ", i(r, "region_id"))),
            "{label} vs {r:?}"
        );
    }
    // Depths are the regions' depth in llo_regions.
    let depths = q("WITH slowest AS (SELECT e2.kernel_event_id FROM llo_region_entries e2 \
                      JOIN events k ON k.trace_id = e2.trace_id AND k.event_id = e2.kernel_event_id \
                      ORDER BY k.dur_ps DESC, e2.kernel_event_id LIMIT 1) \
                    SELECT e.entry, g.depth FROM llo_region_entries e \
                    JOIN slowest s ON s.kernel_event_id = e.kernel_event_id \
                    JOIN llo_regions g ON g.trace_id = e.trace_id AND g.hlo_op = e.hlo_op \
                    AND g.region_id = e.region_id ORDER BY e.entry")
    .await;
    assert_eq!(
        depths.len(),
        entries.iter().filter(|r| i(r, "rank") == 1).count()
    );
    let drawn_depths = attrs(timeline, "data-depth");
    for (d, r) in drawn_depths.iter().zip(&depths) {
        assert_eq!(d.parse::<i64>().unwrap(), i(r, "depth"));
    }
    // The bars are laid out to scale: within an execution chart, width is
    // proportional to dur_ps.
    let widths: Vec<f64> = attrs(timeline, "data-drawn-width")
        .iter()
        .map(|w| w.parse().unwrap())
        .collect();
    let first_run = entries.iter().filter(|r| i(r, "rank") == 1).count();
    let (top_i, top) = drawn[..first_run]
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap();
    for k in 0..first_run {
        let want = drawn[k] / top * widths[top_i];
        assert!(
            (widths[k] - want).abs() <= 0.6,
            "bar {k}: {} vs {want}",
            widths[k]
        );
    }
    // Regions by measured time: llo_region_profile's measured_pct.
    let profile =
        q("SELECT measured_pct FROM llo_region_profile ORDER BY measured_ps DESC, region_id").await;
    assert_values(
        &dom,
        "llo_region_profile",
        &f64s(&profile, "measured_pct"),
        &input,
    );
    // The hover of the slowest execution's bars: the occupancy of the
    // region's own segment. The loop body's (R69) says MXU 0.0%, not its
    // nested range's 72%.
    let own = q(
        "SELECT region_id, self_start_bundle, self_limit_bundle, self_mxu_pct, \
                 nested_mxu_pct FROM llo_region_profile",
    )
    .await;
    let titles: Vec<&str> = timeline
        .split("<title>")
        .skip(1)
        .map(|t| &t[..t.find("</title>").unwrap()])
        .collect();
    for r in &own {
        let id = i(r, "region_id");
        let hover = titles
            .iter()
            .find(|t| t.starts_with(&format!("R{id} ")))
            .unwrap_or_else(|| panic!("a bar of R{id}"));
        assert!(
            hover.contains(&format!(
                "its own segment, bundles {}–{}): MXU {:.1}%",
                i(r, "self_start_bundle"),
                i(r, "self_limit_bundle") - 1,
                r["self_mxu_pct"].as_f64().unwrap()
            )),
            "{hover}"
        );
    }
    let body = own.iter().find(|r| i(r, "region_id") == 69).unwrap();
    assert_eq!(body["self_mxu_pct"].as_f64(), Some(0.0));
    assert!(body["nested_mxu_pct"].as_f64().unwrap() > 70.0);
    // Heat cells: region × unit occupancy of each region's own segment.
    // The capture holds two programs; the one with region markers is the
    // kernel whose section comes first.
    let occupancy = q(
        "SELECT region_id, unit, self_occupancy_pct AS occupancy_pct FROM llo_region_segments \
         WHERE capacity IS NOT NULL AND hlo_op IN (SELECT hlo_op FROM llo_region_entries)",
    )
    .await;
    let heat = figure_of(&dom, "llo_region_segments");
    let got: std::collections::BTreeMap<String, f64> = attrs(heat, "data-label")
        .into_iter()
        .zip(attrs(heat, "data-value").iter().map(|v| v.parse().unwrap()))
        .collect();
    let want: std::collections::BTreeMap<String, f64> = occupancy
        .iter()
        .filter(|r| r.get("occupancy_pct").is_some())
        .map(|r| {
            (
                format!("R{} {}", i(r, "region_id"), s(r, "unit")),
                r["occupancy_pct"].as_f64().unwrap(),
            )
        })
        .collect();
    // Every measured region's cells, and only theirs.
    let measured: std::collections::BTreeSet<String> =
        q("SELECT region_id FROM llo_region_profile")
            .await
            .iter()
            .map(|r| format!("R{} ", i(r, "region_id")))
            .collect();
    let want: std::collections::BTreeMap<String, f64> = want
        .into_iter()
        .filter(|(k, _)| measured.iter().any(|m| k.starts_with(m.as_str())))
        .collect();
    assert!(want.len() >= 10, "{want:?}");
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (k, v) in &want {
        assert!(close(got[k], *v), "{k}: {} vs {v}", got[k]);
    }
    // The bundle picture: one cell per bundle × unit, with its value.
    let units = q(
        "SELECT unit, bundle, used FROM llo_bundle_units WHERE capacity IS NOT NULL \
                   AND hlo_op IN (SELECT hlo_op FROM llo_region_entries) ORDER BY unit, bundle",
    )
    .await;
    let picture = figure_of(&dom, "llo_bundle_units");
    let lanes: std::collections::BTreeMap<String, Vec<i64>> = attrs(picture, "data-unit")
        .into_iter()
        .zip(attrs(picture, "data-used"))
        .map(|(u, used)| (u, used.split(' ').map(|x| x.parse().unwrap()).collect()))
        .collect();
    let mut want: std::collections::BTreeMap<String, Vec<i64>> = Default::default();
    for r in &units {
        let lane = want.entry(s(r, "unit")).or_default();
        assert_eq!(lane.len() as i64, i(r, "bundle"), "bundles in order");
        lane.push(i(r, "used"));
    }
    assert_eq!(lanes, want);
    let bundles = q("SELECT bundles FROM llo_programs \
                     WHERE hlo_op IN (SELECT hlo_op FROM llo_region_entries)")
    .await;
    assert_eq!(bundles.len(), 1);
    for lane in lanes.values() {
        assert_eq!(lane.len() as i64, i(&bundles[0], "bundles"));
    }
    // The register-pressure picture: one lane per register type, one cell
    // per bundle with the live registers of `llo_register_pressure` (0
    // where it has no row), and the most of the type live in any program
    // of the capture as the lane's scale (here the kernel's own peak: the
    // capture's other program defines no register;
    // `the_kernel_section_scales_names_and_leaves_out_what_did_not_run`
    // has one that does).
    let pressure = q(
        "SELECT register_type, bundle, live FROM llo_register_pressure \
                      WHERE hlo_op IN (SELECT hlo_op FROM llo_region_entries)",
    )
    .await;
    assert!(!pressure.is_empty());
    let registers = figure_of(&dom, "llo_register_pressure");
    let reg_lanes: std::collections::BTreeMap<String, Vec<i64>> = attrs(registers, "data-unit")
        .into_iter()
        .zip(attrs(registers, "data-used"))
        .map(|(u, used)| (u, used.split(' ').map(|x| x.parse().unwrap()).collect()))
        .collect();
    let mut want: std::collections::BTreeMap<String, Vec<i64>> = Default::default();
    for r in &pressure {
        let lane = want
            .entry(s(r, "register_type"))
            .or_insert_with(|| vec![0; i(&bundles[0], "bundles") as usize]);
        lane[i(r, "bundle") as usize] = i(r, "live");
    }
    assert_eq!(reg_lanes, want);
    let peaks: Vec<i64> = attrs(registers, "data-capacity")
        .iter()
        .map(|c| c.parse().unwrap())
        .collect();
    let want_peaks: Vec<i64> = q(
        "SELECT register_type, max(live) AS peak FROM llo_register_pressure \
                                  GROUP BY register_type ORDER BY register_type",
    )
    .await
    .iter()
    .map(|r| i(r, "peak"))
    .collect();
    assert_eq!(peaks, want_peaks);
    // The measured segments are marked, and the one with the most measured
    // time is outlined over its own bundles (R69's 12-20, not its nested
    // 12-220).
    let hot = q(
        "SELECT region_id, self_start_bundle, self_limit_bundle FROM llo_region_profile \
         WHERE self_start_bundle IS NOT NULL ORDER BY measured_ps DESC, region_id LIMIT 1",
    )
    .await;
    assert_eq!(i(&hot[0], "region_id"), 69);
    let outlined = &picture[picture.find("class=\"hot\"").expect("a hot region")..];
    let outlined = &outlined[..outlined.find('>').unwrap()];
    assert!(
        outlined.contains(&format!(
            "data-start=\"{}\" data-limit=\"{}\"",
            i(&hot[0], "self_start_bundle"),
            i(&hot[0], "self_limit_bundle")
        )),
        "{outlined}"
    );
    let segments = q(
        "SELECT DISTINCT segment_start_bundle, segment_limit_bundle FROM llo_region_segments \
         WHERE hlo_op IN (SELECT hlo_op FROM llo_region_entries) AND region_id <> 69 \
         ORDER BY segment_start_bundle",
    )
    .await;
    let picture_only = picture;
    let marked: Vec<(i64, i64)> = picture_only
        .split("class=\"region-start\"")
        .skip(1)
        .map(|l| {
            let l = &l[..l.find('>').unwrap()];
            (
                attrs(l, "data-start")[0].parse().unwrap(),
                attrs(l, "data-limit")[0].parse().unwrap(),
            )
        })
        .collect();
    let want: Vec<(i64, i64)> = segments
        .iter()
        .map(|r| (i(r, "segment_start_bundle"), i(r, "segment_limit_bundle")))
        .collect();
    assert_eq!(marked, want);
    // Source lines by measured time: every region's time under its own
    // segment's line, the time of segments without one its own row, so
    // the shares add to 100%.
    let table = &dom[dom
        .find("Source lines by measured time")
        .expect("the source table")..];
    let table = &table[..table.find("</table>").unwrap()];
    let col = |name: &str| -> Vec<f64> {
        table
            .split(&format!("data-col=\"{name}\" data-value=\""))
            .skip(1)
            .map(|v| v[..v.find('"').unwrap()].parse().unwrap())
            .collect()
    };
    let shares = col("measured_pct");
    let total: f64 = shares.iter().sum();
    assert!((total - 100.0).abs() < 1e-9, "{shares:?}");
    let measured = col("measured_ps");
    let all =
        q("SELECT sum(dur_ps) AS ps FROM llo_region_entries WHERE kernel_event_id IS NOT NULL")
            .await;
    assert_eq!(measured.iter().sum::<f64>(), i(&all[0], "ps") as f64);
}

/// Where the capture's kernel is written from, in the capture that
/// [`kernel_author_capture`] makes: longer than a table column, so a cell
/// that cuts paths at their end hides the file.
const LONG_SOURCE: &str = "/home/kernel_author/src/github.com/my-org/tpu-kernels/kernels/pallas/matmul/pallas_matmul_tiled_bf16_kernel.py";

/// The synthetic kernel-profiling capture as a kernel author's would be:
/// its kernel written in a deep folder ([`LONG_SOURCE`]), and beside
/// `pallas_matmul.1` and `fusion.28` (compiled, never run) a third
/// program, the small `edge_cases.1` of
/// `tests/fixtures/tpu/synthetic_llo_static.xplane.pb` (VREG peak 3 where
/// the kernel's is 5), that ran once, after the kernel, with no region
/// markers.
fn kernel_author_capture(dir: &Path) -> PathBuf {
    use prost::Message;
    use xprof_sql::convert::llo_proto::messages::LloModuleProto;
    use xprof_testdata::llo_capture::{CaptureSpec, capture_space};
    use xprof_testdata::llo_proto::static_cases_proto;
    use xprof_testdata::xspace_proto::{XEventMetadata, XStat, x_stat};

    let (mut space, _) = capture_space(&CaptureSpec::default());
    let meta = space
        .planes
        .iter_mut()
        .find(|p| p.name == "/host:metadata")
        .unwrap();
    let llo_proto = *meta
        .stat_metadata
        .iter()
        .find(|(_, m)| m.name == "llo_proto")
        .unwrap()
        .0 as u64;
    for md in meta.event_metadata.values_mut() {
        if !md.name.ends_with("::pallas_matmul.1") {
            continue;
        }
        let stat = md
            .stats
            .iter_mut()
            .find(|s| s.metadata_id == llo_proto)
            .unwrap();
        let Some(x_stat::Value::BytesValue(bytes)) = &stat.value else {
            panic!("llo_proto holds bytes");
        };
        let mut program = LloModuleProto::decode(bytes.as_slice()).unwrap();
        let strings = &mut program.source_map.as_mut().unwrap().strings;
        assert_eq!(strings[0], "/work/pallas_matmul.py");
        strings[0] = LONG_SOURCE.into();
        stat.value = Some(x_stat::Value::BytesValue(program.encode_to_vec()));
    }
    let id = meta.event_metadata.keys().max().unwrap() + 1;
    meta.event_metadata.insert(
        id,
        XEventMetadata {
            id,
            name: "jit_edge_cases(31)::edge_cases.1".into(),
            stats: vec![XStat {
                metadata_id: llo_proto,
                value: Some(x_stat::Value::BytesValue(static_cases_proto())),
            }],
            ..Default::default()
        },
    );
    // edge_cases.1 runs once on the TensorCore, in its module, 2 µs after
    // the kernel's last execution.
    let device = space
        .planes
        .iter_mut()
        .find(|p| p.name == "/device:TPU:0")
        .unwrap();
    let mut next_id = device.event_metadata.keys().max().unwrap() + 1;
    let mut metadata = |name: &str, display: &str| {
        let id = next_id;
        next_id += 1;
        device.event_metadata.insert(
            id,
            XEventMetadata {
                id,
                name: name.into(),
                display_name: display.into(),
                ..Default::default()
            },
        );
        id
    };
    let module = metadata("jit_edge_cases(31)", "");
    let op = metadata(
        "%edge_cases.1 = f32[8]{0} fusion(f32[8]{0} %p0)",
        "edge_cases.1",
    );
    let line_end = |name: &str| {
        let line = device.lines.iter().find(|l| l.name == name).unwrap();
        line.events
            .iter()
            .map(|e| match e.data {
                Some(xprof_testdata::xspace_proto::x_event::Data::OffsetPs(o)) => o + e.duration_ps,
                _ => 0,
            })
            .max()
            .unwrap()
    };
    let start = line_end("XLA Modules").max(line_end("XLA Ops")) + 2_000_000;
    for (line, md, offset, duration) in [
        ("XLA Modules", module, start, 900_000),
        ("XLA Ops", op, start + 100_000, 700_000),
    ] {
        device
            .lines
            .iter_mut()
            .find(|l| l.name == line)
            .unwrap()
            .events
            .push(xprof_testdata::event(md, offset, duration, vec![]));
    }
    let path = dir.join("kernel_author.xplane.pb");
    std::fs::write(&path, space.encode_to_vec()).unwrap();
    path
}

/// The part of `dom` about kernel `op`: from its heading to the next
/// kernel's, or to the end of the section.
fn kernel_part<'a>(dom: &'a str, op: &str) -> &'a str {
    let start = dom
        .find(&format!("data-kernel=\"{op}\""))
        .unwrap_or_else(|| panic!("no section of {op}"));
    let rest = &dom[start + 1..];
    let end = rest
        .find("data-kernel=\"")
        .or_else(|| rest.find("</section>"))
        .unwrap();
    &dom[start..start + 1 + end]
}

/// The number attribute `name` of an element's opening tag `tag`.
fn number(tag: &str, name: &str) -> f64 {
    let needle = format!(" {name}=\"");
    let at = tag
        .find(&needle)
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + needle.len();
    tag[at..at + tag[at..].find('"').unwrap()].parse().unwrap()
}

/// The kernel section as a kernel author reads it, in Chromium, on
/// [`kernel_author_capture`] (issue 59 §7): a program that did not run is
/// named in one line, not drawn, while one that ran without region markers
/// is drawn; register pressure is shaded on one scale for the capture, the
/// most of each type live in any of its programs, so the small program's
/// cells are light; the source table shows the file name whole with the
/// path on hover; the region timeline's labels lie inside their bars,
/// cut in the middle if at all, and a legend names every region in its
/// bars' colour.
#[tokio::test]
async fn the_kernel_section_scales_names_and_leaves_out_what_did_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let input = kernel_author_capture(dir.path());
    let out = dir.path().join("author.html");
    report_of(&input, &out);
    // A file of payloads alone ran nothing: its program is drawn, from its
    // schedule.
    let payloads = dir.path().join("payloads.html");
    report_of(&fixture("tpu/synthetic_llo_static.xplane.pb"), &payloads);
    let payloads = std::fs::read_to_string(&payloads).unwrap();
    assert_eq!(attrs(&payloads, "data-kernel"), ["edge_cases.1"]);
    assert!(payloads.contains("not run: the file holds no device events"));
    assert!(!payloads.contains("data-not-run"));
    let Some(browser) = chromium() else {
        assert!(std::env::var_os("XPROF_SQL_NO_BROWSER").is_some());
        return;
    };
    let dom = dom_of(&browser, &out);
    assert!(dom.contains("data-errors=\"\""), "script errors");
    let q = |sql: &'static str| {
        let input = input.clone();
        async move { query_rows(&[input], sql).await }
    };

    // What ran: the programs with an XLA Ops event of their name.
    let programs = q(
        "SELECT p.hlo_op, count(o.event_id) AS ops FROM llo_programs p \
                      LEFT JOIN device_ops o ON CAST(o.display_name AS VARCHAR) = p.hlo_op \
                      GROUP BY p.hlo_op ORDER BY p.hlo_op",
    )
    .await;
    let ran: Vec<String> = programs
        .iter()
        .filter(|r| i(r, "ops") > 0)
        .map(|r| s(r, "hlo_op"))
        .collect();
    let idle: Vec<String> = programs
        .iter()
        .filter(|r| i(r, "ops") == 0)
        .map(|r| s(r, "hlo_op"))
        .collect();
    assert_eq!(ran, ["edge_cases.1", "pallas_matmul.1"]);
    assert_eq!(idle, ["fusion.28"]);
    let section = kernel_section(&dom);
    let mut drawn = attrs(section, "data-kernel");
    drawn.sort();
    assert_eq!(drawn, ran, "one section per program that ran");
    assert_eq!(attrs(section, "data-not-run"), [idle.join(" ")]);
    assert!(kernel_part(&dom, "edge_cases.1").contains("trace 0, 1 execution, no region markers"));
    let line = &section[section.find("data-not-run").unwrap()..];
    let line = &line[..line.find("</p>").unwrap()];
    assert!(
        line.contains("did not run") && line.contains("<code>fusion.28</code>"),
        "{line}"
    );

    // Register pressure: every lane on the capture's scale, the most of
    // its type live in any program.
    let peaks: std::collections::BTreeMap<String, i64> = q("SELECT register_type, max(live) AS peak \
                                                         FROM llo_register_pressure GROUP BY register_type")
    .await
    .iter()
    .map(|r| (s(r, "register_type"), i(r, "peak")))
    .collect();
    let own = q(
        "SELECT register_type, max(live) AS peak FROM llo_register_pressure \
                 WHERE hlo_op = 'edge_cases.1' GROUP BY register_type",
    )
    .await;
    assert!(
        own.iter()
            .any(|r| i(r, "peak") < peaks[&s(r, "register_type")]),
        "the small program peaks below the capture: {own:?} vs {peaks:?}"
    );
    for op in ["pallas_matmul.1", "edge_cases.1"] {
        let part = kernel_part(&dom, op);
        let registers = figure_of(part, "llo_register_pressure");
        let lanes: Vec<&str> = registers.split("<g class=\"lane\"").skip(1).collect();
        assert_eq!(lanes.len(), attrs(registers, "data-unit").len());
        assert!(!lanes.is_empty(), "{op}");
        for lane in lanes {
            let unit = attrs(lane, "data-unit")[0].clone();
            let scale = number(lane, "data-capacity") as i64;
            assert_eq!(
                scale, peaks[&unit],
                "{op} {unit}: shaded on the capture's peak"
            );
            // Each level's fill is its share of that scale.
            for path in lane.split("<path ").skip(1) {
                let fill = attrs(&format!(" {path}"), "fill")[0].clone();
                let title =
                    &path[path.find("<title>").unwrap() + 7..path.find("</title>").unwrap()];
                let level: f64 = title[unit.len() + 2..title.find(" of ").unwrap()]
                    .parse()
                    .unwrap();
                assert_eq!(
                    fill,
                    xprof_sql::report::svg::heat_colour(level / scale as f64),
                    "{op} {title}"
                );
                assert!(
                    title.ends_with(&format!(
                        "of {scale} live (the most in any program of the capture)"
                    )),
                    "{title}"
                );
            }
        }
        assert!(
            registers.contains("any program of this capture"),
            "{op}: the caption says so"
        );
    }
    assert!(
        figure_of(kernel_part(&dom, "edge_cases.1"), "llo_register_pressure")
            .contains("this program's own peak: ")
    );

    // The source table: the file name whole, the path on hover, no cell
    // cut by its column.
    let part = kernel_part(&dom, "pallas_matmul.1");
    let table = &part[part
        .find("Source lines by measured time")
        .expect("the source table")..];
    let table = &table[..table.find("</table>").unwrap()];
    let file = LONG_SOURCE.rsplit('/').next().unwrap();
    let cells: Vec<&str> = table
        .split("<td ")
        .skip(1)
        .filter(|c| c.contains("data-col=\"source_file\""))
        .collect();
    assert!(cells.len() >= 2, "{table}");
    let mut long = 0;
    for cell in &cells {
        let tag = &cell[..cell.find('>').unwrap()];
        let text = &cell[cell.find('>').unwrap() + 1..cell.find("</td>").unwrap()];
        assert!(
            number(tag, "data-drawn-scroll-width") <= number(tag, "data-drawn-client-width"),
            "a file cell cut by its column: {cell}"
        );
        if attrs(&format!(" {tag}"), "title")[0] == LONG_SOURCE {
            long += 1;
            assert!(text.ends_with(&format!("/{file}")), "{text}");
            assert!(text.starts_with("/home/") && text.contains('…'), "{text}");
        } else {
            assert_eq!(text, "(no source line)");
        }
    }
    assert!(long >= 1);

    // The region timeline of the slowest execution: each label inside its
    // bar, the whole label, its region id alone, or cut in the middle (its
    // start and its end kept); a legend entry in each bar's colour naming
    // its region.
    let timeline = figure_of(part, "llo_region_entries");
    let slowest = &timeline[..timeline
        .find("data-execution=\"2\"")
        .unwrap_or(timeline.len())];
    let bars: Vec<&str> = slowest.split("<g><rect class=\"region\"").skip(1).collect();
    assert!(bars.len() >= 10, "{}", bars.len());
    let legend: Vec<(String, String)> = slowest
        .split("class=\"legend-entry\"")
        .skip(1)
        .map(|g| {
            let title = &g[g.find("<title>").unwrap() + 7..g.find("</title>").unwrap()];
            (title.to_string(), attrs(g, "fill")[0].clone())
        })
        .collect();
    let mut labelled = 0;
    for bar in &bars {
        let full = attrs(bar, "data-label")[0].clone();
        let fill = attrs(bar, "fill")[0].clone();
        assert!(
            legend
                .iter()
                .any(|(names, swatch)| *swatch == fill && names.split('\n').any(|n| n == full)),
            "no legend entry in {fill} names {full}: {legend:?}"
        );
        let Some(at) = bar.find("<text ") else {
            continue;
        };
        labelled += 1;
        let text = &bar[at..];
        let tag = &text[..text.find('>').unwrap()];
        let shown = &text[text.find('>').unwrap() + 1..text.find("</text>").unwrap()];
        assert!(
            number(tag, "data-drawn-left") >= number(tag, "data-drawn-bar-left")
                && number(tag, "data-drawn-right") <= number(tag, "data-drawn-bar-right"),
            "{shown} runs out of its bar: {tag}"
        );
        let id = full.split(' ').next().unwrap();
        let whole_or_id = shown == full || shown == id;
        let elided = match shown.split_once('…') {
            Some((head, tail)) => {
                head.starts_with(id)
                    && !tail.is_empty()
                    && full.starts_with(head)
                    && full.ends_with(tail)
            }
            None => false,
        };
        assert!(whole_or_id || elided, "{shown:?} of {full:?}");
    }
    assert!(labelled >= 8, "{labelled} of {} bars labelled", bars.len());
    // No legend name runs into the next entry.
    let entries: Vec<(f64, f64, f64)> = slowest
        .split("class=\"legend-entry\"")
        .skip(1)
        .map(|g| {
            (
                number(g, "data-drawn-top"),
                number(g, "data-drawn-swatch-left"),
                number(g, "data-drawn-text-right"),
            )
        })
        .collect();
    for pair in entries.windows(2) {
        let ((top, _, right), (next_top, next_left, _)) = (pair[0], pair[1]);
        if top == next_top {
            assert!(right <= next_left - 2.0, "{entries:?}");
        }
    }
}

/// The kernel section of `dom`.
fn kernel_section(dom: &str) -> &str {
    let start = dom
        .find("<section id=\"kernels\"")
        .expect("a kernel section");
    let rest = &dom[start..];
    &rest[..rest.find("</section>").unwrap()]
}

/// The marks of a stacked chart as (`data-value`, laid-out height) pairs:
/// each segment's height is its value on one scale (up to the 0.1 px the
/// SVG rounds to), so a segment drawn from another number than its value
/// fails.
fn assert_stacks_proportional(dom: &str, chart: &str) {
    let segments = drawn_sizes(dom, chart, "data-drawn-height");
    let &(top_value, top_height) = segments
        .iter()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap_or_else(|| panic!("{chart}: no segment"));
    assert!(top_height > 20.0, "{chart}: {segments:?}");
    for &(value, height) in &segments {
        let want = value / top_value * top_height;
        assert!(
            (height - want).abs() <= 0.15,
            "{chart}: a segment of {value} is {height} px high, not {want}"
        );
    }
}

/// A PyTorch user's report of a folder of two ranks (HTA's own test
/// trace): the top kernels from `gpu_kernels`, the kernel-type breakdown
/// with its overlaps, the temporal breakdown per rank and the idle time
/// per stream, each mark the view's number in the order drawn, laid out
/// by Chromium in proportion.
#[tokio::test]
async fn the_pytorch_section_draws_htas_views_per_rank() {
    let input = fixture("hta/sampled_2rank");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ranks.html");
    report_of(&input, &out);
    let Some(browser) = chromium() else {
        assert!(std::env::var_os("XPROF_SQL_NO_BROWSER").is_some());
        return;
    };
    let dom = dom_of(&browser, &out);
    assert!(dom.contains("data-errors=\"\""), "script errors");
    assert!(dom.contains("id=\"pytorch\""));
    let q = |sql: &'static str| {
        let input = input.clone();
        async move { query_rows(&[input], sql).await }
    };
    let kernels = q("SELECT sum(dur_ps) AS total_ps FROM gpu_kernels \
                     GROUP BY name ORDER BY total_ps DESC, name LIMIT 15")
    .await;
    assert_eq!(kernels.len(), 15);
    assert_values(&dom, "gpu_kernels", &f64s(&kernels, "total_ps"), &input);
    assert_bars_proportional(&dom, "gpu_kernels", &input);
    // Stacked: per rank (then stream), the series in the drawn order, the
    // positive values only.
    let positive = |rows: &[Row], columns: &[&str]| -> Vec<f64> {
        rows.iter()
            .flat_map(|r| columns.iter().map(|c| r[*c].as_f64().unwrap()))
            .filter(|v| *v > 0.0)
            .collect()
    };
    let types = q(
        "WITH t AS (SELECT DISTINCT kernel_type FROM gpu_kernel_type_breakdown), \
                   r AS (SELECT DISTINCT rank FROM gpu_kernel_type_breakdown) \
                   SELECT r.rank, t.kernel_type, coalesce(b.time_ps, 0) AS time_ps \
                   FROM r CROSS JOIN t LEFT JOIN gpu_kernel_type_breakdown b \
                   ON b.rank = r.rank AND b.kernel_type = t.kernel_type \
                   ORDER BY r.rank, t.kernel_type",
    )
    .await;
    assert!(
        types
            .iter()
            .any(|r| s(r, "kernel_type").contains("overlapping"))
    );
    assert_values(
        &dom,
        "gpu_kernel_type_breakdown",
        &positive(&types, &["time_ps"]),
        &input,
    );
    let temporal =
        q("SELECT compute_ps, non_compute_ps, idle_ps FROM temporal_breakdown ORDER BY rank").await;
    assert_eq!(temporal.len(), 2);
    assert_values(
        &dom,
        "temporal_breakdown",
        &positive(&temporal, &["compute_ps", "non_compute_ps", "idle_ps"]),
        &input,
    );
    let idle = q("SELECT rank, stream, \
                  sum(CASE WHEN idle_category = 'host_wait' THEN idle_ps ELSE 0 END) AS host_wait, \
                  sum(CASE WHEN idle_category = 'kernel_wait' THEN idle_ps ELSE 0 END) AS kernel_wait, \
                  sum(CASE WHEN idle_category = 'other' THEN idle_ps ELSE 0 END) AS other \
                  FROM idle_time_breakdown GROUP BY rank, stream ORDER BY rank, stream")
    .await;
    assert!(idle.len() >= 4, "{idle:?}");
    assert_values(
        &dom,
        "idle_time_breakdown",
        &positive(&idle, &["host_wait", "kernel_wait", "other"]),
        &input,
    );
    for chart in [
        "gpu_kernel_type_breakdown",
        "temporal_breakdown",
        "idle_time_breakdown",
    ] {
        assert_stacks_proportional(&dom, chart);
    }
    // The categories name the ranks (and streams), in order.
    let temporal_fig = figure_of(&dom, "temporal_breakdown");
    assert!(temporal_fig.find("rank 0").unwrap() < temporal_fig.find("rank 1").unwrap());
    // Every stream's bar keeps its label (two lines where one is too
    // wide), each naming its rank and stream in full on hover.
    let idle_fig = figure_of(&dom, "idle_time_breakdown");
    assert_eq!(idle_fig.matches("class=\"x-label\"").count(), idle.len());
    for r in &idle {
        let title = format!(
            "<title>rank {} stream {}</title>",
            i(r, "rank"),
            i(r, "stream")
        );
        assert!(idle_fig.contains(&title), "{title}");
    }
    // Long kernel names that share a prefix stay apart on screen.
    let kernels_fig = figure_of(&dom, "gpu_kernels");
    let shown: Vec<&str> = kernels_fig
        .split("text-anchor=\"end\"><title>")
        .skip(1)
        .map(|t| {
            let after = &t[t.find("</title>").unwrap() + 8..];
            &after[..after.find("</text>").unwrap()]
        })
        .collect();
    assert_eq!(shown.len(), 15);
    let distinct: std::collections::BTreeSet<&&str> = shown.iter().collect();
    assert_eq!(distinct.len(), 15, "{shown:?}");
    // No legend label runs into the next entry's swatch, as laid out.
    for chart in [
        "gpu_kernel_type_breakdown",
        "temporal_breakdown",
        "idle_time_breakdown",
    ] {
        let fig = figure_of(&dom, chart);
        let entries: Vec<(f64, f64, f64)> = fig
            .split("class=\"legend-entry\"")
            .skip(1)
            .map(|g| {
                let read = |name: &str| -> f64 {
                    let at = g.find(name).unwrap() + name.len();
                    g[at..at + g[at..].find('"').unwrap()].parse().unwrap()
                };
                (
                    read("data-drawn-top=\""),
                    read("data-drawn-swatch-left=\""),
                    read("data-drawn-text-right=\""),
                )
            })
            .collect();
        assert!(!entries.is_empty(), "{chart}");
        for pair in entries.windows(2) {
            let ((top, _, right), (next_top, next_left, _)) = (pair[0], pair[1]);
            if top == next_top {
                assert!(right <= next_left - 2.0, "{chart}: {entries:?}");
            }
        }
    }
    // Each chart says which profiler steps it covers: the top kernels
    // every step, HTA's breakdowns without the last.
    assert!(kernels_fig.contains("the last included (ProfilerStep#551–#552)"));
    for chart in [
        "gpu_kernel_type_breakdown",
        "temporal_breakdown",
        "idle_time_breakdown",
    ] {
        assert!(
            figure_of(&dom, chart).contains("launched in the last profiler step (#552)"),
            "{chart}"
        );
    }
}

/// A compiler dump folder alone (a compile session of two kernels in the
/// real dumps' shapes, `xprof_testdata::llo_compile`) draws the
/// compiled-kernel section: a part per kernel, its numbers those of
/// `llo_kernels`, its bundle picture one lane per unit whose cells are
/// the rows of the compiler's per-bundle utilization file (read here from
/// its text), and a page that says no time was measured; the measured
/// kernel section is absent.
#[tokio::test]
async fn a_dump_folder_alone_draws_its_kernels_schedules() {
    use xprof_testdata::llo_compile::{KernelSpec, compile_session};
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("jf");
    let matmul = KernelSpec {
        spills: 1,
        ..KernelSpec::new("matmul_reduce.1", 16, 8)
    };
    let compile = compile_session(
        1_783_579_888_000_000_000,
        &[matmul, KernelSpec::new("softmax.2", 6, 12)],
    );
    compile.write_to(&folder).unwrap();
    let out = dir.path().join("dump.html");
    report_of(&folder, &out);
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("id=\"compiled-kernels\""), "no section");
    assert!(!html.contains("id=\"kernels\""), "a dump ran nothing");
    assert!(html.contains("there is no measured time here"));
    let section = &html[html.find("id=\"compiled-kernels\"").unwrap()..];
    for kernel in &compile.kernels {
        let part = kernel_part(section, kernel.hlo_op);
        // The compiler's per-bundle utilization file, read from its text.
        let (name, text) = compile
            .files
            .iter()
            .find(|(n, _)| {
                n.contains(&format!("-{}-", kernel.hlo_op))
                    && n.ends_with("-final_hlo-static-per-bundle-utilization.txt")
            })
            .unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let columns: Vec<&str> = lines[1].split(',').map(str::trim).collect();
        fn unit_of(c: &str) -> &str {
            match c {
                "VLOAD" => "VLD",
                "VLOAD:FILL" => "FILL",
                "VSTORE" => "VST",
                "VSTORE:SPILL" => "SPILL",
                other => other,
            }
        }
        let mut want: std::collections::BTreeMap<String, Vec<i64>> = Default::default();
        for row in lines[4..].iter().filter(|l| !l.trim().is_empty()) {
            for (c, v) in columns.iter().zip(row.split_whitespace()) {
                want.entry(unit_of(c).to_string())
                    .or_default()
                    .push(v.parse().unwrap());
            }
        }
        let picture = figure_of(part, "llo_dump_bundle_units");
        let lanes: std::collections::BTreeMap<String, Vec<i64>> = attrs(picture, "data-unit")
            .into_iter()
            .zip(attrs(picture, "data-used"))
            .map(|(u, used)| (u, used.split(' ').map(|x| x.parse().unwrap()).collect()))
            .collect();
        assert_eq!(lanes, want, "{name}");
        assert!(
            picture.contains(&format!("{}: {} bundles", kernel.hlo_op, kernel.bundles)),
            "{}",
            kernel.hlo_op
        );
    }
    // The summary row is llo_kernels' row.
    let rows = query_rows(
        &[&folder],
        "SELECT hlo_op, bundles, spill_slots FROM llo_kernels ORDER BY hlo_op",
    )
    .await;
    for r in &rows {
        let part = kernel_part(section, &s(r, "hlo_op"));
        let table = &part[part.find("data-table=\"llo_kernels\"").unwrap()..];
        let cells: Vec<String> = table
            .split("<td")
            .skip(1)
            .map(|c| {
                let c = &c[c.find('>').unwrap() + 1..];
                c[..c.find("</td>").unwrap()].to_string()
            })
            .collect();
        assert_eq!(cells[0], i(r, "bundles").to_string());
        assert_eq!(cells[7], i(r, "spill_slots").to_string());
    }
    if let Some(browser) = chromium() {
        let dom = dom_of(&browser, &out);
        assert!(dom.contains("data-errors=\"\""), "script errors");
    } else {
        assert!(std::env::var_os("XPROF_SQL_NO_BROWSER").is_some());
    }
}
