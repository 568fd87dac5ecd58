//! The `async_overlap` and `engine_concurrency` views against XProf
//! 2.24.2's `xprof analyze_async_overlap` (`<stem>.cli.analyze_async_overlap.json`,
//! made by tests/fixtures/make_view_expected.py with `--top_k=1000`, so
//! every window is listed): every window's times, exposure, ratio and
//! class, the unpaired count, each device's window source, and every
//! engine pair's concurrency. Fixtures: the synthetic TPU profiles (the
//! one made for this, and synthetic_tpu) and the real GPU captures, which
//! have no TPU op lines (XProf: `NO_DEVICE_TIMELINE_EVENTS`).

use crate::common;

use common::*;
use prost::Message;
use serde_json::Value;
use xprof_testdata::tpu_async_overlap_space;

const FIXTURES: [&str; 4] = [
    "tpu/synthetic_async_overlap",
    "tpu/synthetic_tpu",
    "gpu/jax_gpu",
    "gpu/jax_pallas",
];

/// The committed file is what the generator writes today
/// (`XPROF_SQL_BLESS=1` rewrites it; then remake XProf's answer).
#[test]
fn synthetic_async_overlap_fixture_is_the_generators_output() {
    assert_generated_fixture(
        "tpu/synthetic_async_overlap.xplane.pb",
        &tpu_async_overlap_space().encode_to_vec(),
        "tpu_async_overlap_space()",
        "tests/fixtures/tpu/README.md",
    );
}

fn xprof_answer(rel: &str) -> Value {
    let (dir, stem) = rel.split_once('/').unwrap();
    json_fixture(&format!(
        "{dir}/expected/{stem}.cli.analyze_async_overlap.json"
    ))
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

#[tokio::test]
async fn async_overlap_is_xprofs_analyze_async_overlap() {
    let mut windows_seen = 0;
    for rel in FIXTURES {
        let xprof = xprof_answer(rel);
        let path = fixture(&format!("{rel}.xplane.pb"));
        let rows = query_rows_with_nulls(
            &[&path],
            "SELECT * FROM async_overlap ORDER BY device_name, start_ps, name",
        )
        .await;
        if xprof["status"] == "NO_DEVICE_TIMELINE_EVENTS" {
            assert!(rows.is_empty(), "{rel}: {rows:?}");
            continue;
        }
        assert_eq!(xprof["status"], "OK", "{rel}");
        let (windows, unpaired): (Vec<&Row>, Vec<&Row>) =
            rows.iter().partition(|r| r["class"] != "unpaired");
        // Every window (top_k above their number).
        let key = |plane: &Value, name: &Value, start: i64| {
            (
                plane.as_str().unwrap().to_string(),
                name.as_str().unwrap().to_string(),
                start,
            )
        };
        let mut want: Vec<_> = xprof["top_exposed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                (
                    key(&w["plane"], &w["name"], int(&w["start_ps"])),
                    (
                        w["op"].as_str().unwrap().to_string(),
                        int(&w["span_ps"]),
                        int(&w["exposed_ps"]),
                        w["overlap_ratio"].as_f64().unwrap(),
                        w["class"].as_str().unwrap().to_string(),
                    ),
                )
            })
            .collect();
        let mut got: Vec<_> = windows
            .iter()
            .map(|r| {
                (
                    key(&r["device_name"], &r["name"], i(r, "start_ps")),
                    (
                        r["op"].as_str().unwrap().to_string(),
                        i(r, "span_ps"),
                        i(r, "exposed_ps"),
                        r["overlap_ratio"].as_f64().unwrap(),
                        r["class"].as_str().unwrap().to_string(),
                    ),
                )
            })
            .collect();
        want.sort_by(|a, b| a.0.cmp(&b.0));
        got.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            got.iter().map(|g| &g.0).collect::<Vec<_>>(),
            want.iter().map(|w| &w.0).collect::<Vec<_>>(),
            "{rel}: windows"
        );
        for (g, w) in got.iter().zip(&want) {
            let (go, gs, ge, gr, gc) = &g.1;
            let (wo, ws, we, wr, wc) = &w.1;
            assert_eq!((go, gs, ge, gc), (wo, ws, we, wc), "{rel} {:?}", g.0);
            assert!(
                (gr - wr).abs() <= 1e-12,
                "{rel} {:?}: ratio {gr} vs {wr}",
                g.0
            );
        }
        windows_seen += got.len();
        let summary = &xprof["summary"];
        assert_eq!(windows.len() as i64, int(&summary["count"]), "{rel}");
        assert_eq!(
            unpaired.len() as i64,
            int(&summary["unpaired_ops"]),
            "{rel}"
        );
        let total = |col: &str| windows.iter().map(|r| i(r, col)).sum::<i64>();
        assert_eq!(total("span_ps"), int(&summary["span_ps"]), "{rel}");
        assert_eq!(total("exposed_ps"), int(&summary["exposed_ps"]), "{rel}");
        for class in ["hidden", "partial", "exposed"] {
            let n = windows.iter().filter(|r| r["class"] == class).count() as i64;
            assert_eq!(n, int(&summary[class]), "{rel} {class}");
        }
        for (plane, p) in xprof["by_plane"].as_object().unwrap() {
            let sources: std::collections::BTreeSet<&str> = windows
                .iter()
                .filter(|r| r["device_name"] == plane.as_str())
                .map(|r| r["window_source"].as_str().unwrap())
                .collect();
            assert_eq!(
                sources.into_iter().collect::<Vec<_>>(),
                vec![p["window_source"].as_str().unwrap()],
                "{rel} {plane}"
            );
        }
    }
    // The TPU files hold windows of every class.
    assert!(windows_seen >= 17, "{windows_seen} windows");
}

/// An engine pair: chip, engine a (device, line) and its busy ps, engine
/// b and its busy ps, concurrent ps, concurrent ratio.
type Pair = (i64, (String, String), i64, (String, String), i64, i64, f64);

#[tokio::test]
async fn engine_concurrency_is_xprofs() {
    let mut pairs_seen = 0;
    for rel in FIXTURES {
        let xprof = xprof_answer(rel);
        let path = fixture(&format!("{rel}.xplane.pb"));
        let rows = query_rows(&[&path], "SELECT * FROM engine_concurrency").await;
        let mut want: Vec<Pair> = Vec::new();
        for chip in xprof["concurrency"].as_array().into_iter().flatten() {
            let busy: std::collections::HashMap<(String, String), i64> = chip["engines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    let plane = e["plane"].as_str().unwrap().to_string();
                    (
                        (plane, e["line"].as_str().unwrap().to_string()),
                        int(&e["busy_ps"]),
                    )
                })
                .collect();
            for p in chip["pairs"].as_array().unwrap() {
                let end = |e: &Value| {
                    (
                        e["plane"].as_str().unwrap().to_string(),
                        e["line"].as_str().unwrap().to_string(),
                    )
                };
                let (a, b) = (end(&p["a"]), end(&p["b"]));
                want.push((
                    int(&chip["chip"]),
                    a.clone(),
                    busy[&a],
                    b.clone(),
                    busy[&b],
                    int(&p["concurrent_ps"]),
                    p["concurrent_ratio"].as_f64().unwrap(),
                ));
            }
        }
        let mut got: Vec<Pair> = rows
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap().to_string();
                (
                    i(r, "chip"),
                    (s("a_device_name"), s("a_line_name")),
                    i(r, "a_busy_ps"),
                    (s("b_device_name"), s("b_line_name")),
                    i(r, "b_busy_ps"),
                    i(r, "concurrent_ps"),
                    r["concurrent_ratio"].as_f64().unwrap(),
                )
            })
            .collect();
        let order = |a: &Pair, b: &Pair| (a.0, &a.1, &a.3).cmp(&(b.0, &b.1, &b.3));
        want.sort_by(order);
        got.sort_by(order);
        assert_eq!(got.len(), want.len(), "{rel}: {got:?}\n{want:?}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(
                (g.0, &g.1, g.2, &g.3, g.4, g.5),
                (w.0, &w.1, w.2, &w.3, w.4, w.5),
                "{rel}"
            );
            assert!((g.6 - w.6).abs() <= 1e-12, "{rel}: {g:?} vs {w:?}");
        }
        pairs_seen += got.len();
    }
    assert!(pairs_seen >= 3, "{pairs_seen} engine pairs");
}
