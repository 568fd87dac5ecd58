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

use std::path::{Path, PathBuf};

use xprof_format::hash::FxHashMap as HashMap;

use xprof_format::schema::{
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

/// The unit an op of the final bundles issues on, and the unit as its
/// mnemonic writes it (`mxu0`, `xlu0`, `vld`, `dma`, `sadd`, ...).
///
/// Decided from the mnemonic alone, in this order, so that each op of a
/// bundle counts in the column of the compiler's per-bundle utilization
/// dump (§9.1) that counts it: `vpop.*` is `VPOP` (also when it pops an
/// MXU's result: `vpop.f32.mrf.mxu0`); a unit suffix names the unit
/// (`.mxuN` `MXU`, `.xluN` `XLU`), and a cross-lane op (`.xlane.`, as in
/// `vadd.xlane.f32.xlu0`) is `XLU` even without one: it takes an XLU slot,
/// not a VALU one; `vmat*` is `MXU`; `vld`, `dma.done.wait` and
/// `vsyncadd` are `VLD`; `vst` is `VST`; `inlined_call_operand`, `sphi`
/// and `int_to_ptr` are `PSEUDO` (no slot); the other DMA, scalar and
/// predicate ops are `SALU`; any other `v*` op is `VALU`; the rest
/// `OTHER`. The MXU column of that dump is not an op count (it is the MXUs
/// the compiler models busy), so `MXU` ops do not add up to it;
/// `llo_dump_unit_check` compares the other columns bundle by bundle.
pub fn op_unit(mnemonic: &str) -> (&'static str, String) {
    let first = mnemonic.split('.').next().unwrap_or(mnemonic);
    let suffix = |unit: &str| {
        mnemonic.rsplit('.').next().filter(|last| {
            last.len() > unit.len()
                && last.starts_with(unit)
                && last[unit.len()..].bytes().all(|b| b.is_ascii_digit())
        })
    };
    let mxu = suffix("mxu");
    let xlu = suffix("xlu");
    let cross_lane = mnemonic.split('.').any(|part| part == "xlane");
    let written = mxu.or(xlu).unwrap_or(first).to_string();
    let unit = if first == "vpop" {
        "VPOP"
    } else if mxu.is_some() {
        "MXU"
    } else if xlu.is_some() || cross_lane {
        "XLU"
    } else if first.starts_with("vmat") {
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

/// Lines with their 1-based number and byte offset. A line ends at `\n`,
/// `\r\n` or a lone `\r` (a file saved with old Mac line ends): each is
/// a line end the compiler's dumps may reach us with.
fn lines(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut number = 0;
    std::iter::from_fn(move || {
        if at > bytes.len() {
            return None;
        }
        let start = at;
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .map_or(bytes.len(), |p| start + p);
        at = match bytes.get(end) {
            Some(b'\r') if bytes.get(end + 1) == Some(&b'\n') => end + 2,
            Some(_) => end + 1,
            // Past the end: the last line was this one.
            None => bytes.len() + 1,
        };
        number += 1;
        Some((number, start, &text[start..end]))
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
    /// Reads one dump file of the kernel into its tables.
    fn convert_file(path: &Path, input: &[u8], asm: &mut TraceAssembler<'_>) -> Result<()> {
        let file_name = path.file_name().unwrap_or_default().to_string_lossy();
        let Some(name) = parse_dump_name(&file_name) else {
            return Ok(());
        };
        let text = std::str::from_utf8(input).map_err(|e| ConvertError::Malformed {
            path: path.to_path_buf(),
            format: "LLO dump",
            offset: e.valid_up_to() as u64,
            what: "not UTF-8 text".into(),
        })?;
        let op = name.hlo_op;
        match name.dump {
            "final_hlo-static-per-bundle-utilization" => Self::utilization(path, text, op, asm),
            "schedule-analysis_final_bundles" => Self::schedule(path, text, op, asm),
            "final_bundles" => Self::bundles(path, text, op, asm),
            _ => Self::allocations(path, text, op, asm),
        }
    }

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
        let mut notes = Notes::new(path);
        // Logical lines: a bundle starts with its right-aligned address,
        // a tag field and `:`; other lines continue the one before (the
        // `BoundsCheck` comments span three).
        let mut logical: Vec<(usize, usize, String)> = Vec::new();
        // The line of an open `control target key` block.
        let mut in_key: Option<(usize, usize)> = None;
        for (n, at, line) in lines(text) {
            if line.starts_with("= control target key start") {
                in_key = Some((n, at));
                continue;
            }
            if line.starts_with("= control target key end") {
                in_key = None;
                continue;
            }
            if let Some((key_line, key_at)) = in_key {
                // A bundle ends a key block never closed, rather than the
                // block swallowing every bundle after it.
                if bundle_head(line).is_none() {
                    continue;
                }
                notes.push(
                    key_line,
                    key_at,
                    format!("the control target key block is not closed before the bundle on line {n}; it ends there"),
                );
                in_key = None;
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
        if logical.is_empty() {
            let lines = lines(text).filter(|l| !l.2.trim().is_empty()).count();
            notes.push(
                1,
                0,
                format!(
                    "no bundle read from its {lines} non-empty line{}: a final-bundles dump \
                     has a line `ADDRESS TAG: {{ ops }}` per bundle",
                    if lines == 1 { "" } else { "s" }
                ),
            );
        }
        // Region events apply in file order: starts, then the bundle's
        // innermost open region, then ends.
        let mut open = OpenRegions::default();
        let mut bundles: Vec<Bundle<'_>> = Vec::with_capacity(logical.len());
        for (n, at, line) in &logical {
            let head = bundle_head(line).ok_or_else(|| malformed(path, *n, *at, "bundle head"))?;
            let mut b = Bundle {
                line: *n,
                address: head.address.ok(),
                tag: head.tag,
                in_loop: head.in_loop,
                ops: None,
                region_id: None,
                started: Vec::new(),
                ended: Vec::new(),
                empty: Vec::new(),
                entry: false,
                exit: false,
                comment: None,
                unread: None,
            };
            let parsed = match head.address {
                Ok(address) => body_and_comment(&line[head.body_at..])
                    .map(|(ops, comment)| (address, ops, comment))
                    .ok_or_else(|| "its ops are not in `{ }`".to_string()),
                Err(written) => Err(format!(
                    "its address {written} is above 2^63 - 1, the largest the signed 64-bit \
                     `address` column holds"
                )),
            };
            match parsed {
                Ok((_, ops, comment)) => {
                    b.ops = Some(ops);
                    b.comment = comment;
                }
                Err(why) => {
                    notes.push(
                        *n,
                        *at,
                        format!("bundle not read: {why}; kept as `unread_text`"),
                    );
                    b.unread = Some(line.as_str());
                    // The trailing comment's region events still count
                    // where one can be told apart.
                    b.comment = split_comment(line).1;
                }
            }
            if let Some(c) = b.comment {
                for part in c.split("::").map(str::trim) {
                    let event = if let Some(r) = part.strip_prefix("Start/End empty region") {
                        Some((&mut b.empty, r))
                    } else if let Some(r) = part.strip_prefix("Start region") {
                        Some((&mut b.started, r))
                    } else if let Some(r) = part.strip_prefix("End region") {
                        Some((&mut b.ended, r))
                    } else {
                        b.entry |= part.starts_with("entry bundle");
                        b.exit |= part.starts_with("exit bundle");
                        None
                    };
                    if let Some((into, number)) = event {
                        match number.trim().parse::<i64>() {
                            Ok(id) => into.push(id),
                            Err(_) => notes.push(
                                *n,
                                *at,
                                format!("region event {part:?} has no region number"),
                            ),
                        }
                    }
                }
            }
            // The entry bundle opens region 0, the whole kernel (the
            // facts sheet maps R0 to it; it has no `Start region` comment).
            if b.entry && open.is_empty() {
                open.start(0, *n);
            }
            for &id in &b.started {
                if open.is_open(id) {
                    notes.push(
                        *n,
                        *at,
                        format!("Start region {id} while region {id} is open"),
                    );
                }
                open.start(id, *n);
            }
            b.region_id = open.innermost();
            for &id in &b.ended {
                if !open.end(id) {
                    notes.push(
                        *n,
                        *at,
                        format!("End region {id} with no open `Start region {id}` before it"),
                    );
                }
            }
            bundles.push(b);
        }
        for (id, line) in open.still_open().filter(|o| o.0 != 0) {
            // `logical` is in line order.
            let at = logical
                .binary_search_by_key(&line, |l| l.0)
                .map_or(0, |i| logical[i].1);
            notes.push(line, at, format!("Start region {id} is never ended"));
        }
        // Rows go out in address order (the table's declared order); the
        // file order stays in `line`.
        if let Some(w) = bundles
            .windows(2)
            .find(|w| match (w[0].address, w[1].address) {
                (Some(a), Some(b)) => b < a,
                _ => false,
            })
        {
            let at = logical.iter().find(|l| l.0 == w[1].line).map_or(0, |l| l.1);
            notes.push(
                w[1].line,
                at,
                format!(
                    "bundle address {:#x} comes after {:#x}: bundles sorted by address, `line` keeps the file order",
                    w[1].address.unwrap_or(0),
                    w[0].address.unwrap_or(0)
                ),
            );
        }
        // Stable: equal addresses keep the file order; unread addresses
        // (NULL) go last, as the declared order puts NULLs.
        bundles.sort_by_key(|b| (b.address.is_none(), b.address));
        // Two bundles at one address are both kept, with a warning; the
        // second's ops are numbered on from the first's, so that
        // `llo_dump_ops` stays in its (address, position) order.
        for w in bundles
            .windows(2)
            .filter(|w| w[0].address.is_some() && w[0].address == w[1].address)
        {
            let (first, again) = (w[0].line.min(w[1].line), w[0].line.max(w[1].line));
            let at = logical
                .binary_search_by_key(&again, |l| l.0)
                .map_or(0, |i| logical[i].1);
            notes.push(
                again,
                at,
                format!(
                    "bundle address {:#x} is also the address of the bundle on line {first}: \
                     both kept, the ops of the later line numbered on after the earlier's",
                    w[0].address.unwrap_or(0)
                ),
            );
        }
        let mut numbering: (Option<i64>, usize) = (None, 0);
        for b in &bundles {
            asm.trace_row(&LloDumpBundleRow {
                trace_id,
                hlo_op: op,
                address: b.address,
                line: b.line as i64,
                tag: b.tag,
                in_loop: b.in_loop,
                ops: b.ops.as_ref().map(|o| o.len() as i64),
                region_id: b.region_id,
                regions_started: &b.started,
                regions_ended: &b.ended,
                regions_empty: &b.empty,
                is_entry: b.entry,
                is_exit: b.exit,
                comment: b.comment,
                unread_text: b.unread,
            });
            let (Some(address), Some(ops)) = (b.address, &b.ops) else {
                continue;
            };
            if numbering.0 != Some(address) {
                numbering = (Some(address), 0);
            }
            let first_position = numbering.1;
            numbering.1 += ops.len();
            for (position, text) in ops.iter().enumerate() {
                let position = first_position + position;
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
        notes.finish(asm);
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

/// One bundle of the final bundles, read.
struct Bundle<'t> {
    line: usize,
    address: Option<i64>,
    tag: Option<&'t str>,
    in_loop: bool,
    ops: Option<Vec<&'t str>>,
    region_id: Option<i64>,
    started: Vec<i64>,
    ended: Vec<i64>,
    empty: Vec<i64>,
    entry: bool,
    exit: bool,
    comment: Option<&'t str>,
    unread: Option<&'t str>,
}

/// The regions open at a bundle, innermost last, in time linear in the
/// region events whatever order they close in (100,000 regions closed
/// first-in-first-out took 5.4 s with a plain stack searched and shifted).
#[derive(Default)]
struct OpenRegions {
    /// Regions in the order started; an ended one is `None` until the
    /// ones above it end too. The last entry, if any, is open.
    started: Vec<Option<(i64, usize)>>,
    /// Per region id: the indexes in `started` of its open starts.
    by_id: HashMap<i64, Vec<usize>>,
}

impl OpenRegions {
    fn is_empty(&self) -> bool {
        self.started.is_empty()
    }

    fn is_open(&self, id: i64) -> bool {
        self.by_id.get(&id).is_some_and(|v| !v.is_empty())
    }

    /// Opens region `id` at line `line`.
    fn start(&mut self, id: i64, line: usize) {
        self.by_id.entry(id).or_default().push(self.started.len());
        self.started.push(Some((id, line)));
    }

    /// Ends the latest open start of `id`; false when none is open.
    fn end(&mut self, id: i64) -> bool {
        let Some(index) = self.by_id.get_mut(&id).and_then(Vec::pop) else {
            return false;
        };
        self.started[index] = None;
        while self.started.last().is_some_and(Option::is_none) {
            self.started.pop();
        }
        true
    }

    /// The innermost open region.
    fn innermost(&self) -> Option<i64> {
        self.started.last().copied().flatten().map(|o| o.0)
    }

    /// The regions still open, with the line of their start.
    fn still_open(&self) -> impl Iterator<Item = (i64, usize)> + '_ {
        self.started.iter().flatten().copied()
    }
}

/// How many converter warnings one dump file gives in full; the rest are
/// counted in one more.
const WARNINGS_IN_FULL: usize = 20;

/// Converter warnings of one dump file, each naming the file, the line
/// and the byte offset.
struct Notes<'p> {
    path: &'p Path,
    messages: Vec<String>,
    more: usize,
}

impl<'p> Notes<'p> {
    fn new(path: &'p Path) -> Self {
        Self {
            path,
            messages: Vec::new(),
            more: 0,
        }
    }

    fn push(&mut self, line: usize, offset: usize, what: String) {
        if self.messages.len() < WARNINGS_IN_FULL {
            self.messages.push(format!(
                "{}: line {line} (byte {offset}): {what}",
                self.path.display()
            ));
        } else {
            self.more += 1;
        }
    }

    fn finish(self, asm: &mut TraceAssembler<'_>) {
        for m in self.messages {
            asm.warn(m);
        }
        if self.more > 0 {
            asm.warn(format!(
                "{}: {} more warnings like these",
                self.path.display(),
                self.more
            ));
        }
    }
}

/// The head of a bundle line: `  0x2c LB: > { … }`.
#[derive(Debug, PartialEq, Eq)]
struct BundleHead<'t> {
    /// The address, or as written where it does not fit in 64 bits.
    address: std::result::Result<i64, &'t str>,
    tag: Option<&'t str>,
    in_loop: bool,
    /// Where the text after `:` and the `>` mark starts.
    body_at: usize,
}

/// The head of a bundle line: an address (`0` or `0x…`), an optional
/// two-letter tag (`LB`, `PF`, `LH`, `LE`, `PB`, `CT`, or any other), `:`,
/// an optional `>` and then `{`.
fn bundle_head(line: &str) -> Option<BundleHead<'_>> {
    let colon = line.find(':')?;
    let head = &line[..colon];
    let mut parts = head.split_whitespace();
    let written = parts.next()?;
    let address = if written == "0" {
        Ok(0)
    } else {
        let hex = written.strip_prefix("0x")?;
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        i64::from_str_radix(hex, 16).map_err(|_| written)
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
    Some(BundleHead {
        address,
        tag,
        in_loop,
        body_at: line.len() - t.len(),
    })
}

/// The ops and the trailing comment of `{ ops } /* comment */`. The body
/// ends at the brace that closes the first one (op text holds balanced
/// braces, `shape index: {}`); where that leaves no plain comment, at the
/// last `} /* ` whose comment holds region events or entry/exit notes
/// (comments inside ops, such as the `BoundsCheck` ones, embed op text).
fn body_and_comment(rest: &str) -> Option<(Vec<&str>, Option<&str>)> {
    let rest = rest.trim_end();
    let by_braces = closing_brace(rest).and_then(|close| {
        let after = rest[close + 1..].trim();
        let comment = if after.is_empty() {
            None
        } else {
            Some(after.strip_prefix("/*")?.strip_suffix("*/")?.trim())
        };
        Some((&rest[..=close], comment))
    });
    let (body, comment) = by_braces.or_else(|| match split_comment(rest) {
        (body, Some(c)) => Some((body, Some(c))),
        (_, None) => None,
    })?;
    let inner = body.trim().strip_prefix('{')?.strip_suffix('}')?.trim();
    let ops = if inner.is_empty() {
        Vec::new()
    } else {
        inner.split("  ;;  ").map(str::trim).collect()
    };
    Some((ops, comment))
}

/// Where the `}` closing the `{` that `text` starts with is.
fn closing_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits `{ ops } /* comment */` at the last trailing comment that holds
/// region events or entry/exit notes; comments inside ops stay in them.
fn split_comment(rest: &str) -> (&str, Option<&str>) {
    let rest = rest.trim_end();
    if rest.ends_with("*/") {
        let mut search = rest.len();
        while let Some(i) = rest[..search].rfind("} /* ") {
            let c = rest[i + 5..rest.len() - 2].trim();
            if [
                "Start ",
                "Start/End ",
                "End ",
                "entry bundle",
                "exit bundle",
            ]
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

    /// The kernel's other dump files of the same compile: beside `path`,
    /// with its time stamp and HLO op.
    fn companions(&self, path: &Path) -> Vec<PathBuf> {
        let Some(file_name) = path.file_name().map(|n| n.to_string_lossy()) else {
            return Vec::new();
        };
        let Some(name) = parse_dump_name(&file_name) else {
            return Vec::new();
        };
        let folder = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let Ok(entries) = std::fs::read_dir(folder) else {
            return Vec::new();
        };
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
            .filter(|e| {
                let other = e.file_name();
                let other = other.to_string_lossy();
                other != file_name
                    && parse_dump_name(&other).is_some_and(|n| {
                        n.timestamp_ns == name.timestamp_ns && n.hlo_op == name.hlo_op
                    })
            })
            .map(|e| e.path())
            .collect();
        found.sort();
        found
    }

    /// A kernel's trace is named by its HLO op and compile time stamp
    /// (`fusion.1@1783580667000000000`): a dump folder of several modules
    /// holds several compiles of ops of one name, each its own trace.
    fn host_name(&self, file_name: &str) -> Option<String> {
        parse_dump_name(file_name).map(|n| format!("{}@{}", n.hlo_op, n.timestamp_ns))
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
        // The kernel's trace is its files of one compile, read in the
        // order of their passes: this one, and the others beside it.
        let mut files = vec![(name.pass, path.clone())];
        for other in self.companions(&path) {
            let other_name = other.file_name().unwrap_or_default().to_string_lossy();
            if let Some(n) = parse_dump_name(&other_name) {
                files.push((n.pass, other.clone()));
            }
        }
        files.sort();
        for (_, file) in &files {
            asm.check_deadline()?;
            if *file == path {
                Self::convert_file(file, input, asm)?;
            } else {
                Self::convert_file(file, &crate::input::open(file)?, asm)?;
            }
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
    fn every_line_end_ends_a_line_at_its_byte_offset() {
        let all: Vec<_> = lines("a\nbb\r\nc\rd").collect();
        assert_eq!(all, [(1, 0, "a"), (2, 2, "bb"), (3, 6, "c"), (4, 8, "d")]);
        // A line end last gives one empty line after it, as `split` does.
        let all: Vec<_> = lines("a\r").collect();
        assert_eq!(all, [(1, 0, "a"), (2, 2, "")]);
        assert_eq!(lines("").collect::<Vec<_>>(), [(1, 0, "")]);
    }

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
        let h = bundle_head(l).unwrap();
        assert_eq!((h.address, h.tag, h.in_loop), (Ok(0x2c), Some("LB"), true));
        let (ops, comment) = body_and_comment(&l[h.body_at..]).unwrap();
        assert_eq!(comment, Some("Start region 69"));
        assert_eq!(ops.len(), 2);
        let l = "     0   :  { %s101_s0 = inlined_call_operand.hbm [shape: f32[8,128], shape index: {}] }";
        let h = bundle_head(l).unwrap();
        assert_eq!((h.address, h.tag, h.in_loop), (Ok(0), None, false));
        assert_eq!(
            body_and_comment(&l[h.body_at..]).unwrap(),
            (vec![&l[14..l.len() - 2]], None)
        );
        assert!(bundle_head("hlo: matmul_optimized.1").is_none());
        // The line a real dump failed on (issue 43).
        let l = " 0x565 PF: > { %p11070_p1 = scmp.le.s32.totalorder %s12883_s24, 0 } /* Start/End empty region 29 :: Start region 30 :: End region 30 :: Start region 31 :: Start region 32 */";
        let h = bundle_head(l).unwrap();
        assert_eq!((h.address, h.tag, h.in_loop), (Ok(0x565), Some("PF"), true));
        let (ops, comment) = body_and_comment(&l[h.body_at..]).unwrap();
        assert_eq!(ops, ["%p11070_p1 = scmp.le.s32.totalorder %s12883_s24, 0"]);
        assert!(
            comment
                .unwrap()
                .starts_with("Start/End empty region 29 :: ")
        );
        assert_eq!(
            bundle_head("0xffffffffffffffffff   :  {}").map(|h| h.address),
            Some(Err("0xffffffffffffffffff"))
        );
        assert_eq!(body_and_comment("{}"), Some((vec![], None)));
        assert_eq!(body_and_comment("{ vld  ;;  vst"), None);
        assert_eq!(
            op_unit("vmatmul.mubr.f32.gmra.mxu1"),
            ("MXU", "mxu1".to_string())
        );
        assert_eq!(op_unit("vpop.f32.mrf.mxu0"), ("VPOP", "mxu0".to_string()));
        // Cross-lane ops take an XLU slot (the reduction kernel's
        // utilization dump counts them under XLU, none under VALU).
        assert_eq!(op_unit("vadd.xlane.f32.xlu0"), ("XLU", "xlu0".to_string()));
        assert_eq!(op_unit("vmax.xlane.f32.xlu1"), ("XLU", "xlu1".to_string()));
        assert_eq!(op_unit("vadd.xlane.f32").0, "XLU");
        assert_eq!(op_unit("vmatprep.subr.mxu1"), ("MXU", "mxu1".to_string()));
        assert_eq!(op_unit("vld").0, "VLD");
        assert_eq!(op_unit("dma.done.wait").0, "VLD");
        assert_eq!(op_unit("dma.hbm_to_vmem").0, "SALU");
        assert_eq!(op_unit("vadd.f32").0, "VALU");
        assert_eq!(op_unit("sphi").0, "PSEUDO");
        assert_eq!(op_unit("scalar_lea.vmem").0, "SALU");
    }
}
