//! The TPU LLO compiler's dump folder (libtpu's `--xla_jf_dump_to=DIR
//! --xla_jf_dump_llo_text=true`): text files named
//! `<ns timestamp>-<HLO op>-<pass>-<dump name>.txt`, each a trace of its
//! own (`traces.source_format = 'llo_dump'`), read as the facts sheet
//! describes them (`shared/formats/tpu_kernel_profiling_capture.md` §9):
//!
//! - `…-final_hlo-static-per-bundle-utilization.txt`: unit capacities and
//!   one row of used slots per bundle → `llo_dump_bundle_units`;
//! - `…-schedule-analysis_final_bundles.txt`: bundle totals per HLO
//!   instruction and opcode → `llo_dump_schedule`;
//! - `…-final_bundles.txt`: the final bundles with their ops and region
//!   comments → `llo_dump_bundles` and `llo_dump_ops`;
//! - `…-original.txt`: the LLO before scheduling; its buffer allocations →
//!   `llo_dump_allocations`.
//!
//! Unit names are normalized to the vocabulary of `tracks.unit` and the
//! `llo_*` tables (`MXU`, `VALU`, `VLD`, `VST`, `SALU`, `EUP`, `XLU`,
//! `VPOP`, `FILL`, `SPILL`), the name as written kept beside. The dump is
//! of an uninstrumented compile: its addresses are not those of a capture's
//! markers; `llo_dump_bundles.region_id` (from the `Start region N`
//! comments) is what links the two.

use std::path::Path;

use xprof_format::small_table_rows::{
    LloDumpAllocationRow, LloDumpBundleRow, LloDumpBundleUnitRow, LloDumpOpRow, LloDumpScheduleRow,
};

use crate::assembler::{TraceAssembler, TraceInfo};
use crate::conversion::ConvertOptions;
use crate::error::{ConvertError, Result};
use crate::input::InputBytes;
use crate::reader::{PlaneInfo, ProfileReader};

/// The dumps this reader knows, by the name that ends the file name.
const DUMPS: [&str; 4] = [
    "final_hlo-static-per-bundle-utilization",
    "schedule-analysis_final_bundles",
    "final_bundles",
    "original",
];

/// The parts of a dump file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpName<'a> {
    /// The dump's time stamp (ns since the Unix epoch).
    pub timestamp_ns: i64,
    /// The HLO op.
    pub hlo_op: &'a str,
    /// The compiler pass ordinal.
    pub pass: u32,
    /// Which dump (`final_bundles`, ...).
    pub dump: &'static str,
}

/// `<ns timestamp>-<HLO op>-<pass>-<dump name>.txt`, for the dumps this
/// reader knows.
pub fn parse_dump_name(file_name: &str) -> Option<DumpName<'_>> {
    let stem = file_name.strip_suffix(".txt")?;
    let (ts, rest) = stem.split_once('-')?;
    if ts.len() < 10 || !ts.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let dump = DUMPS
        .into_iter()
        .find(|d| rest.strip_suffix(d).is_some_and(|r| r.ends_with('-')))?;
    let rest = &rest[..rest.len() - dump.len() - 1];
    let (hlo_op, pass) = rest.rsplit_once('-')?;
    if hlo_op.is_empty() || pass.is_empty() || !pass.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(DumpName {
        timestamp_ns: ts.parse().ok()?,
        hlo_op,
        pass: pass.parse().ok()?,
        dump,
    })
}

/// A unit name as the utilization dump writes it, in this project's
/// vocabulary.
pub fn normalize_unit(written: &str) -> &'static str {
    match written {
        "MXU" => "MXU",
        "XLU" => "XLU",
        "VALU" => "VALU",
        "VPOP" => "VPOP",
        "EUP" => "EUP",
        "VLOAD" => "VLD",
        "VLOAD:FILL" => "FILL",
        "VSTORE" => "VST",
        "VSTORE:SPILL" => "SPILL",
        "SALU" => "SALU",
        _ => "OTHER",
    }
}

/// The unit an op of the final bundles issues on (the utilization dump's
/// column mapping, §9.1; MXU ops carry `.mxuN`), and the unit as its
/// mnemonic writes it (`mxu0`, `vld`, `dma`, `sadd`, ...).
pub fn op_unit(mnemonic: &str) -> (&'static str, String) {
    let first = mnemonic.split('.').next().unwrap_or(mnemonic);
    let mxu = mnemonic
        .rsplit('.')
        .next()
        .filter(|last| last.starts_with("mxu") && last[3..].bytes().all(|b| b.is_ascii_digit()));
    let written = mxu.unwrap_or(first).to_string();
    let unit = if first == "vpop" {
        "VPOP"
    } else if mxu.is_some() || first.starts_with("vmat") {
        "MXU"
    } else if first == "vld" || mnemonic == "dma.done.wait" || first == "vsyncadd" {
        "VLD"
    } else if first == "vst" {
        "VST"
    } else if matches!(first, "inlined_call_operand" | "sphi" | "int_to_ptr") {
        "PSEUDO"
    } else if first == "dma"
        || first.starts_with('s')
        || first.starts_with('p')
        || first == "scalar_lea"
        || first == "scalar_select"
    {
        "SALU"
    } else if first.starts_with('v') {
        "VALU"
    } else {
        "OTHER"
    };
    (unit, written)
}

/// The reader of LLO dump files.
#[derive(Debug, Clone, Copy)]
pub struct LloDumpReader;

fn malformed(path: &Path, line: usize, offset: usize, why: impl Into<String>) -> ConvertError {
    ConvertError::Malformed {
        path: path.to_path_buf(),
        format: "LLO dump",
        offset: offset as u64,
        what: format!("line {line}: {}", why.into()),
    }
}

/// Lines with their 1-based number and byte offset.
fn lines(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    let mut offset = 0;
    text.split('\n').enumerate().map(move |(i, l)| {
        let at = offset;
        offset += l.len() + 1;
        (i + 1, at, l.strip_suffix('\r').unwrap_or(l))
    })
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

impl LloDumpReader {
    fn utilization(path: &Path, text: &str, op: &str, asm: &mut TraceAssembler<'_>) -> Result<()> {
        let trace_id = asm.trace_id();
        let mut it = lines(text).skip_while(|(_, _, l)| l.trim().is_empty());
        let (n, at, head) = it.next().unwrap_or((1, 0, ""));
        if !head.starts_with("== CAPAC") {
            return Err(malformed(path, n, at, "expected `== CAPACITY:`"));
        }
        let (n, at, names) = it
            .next()
            .ok_or_else(|| malformed(path, n, at, "no unit names"))?;
        let names: Vec<&str> = names.split(',').map(str::trim).collect();
        let (n, at, caps) = it
            .next()
            .ok_or_else(|| malformed(path, n, at, "no capacities"))?;
        let caps: Vec<i64> = caps
            .split_whitespace()
            .map(|c| parse_int(c).ok_or_else(|| malformed(path, n, at, format!("capacity {c:?}"))))
            .collect::<Result<_>>()?;
        if caps.len() != names.len() {
            return Err(malformed(
                path,
                n,
                at,
                format!("{} capacities for {} units", caps.len(), names.len()),
            ));
        }
        let (n, at, head) = it
            .next()
            .ok_or_else(|| malformed(path, n, at, "no utilization"))?;
        if !head.starts_with("== UTILIZATION") {
            return Err(malformed(path, n, at, "expected `== UTILIZATION:`"));
        }
        let mut address = 0i64;
        for (n, at, row) in it {
            if row.trim().is_empty() {
                continue;
            }
            let used: Vec<i64> = row
                .split_whitespace()
                .map(|u| parse_int(u).ok_or_else(|| malformed(path, n, at, format!("used {u:?}"))))
                .collect::<Result<_>>()?;
            if used.len() != names.len() {
                return Err(malformed(
                    path,
                    n,
                    at,
                    format!("{} values for {} units", used.len(), names.len()),
                ));
            }
            for ((name, cap), used) in names.iter().zip(&caps).zip(used) {
                asm.trace_row(&LloDumpBundleUnitRow {
                    trace_id,
                    hlo_op: op,
                    address,
                    unit: normalize_unit(name),
                    unit_as_written: name,
                    used,
                    capacity: *cap,
                });
            }
            address += 1;
        }
        Ok(())
    }

    fn schedule(path: &Path, text: &str, op: &str, asm: &mut TraceAssembler<'_>) -> Result<()> {
        let trace_id = asm.trace_id();
        for (n, at, line) in lines(text) {
            let l = line.trim();
            if l.is_empty() || l.starts_with("Schedule analysis") {
                continue;
            }
            let bad = |why: &str| malformed(path, n, at, why.to_string());
            let kind: &'static str;
            let (mut name, mut pct, mut instances): (Option<&str>, Option<f64>, Option<i64>) =
                (None, None, None);
            let bundles: f64;
            if let Some((label, value)) = l.split_once(':')
                && let Some(k) = match label.trim() {
                    "total scheduled bundles" => Some("total"),
                    "empty scheduled bundles" => Some("empty"),
                    "non empty scheduled bundles" => Some("non_empty"),
                    _ => None,
                }
            {
                kind = k;
                bundles = value.trim().parse().map_err(|_| bad("bundle count"))?;
            } else if let Some(rest) = l.strip_prefix("[opcode]") {
                // `[opcode]    808 scheduled bundles (100.00%): custom-call   (1 instances, 808.00 avg)`
                let (head, tail) = rest.split_once("):").ok_or_else(|| bad("opcode line"))?;
                let (count, p) = head
                    .split_once("scheduled bundles (")
                    .ok_or_else(|| bad("opcode line"))?;
                kind = "opcode";
                bundles = count.trim().parse().map_err(|_| bad("bundles"))?;
                pct = p.trim_end_matches('%').trim().parse().ok();
                let (op_name, inst) = tail.rsplit_once('(').ok_or_else(|| bad("instances"))?;
                name = Some(op_name.trim()).filter(|s| !s.is_empty());
                instances = inst.split_whitespace().next().and_then(|x| x.parse().ok());
            } else if let Some((head, text)) = l.split_once("):") {
                // `808.00 scheduled bundles (100.00%): <HLO text>`
                let (count, p) = head
                    .split_once("scheduled bundles (")
                    .ok_or_else(|| bad("instruction line"))?;
                kind = "instruction";
                bundles = count.trim().parse().map_err(|_| bad("bundles"))?;
                pct = p.trim_end_matches('%').trim().parse().ok();
                name = Some(text.trim());
            } else {
                return Err(bad("not a schedule-analysis line"));
            }
            asm.trace_row(&LloDumpScheduleRow {
                trace_id,
                hlo_op: op,
                line: n as i64,
                kind,
                name,
                bundles,
                pct,
                instances,
            });
        }
        Ok(())
    }

    fn bundles(path: &Path, text: &str, op: &str, asm: &mut TraceAssembler<'_>) -> Result<()> {
        let trace_id = asm.trace_id();
        // Logical lines: a bundle starts with its right-aligned address,
        // a tag field and `:`; other lines continue the one before (the
        // `BoundsCheck` comments span three).
        let mut logical: Vec<(usize, usize, String)> = Vec::new();
        let mut in_key = false;
        for (n, at, line) in lines(text) {
            if line.starts_with("= control target key start") {
                in_key = true;
                continue;
            }
            if line.starts_with("= control target key end") {
                in_key = false;
                continue;
            }
            if in_key {
                continue;
            }
            if bundle_head(line).is_some() {
                logical.push((n, at, line.to_string()));
            } else if let Some(last) = logical.last_mut() {
                last.2.push('\n');
                last.2.push_str(line);
            } else if !line.trim().is_empty() {
                return Err(malformed(path, n, at, "text before the first bundle"));
            }
        }
        let mut open: Vec<i64> = Vec::new();
        for (n, at, line) in &logical {
            let (address, tag, in_loop, body_at) =
                bundle_head(line).ok_or_else(|| malformed(path, *n, *at, "bundle head"))?;
            let rest = line[body_at..].trim_end();
            let (body, comment) = split_comment(rest);
            let body = body.trim();
            let inner = body
                .strip_prefix('{')
                .and_then(|b| b.strip_suffix('}'))
                .ok_or_else(|| malformed(path, *n, *at, "ops not in `{ }`"))?
                .trim();
            let ops: Vec<&str> = if inner.is_empty() {
                Vec::new()
            } else {
                inner.split("  ;;  ").map(str::trim).collect()
            };
            let mut started = Vec::new();
            let mut ended = Vec::new();
            let (mut entry, mut exit) = (false, false);
            if let Some(c) = comment {
                for part in c.split(" :: ") {
                    let part = part.trim();
                    let num = |p: &str| {
                        p.split_whitespace()
                            .last()
                            .and_then(|x| x.parse::<i64>().ok())
                    };
                    if part.starts_with("Start region") || part.starts_with("Start empty region") {
                        started.extend(num(part));
                    } else if part.starts_with("End region") || part.starts_with("End empty region")
                    {
                        ended.extend(num(part));
                    } else if part.starts_with("entry bundle") {
                        entry = true;
                    } else if part.starts_with("exit bundle") {
                        exit = true;
                    }
                }
            }
            // The entry bundle opens region 0, the whole kernel (the
            // facts sheet maps R0 to it; it has no `Start region` comment).
            if entry && open.is_empty() {
                open.push(0);
            }
            open.extend(&started);
            let region_id = open.last().copied();
            for e in &ended {
                if let Some(p) = open.iter().rposition(|r| r == e) {
                    open.remove(p);
                }
            }
            asm.trace_row(&LloDumpBundleRow {
                trace_id,
                hlo_op: op,
                address,
                tag,
                in_loop,
                ops: ops.len() as i64,
                region_id,
                regions_started: &started,
                regions_ended: &ended,
                is_entry: entry,
                is_exit: exit,
                comment,
            });
            for (position, text) in ops.iter().enumerate() {
                let (result, rest) = match text.split_once(" = ") {
                    Some((r, rest)) if r.starts_with('%') && !r.contains(' ') => (Some(r), rest),
                    _ => (None, *text),
                };
                let mnemonic = rest.split_whitespace().next().unwrap_or("");
                let (unit, written) = op_unit(mnemonic);
                asm.trace_row(&LloDumpOpRow {
                    trace_id,
                    hlo_op: op,
                    address,
                    position: position as i32,
                    opcode: mnemonic,
                    unit,
                    unit_as_written: &written,
                    result,
                    text,
                });
            }
        }
        Ok(())
    }

    fn allocations(path: &Path, text: &str, op: &str, asm: &mut TraceAssembler<'_>) -> Result<()> {
        let trace_id = asm.trace_id();
        for (n, at, line) in lines(text) {
            let l = line.trim_start();
            let Some(rest) = l.strip_prefix("#allocation") else {
                continue;
            };
            let bad = |why: &str| malformed(path, n, at, why.to_string());
            let (num, attrs) = rest.split_once(' ').ok_or_else(|| bad("allocation"))?;
            if !num.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let attrs = attrs
                .trim()
                .strip_prefix('[')
                .and_then(|a| a.strip_suffix(']'))
                .ok_or_else(|| bad("allocation attributes not in `[ ]`"))?;
            let quoted = |key: &str| {
                attrs.find(key).and_then(|i| {
                    let s = &attrs[i + key.len()..];
                    s.find('\'').map(|j| &s[..j])
                })
            };
            let field = |key: &str| {
                attrs.find(key).map(|i| {
                    let s = &attrs[i + key.len()..];
                    s.split(',').next().unwrap_or("").trim()
                })
            };
            let size = field("size = ")
                .and_then(parse_int)
                .ok_or_else(|| bad("size"))?;
            let space = field("space=").ok_or_else(|| bad("space"))?;
            let scoped = attrs.split(',').any(|a| a.trim() == "scoped");
            asm.trace_row(&LloDumpAllocationRow {
                trace_id,
                hlo_op: op,
                line: n as i64,
                name: &format!("#allocation{num}"),
                shape: quoted("shape = '"),
                memory_space: space,
                size_bytes: size,
                offset_bytes: field("offset = ").and_then(parse_int),
                is_scoped: scoped,
                tag: quoted("tag = '"),
            });
        }
        Ok(())
    }
}

/// `(address, tag, in loop, where the ops start)` of a bundle line:
/// `  0x2c LB: > { … }`.
fn bundle_head(line: &str) -> Option<(i64, Option<&str>, bool, usize)> {
    let colon = line.find(':')?;
    let head = &line[..colon];
    let mut parts = head.split_whitespace();
    let address = parts.next()?;
    let address = if address == "0" {
        0
    } else {
        i64::from_str_radix(address.strip_prefix("0x")?, 16).ok()?
    };
    let tag = parts.next();
    if parts.next().is_some()
        || tag.is_some_and(|t| t.len() != 2 || !t.bytes().all(|b| b.is_ascii_uppercase()))
    {
        return None;
    }
    let after = &line[colon + 1..];
    let t = after.trim_start();
    let (in_loop, t) = match t.strip_prefix('>') {
        Some(r) => (true, r.trim_start()),
        None => (false, t),
    };
    if !t.starts_with('{') {
        return None;
    }
    Some((address, tag, in_loop, line.len() - t.len()))
}

/// Splits `{ ops } /* comment */` at the trailing comment, which holds
/// region events and entry/exit notes; comments inside ops stay in them.
fn split_comment(rest: &str) -> (&str, Option<&str>) {
    if rest.ends_with("*/") {
        let mut search = rest.len();
        while let Some(i) = rest[..search].rfind("} /* ") {
            let c = &rest[i + 5..rest.len() - 2];
            let c = c.trim();
            if ["Start ", "End ", "entry bundle", "exit bundle"]
                .iter()
                .any(|k| c.starts_with(k))
            {
                return (&rest[..i + 1], Some(c));
            }
            search = i;
        }
    }
    (rest, None)
}

impl ProfileReader for LloDumpReader {
    fn name(&self) -> &'static str {
        "llo_dump"
    }

    fn owns_file_name(&self, file_name: &str) -> bool {
        parse_dump_name(file_name).is_some()
    }

    fn sniff(&self, path: &Path, _head: &[u8]) -> bool {
        path.file_name()
            .is_some_and(|n| parse_dump_name(&n.to_string_lossy()).is_some())
    }

    fn convert(
        &self,
        input: &InputBytes,
        _options: &ConvertOptions,
        asm: &mut TraceAssembler<'_>,
    ) -> Result<TraceInfo> {
        let path = asm.source().path.clone();
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = parse_dump_name(&file_name).ok_or_else(|| ConvertError::UnknownFormat {
            path: path.clone(),
            why: "not an LLO dump file name (<ns>-<HLO op>-<pass>-<dump>.txt)".into(),
        })?;
        let text = std::str::from_utf8(input).map_err(|e| ConvertError::Malformed {
            path: path.clone(),
            format: "LLO dump",
            offset: e.valid_up_to() as u64,
            what: "not UTF-8 text".into(),
        })?;
        let op = name.hlo_op;
        match name.dump {
            "final_hlo-static-per-bundle-utilization" => Self::utilization(&path, text, op, asm)?,
            "schedule-analysis_final_bundles" => Self::schedule(&path, text, op, asm)?,
            "final_bundles" => Self::bundles(&path, text, op, asm)?,
            _ => Self::allocations(&path, text, op, asm)?,
        }
        Ok(TraceInfo {
            start_unix_ns: Some(name.timestamp_ns),
            ..Default::default()
        })
    }

    fn inspect(&self, _input: &InputBytes) -> Result<Vec<PlaneInfo>> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_file_names_split_into_their_parts() {
        let n = parse_dump_name(
            "1783580667000000000-matmul_optimized.1-121-final_hlo-static-per-bundle-utilization.txt",
        )
        .unwrap();
        assert_eq!(
            (n.timestamp_ns, n.hlo_op, n.pass, n.dump),
            (
                1783580667000000000,
                "matmul_optimized.1",
                121,
                "final_hlo-static-per-bundle-utilization"
            )
        );
        let n = parse_dump_name("1783580667000000000-a-b.2-124-final_bundles.txt").unwrap();
        assert_eq!((n.hlo_op, n.pass, n.dump), ("a-b.2", 124, "final_bundles"));
        assert!(parse_dump_name("x-matmul-124-final_bundles.txt").is_none());
        assert!(parse_dump_name("1783580667000000000-matmul-124-other.txt").is_none());
        assert!(parse_dump_name("host.xplane.pb").is_none());
    }

    #[test]
    fn bundle_lines_split_into_address_tag_ops_and_comment() {
        let l = "  0x2c LB: > { %s40_s3 = sadd.s32 1, %s37_s3  ;;  %p41_p0 = scmp.ge.s32 %s40_s3, 4 } /* Start region 69 */";
        let (addr, tag, in_loop, at) = bundle_head(l).unwrap();
        assert_eq!((addr, tag, in_loop), (0x2c, Some("LB"), true));
        let (body, comment) = split_comment(&l[at..]);
        assert_eq!(comment, Some("Start region 69"));
        assert!(body.ends_with('}'));
        let l = "     0   :  { %s101_s0 = inlined_call_operand.hbm [shape: f32[8,128]] }";
        assert_eq!(
            bundle_head(l).map(|h| (h.0, h.1, h.2)),
            Some((0, None, false))
        );
        assert!(bundle_head("hlo: matmul_optimized.1").is_none());
        assert_eq!(
            op_unit("vmatmul.mubr.f32.gmra.mxu1"),
            ("MXU", "mxu1".to_string())
        );
        assert_eq!(op_unit("vpop.f32.mrf.mxu0"), ("VPOP", "mxu0".to_string()));
        assert_eq!(op_unit("vld").0, "VLD");
        assert_eq!(op_unit("dma.done.wait").0, "VLD");
        assert_eq!(op_unit("dma.hbm_to_vmem").0, "SALU");
        assert_eq!(op_unit("vadd.f32").0, "VALU");
        assert_eq!(op_unit("sphi").0, "PSEUDO");
        assert_eq!(op_unit("scalar_lea.vmem").0, "SALU");
    }
}
