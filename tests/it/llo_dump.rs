//! The LLO compiler dump's final bundles (`…-final_bundles.txt`), read
//! line shape by line shape as `shared/formats/tpu_kernel_profiling_capture.md`
//! §9.3 describes them, and hostile edits of the synthetic dump: each
//! either reads with a converter warning naming the file, line and byte
//! offset, or keeps its bundle with the raw text; none fails the file or
//! merges two bundles.

use crate::common::*;
use std::path::{Path, PathBuf};

const NAME: &str = "1783580667000000000-matmul_optimized.1-124-final_bundles.txt";

const KEY: &str = "= control target key start\nLH: loop header\nLB: loop body\nLE: loop exit\n\
PB: predicated region body\nPF: predicated region fallthrough\nCT: control target\n\
= control target key end\n\n";

/// Writes `text` as a final-bundles dump in a fresh folder.
fn dump_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(NAME);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// The synthetic dump's final bundles as the generator writes them.
fn synthetic_final_bundles() -> String {
    let truth = truth();
    let dump = xprof_testdata::llo_dump::dump_folder(&truth);
    dump.files
        .into_iter()
        .find(|(n, _)| n.ends_with("-final_bundles.txt"))
        .unwrap()
        .1
}

fn truth() -> xprof_testdata::llo_capture::CaptureTruth {
    xprof_testdata::llo_capture::capture_space_bytes(&Default::default()).1
}

fn rows(path: &Path, sql: &str) -> Vec<Row> {
    tokio_run(query_rows_with_nulls(&[path], sql))
}

fn bundles(path: &Path) -> Vec<Row> {
    rows(
        path,
        "SELECT address, line, tag, ops, region_id, regions_started, regions_ended, \
         regions_empty, comment, unread_text FROM llo_dump_bundles",
    )
}

fn warnings(path: &Path) -> Vec<String> {
    let r = rows(path, "SELECT unnest(converter_warnings) AS w FROM traces");
    r.iter().map(|r| s(r, "w")).collect()
}

fn list(r: &Row, k: &str) -> Vec<i64> {
    r[k].as_array()
        .unwrap_or_else(|| panic!("{k} in {r:?}"))
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect()
}

fn opt_i(r: &Row, k: &str) -> Option<i64> {
    r[k].as_i64()
}

/// The line a real v6e dump failed on: a PF bundle whose comment holds an
/// empty region, a one-bundle region and two nested starts joined by
/// ` :: `. Around it, a `{}` bundle, an op whose text holds braces, a
/// bundle spread over three physical lines and the entry and exit notes.
#[test]
fn the_real_pf_line_and_every_line_shape_read() {
    let text = format!(
        "{KEY}     0   :  {{ %s1_s0 = inlined_call_operand.hbm [shape: f32[8,128], index: 0, kind: input, shape index: {{}}] }} /* entry bundle: %matmul_optimized.1 = custom-call(%p0) */\n\
         \x20  0x1 LB: > {{ %s2_s1 = sadd.s32 1, %s1_s0 }} /* Start region 28 */\n\
         \x20  0x2   : > {{}} /* End region 28 */\n\
         \x20 0x565 PF: > {{ %p11070_p1 = scmp.le.s32.totalorder %s12883_s24, 0 }} /* Start/End empty region 29 :: Start region 30 :: End region 30 :: Start region 31 :: Start region 32 */\n\
         \x20 0x566   : > {{ %90 = shalt.err (!%p5_p1) /* BoundsCheck 0 [deref of %s7] for %v9 = vld [vmem:[%s7] sm:$0xff] /*x=*/1\nhlo: matmul_optimized.1\n */  ;;  %v3_v1 = vld [vmem:[#allocation2 + $0x10] sm:$0xff] }}\n\
         \x20 0x567   :  {{ vst [vmem:[#allocation2] sm:$0xff] %v3_v1 }} /* End region 32 :: End region 31 :: exit bundle: %matmul_optimized.1 */\n"
    );
    let (_dir, path) = dump_file(&text);
    assert_eq!(warnings(&path), Vec::<String>::new());
    let b = bundles(&path);
    let addresses: Vec<Option<i64>> = b.iter().map(|r| opt_i(r, "address")).collect();
    assert_eq!(addresses, [0, 1, 2, 0x565, 0x566, 0x567].map(Some).to_vec());
    let pf = &b[3];
    assert_eq!(s(pf, "tag"), "PF");
    assert_eq!(i(pf, "ops"), 1);
    assert_eq!(list(pf, "regions_empty"), [29]);
    assert_eq!(list(pf, "regions_started"), [30, 31, 32]);
    assert_eq!(list(pf, "regions_ended"), [30]);
    assert_eq!(i(pf, "region_id"), 32);
    assert_eq!(i(pf, "line"), 13);
    // The `{}` bundle, the three-line bundle and the one after it.
    assert_eq!(i(&b[2], "ops"), 0);
    assert_eq!(i(&b[2], "region_id"), 28);
    assert_eq!(i(&b[4], "ops"), 2);
    assert_eq!(i(&b[4], "region_id"), 32);
    assert_eq!(i(&b[5], "line"), 17);
    assert_eq!(list(&b[5], "regions_ended"), [32, 31]);
    assert!(b.iter().all(|r| r["unread_text"].is_null()));
    let ops = rows(
        &path,
        "SELECT address, position, opcode, unit FROM llo_dump_ops ORDER BY address, position",
    );
    let got: Vec<(i64, String)> = ops
        .iter()
        .map(|r| (i(r, "address"), s(r, "opcode")))
        .collect();
    let want: Vec<(i64, String)> = [
        (0, "inlined_call_operand.hbm"),
        (1, "sadd.s32"),
        (0x565, "scmp.le.s32.totalorder"),
        (0x566, "shalt.err"),
        (0x566, "vld"),
        (0x567, "vst"),
    ]
    .map(|(a, o)| (a, o.to_string()))
    .to_vec();
    assert_eq!(got, want);
}

/// The synthetic dump writes every tag of the key block, `Start/End empty
/// region N` and region events joined by ` :: `; each reads as written.
#[test]
fn the_synthetic_dump_writes_every_tag_and_empty_regions() {
    let truth = truth();
    let d = xprof_testdata::llo_dump::dump_folder(&truth);
    let (_dir, path) = dump_file(&synthetic_final_bundles());
    assert_eq!(warnings(&path), Vec::<String>::new());
    let b = rows(
        &path,
        "SELECT address, tag, regions_empty, comment FROM llo_dump_bundles ORDER BY address",
    );
    let tags: std::collections::BTreeSet<String> = b
        .iter()
        .filter_map(|r| r["tag"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        tags,
        ["CT", "LB", "LE", "LH", "PB", "PF"]
            .map(String::from)
            .into_iter()
            .collect()
    );
    let mut empties = 0;
    for (r, want) in b.iter().zip(&d.bundles) {
        let want_empty: Vec<i64> = want.empty.iter().map(|x| *x as i64).collect();
        assert_eq!(list(r, "regions_empty"), want_empty, "{r:?}");
        assert_eq!(r["tag"].as_str(), want.tag, "{r:?}");
        empties += want_empty.len();
    }
    // 26, 29, 30, 33 and 68 have no bundle of their own.
    assert_eq!(empties, 5);
    assert!(
        b.iter()
            .any(|r| r["comment"].as_str().is_some_and(|c| c.contains(
                "Start/End empty region 29 :: Start/End empty region 30 :: Start region 31"
            ))),
        "the PF bundle of region 31 carries the two empty regions before it"
    );
}

/// `0x10` changed to `0x2`: the rows come out in address order (the
/// table's declared order, which DataFusion trusts) with a warning naming
/// the file, the line and the byte offset, and `line` keeps the file's
/// order.
#[test]
fn a_bundle_address_going_backwards_is_sorted_with_a_warning() {
    let text = synthetic_final_bundles();
    let (n, at, old) = text
        .split_inclusive('\n')
        .scan(0usize, |at, l| {
            let here = *at;
            *at += l.len();
            Some(here)
        })
        .zip(text.lines())
        .enumerate()
        .find(|(_, (_, l))| l.starts_with("  0x10 "))
        .map(|(n, (at, l))| (n + 1, at, l.to_string()))
        .unwrap();
    let edited = text.replacen(&old, &old.replacen("  0x10", "   0x2", 1), 1);
    let (_dir, path) = dump_file(&edited);
    let w = warnings(&path);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].contains(NAME), "{w:?}");
    assert!(w[0].contains(&format!("line {n} (byte {at})")), "{w:?}");
    assert!(w[0].contains("0x2 comes after 0xf"), "{w:?}");
    // Now two bundles have address 0x2: both kept, and said so.
    assert!(w[1].contains(&format!("line {n} (byte {at})")), "{w:?}");
    assert!(
        w[1].contains("bundle address 0x2 is also the address of the bundle on line"),
        "{w:?}"
    );
    let b = rows(&path, "SELECT address, line FROM llo_dump_bundles");
    assert_eq!(b.len(), 210);
    let addresses: Vec<i64> = b.iter().map(|r| i(r, "address")).collect();
    assert!(addresses.windows(2).all(|w| w[0] <= w[1]), "{addresses:?}");
    let twos: Vec<i64> = b
        .iter()
        .filter(|r| i(r, "address") == 2)
        .map(|r| i(r, "line"))
        .collect();
    assert_eq!(twos.len(), 2);
    assert!(twos.contains(&(n as i64)), "{twos:?}");
    // The ops follow their bundles: one ops row set per address, in order.
    let ops = rows(&path, "SELECT address FROM llo_dump_ops");
    let op_addresses: Vec<i64> = ops.iter().map(|r| i(r, "address")).collect();
    assert!(op_addresses.windows(2).all(|w| w[0] <= w[1]));
}

/// An address past 64 bits is a bundle of its own with a NULL address
/// and its raw text, never merged into the bundle before it.
#[test]
fn an_address_past_64_bits_keeps_its_bundle_and_its_neighbour() {
    let text = synthetic_final_bundles();
    let old = text.lines().find(|l| l.starts_with("  0x10 ")).unwrap();
    let edited = text.replacen(old, &old.replacen("  0x10", "0xffffffffffffffffff", 1), 1);
    let (_dir, path) = dump_file(&edited);
    let w = warnings(&path);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("0xffffffffffffffffff is above 2^63 - 1"),
        "{w:?}"
    );
    let b = bundles(&path);
    assert_eq!(b.len(), 210);
    let unread: Vec<&Row> = b.iter().filter(|r| r["address"].is_null()).collect();
    assert_eq!(unread.len(), 1);
    assert!(unread[0]["ops"].is_null());
    assert!(s(unread[0], "unread_text").starts_with("0xffffffffffffffffff"));
    // The bundle before it keeps its own ops, as the generator wrote them.
    let truth = truth();
    let d = xprof_testdata::llo_dump::dump_folder(&truth);
    let before = b.iter().find(|r| opt_i(r, "address") == Some(0xf)).unwrap();
    assert_eq!(i(before, "ops") as usize, d.bundles[0xf].ops.len());
    // The NULL address sorts last, as the table's order declares.
    assert!(b.last().unwrap()["address"].is_null());
}

/// A bundle whose ops do not close stays, with its raw text, and the rest
/// of the file reads.
#[test]
fn an_unreadable_bundle_is_kept_with_its_text_and_a_warning() {
    let text = format!(
        "{KEY}     0   :  {{ %s1_s0 = sadd.s32 1, %s1_s0 }}\n\
         \x20  0x1   : > {{ %v2_v1 = vld [vmem:[#allocation2] sm:$0xff]\n\
         \x20  0x2   : > {{ %s3_s1 = sadd.s32 1, %s1_s0 }}\n"
    );
    let (_dir, path) = dump_file(&text);
    let w = warnings(&path);
    let offset = text.find("   0x1").unwrap();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains(NAME) && w[0].contains(&format!("line 11 (byte {offset}): bundle not read")),
        "{w:?}"
    );
    let b = bundles(&path);
    assert_eq!(b.len(), 3);
    assert!(b[1]["ops"].is_null(), "{b:?}");
    assert_eq!(i(&b[1], "address"), 1);
    assert!(s(&b[1], "unread_text").contains("vld [vmem:[#allocation2]"));
    assert_eq!(i(&b[2], "ops"), 1);
    let ops = rows(&path, "SELECT address FROM llo_dump_ops ORDER BY address");
    assert_eq!(
        ops.iter().map(|r| i(r, "address")).collect::<Vec<_>>(),
        [0, 2]
    );
}

/// Region comments out of order: an End before its Start, an End with no
/// Start and a Start never ended are each warned about, and the raw
/// events stay in the rows.
#[test]
fn region_events_out_of_order_are_kept_and_warned_about() {
    let text = format!(
        "{KEY}     0   :  {{}} /* End region 5 */\n\
         \x20  0x1   :  {{}} /* Start region 5 */\n\
         \x20  0x2   :  {{}} /* End region 6 :: Start region 7 */\n\
         \x20  0x3   :  {{}} /* End region 5 */\n"
    );
    let (_dir, path) = dump_file(&text);
    let w = warnings(&path).join("\n");
    assert!(
        w.contains(&format!(
            "line 10 (byte {}): End region 5 with no open",
            KEY.len()
        )),
        "{w}"
    );
    assert!(w.contains("line 12 ("), "{w}");
    assert!(w.contains("End region 6 with no open"), "{w}");
    assert!(w.contains("Start region 7 is never ended"), "{w}");
    assert_eq!(w.lines().count(), 3, "{w}");
    let b = bundles(&path);
    assert_eq!(list(&b[0], "regions_ended"), [5]);
    assert_eq!(list(&b[2], "regions_ended"), [6]);
    assert_eq!(list(&b[2], "regions_started"), [7]);
    assert_eq!(i(&b[2], "region_id"), 7);
    assert_eq!(i(&b[1], "region_id"), 5);
}

/// Many bad lines give the first twenty warnings in full and one count of
/// the rest, not thousands of lines.
#[test]
fn many_bad_lines_give_twenty_warnings_and_a_count() {
    let mut text = KEY.to_string();
    for a in 0..30 {
        text.push_str(&format!(
            "{:>6}   :  {{}} /* End region {a} */\n",
            format!("{a:#x}")
        ));
    }
    let (_dir, path) = dump_file(&text);
    let w = warnings(&path);
    assert_eq!(w.len(), 21, "{w:?}");
    assert!(w[20].ends_with("10 more warnings like these"), "{w:?}");
    assert_eq!(bundles(&path).len(), 30);
}

/// An op's unit adds up to the compiler's own count, bundle by bundle.
/// The dump is synthetic (no real dump can be shared): its ops have the
/// shapes of the real dumps (facts sheet §9.1, §9.3, and the reduction
/// kernel's cross-lane adds `vadd.xlane.f32.xlu0`), and its utilization
/// rows are written by the compiler's rules from each shape's column
/// (`xprof_testdata::llo_dump::real_shaped_dump`), not by the reader's.
/// Every column but MXU is an op count: the ops `llo_dump_ops` gives each
/// unit must number what the column says in every bundle. The MXU column
/// is the MXUs modelled busy: MXU ops do not add up to it, and the check
/// says so rather than comparing.
#[test]
fn dump_op_units_add_up_to_the_compilers_per_bundle_counts() {
    let dump = xprof_testdata::llo_dump::real_shaped_dump();
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in &dump.files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let columns = xprof_testdata::llo_dump::UTILIZATION_COLUMNS;
    let normalized = |c: &'static str| -> &'static str {
        match c {
            "VLOAD" => "VLD",
            "VLOAD:FILL" => "FILL",
            "VSTORE" => "VST",
            "VSTORE:SPILL" => "SPILL",
            other => other,
        }
    };
    // Ops per bundle and unit, as read.
    let ops = rows(
        dir.path(),
        "SELECT address, unit, count(*) AS n FROM llo_dump_ops GROUP BY address, unit",
    );
    let read = |address: usize, unit: &str| -> i64 {
        ops.iter()
            .find(|r| i(r, "address") == address as i64 && s(r, "unit") == unit)
            .map_or(0, |r| i(r, "n"))
    };
    let mut xlu = 0;
    for (address, row) in dump.rows.iter().enumerate() {
        for ((column, _), used) in columns.iter().zip(row) {
            if *column == "MXU" {
                continue;
            }
            assert_eq!(
                read(address, normalized(column)),
                *used,
                "bundle {address} {column}: {:?}",
                dump.bundles[address]
            );
            if *column == "XLU" {
                xlu += used;
            }
        }
        // Every op is counted by a column, or is an MXU or pseudo op.
        let counted: i64 = columns
            .iter()
            .zip(row)
            .filter(|(c, _)| c.0 != "MXU")
            .map(|(_, u)| *u)
            .sum();
        let mxu = dump.bundles[address]
            .iter()
            .filter(|o| o.0.contains(".mxu") && !o.0.starts_with("vpop"))
            .count() as i64;
        assert_eq!(read(address, "MXU"), mxu, "bundle {address}");
        assert_eq!(
            read(address, "PSEUDO") + mxu + counted,
            dump.bundles[address].len() as i64,
            "bundle {address}"
        );
    }
    assert!(xlu > 0, "the dump has cross-lane ops");
    // The view says the same, and where MXU cannot be compared.
    let check = rows(
        dir.path(),
        "SELECT unit, count(*) AS cells, sum(ops) AS ops, sum(used) AS used, \
         count(*) FILTER (WHERE agrees) AS agree, count(agrees) AS compared \
         FROM llo_dump_unit_check GROUP BY unit ORDER BY unit",
    );
    let bundles = dump.rows.len() as i64;
    assert_eq!(check.len(), columns.len(), "{check:?}");
    for r in &check {
        assert_eq!(i(r, "cells"), bundles, "{r:?}");
        if s(r, "unit") == "MXU" {
            assert_eq!(i(r, "compared"), 0, "{r:?}");
            let busy: i64 = dump.rows.iter().map(|row| row[0]).sum();
            assert_eq!(i(r, "used"), busy);
            assert_ne!(i(r, "ops"), busy, "MXU ops are not the busy count");
        } else {
            assert_eq!(i(r, "agree"), bundles, "{r:?}");
            assert_eq!(i(r, "ops"), i(r, "used"), "{r:?}");
        }
    }
    let xlu_row = check.iter().find(|r| s(r, "unit") == "XLU").unwrap();
    assert_eq!(i(xlu_row, "used"), xlu);
}
