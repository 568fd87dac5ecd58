//! A synthetic LLO compiler dump folder (`--xla_jf_dump_to`) for the
//! program of [`crate::llo_capture`], in the text formats of the facts
//! sheet (`shared/formats/tpu_kernel_profiling_capture.md` §9): the
//! static per-bundle utilization (121), the schedule analysis (123), the
//! final bundles (124) and the original LLO with its allocations (04).
//!
//! Like the real dump it is of an uninstrumented compile: no trace ops, and
//! the empty grid slots (one in eight here) are dropped, so its addresses
//! are not the capture's marker addresses; the `Start region N` /
//! `End region N` comments link the two by region id. The entry bundle's
//! operand text holds `{}` and a bounds-check op spans three lines with
//! `/*x=*/` labels inside its comment, as on the real dump.
//! [`DumpTruth`] describes what was written.

use std::fmt::Write;

use crate::llo_capture_truth::{CaptureTruth, HLO_OP};

/// The dump's time stamp (ns), about 112 s before the profile, as on the
/// real dump.
pub const DUMP_NS: i64 = 1_783_579_888_000_000_000;

/// One bundle as written.
#[derive(Debug, Clone, PartialEq)]
pub struct DumpBundle {
    /// Address.
    pub address: i64,
    /// The capture's schedule slot it comes from.
    pub slot: u32,
    /// Ops: (mnemonic, unit in this project's vocabulary).
    pub ops: Vec<(String, &'static str)>,
    /// Regions started here.
    pub started: Vec<u32>,
    /// Regions ended here.
    pub ended: Vec<u32>,
    /// Regions with no bundle of their own, written `Start/End empty
    /// region N` here: each at the first bundle of the next placed region
    /// after it (the exit bundle for the last), as the real dump puts
    /// `Start/End empty region 29` on the bundle that starts the next
    /// predicated check.
    pub empty: Vec<u32>,
    /// Control-target tag.
    pub tag: Option<&'static str>,
    /// `>` mark.
    pub in_loop: bool,
    /// The innermost placed region of the program holding its slot.
    pub region: Option<u32>,
}

/// What the generator wrote.
#[derive(Debug, Clone, Default)]
pub struct DumpTruth {
    /// Bundles in address order.
    pub bundles: Vec<DumpBundle>,
    /// Files: (name, text).
    pub files: Vec<(String, String)>,
    /// Allocations: (name, space, size, scoped).
    pub allocations: Vec<(String, &'static str, i64, bool)>,
}

/// Columns of the utilization dump, with capacities.
pub const UTILIZATION_COLUMNS: [(&str, i64); 10] = [
    ("MXU", 2),
    ("XLU", 2),
    ("VALU", 4),
    ("VPOP", 2),
    ("EUP", 1),
    ("VLOAD", 3),
    ("VLOAD:FILL", 3),
    ("VSTORE", 2),
    ("VSTORE:SPILL", 2),
    ("SALU", 2),
];

fn file(pass: u32, dump: &str) -> String {
    format!("{DUMP_NS}-{HLO_OP}-{pass:02}-{dump}.txt")
}

/// Builds the dump of `truth`'s program.
pub fn dump_folder(truth: &CaptureTruth) -> DumpTruth {
    let mut out = DumpTruth::default();
    let kept: Vec<u32> = (0..truth.slots).filter(|s| s % 8 != 7).collect();
    let used = |name: &str, s: u32| {
        truth
            .units
            .iter()
            .find(|u| u.counter == name)
            .map_or(0, |u| u.used[s as usize] as usize)
    };
    let body = truth.region(69);
    for (address, &slot) in kept.iter().enumerate() {
        let mut ops: Vec<(String, &'static str)> = Vec::new();
        for (name, mnemonic, unit) in [
            ("MXU", "vmatmul.mubr.f32.gmra.mxu", "MXU"),
            ("Vector Load", "vld", "VLD"),
            ("Vector ALU", "vadd.f32", "VALU"),
            ("Vector Store", "vst", "VST"),
            ("Scalar ALU", "sadd.s32", "SALU"),
        ] {
            for k in 0..used(name, slot) {
                let m = if unit == "MXU" {
                    format!("{mnemonic}{}", k % 2)
                } else {
                    mnemonic.to_string()
                };
                ops.push((m, unit));
            }
        }
        // The regions whose first (last) kept slot this is.
        let first_kept = |r: u32| kept.iter().copied().find(|k| *k >= r);
        let last_kept = |r: u32| kept.iter().copied().rev().find(|k| *k < r);
        let mut started = Vec::new();
        let mut ended = Vec::new();
        for r in &truth.regions {
            let (Some(start), Some(end)) = (r.start, r.end) else {
                continue;
            };
            if r.id != 0 && first_kept(start) == Some(slot) {
                started.push(r.id);
            }
            if r.id != 0 && last_kept(end) == Some(slot) {
                ended.push(r.id);
            }
        }
        // Every control-target tag of the key block, each on the first
        // bundle of a region of its role (the real dump uses LB and PF
        // only; the others are written as the key block names them).
        let starts = |ids: &[u32]| {
            ids.iter()
                .any(|r| truth.region(*r).start.and_then(first_kept) == Some(slot))
        };
        let loop_end = truth.region(5).end;
        let tag = if Some(slot) == body.start.and_then(first_kept) {
            Some("LB")
        } else if starts(&[31, 7]) {
            Some("PF")
        } else if starts(&[4]) {
            Some("LH")
        } else if starts(&[28, 32]) {
            Some("PB")
        } else if starts(&[5]) {
            Some("CT")
        } else if loop_end.and_then(first_kept) == Some(slot) {
            Some("LE")
        } else {
            None
        };
        let mut empty = Vec::new();
        for (k, r) in truth.regions.iter().enumerate() {
            if r.start.is_some() {
                continue;
            }
            let next = truth.regions[k + 1..].iter().find_map(|n| n.start);
            let here = match next {
                Some(start) => first_kept(start) == Some(slot),
                None => Some(&slot) == kept.last(),
            };
            if here {
                empty.push(r.id);
            }
        }
        let in_loop = body.start <= Some(slot) && Some(slot) < truth.region(5).end;
        let region = truth
            .regions
            .iter()
            .rev()
            .find(|r| r.start <= Some(slot) && Some(slot) < r.end && r.start.is_some())
            .map(|r| r.id);
        out.bundles.push(DumpBundle {
            address: address as i64,
            slot,
            ops,
            started,
            ended,
            empty,
            tag,
            in_loop,
            region,
        });
    }

    // 124: final bundles.
    let mut fb = String::from(
        "= control target key start\nLH: loop header\nLB: loop body\nLE: loop exit\n\
         PB: predicated region body\nPF: predicated region fallthrough\nCT: control target\n\
         = control target key end\n\n",
    );
    let last = out.bundles.len() - 1;
    let mut id = 10;
    for (i, b) in out.bundles.iter_mut().enumerate() {
        let addr = if b.address == 0 {
            "0".to_string()
        } else {
            format!("{:#x}", b.address)
        };
        let tag = b.tag.map_or("   ".to_string(), |t| format!(" {t}"));
        let mut texts: Vec<String> = b
            .ops
            .iter()
            .map(|(m, unit)| {
                id += 1;
                match *unit {
                    "VLD" => format!(
                        "%v{id}_v{} = {m} [vmem:[#allocation2 + $0x{:x}] sm:$0xff]",
                        id % 64,
                        id * 8
                    ),
                    "VST" => format!(
                        "{m} [vmem:[#allocation2 + $0x{:x}] sm:$0xff] %v{}_v3",
                        id * 8,
                        id - 1
                    ),
                    "SALU" => format!("%s{id}_s{} = {m} 1, %s{}_s3", id % 31, id - 1),
                    _ => format!("%v{id}_v{} = {m} %v{}_v1, %v{}_v2", id % 64, id - 1, id - 2),
                }
            })
            .collect();
        if i == 0 {
            texts.push(
                "%s1_s0 = inlined_call_operand.hbm [shape: f32[1024,512], index: 0, kind: input, shape index: {}]"
                    .to_string(),
            );
            b.ops.push(("inlined_call_operand.hbm".into(), "PSEUDO"));
        }
        if i == 5 {
            texts.push(
                "%90 = shalt.err (!%p5_p1) /* BoundsCheck 0 [deref of %s7] for %v9 = vld [vmem:[%s7] sm:$0xff] /*x=*/1\nhlo: pallas_matmul.1\n */"
                    .to_string(),
            );
            b.ops.push(("shalt.err".into(), "SALU"));
        }
        let mut comment: Vec<String> = Vec::new();
        if i == 0 {
            comment.push(format!("entry bundle: %{HLO_OP} = custom-call(%p0, %p1)"));
        }
        comment.extend(
            b.empty
                .iter()
                .map(|r| format!("Start/End empty region {r}")),
        );
        comment.extend(b.started.iter().map(|r| format!("Start region {r}")));
        comment.extend(b.ended.iter().map(|r| format!("End region {r}")));
        if i == last {
            comment.push(format!("exit bundle: %{HLO_OP}"));
        }
        let ops = if texts.is_empty() {
            "{}".to_string()
        } else {
            format!("{{ {} }}", texts.join("  ;;  "))
        };
        let mark = if b.in_loop { '>' } else { ' ' };
        let _ = write!(fb, "{addr:>6}{tag}: {mark} {ops}");
        if !comment.is_empty() {
            let _ = write!(fb, " /* {} */", comment.join(" :: "));
        }
        fb.push('\n');
    }

    // 121: static per-bundle utilization.
    let rows: Vec<[i64; 10]> = out
        .bundles
        .iter()
        .map(|b| {
            let count = |u: &str| b.ops.iter().filter(|o| o.1 == u).count() as i64;
            [
                used("MXU", b.slot) as i64,
                0,
                count("VALU"),
                0,
                0,
                count("VLD"),
                0,
                count("VST"),
                0,
                count("SALU"),
            ]
        })
        .collect();
    let util = utilization_text(&rows);

    // 123: schedule analysis.
    let total = out.bundles.len();
    let empty = out
        .bundles
        .iter()
        .filter(|b| b.ops.iter().all(|o| o.1 == "PSEUDO"))
        .count();
    let sched = format!(
        "Schedule analysis:\n\ttotal scheduled bundles:    {total}\n\tempty scheduled bundles:    {empty}\n\
         \tnon empty scheduled bundles: {}\n\t{total}.00 scheduled bundles (100.00%): %{HLO_OP} = \
         f32[1024,1024]{{1,0}} custom-call(f32[1024,512]{{1,0}} %p0, f32[512,1024]{{1,0}} %p1), \
         custom_call_target=\"tpu_custom_call\"\n\t[opcode]    {total} scheduled bundles \
         (100.00%): custom-call   (1 instances, {total}.00 avg)\n",
        total - empty
    );

    // 04: original LLO: the region tree and the allocations.
    let mut orig = String::from("// [Enable stack traces with --xla_jf_dump_stack_traces]\n");
    for r in &truth.regions {
        let parent = r.parent.map_or(String::new(), |p| format!(" parent={p}"));
        let _ = writeln!(orig, "$region{}: #{{{HLO_OP}}}{parent} // {}", r.id, r.role);
        let _ = writeln!(orig, "  %s{} = sadd.s32 1, %s{}", r.id + 500, r.id + 499);
    }
    for (n, space, size, scoped, shape) in [
        (0, "vmem", 2 << 20, false, "f32[512,1024]{1,0}"),
        (1, "vmem", 2 << 20, false, "f32[512,1024]{1,0}"),
        (2, "vmem", 4 << 20, true, "f32[1024,1024]{1,0}"),
        (3, "sflag", 8, true, "s32[2]{0}"),
        (4, "sflag", 8, true, "s32[2]{0}"),
        (5, "smem", 4, true, "s32[1]{0}"),
    ] {
        let name = format!("#allocation{n}");
        let kind = if scoped { "scoped" } else { "fixed_abs" };
        let offset = if scoped {
            String::new()
        } else {
            format!(" offset = {:#x},", n * 0x1000)
        };
        let _ = writeln!(
            orig,
            "{name} [shape = '{shape}', space={space}, size = {size:#x},{offset} {kind}, tag = 'buffer {n}']"
        );
        out.allocations.push((name, space, size, scoped));
    }

    out.files = vec![
        (file(4, "original"), orig),
        (file(121, "final_hlo-static-per-bundle-utilization"), util),
        (file(123, "schedule-analysis_final_bundles"), sched),
        (file(124, "final_bundles"), fb),
    ];
    out
}

/// The HLO op of [`real_shaped_dump`].
pub const REAL_SHAPED_OP: &str = "matmul_reduce.1";

/// One op shape of the real dumps: its mnemonic and the column of the
/// per-bundle utilization dump that counts it, `None` for the ops no
/// column counts one by one (MXU ops: the MXU column is the MXUs modelled
/// busy; pseudo-ops take no slot).
pub type OpShape = (&'static str, Option<&'static str>);

/// Op shapes as the facts sheet (§9.1, §9.3) lists them, with the column
/// that counts each: `vadd.*` VALU, `vpop.*` VPOP, `vst` VSTORE, `vld` +
/// `dma.done.wait` + `vsyncadd` VLOAD, scalar, predicate and DMA-issue ops
/// SALU, `sphi`/`int_to_ptr.*`/`inlined_call_operand.*` none; and the
/// cross-lane add of a reduction kernel (`vadd.xlane.f32.xlu0`), which
/// the compiler counts under XLU, not VALU.
const SHAPES: &[OpShape] = &[
    ("inlined_call_operand.hbm", None),
    ("dma.hbm_to_vmem", Some("SALU")),
    ("dma.vmem_to_hbm", Some("SALU")),
    ("dma.done.wait", Some("VLOAD")),
    ("vsyncadd", Some("VLOAD")),
    ("int_to_ptr.vmem", None),
    ("sphi", None),
    ("smov", Some("SALU")),
    ("scmp.ge.s32", Some("SALU")),
    ("sadd.s32", Some("SALU")),
    ("scalar_lea.vmem", Some("SALU")),
    ("sbr.rel", Some("SALU")),
    ("shalt.err", Some("SALU")),
    ("vld", Some("VLOAD")),
    ("vst", Some("VSTORE")),
    ("vadd.f32", Some("VALU")),
    ("vmatprep.subr.mxu0", None),
    ("vmatpush1.msra.mxu0", None),
    ("vmatpush2.msra.mxu1", None),
    ("vmatprep.mubr.f32.mxu0", None),
    ("vmatmul.mubr.f32.gmra.mxu0", None),
    ("vmatmul.mubr.f32.vlgmr.msra.gmra.mxu1", None),
    ("vpop.f32.mrf.mxu0", Some("VPOP")),
    ("vpop.f32.mrf.mxu1", Some("VPOP")),
    ("vadd.xlane.f32.xlu0", Some("XLU")),
    ("vadd.xlane.f32.xlu1", Some("XLU")),
];

pub(crate) fn shape(mnemonic: &str) -> OpShape {
    *SHAPES
        .iter()
        .find(|s| s.0 == mnemonic)
        .unwrap_or_else(|| panic!("no shape {mnemonic}"))
}

/// A dump whose ops have the real dumps' shapes (synthetic: no real dump
/// can be shared): the final bundles (124) and the per-bundle utilization
/// (121) of one kernel that loads, runs a matmul pass on both MXUs, pops
/// the results, then reduces across lanes. Its utilization rows follow
/// the compiler's rules of §9.1, from the shapes' columns, not from this
/// project's reader: each column but MXU counts the bundle's ops of that
/// column; MXU is the MXUs modelled busy, each from the bundle after its
/// first `vmatmul` to 5 bundles after its last.
#[derive(Debug, Clone, Default)]
pub struct RealShapedDump {
    /// Files: (name, text).
    pub files: Vec<(String, String)>,
    /// Ops of each bundle (address = index): (mnemonic, counting column).
    pub bundles: Vec<Vec<OpShape>>,
    /// Each bundle's utilization row, in [`UTILIZATION_COLUMNS`] order.
    pub rows: Vec<[i64; 10]>,
}

/// Builds [`RealShapedDump`].
pub fn real_shaped_dump() -> RealShapedDump {
    let mut bundles: Vec<Vec<&'static str>> = vec![
        vec!["inlined_call_operand.hbm"; 3],
        vec![
            "dma.hbm_to_vmem",
            "dma.hbm_to_vmem",
            "smov",
            "int_to_ptr.vmem",
        ],
        vec!["dma.done.wait", "vsyncadd", "scalar_lea.vmem", "sphi"],
    ];
    // The matmul pass: weights pushed, rows loaded and multiplied.
    for b in 0..16 {
        let mut ops = vec!["vld", "vld", "sadd.s32"];
        if b < 4 {
            ops.extend([
                "vmatprep.subr.mxu0",
                "vmatpush1.msra.mxu0",
                "vmatpush2.msra.mxu1",
            ]);
        } else {
            ops.push("vmatprep.mubr.f32.mxu0");
            if b % 2 == 0 {
                ops.push("vmatmul.mubr.f32.gmra.mxu0");
            }
            if b % 3 == 0 {
                ops.push("vmatmul.mubr.f32.vlgmr.msra.gmra.mxu1");
            }
        }
        if b % 4 == 1 {
            ops.push("vadd.f32");
        }
        bundles.push(ops);
    }
    // Results popped and stored.
    for b in 0..6 {
        let mut ops = vec!["vpop.f32.mrf.mxu0", "vst"];
        if b % 2 == 0 {
            ops.push("vpop.f32.mrf.mxu1");
        }
        bundles.push(ops);
    }
    // The reduction: loads, cross-lane adds on both XLUs, an add, a store.
    for b in 0..8 {
        let mut ops = vec!["vld", "vadd.xlane.f32.xlu0"];
        if b % 2 == 1 {
            ops.push("vadd.xlane.f32.xlu1");
        }
        if b % 3 == 0 {
            ops.extend(["vadd.f32", "vadd.f32"]);
        }
        if b == 7 {
            ops.push("vst");
        }
        bundles.push(ops);
    }
    bundles.push(vec!["scmp.ge.s32", "sbr.rel", "dma.vmem_to_hbm"]);
    bundles.push(vec!["shalt.err"]);
    bundles.push(vec![]);

    let shaped: Vec<Vec<OpShape>> = bundles
        .iter()
        .map(|ops| ops.iter().map(|m| shape(m)).collect())
        .collect();
    let rows = utilization_rows(&shaped);

    let name = |pass: u32, dump: &str| format!("{DUMP_NS}-{REAL_SHAPED_OP}-{pass:02}-{dump}.txt");
    let mut fb = String::new();
    let mut id = 100;
    let last = shaped.len() - 1;
    for (address, ops) in shaped.iter().enumerate() {
        let addr = if address == 0 {
            "0".to_string()
        } else {
            format!("{address:#x}")
        };
        let texts: Vec<String> = ops
            .iter()
            .map(|(m, _)| {
                id += 1;
                if m.starts_with('s') || m.starts_with("dma") {
                    format!("%s{id}_s{} = {m} %s{}_s1, 1", id % 31, id - 1)
                } else if *m == "vst" {
                    format!("{m} [vmem:[#allocation2 + $0x{:x}] sm:$0xff] %v{}_v3", id * 8, id - 1)
                } else if m.starts_with("inlined") {
                    format!("%s{id}_s0 = {m} [shape: f32[8,128], index: 0, kind: input, shape index: {{}}]")
                } else {
                    format!("%v{id}_v{} = {m} %v{}_v1", id % 64, id - 1)
                }
            })
            .collect();
        let body = if texts.is_empty() {
            "{}".to_string()
        } else {
            format!("{{ {} }}", texts.join("  ;;  "))
        };
        let comment = match address {
            0 => format!(" /* entry bundle: %{REAL_SHAPED_OP} = custom-call(%p0, %p1) */"),
            a if a == last => format!(" /* exit bundle: %{REAL_SHAPED_OP} */"),
            _ => String::new(),
        };
        let _ = writeln!(fb, "{addr:>6}   :   {body}{comment}");
    }
    let util = utilization_text(&rows);
    RealShapedDump {
        files: vec![
            (name(121, "final_hlo-static-per-bundle-utilization"), util),
            (name(124, "final_bundles"), fb),
        ],
        bundles: shaped,
        rows,
    }
}

/// The compiler's per-bundle utilization rows of `bundles` (§9.1): each
/// column but MXU counts the bundle's ops of that column; MXU is the MXUs
/// modelled busy, each from the bundle after its first `vmatmul` to 5
/// bundles after its last.
pub(crate) fn utilization_rows(bundles: &[Vec<OpShape>]) -> Vec<[i64; 10]> {
    let mut mxu_busy = vec![0i64; bundles.len()];
    for unit in ["mxu0", "mxu1"] {
        let matmuls: Vec<usize> = bundles
            .iter()
            .enumerate()
            .filter(|(_, ops)| {
                ops.iter()
                    .any(|o| o.0.starts_with("vmatmul") && o.0.ends_with(unit))
            })
            .map(|(b, _)| b)
            .collect();
        if let (Some(first), Some(last)) = (matmuls.first(), matmuls.last()) {
            for busy in &mut mxu_busy[first + 1..=(last + 5).min(bundles.len() - 1)] {
                *busy += 1;
            }
        }
    }
    bundles
        .iter()
        .zip(&mxu_busy)
        .map(|(ops, mxu)| {
            let mut row = [0i64; 10];
            for (k, (column, _)) in UTILIZATION_COLUMNS.iter().enumerate() {
                row[k] = if *column == "MXU" {
                    *mxu
                } else {
                    ops.iter().filter(|o| o.1 == Some(*column)).count() as i64
                };
            }
            row
        })
        .collect()
}

/// The 121 file: capacities, then one row per bundle.
pub(crate) fn utilization_text(rows: &[[i64; 10]]) -> String {
    let mut util = String::from("== CAPACTIY:\n");
    let names: Vec<&str> = UTILIZATION_COLUMNS.iter().map(|c| c.0).collect();
    util.push_str(&names.join(", "));
    util.push('\n');
    let caps: Vec<String> = UTILIZATION_COLUMNS
        .iter()
        .map(|c| format!("{:>5}", c.1))
        .collect();
    util.push_str(&caps.join(" "));
    util.push_str("\n== UTILIZATION:\n");
    for row in rows {
        let cells: Vec<String> = row.iter().map(i64::to_string).collect();
        util.push_str(&cells.join(" "));
        util.push('\n');
    }
    util
}
