//! A compiled kernel's schedule as a timeline: the ops of an LLO
//! compiler dump's final bundles (`llo_dump_ops`) that a selection names,
//! one track per functional-unit slot, one slice per op at its bundle,
//! the SSA use→def dependencies between selected ops as flows.
//!
//! The convention: **1 bundle = 1 ns**, bundle `N` from `N` ns to `N + 1`
//! ns (each kernel's process is named with it, e.g. `matmul.1 schedule (1
//! bundle = 1 ns)`). A slot is a unit and the op's place among the
//! bundle's ops of that unit: `MXU0`/`MXU1` and `XLU0`/`XLU1` as the
//! mnemonic's suffix names them (a second op on the same MXU in one
//! bundle, a weight push beside a matmul prep, on `MXU0.1`),
//! `VALU0`–`VALU3`, `VLD0`, `SALU1`, … by their order in the bundle;
//! pseudo-ops, which take no slot, on a `PSEUDO` track. An op's args are its text, result, unit, bundle
//! address, position in the bundle and region (`llo_dump_bundles.region_id`).
//!
//! Dependencies come from the op texts: an op defines the SSA value its
//! result names (`%v88` of `%v88_v5 = …`; the `_v5` is the register), and
//! uses each value its operands name. A flow goes from the defining op to
//! each later or same-bundle op of the selection that uses it (a loop's
//! back edges, uses before the definition, are left out: a flow that goes
//! back in time draws nothing useful).

use std::collections::{BTreeMap, HashMap};

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Int32Type, Int64Type};

use super::timeline::{ArgValue, FlowLink, Lane, LaneNames, Slice, TimelineSink, flow_uid};
use crate::error::{QueryError, Result};
use crate::session::ProfileSession;

/// Picoseconds of one bundle on the timeline (1 ns).
pub const BUNDLE_PS: i64 = 1000;

/// Units in track order; any other after them, by name.
const UNIT_ORDER: [&str; 10] = [
    "MXU", "XLU", "VALU", "VPOP", "EUP", "VLD", "VST", "SALU", "OTHER", "PSEUDO",
];

/// The columns a schedule selection carries (rows of `llo_dump_ops`).
pub const SCHEDULE_KEYS: [&str; 3] = ["trace_id", "address", "position"];

/// What a schedule export wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScheduleCounts {
    /// Ops (slices).
    pub ops: u64,
    /// Slot tracks.
    pub tracks: u64,
    /// Dependencies (flows).
    pub flows: u64,
}

/// A string column as owned strings, NULL as "".
fn strings(col: &dyn Array) -> Result<Vec<String>> {
    let utf8 = arrow::compute::cast(col, &DataType::Utf8)
        .map_err(datafusion::error::DataFusionError::from)?;
    let arr = utf8.as_string::<i32>();
    Ok((0..arr.len())
        .map(|i| {
            if arr.is_valid(i) {
                arr.value(i).to_string()
            } else {
                String::new()
            }
        })
        .collect())
}

/// One selected op.
struct Op {
    trace_id: i32,
    hlo_op: String,
    address: i64,
    position: i32,
    opcode: String,
    unit: String,
    slot: String,
    result: Option<String>,
    text: String,
    region_id: Option<i64>,
}

/// The SSA value a register operand or result names: `%v88_v5` → `%v88`,
/// `%p5_p1` → `%p5`, `%90` → `%90`.
fn ssa_value(token: &str) -> &str {
    token.split_once('_').map_or(token, |(value, _)| value)
}

/// The `%…` register tokens of `text`, in order.
fn registers(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let start = i;
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            if i > start + 1 {
                out.push(&text[start..i]);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The values an op uses: its text's registers after the `=` that
/// defines its result (all of them when it has none), its result left out.
fn uses<'a>(text: &'a str, result: Option<&str>) -> Vec<&'a str> {
    let operands = match (result, text.split_once(" = ")) {
        (Some(_), Some((_, rest))) => rest,
        _ => text,
    };
    let own = result.map(ssa_value);
    let mut values: Vec<&str> = Vec::new();
    for value in registers(operands).into_iter().map(ssa_value) {
        // A value read twice (`vmul %v5, %v5`) is one dependency.
        if Some(value) != own && !values.contains(&value) {
            values.push(value);
        }
    }
    values
}

/// The slot an op takes in a bundle whose earlier ops took `taken`. A
/// unit the mnemonic numbers (`mxu1`, `xlu0`) is that unit, `MXU1`; a
/// second op on it in the same bundle (an MXU takes a weight push and a
/// matmul prep at once) is `MXU1.1`, a third `MXU1.2`. Other ops take the
/// unit's first free number: `VALU0`, `VALU1`, …. No two ops of a bundle
/// share a slot; pseudo-ops, which take none, are all `PSEUDO`.
fn slot(unit: &str, unit_as_written: &str, taken: &std::collections::HashSet<String>) -> String {
    if unit == "PSEUDO" {
        return "PSEUDO".into();
    }
    let digits = unit_as_written.trim_start_matches(|c: char| !c.is_ascii_digit());
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        let first = format!("{unit}{digits}");
        if !taken.contains(&first) {
            return first;
        }
        return (1..)
            .map(|k| format!("{unit}{digits}.{k}"))
            .find(|s| !taken.contains(s))
            .expect("a free slot");
    }
    (0..)
        .map(|k| format!("{unit}{k}"))
        .find(|s| !taken.contains(s))
        .expect("a free slot")
}

/// Where a slot's track goes: its unit's rank ([`UNIT_ORDER`]), the
/// unit, the slot's number and its second number (`MXU0.1`).
type SlotOrder = (usize, String, u32, u32);

/// The order of a slot's track: by unit ([`UNIT_ORDER`]), then number.
fn slot_order(slot: &str) -> SlotOrder {
    let (main, sub) = slot.split_once('.').unwrap_or((slot, "0"));
    let unit = main.trim_end_matches(|c: char| c.is_ascii_digit());
    let number = main[unit.len()..].parse().unwrap_or(0);
    let rank = UNIT_ORDER
        .iter()
        .position(|u| *u == unit)
        .unwrap_or(UNIT_ORDER.len());
    (rank, unit.to_string(), number, sub.parse().unwrap_or(0))
}

/// Reads the selected ops, in trace, bundle and position order.
async fn selected_ops(session: &ProfileSession, selection: &str) -> Result<Vec<Op>> {
    let batches = session
        .collect(&format!(
            "WITH xprof_export_selection AS ({selection}) \
             SELECT o.trace_id, o.hlo_op, o.address, o.position, o.opcode, o.unit, \
                    o.unit_as_written, o.result, o.text, b.region_id \
             FROM llo_dump_ops o \
             JOIN (SELECT DISTINCT trace_id, address, position FROM xprof_export_selection) s \
               ON s.trace_id = o.trace_id AND s.address = o.address AND s.position = o.position \
             LEFT JOIN llo_dump_bundles b ON b.trace_id = o.trace_id AND b.address = o.address \
             ORDER BY o.trace_id, o.address, o.position"
        ))
        .await?;
    let mut ops = Vec::new();
    // Slots the current bundle's ops took so far.
    let mut in_bundle: std::collections::HashSet<String> = Default::default();
    let mut bundle = None;
    for b in &batches {
        let cast = |c: usize, t: &DataType| {
            arrow::compute::cast(b.column(c), t).map_err(datafusion::error::DataFusionError::from)
        };
        let trace = cast(0, &DataType::Int32)?;
        let trace = trace.as_primitive::<Int32Type>();
        let hlo_op = strings(b.column(1))?;
        let address = cast(2, &DataType::Int64)?;
        let address = address.as_primitive::<Int64Type>();
        let position = cast(3, &DataType::Int32)?;
        let position = position.as_primitive::<Int32Type>();
        let opcode = strings(b.column(4))?;
        let unit = strings(b.column(5))?;
        let written = strings(b.column(6))?;
        let result = strings(b.column(7))?;
        let text = strings(b.column(8))?;
        let region = cast(9, &DataType::Int64)?;
        let region = region.as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            let here = (trace.value(i), address.value(i));
            if bundle != Some(here) {
                bundle = Some(here);
                in_bundle.clear();
            }
            let slot = slot(&unit[i], &written[i], &in_bundle);
            in_bundle.insert(slot.clone());
            ops.push(Op {
                trace_id: trace.value(i),
                hlo_op: hlo_op[i].clone(),
                address: address.value(i),
                position: position.value(i),
                opcode: opcode[i].clone(),
                unit: unit[i].clone(),
                slot,
                result: b.column(7).is_valid(i).then(|| result[i].clone()),
                text: text[i].clone(),
                region_id: region.is_valid(i).then(|| region.value(i)),
            });
        }
    }
    Ok(ops)
}

/// Writes the schedule of the ops `selection` names (rows with
/// [`SCHEDULE_KEYS`]) into `sink`; `io` makes a write error the
/// export's.
pub(super) async fn write_schedule(
    session: &ProfileSession,
    selection: &str,
    sink: &mut (dyn TimelineSink + Send),
    io: impl Fn(std::io::Error) -> QueryError,
) -> Result<ScheduleCounts> {
    let ops = selected_ops(session, selection).await?;
    if ops.is_empty() {
        return Err(QueryError::Inputs(
            "the selection names no op of llo_dump_ops (a schedule export reads a dump's ops: \
             SELECT * FROM llo_dump_ops WHERE hlo_op = '…')"
                .into(),
        ));
    }
    // Flows: each use of a value defined by an earlier (or same-bundle)
    // selected op of the same trace.
    let mut defined: HashMap<(i32, &str), usize> = HashMap::new();
    let mut flows_out: Vec<Vec<u64>> = vec![Vec::new(); ops.len()];
    let mut flows_in: Vec<Vec<u64>> = vec![Vec::new(); ops.len()];
    let mut flow_count = 0u64;
    let mut dependencies: Vec<(usize, usize, u64)> = Vec::new();
    for (k, op) in ops.iter().enumerate() {
        for value in uses(&op.text, op.result.as_deref()) {
            if let Some(&def) = defined.get(&(op.trace_id, value)) {
                let uid = flow_uid(op.trace_id, def as i64, k as i64);
                flows_out[def].push(uid);
                flows_in[k].push(uid);
                dependencies.push((def, k, uid));
                flow_count += 1;
            }
        }
        if let Some(result) = &op.result {
            defined.insert((op.trace_id, ssa_value(result)), k);
        }
    }
    // Tracks: per trace, its slots in unit order; slices lane by lane.
    let mut lanes: BTreeMap<(i32, SlotOrder), Vec<usize>> = BTreeMap::new();
    for (k, op) in ops.iter().enumerate() {
        lanes
            .entry((op.trace_id, slot_order(&op.slot)))
            .or_default()
            .push(k);
    }
    let mut summary = ScheduleCounts::default();
    let mut track_of_trace: HashMap<i32, i32> = HashMap::new();
    let mut lane_of_op: Vec<Option<Lane>> = vec![None; ops.len()];
    for ((trace_id, _), members) in &lanes {
        let first = &ops[members[0]];
        let track_id = track_of_trace.entry(*trace_id).or_default();
        let lane = Lane {
            trace_id: *trace_id,
            device_id: 0,
            track_id: *track_id,
            overflow: 0,
        };
        *track_id += 1;
        let names = LaneNames {
            process: format!("{} schedule (1 bundle = 1 ns)", first.hlo_op),
            thread: first.slot.clone(),
        };
        sink.lane(&lane, &names).map_err(&io)?;
        summary.tracks += 1;
        for &k in members {
            let op = &ops[k];
            lane_of_op[k] = Some(lane.clone());
            let mut args = vec![
                ("address".to_string(), ArgValue::Int(op.address)),
                (
                    "position".to_string(),
                    ArgValue::Int(i64::from(op.position)),
                ),
                ("unit".to_string(), ArgValue::Str(op.unit.clone())),
                ("text".to_string(), ArgValue::Str(op.text.clone())),
            ];
            if let Some(result) = &op.result {
                args.push(("result".into(), ArgValue::Str(result.clone())));
            }
            if let Some(region) = op.region_id {
                args.push(("region_id".into(), ArgValue::Int(region)));
            }
            args.sort_by(|a, b| a.0.cmp(&b.0));
            let slice = Slice {
                trace_id: op.trace_id,
                event_id: k as i64,
                name: op.opcode.clone(),
                ts_ps: op.address * BUNDLE_PS,
                dur_ps: BUNDLE_PS,
                args,
                flows_out: std::mem::take(&mut flows_out[k]),
                flows_in: std::mem::take(&mut flows_in[k]),
            };
            sink.slice(&lane, &slice).map_err(&io)?;
            summary.ops += 1;
        }
    }
    // The flows again as links, for the writers that write them apart
    // from the slices (Chrome JSON; Perfetto wrote them on the slices).
    for (def, used, uid) in dependencies {
        let (Some(from), Some(to)) = (lane_of_op[def].clone(), lane_of_op[used].clone()) else {
            continue;
        };
        sink.flow(&FlowLink {
            trace_id: ops[def].trace_id,
            flow_id: def as i64,
            link_id: uid,
            kind: "ssa".into(),
            from: (from, ops[def].address * BUNDLE_PS),
            to: (to, ops[used].address * BUNDLE_PS),
        })
        .map_err(&io)?;
    }
    summary.flows = flow_count;
    sink.finish().map_err(&io)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_op_uses_the_values_its_operands_name() {
        let text = "%v12_v5 = vadd.f32 %v10_v1, %v11_v2";
        assert_eq!(uses(text, Some("%v12_v5")), ["%v10", "%v11"]);
        let store = "vst [vmem:[#allocation2 + $0x58] sm:$0xff] %v11_v3";
        assert_eq!(uses(store, None), ["%v11"]);
        let halt = "%90 = shalt.err (!%p5_p1) /* BoundsCheck */";
        assert_eq!(uses(halt, Some("%90")), ["%p5"]);
        assert_eq!(
            uses("%v7_v1 = vmul.f32 %v5_v2, %v5_v2", Some("%v7_v1")),
            ["%v5"]
        );
    }

    #[test]
    fn slots_are_named_by_suffix_or_by_place_in_the_bundle() {
        let taken = |slots: &[&str]| -> std::collections::HashSet<String> {
            slots.iter().map(|s| s.to_string()).collect()
        };
        assert_eq!(slot("MXU", "mxu1", &taken(&[])), "MXU1");
        assert_eq!(slot("MXU", "mxu1", &taken(&["MXU1"])), "MXU1.1");
        assert_eq!(slot("XLU", "xlu0", &taken(&["VALU0"])), "XLU0");
        assert_eq!(slot("VALU", "vadd", &taken(&["VALU0", "VALU1"])), "VALU2");
        // An op without a suffix beside `…xlu0` takes the next free XLU.
        assert_eq!(slot("XLU", "vadd", &taken(&["XLU0"])), "XLU1");
        assert_eq!(slot("PSEUDO", "sphi", &taken(&["PSEUDO"])), "PSEUDO");
        let mut order = vec![
            "VALU1", "MXU1", "SALU0", "VALU0", "MXU0.1", "MXU0", "PSEUDO",
        ];
        order.sort_by_key(|s| slot_order(s));
        assert_eq!(
            order,
            [
                "MXU0", "MXU0.1", "MXU1", "VALU0", "VALU1", "SALU0", "PSEUDO"
            ]
        );
    }
}
