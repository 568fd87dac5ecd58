//! Synthetic LLO compiler dump folders of a compile session: several
//! kernels, each with the four dump files of the facts sheet
//! (`shared/formats/tpu_kernel_profiling_capture.md` §9: 04 original,
//! 121 per-bundle utilization, 123 schedule analysis, 124 final bundles),
//! their ops in the shapes of the real dumps ([`crate::llo_dump`]'s
//! shapes and the compiler's counting rules of §9.1). Two sessions of the
//! same kernels compare two compiles: a [`KernelSpec`] changed between
//! them plants a regression (a longer schedule, a spill, a sparser MXU
//! pass) whose numbers [`KernelTruth`] gives without any reader.
//!
//! Spills are not in the real capture (its spill and fill columns are 0):
//! a spilled vector is written, as inferred from the dump's column names,
//! as a `vst` to a `#allocationN_spill` buffer counted in `VSTORE:SPILL`
//! and its fill as a `vld` from it counted in `VLOAD:FILL`.

use std::fmt::Write;

use crate::llo_dump::{OpShape, UTILIZATION_COLUMNS, shape, utilization_rows, utilization_text};

/// One kernel of a compile session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelSpec {
    /// HLO op (the file names' kernel).
    pub hlo_op: &'static str,
    /// Bundles of the matmul pass (the first 4 push weights).
    pub matmul_bundles: usize,
    /// Bundles of the cross-lane reduction after it.
    pub reduce_bundles: usize,
    /// Vectors spilled (a spill store and a fill load each).
    pub spills: usize,
}

impl KernelSpec {
    /// A matmul-and-reduce kernel named `hlo_op`, without spills.
    pub const fn new(hlo_op: &'static str, matmul_bundles: usize, reduce_bundles: usize) -> Self {
        Self {
            hlo_op,
            matmul_bundles,
            reduce_bundles,
            spills: 0,
        }
    }
}

/// What a kernel's files say, counted by the generator.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelTruth {
    /// HLO op.
    pub hlo_op: &'static str,
    /// Bundles of the final schedule.
    pub bundles: i64,
    /// Bundles with pseudo-ops only or none (the entry bundle among them).
    pub empty_bundles: i64,
    /// Per utilization column (in [`UTILIZATION_COLUMNS`] order), the
    /// slots used summed over the bundles.
    pub used: [i64; 10],
    /// VMEM bytes allocated.
    pub vmem_bytes: i64,
    /// SMEM bytes allocated.
    pub smem_bytes: i64,
}

impl KernelTruth {
    /// Static occupancy of utilization column `column` (`MXU`, `VALU`,
    /// `VLOAD`, ...) over the whole schedule, in percent.
    pub fn pct(&self, column: &str) -> f64 {
        let k = UTILIZATION_COLUMNS
            .iter()
            .position(|c| c.0 == column)
            .expect("a utilization column");
        100.0 * self.used[k] as f64 / (UTILIZATION_COLUMNS[k].1 * self.bundles) as f64
    }

    /// Slots used of utilization column `column`, summed.
    pub fn slots(&self, column: &str) -> i64 {
        let k = UTILIZATION_COLUMNS
            .iter()
            .position(|c| c.0 == column)
            .expect("a utilization column");
        self.used[k]
    }
}

/// A compile session's dump folder.
#[derive(Debug, Clone, Default)]
pub struct CompileSession {
    /// Files: (name, text).
    pub files: Vec<(String, String)>,
    /// The kernels, in the order given.
    pub kernels: Vec<KernelTruth>,
}

impl CompileSession {
    /// Writes the files into `folder` (created when missing).
    pub fn write_to(&self, folder: &std::path::Path) -> std::io::Result<()> {
        std::fs::create_dir_all(folder)?;
        for (name, text) in &self.files {
            std::fs::write(folder.join(name), text)?;
        }
        Ok(())
    }

    /// The kernel `hlo_op`'s truth.
    pub fn kernel(&self, hlo_op: &str) -> &KernelTruth {
        self.kernels
            .iter()
            .find(|k| k.hlo_op == hlo_op)
            .expect("a kernel of the session")
    }
}

/// A spill store: counted in `VSTORE:SPILL` (inferred, see the module).
const SPILL: OpShape = ("vst", Some("VSTORE:SPILL"));
/// A fill load: counted in `VLOAD:FILL`.
const FILL: OpShape = ("vld", Some("VLOAD:FILL"));

/// Whether an op takes no slot (a pseudo-op).
fn is_pseudo(mnemonic: &str) -> bool {
    ["inlined_call_operand", "sphi", "int_to_ptr"]
        .iter()
        .any(|p| mnemonic.starts_with(p))
}

/// The ops of each bundle of `spec`'s kernel.
fn kernel_bundles(spec: &KernelSpec) -> Vec<Vec<OpShape>> {
    let named = |ops: &[&str]| ops.iter().map(|m| shape(m)).collect::<Vec<_>>();
    let mut bundles = vec![
        named(&["inlined_call_operand.hbm"; 3]),
        named(&[
            "dma.hbm_to_vmem",
            "dma.hbm_to_vmem",
            "smov",
            "int_to_ptr.vmem",
        ]),
        named(&["dma.done.wait", "vsyncadd", "scalar_lea.vmem", "sphi"]),
    ];
    for b in 0..spec.matmul_bundles {
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
        bundles.push(named(&ops));
    }
    for b in 0..6 {
        let mut ops = named(&["vpop.f32.mrf.mxu0", "vst"]);
        if b % 2 == 0 {
            ops.push(shape("vpop.f32.mrf.mxu1"));
        }
        // Spilled vectors are stored here, after the pops ...
        if b < spec.spills {
            ops.push(SPILL);
        }
        bundles.push(ops);
    }
    for b in 0..spec.reduce_bundles {
        let mut ops = named(&["vld", "vadd.xlane.f32.xlu0"]);
        if b % 2 == 1 {
            ops.push(shape("vadd.xlane.f32.xlu1"));
        }
        if b % 3 == 0 {
            ops.extend(named(&["vadd.f32", "vadd.f32"]));
        }
        if b + 1 == spec.reduce_bundles {
            ops.push(shape("vst"));
        }
        bundles.push(ops);
    }
    // ... and filled before the end, a bundle each.
    for _ in 0..spec.spills {
        bundles.push(vec![FILL, shape("vadd.f32")]);
    }
    bundles.push(named(&["scmp.ge.s32", "sbr.rel", "dma.vmem_to_hbm"]));
    bundles.push(named(&["shalt.err"]));
    bundles.push(Vec::new());
    bundles
}

/// The 124 file of `hlo_op`'s `bundles`, its spilled vectors stored to
/// and loaded from `#allocation9_spill`.
fn final_bundles_text(hlo_op: &str, bundles: &[Vec<OpShape>]) -> String {
    let mut fb = String::from(
        "= control target key start\nLH: loop header\nLB: loop body\nLE: loop exit\n\
         PB: predicated region body\nPF: predicated region fallthrough\nCT: control target\n\
         = control target key end\n\n",
    );
    let mut id = 100;
    let last = bundles.len() - 1;
    for (address, ops) in bundles.iter().enumerate() {
        let addr = if address == 0 {
            "0".to_string()
        } else {
            format!("{address:#x}")
        };
        let texts: Vec<String> = ops
            .iter()
            .map(|&(m, column)| {
                id += 1;
                if column == Some("VSTORE:SPILL") {
                    format!("{m} [vmem:[#allocation9_spill] sm:$0xff] %v{}_v3", id - 1)
                } else if column == Some("VLOAD:FILL") {
                    format!("%v{id}_v{} = {m} [vmem:[#allocation9_spill] sm:$0xff]", id % 64)
                } else if m.starts_with('s') || m.starts_with("dma") {
                    format!("%s{id}_s{} = {m} %s{}_s1, 1", id % 31, id - 1)
                } else if m == "vst" {
                    format!("{m} [vmem:[#allocation2 + $0x{:x}] sm:$0xff] %v{}_v3", id * 8, id - 1)
                } else if m == "vld" {
                    format!("%v{id}_v{} = {m} [vmem:[#allocation0 + $0x{:x}] sm:$0xff]", id % 64, id * 8)
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
            0 => format!(" /* entry bundle: %{hlo_op} = custom-call(%p0, %p1) */"),
            a if a == last => format!(" /* exit bundle: %{hlo_op} */"),
            _ => String::new(),
        };
        let _ = writeln!(fb, "{addr:>6}   :   {body}{comment}");
    }
    fb
}

/// Builds the dump folder of one compile session at `timestamp_ns` (the
/// file names' time stamp) holding `kernels`.
pub fn compile_session(timestamp_ns: i64, kernels: &[KernelSpec]) -> CompileSession {
    let mut out = CompileSession::default();
    for spec in kernels {
        let op = spec.hlo_op;
        let name = |pass: u32, dump: &str| format!("{timestamp_ns}-{op}-{pass:02}-{dump}.txt");
        let bundles = kernel_bundles(spec);
        let rows = utilization_rows(&bundles);
        let total = bundles.len() as i64;
        let empty = bundles
            .iter()
            .filter(|ops| ops.iter().all(|o| is_pseudo(o.0)))
            .count() as i64;
        let sched = format!(
            "Schedule analysis:\n\ttotal scheduled bundles:    {total}\n\tempty scheduled bundles:    {empty}\n\
             \tnon empty scheduled bundles: {}\n\t{total}.00 scheduled bundles (100.00%): %{op} = \
             f32[1024,1024]{{1,0}} custom-call(f32[1024,512]{{1,0}} %p0, f32[512,1024]{{1,0}} %p1), \
             custom_call_target=\"tpu_custom_call\"\n\t[opcode]    {total} scheduled bundles \
             (100.00%): custom-call   (1 instances, {total}.00 avg)\n",
            total - empty
        );
        let mut allocations = vec![
            (0, "vmem", 2 << 20, false, "f32[512,1024]{1,0}"),
            (1, "vmem", 2 << 20, false, "f32[512,1024]{1,0}"),
            (2, "vmem", 4 << 20, true, "f32[1024,1024]{1,0}"),
            (3, "sflag", 8, true, "s32[2]{0}"),
            (5, "smem", 4, true, "s32[1]{0}"),
        ];
        if spec.spills > 0 {
            allocations.push((
                9,
                "vmem",
                4096 * spec.spills as i64,
                true,
                "f32[8,128]{1,0}",
            ));
        }
        let mut orig = String::from("// [Enable stack traces with --xla_jf_dump_stack_traces]\n");
        let _ = writeln!(orig, "$region0: #{{{op}}} // kernel");
        let _ = writeln!(orig, "  %s500 = sadd.s32 1, %s499");
        let (mut vmem, mut smem) = (0, 0);
        for (n, space, size, scoped, shape) in allocations {
            let kind = if scoped { "scoped" } else { "fixed_abs" };
            let offset = if scoped {
                String::new()
            } else {
                format!(" offset = {:#x},", n * 0x1000)
            };
            let tag = if n == 9 {
                "spill".to_string()
            } else {
                format!("buffer {n}")
            };
            let _ = writeln!(
                orig,
                "#allocation{n} [shape = '{shape}', space={space}, size = {size:#x},{offset} {kind}, tag = '{tag}']"
            );
            match space {
                "vmem" => vmem += size,
                "smem" => smem += size,
                _ => {}
            }
        }
        let mut used = [0i64; 10];
        for row in &rows {
            for (sum, v) in used.iter_mut().zip(row) {
                *sum += v;
            }
        }
        out.files.extend([
            (name(4, "original"), orig),
            (
                name(121, "final_hlo-static-per-bundle-utilization"),
                utilization_text(&rows),
            ),
            (name(123, "schedule-analysis_final_bundles"), sched),
            (name(124, "final_bundles"), final_bundles_text(op, &bundles)),
        ]);
        out.kernels.push(KernelTruth {
            hlo_op: op,
            bundles: total,
            empty_bundles: empty,
            used,
            vmem_bytes: vmem,
            smem_bytes: smem,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_regression_changes_the_kernels_numbers() {
        let base = KernelSpec::new("matmul_reduce.1", 16, 8);
        let worse = KernelSpec {
            reduce_bundles: 16,
            spills: 2,
            ..base
        };
        let a = compile_session(1, &[base]);
        let b = compile_session(2, &[worse]);
        let (a, b) = (a.kernel("matmul_reduce.1"), b.kernel("matmul_reduce.1"));
        assert_eq!(b.bundles - a.bundles, 8 + 2);
        assert_eq!((a.slots("VSTORE:SPILL"), b.slots("VSTORE:SPILL")), (0, 2));
        assert_eq!((a.slots("VLOAD:FILL"), b.slots("VLOAD:FILL")), (0, 2));
        assert!(b.pct("MXU") < a.pct("MXU"));
        // 3 set-up bundles, the pass, 6 pops, the reduction, 3 to end.
        assert_eq!(a.bundles, 3 + 16 + 6 + 8 + 3);
        // MXU 0 busy from the bundle after its first vmatmul (pass bundle
        // 4) to 5 after its last (14), MXU 1 from after 6 to 5 after 15.
        assert_eq!(a.slots("MXU"), 15 + 14);
        // The entry bundle (pseudo-ops) and the last (none) are empty.
        assert_eq!(a.empty_bundles, 2);
    }
}
