//! XProf's `register_pressure` mode: a live range per register-defining
//! instruction and the live registers of each bundle.
//!
//! The rule (XProf 2.24.2, checked on hand-made payloads; docs/llo_proto.md):
//! every instruction of the full walk whose register type is set and whose
//! register is not negative opens a range keyed by its ordinal (a later
//! instruction with the same ordinal replaces an earlier one). The range
//! starts at the instruction's bundle (0 when unscheduled) and ends, inclusive,
//! at the latest bundle of an instruction naming it as an operand, never
//! before its start.

use std::collections::{BTreeMap, HashMap};

use super::raw_instruction::{RawInstruction, register_type};

/// One register's live range.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveRange {
    /// The defining instruction.
    pub instruction_id: i64,
    /// `PREG`, `SREG`, `VMREG`, `VREG`, `RPREG`, `DREG`, `CBREG`.
    pub register_type: &'static str,
    /// Register number.
    pub register: i32,
    /// First bundle it is live in.
    pub start_bundle: i64,
    /// Last bundle it is live in (inclusive).
    pub end_bundle: i64,
}

/// Live registers of one type in one bundle (only bundles with some).
#[derive(Debug, Clone, PartialEq)]
pub struct BundlePressure {
    /// Bundle.
    pub bundle: i64,
    /// Register type.
    pub register_type: &'static str,
    /// Live ranges of that type covering the bundle.
    pub live: i64,
}

/// The live ranges in the order their instructions come in the full walk
/// (of a replaced ordinal, the position of the first), and the pressure per
/// bundle and register type, bundle by bundle, types in XProf's order.
pub fn derive(raw: &[RawInstruction]) -> (Vec<LiveRange>, Vec<BundlePressure>) {
    let mut order: Vec<i32> = Vec::new();
    let mut ranges: HashMap<i32, (i32, LiveRange)> = HashMap::new();
    for i in raw {
        let Some(name) = register_type(i.register_type) else {
            continue;
        };
        if i.register < 0 {
            continue;
        }
        let start = i.bundle.unwrap_or(0).max(0) as i64;
        let range = LiveRange {
            instruction_id: i.ordinal as i64,
            register_type: name,
            register: i.register,
            start_bundle: start,
            end_bundle: start,
        };
        if ranges.insert(i.ordinal, (i.register_type, range)).is_none() {
            order.push(i.ordinal);
        }
    }
    for user in raw {
        let at = user.bundle.unwrap_or(0).max(0) as i64;
        for op in &user.operand_ids {
            if let Some((_, r)) = ranges.get_mut(op) {
                r.end_bundle = r.end_bundle.max(at);
            }
        }
    }
    // Per bundle, per register type value (XProf's order).
    let mut live: BTreeMap<(i64, i32), (&'static str, i64)> = BTreeMap::new();
    for (ty, r) in ranges.values() {
        for b in r.start_bundle..=r.end_bundle {
            live.entry((b, *ty)).or_insert((r.register_type, 0)).1 += 1;
        }
    }
    let pressure = live
        .into_iter()
        .map(|((bundle, _), (register_type, live))| BundlePressure {
            bundle,
            register_type,
            live,
        })
        .collect();
    let out = order
        .into_iter()
        .filter_map(|o| ranges.remove(&o).map(|(_, r)| r))
        .collect();
    (out, pressure)
}
