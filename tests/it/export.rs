//! `xprof-sql export`: a SQL selection of events back onto a timeline.
//! The Chrome JSON it writes is read back by this project's own Chrome
//! reader and gives the selection's rows; the Perfetto file decodes with
//! the message definitions and its slices are the selection's; a million
//! events export in bounded memory.

use crate::common;

use std::collections::BTreeMap;
use std::process::Command;

use common::*;
use prost::Message;
use xprof_sql::query::export::perfetto::{self, TYPE_SLICE_BEGIN, TYPE_SLICE_END, Trace};
use xprof_sql::query::export::{ExportFormat, ExportOptions, export};
use xprof_sql::query::{OpenOptions, ProfileSession};

async fn open(paths: &[std::path::PathBuf]) -> ProfileSession {
    let mut s = ProfileSession::new();
    s.open(paths, &OpenOptions::default()).await.unwrap();
    s
}

/// (name, ts_ps from the first selected start, dur_ps) of every row of
/// `sql`, counted.
async fn slices(session: &ProfileSession, sql: &str) -> BTreeMap<(String, i64, i64), usize> {
    let rows = query_rows_of(session, sql).await;
    let mut out = BTreeMap::new();
    for r in rows {
        *out.entry((s(&r, "name"), i(&r, "ts"), i(&r, "dur")))
            .or_default() += 1;
    }
    out
}

async fn query_rows_of(session: &ProfileSession, sql: &str) -> Vec<Row> {
    let batches = session.collect(sql).await.unwrap();
    rows_of(&batches)
}

const SELECTION: &str = "SELECT * FROM events WHERE dur_ps > 0";

#[tokio::test]
async fn chrome_json_reads_back_as_the_selection() {
    let input = gpu_fixture("jax_gpu");
    let session = open(std::slice::from_ref(&input)).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("slice.json");
    let options = ExportOptions {
        format: ExportFormat::ChromeJson,
        counters: false,
    };
    let summary = export(&session, SELECTION, &out, &options).await.unwrap();
    let want = slices(
        &session,
        &format!(
            "WITH sel AS ({SELECTION}) SELECT name, ts_ps - (SELECT min(ts_ps) FROM sel) AS ts, dur_ps AS dur FROM sel"
        ),
    )
    .await;
    assert_eq!(summary.events as usize, want.values().sum::<usize>());
    assert!(summary.events > 100 && summary.flows > 0, "{summary:?}");

    // This project's Chrome reader: the same slices, times exact to the ps.
    let back = open(std::slice::from_ref(&out)).await;
    let got = slices(
        &back,
        "SELECT e.name, e.ts_ps - (SELECT min(ts_ps) FROM events) AS ts, e.dur_ps AS dur FROM events e \
         JOIN tracks t USING (trace_id, track_id) WHERE t.kind IN ('thread', 'stream')",
    )
    .await;
    assert_eq!(got, want);
    // Each slice on a track named after its own track (or an overflow
    // lane of it), under a process named after its device.
    let placed = query_rows_of(
        &back,
        "SELECT d.name AS device, t.name AS track, count(*) AS n FROM events e \
         JOIN tracks t USING (trace_id, track_id) JOIN devices d USING (trace_id, device_id) \
         WHERE t.kind IN ('thread', 'stream') GROUP BY 1, 2 ORDER BY 1, 2",
    )
    .await;
    let original = query_rows_of(
        &session,
        &format!(
            "SELECT d.name AS device, t.name AS track, count(*) AS n FROM ({SELECTION}) e \
             JOIN tracks t USING (trace_id, track_id) JOIN devices d USING (trace_id, device_id) \
             GROUP BY 1, 2 ORDER BY 1, 2"
        ),
    )
    .await;
    let mut merged: BTreeMap<(String, String), i64> = BTreeMap::new();
    for r in &placed {
        let track = s(r, "track");
        let base = track
            .split(" (overlap ")
            .next()
            .unwrap_or(&track)
            .to_string();
        *merged.entry((s(r, "device"), base)).or_default() += i(r, "n");
    }
    let original: BTreeMap<(String, String), i64> = original
        .iter()
        .map(|r| ((s(r, "device"), s(r, "track")), i(r, "n")))
        .collect();
    assert_eq!(merged, original);
    // Args: every int arg of the selection, by key and value.
    let args = |sql: &str| sql.to_string();
    let want_args = query_rows_of(
        &session,
        &args(&format!(
            "SELECT a.key, count(*) AS n, sum(a.int_value) AS total FROM ({SELECTION}) e \
             JOIN event_args a USING (trace_id, event_id) WHERE a.int_value IS NOT NULL \
             GROUP BY a.key ORDER BY a.key"
        )),
    )
    .await;
    let got_args = query_rows_of(
        &back,
        &format!(
            "SELECT a.key, count(*) AS n, sum(a.int_value) AS total FROM event_args a \
             WHERE a.int_value IS NOT NULL AND a.key IN ({}) GROUP BY a.key ORDER BY a.key",
            want_args
                .iter()
                .map(|r| format!("'{}'", s(r, "key")))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .await;
    assert!(!want_args.is_empty());
    assert_eq!(got_args, want_args);
    // Flows between selected slices come back as flows.
    let flows = query_rows_of(
        &back,
        "SELECT count(*) AS n FROM flows WHERE src_event_id IS NOT NULL AND dst_event_id IS NOT NULL",
    )
    .await;
    assert_eq!(i(&flows[0], "n") as u64, summary.flows);
}

#[tokio::test]
async fn perfetto_slices_are_the_selection() {
    let input = cpu_fixture("jax_cpu_mlp_5steps_w128");
    let session = open(std::slice::from_ref(&input)).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("slice.pftrace");
    let selection = "SELECT trace_id, event_id FROM events WHERE dur_ps > 0";
    let options = ExportOptions {
        format: ExportFormat::Perfetto,
        counters: true,
    };
    let summary = export(&session, selection, &out, &options).await.unwrap();
    let trace = Trace::decode(std::fs::read(&out).unwrap().as_slice()).unwrap();
    // Replay begin/end per track.
    let mut open_slices: BTreeMap<u64, Vec<(String, u64)>> = BTreeMap::new();
    let mut got: BTreeMap<(String, u64, u64), usize> = BTreeMap::new();
    let mut counters = 0;
    for p in &trace.packet {
        let Some(e) = &p.track_event else { continue };
        let ts = p.timestamp.unwrap();
        let track = e.track_uuid.unwrap();
        match e.r#type {
            Some(TYPE_SLICE_BEGIN) => open_slices
                .entry(track)
                .or_default()
                .push((e.name.clone().unwrap(), ts)),
            Some(TYPE_SLICE_END) => {
                let (name, begin) = open_slices.get_mut(&track).unwrap().pop().unwrap();
                assert!(ts >= begin);
                *got.entry((name, begin, ts)).or_default() += 1;
            }
            Some(perfetto::TYPE_COUNTER) => counters += 1,
            other => panic!("unexpected event type {other:?}"),
        }
    }
    assert!(open_slices.values().all(Vec::is_empty), "every slice ends");
    let rows = query_rows_of(
        &session,
        "SELECT name, ts_ps, dur_ps FROM events WHERE dur_ps > 0",
    )
    .await;
    let mut want: BTreeMap<(String, u64, u64), usize> = BTreeMap::new();
    for r in &rows {
        let (ts, dur) = (i(r, "ts_ps"), i(r, "dur_ps"));
        let key = (
            s(r, "name"),
            perfetto::ps_to_ns(ts),
            perfetto::ps_to_ns(ts + dur),
        );
        *want.entry(key).or_default() += 1;
    }
    assert_eq!(got, want);
    assert_eq!(summary.events as usize, rows.len());
    assert_eq!(counters as u64, summary.counter_samples);
    // The track descriptors name every lane and device.
    let names: Vec<String> = trace
        .packet
        .iter()
        .filter_map(|p| p.track_descriptor.as_ref()?.name.clone())
        .collect();
    assert!(names.iter().any(|n| n == "/host:CPU"), "{names:?}");
    assert_eq!(
        trace
            .packet
            .iter()
            .filter(|p| p
                .track_descriptor
                .as_ref()
                .is_some_and(|d| d.thread.is_some()))
            .count() as u64,
        summary.tracks
    );
}

#[tokio::test]
async fn a_selection_without_event_ids_is_refused_and_writes_nothing() {
    let session = open(&[cpu_fixture("jax_cpu_mlp_5steps_w128")]).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.json");
    let options = ExportOptions {
        format: ExportFormat::ChromeJson,
        counters: false,
    };
    let err = export(
        &session,
        "SELECT name, count(*) FROM events GROUP BY name",
        &out,
        &options,
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("event_id"), "{err}");
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "no file left"
    );
}

#[test]
fn a_million_events_export_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("large.xplane.pb");
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
        xprof_testdata::write_large_tpu(&mut w, 48 << 20, 2000).unwrap();
    }
    let bin = env!("CARGO_BIN_EXE_xprof-sql");
    let ds = dir.path().join("ds");
    let status = Command::new(bin)
        .args([
            "convert",
            input.to_str().unwrap(),
            "-o",
            ds.to_str().unwrap(),
            "--quiet",
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let out = dir.path().join("slice.json");
    let (code, peak_kib) = crate::common::peak_rss_kib(
        bin,
        &[
            "export",
            ds.to_str().unwrap(),
            "-e",
            "SELECT trace_id, event_id FROM events WHERE dur_ps > 0 LIMIT 1000000",
            "-o",
            out.to_str().unwrap(),
            "--memory-limit",
            "256M",
        ],
    );
    assert_eq!(code, 0);
    let written = std::fs::metadata(&out).unwrap().len();
    // A million slices of ~100 bytes each went out; the process held a
    // small part of them (the figure is in benches/README.md).
    assert!(written > 80_000_000, "{written} bytes");
    eprintln!(
        "export of 1 M events: {written} bytes, peak RSS {} MiB",
        peak_kib / 1024
    );
    assert!(peak_kib < 256 * 1024, "peak RSS {} MiB", peak_kib / 1024);
}

/// A kernel-profiling capture's region entries exported to Perfetto: one
/// slice per selected entry, of its measured `dur_ps` (not the marker's
/// zero length), named by its region with the region's occupancy and
/// source line as args, each nested (depth 1) under a slice of its kernel
/// execution on the markers' track.
#[tokio::test]
async fn region_entries_export_as_slices_nested_in_their_kernel() {
    let input = fixture("tpu/synthetic_capture.xplane.pb");
    let session = open(std::slice::from_ref(&input)).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.pftrace");
    let options = ExportOptions {
        format: ExportFormat::Perfetto,
        counters: false,
    };
    let selection = "SELECT trace_id, event_id FROM llo_region_entries";
    let summary = export(&session, selection, &out, &options).await.unwrap();
    let entries = query_rows_of(
        &session,
        "SELECT e.region_id, e.ts_ps, e.dur_ps, e.kernel_event_id, p.name \
         FROM llo_region_entries e LEFT JOIN llo_region_profile p \
         ON p.trace_id = e.trace_id AND p.hlo_op = e.hlo_op AND p.region_id = e.region_id",
    )
    .await;
    let kernels = query_rows_of(
        &session,
        "SELECT DISTINCT k.ts_ps, k.dur_ps, k.display_name AS op FROM llo_region_entries e \
         JOIN events k ON k.trace_id = e.trace_id AND k.event_id = e.kernel_event_id",
    )
    .await;
    assert_eq!(summary.events as usize, entries.len());
    assert_eq!(summary.region_kernels as usize, kernels.len());
    assert!(kernels.len() >= 2 && entries.len() > 20);
    let trace = Trace::decode(std::fs::read(&out).unwrap().as_slice()).unwrap();
    // Replay begin/end per track, keeping each slice's depth and args.
    let mut open_slices: BTreeMap<u64, Vec<(String, u64)>> = BTreeMap::new();
    let mut got: BTreeMap<(usize, String, u64, u64), usize> = BTreeMap::new();
    let mut arg_names: std::collections::BTreeSet<String> = Default::default();
    for p in &trace.packet {
        let Some(e) = &p.track_event else { continue };
        let ts = p.timestamp.unwrap();
        let track = e.track_uuid.unwrap();
        match e.r#type {
            Some(TYPE_SLICE_BEGIN) => {
                let depth = open_slices.get(&track).map_or(0, Vec::len);
                if depth == 1 {
                    arg_names.extend(e.debug_annotations.iter().filter_map(|a| a.name.clone()));
                }
                open_slices
                    .entry(track)
                    .or_default()
                    .push((e.name.clone().unwrap(), ts))
            }
            Some(TYPE_SLICE_END) => {
                let stack = open_slices.get_mut(&track).unwrap();
                let (name, begin) = stack.pop().unwrap();
                *got.entry((stack.len(), name, begin, ts)).or_default() += 1;
            }
            other => panic!("unexpected event type {other:?}"),
        }
    }
    assert!(open_slices.values().all(Vec::is_empty), "every slice ends");
    let mut want: BTreeMap<(usize, String, u64, u64), usize> = BTreeMap::new();
    for r in &kernels {
        let (ts, dur) = (i(r, "ts_ps"), i(r, "dur_ps"));
        let key = (
            0,
            s(r, "op"),
            perfetto::ps_to_ns(ts),
            perfetto::ps_to_ns(ts + dur),
        );
        *want.entry(key).or_default() += 1;
    }
    for r in &entries {
        let (ts, dur) = (i(r, "ts_ps"), i(r, "dur_ps"));
        assert!(dur > 0);
        let key = (
            1,
            format!("R{} {}", i(r, "region_id"), s(r, "name")),
            perfetto::ps_to_ns(ts),
            perfetto::ps_to_ns(ts + dur),
        );
        *want.entry(key).or_default() += 1;
    }
    assert_eq!(got, want);
    for arg in [
        "region_id",
        "region_name",
        "source_line",
        "mxu_occupancy_pct",
        "segment_start_bundle",
        "mxu_nested_occupancy_pct",
    ] {
        assert!(arg_names.contains(arg), "{arg} in {arg_names:?}");
    }
}

/// `--counters`: every counter sample of the selected events' devices
/// within the selection's span is in the Perfetto file with its name, time
/// and value, and nothing else is. The expected samples are filtered here
/// from the whole `counters` and `events` tables, not by the export's SQL.
#[tokio::test]
async fn counter_values_export_as_the_counters_table_holds_them() {
    let input = fixture("tpu/synthetic_capture.xplane.pb");
    let session = open(std::slice::from_ref(&input)).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.pftrace");
    let options = ExportOptions {
        format: ExportFormat::Perfetto,
        counters: true,
    };
    let selection = "SELECT trace_id, event_id FROM events WHERE dur_ps > 0";
    let summary = export(&session, selection, &out, &options).await.unwrap();
    // The selection's devices and span, then the counters inside them.
    let events = query_rows_of(
        &session,
        "SELECT t.device_id, e.ts_ps, e.dur_ps FROM events e \
         JOIN tracks t USING (trace_id, track_id) WHERE e.dur_ps > 0",
    )
    .await;
    let devices: std::collections::BTreeSet<i64> =
        events.iter().map(|r| i(r, "device_id")).collect();
    let lo = events.iter().map(|r| i(r, "ts_ps")).min().unwrap();
    let hi = events
        .iter()
        .map(|r| i(r, "ts_ps") + i(r, "dur_ps"))
        .max()
        .unwrap();
    // Values read from Arrow as they are (JSON text does not round-trip
    // every double's last bit).
    let counters = session
        .collect(
            "SELECT CAST(t.device_id AS BIGINT) AS device_id, CAST(c.name AS VARCHAR) AS name, \
             c.ts_ps, c.value FROM counters c JOIN tracks t USING (trace_id, track_id)",
        )
        .await
        .unwrap();
    let mut want: BTreeMap<(String, u64, u64), usize> = BTreeMap::new();
    for b in &counters {
        use arrow::array::AsArray;
        use arrow::datatypes::{Float64Type, Int64Type};
        let device = b.column(0).as_primitive::<Int64Type>();
        let name = arrow::compute::cast(b.column(1), &arrow::datatypes::DataType::Utf8).unwrap();
        let name = name.as_string::<i32>();
        let ts = b.column(2).as_primitive::<Int64Type>();
        let value = b.column(3).as_primitive::<Float64Type>();
        for k in 0..b.num_rows() {
            if devices.contains(&device.value(k)) && (lo..=hi).contains(&ts.value(k)) {
                *want
                    .entry((
                        name.value(k).to_string(),
                        perfetto::ps_to_ns(ts.value(k)),
                        value.value(k).to_bits(),
                    ))
                    .or_default() += 1;
            }
        }
    }
    assert!(want.values().sum::<usize>() > 100, "{want:?}");
    let trace = Trace::decode(std::fs::read(&out).unwrap().as_slice()).unwrap();
    let names: BTreeMap<u64, String> = trace
        .packet
        .iter()
        .filter_map(|p| {
            let d = p.track_descriptor.as_ref()?;
            d.counter.as_ref()?;
            Some((d.uuid?, d.name.clone()?))
        })
        .collect();
    let mut got: BTreeMap<(String, u64, u64), usize> = BTreeMap::new();
    for p in &trace.packet {
        let Some(e) = &p.track_event else { continue };
        if e.r#type != Some(perfetto::TYPE_COUNTER) {
            continue;
        }
        let name = names[&e.track_uuid.unwrap()].clone();
        let value = e.double_counter_value.unwrap();
        *got.entry((name, p.timestamp.unwrap(), value.to_bits()))
            .or_default() += 1;
    }
    assert_eq!(got, want);
    assert_eq!(
        summary.counter_samples as usize,
        want.values().sum::<usize>()
    );
}

/// A compiled kernel's schedule (a dump's `llo_dump_ops`, in the real
/// dumps' shapes) exported for Perfetto and decoded with Perfetto's
/// messages: one track per unit slot (`MXU0`, `VALU1`, …), one slice per
/// op at its bundle (1 bundle = 1 ns, named in the kernel's process), the
/// slices of each unit the ops of `llo_dump_ops` of that unit, and a flow
/// for each use of a value defined by an earlier op, found here from the
/// op texts of the dump file itself.
#[tokio::test]
async fn a_kernels_schedule_exports_as_slot_tracks_with_dependency_flows() {
    use std::collections::{BTreeSet, HashMap};
    use xprof_testdata::llo_compile::{KernelSpec, compile_session};
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("jf");
    let compile = compile_session(
        1_783_579_888_000_000_000,
        &[KernelSpec {
            spills: 1,
            ..KernelSpec::new("matmul_reduce.1", 8, 4)
        }],
    );
    compile.write_to(&folder).unwrap();
    let session = open(std::slice::from_ref(&folder)).await;
    let out = dir.path().join("schedule.pftrace");
    let options = ExportOptions {
        format: ExportFormat::Perfetto,
        counters: false,
    };
    let summary = export(
        &session,
        "SELECT * FROM llo_dump_ops WHERE hlo_op = 'matmul_reduce.1'",
        &out,
        &options,
    )
    .await
    .unwrap();
    let trace = Trace::decode(std::fs::read(&out).unwrap().as_slice()).unwrap();
    let mut track_names: HashMap<u64, String> = HashMap::new();
    let mut process = None;
    for p in &trace.packet {
        if let Some(d) = &p.track_descriptor {
            if d.thread.is_some() {
                track_names.insert(d.uuid.unwrap(), d.name.clone().unwrap());
            } else {
                process = d.name.clone();
            }
        }
    }
    assert_eq!(
        process.as_deref(),
        Some("matmul_reduce.1 schedule (1 bundle = 1 ns)")
    );
    // Slices: (slot, op name, bundle); flows by id, out and in.
    let mut slices = Vec::new();
    let mut out_ids: HashMap<u64, (i64, String)> = HashMap::new();
    let mut in_ids: HashMap<u64, (i64, String)> = HashMap::new();
    for p in &trace.packet {
        let Some(e) = &p.track_event else { continue };
        if e.r#type != Some(TYPE_SLICE_BEGIN) {
            continue;
        }
        let slot = track_names[&e.track_uuid.unwrap()].clone();
        let bundle = p.timestamp.unwrap() as i64; // 1 bundle = 1 ns
        let text = e
            .debug_annotations
            .iter()
            .find(|a| a.name.as_deref() == Some("text"))
            .and_then(|a| a.string_value.clone())
            .unwrap();
        for id in &e.flow_ids {
            out_ids.insert(*id, (bundle, text.clone()));
        }
        for id in &e.terminating_flow_ids {
            in_ids.insert(*id, (bundle, text.clone()));
        }
        slices.push((slot, e.name.clone().unwrap(), bundle, text));
    }
    // Every op of the dump file is a slice at its bundle, on a slot of its
    // unit; per unit, the dump's ops of that unit.
    let ops = query_rows_of(
        &session,
        "SELECT address, opcode, unit, text FROM llo_dump_ops ORDER BY address, position",
    )
    .await;
    assert_eq!(slices.len(), ops.len());
    assert_eq!(summary.events as usize, ops.len());
    let mut want: BTreeSet<(String, i64, String)> = BTreeSet::new();
    for r in &ops {
        want.insert((s(r, "opcode"), i(r, "address"), s(r, "text")));
    }
    let got: BTreeSet<(String, i64, String)> = slices
        .iter()
        .map(|(_, name, bundle, text)| (name.clone(), *bundle, text.clone()))
        .collect();
    assert_eq!(got, want);
    for (slot, _, bundle, text) in &slices {
        let unit = ops
            .iter()
            .find(|r| i(r, "address") == *bundle && s(r, "text") == *text)
            .map(|r| s(r, "unit"))
            .unwrap();
        assert!(slot.starts_with(&unit), "{slot} holds a {unit} op");
    }
    let slots: BTreeSet<&str> = slices.iter().map(|(s, _, _, _)| s.as_str()).collect();
    for slot in [
        "MXU0", "MXU1", "VALU0", "VLD0", "VLD1", "VST0", "SALU0", "XLU0", "XLU1",
    ] {
        assert!(slots.contains(slot), "{slot} in {slots:?}");
    }
    // No two ops share a slot in one bundle.
    let mut taken = BTreeSet::new();
    for (slot, _, bundle, _) in &slices {
        if slot != "PSEUDO" {
            assert!(
                taken.insert((slot.clone(), *bundle)),
                "{slot} twice in {bundle}"
            );
        }
    }
    // Flows: from the dump file's text, each register an op reads whose
    // value an earlier op (or one before it in its bundle) defined.
    let (name, text) = compile
        .files
        .iter()
        .find(|(n, _)| n.ends_with("-final_bundles.txt"))
        .unwrap();
    let mut defined: HashMap<String, (i64, String)> = HashMap::new();
    let mut want_flows: BTreeSet<((i64, String), (i64, String))> = BTreeSet::new();
    for line in text.lines() {
        let Some((addr, rest)) = line.split_once(':') else {
            continue;
        };
        let addr = addr.split_whitespace().next().unwrap_or("");
        let Ok(bundle) = (if let Some(hex) = addr.strip_prefix("0x") {
            i64::from_str_radix(hex, 16)
        } else {
            addr.parse::<i64>()
        }) else {
            continue;
        };
        let Some(open) = rest.find('{') else { continue };
        let close = rest.rfind('}').unwrap();
        for op in rest[open + 1..close]
            .split(";;")
            .map(str::trim)
            .filter(|o| !o.is_empty())
        {
            let (result, operands) = match op.split_once(" = ") {
                Some((r, o)) if r.starts_with('%') => (Some(r.split('_').next().unwrap()), o),
                _ => (None, op),
            };
            for token in
                operands.split(|c: char| !(c.is_ascii_alphanumeric() || c == '%' || c == '_'))
            {
                if !token.starts_with('%') || token.len() < 2 {
                    continue;
                }
                let value = token.split('_').next().unwrap();
                if Some(value) == result {
                    continue;
                }
                if let Some(def) = defined.get(value) {
                    want_flows.insert((def.clone(), (bundle, op.to_string())));
                }
            }
            if let Some(r) = result {
                defined.insert(r.to_string(), (bundle, op.to_string()));
            }
        }
    }
    assert!(want_flows.len() > 10, "{name}: {}", want_flows.len());
    let got_flows: BTreeSet<((i64, String), (i64, String))> = out_ids
        .iter()
        .map(|(id, from)| (from.clone(), in_ids[id].clone()))
        .collect();
    assert_eq!(
        out_ids.len(),
        in_ids.len(),
        "each flow leaves one op and ends at one"
    );
    assert_eq!(got_flows, want_flows);
    assert_eq!(summary.flows as usize, want_flows.len());
}
