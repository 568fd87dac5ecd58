//! The decoding of one `llo_proto` payload ([`decode`]) into a
//! [`Program`], and XProf's names for its opcodes ([`opcode_info`]).

use prost::Message;

use super::bdi_stalls::{self, BdiStall};
use super::bundle_sources::{self, BundleSource};
use super::messages::llo_operand;
use super::messages::{
    LloInstructionProto, LloModuleProto, LloRegionProto, RationalVectorProto,
    StaticPerBundleUtilizationProto, llo_constant, region_member::Member,
};
use super::opcodes::OPCODES;
use super::raw_instruction::{RawInstruction, register_type};
use super::registers::{self, BundlePressure, LiveRange};
use super::target::{self, TargetInfo};

/// A node of the region tree (a region, or a loop or predicated region).
#[derive(Debug, Clone, PartialEq)]
pub struct RegionNode {
    /// Position in program order (0 is the root).
    pub node: usize,
    /// The enclosing node.
    pub parent_node: Option<usize>,
    /// Depth (0 for the root).
    pub depth: i32,
    /// The LLO region id; `None` on loop and predicated-region nodes.
    pub region_id: Option<i64>,
    /// The nearest enclosing region's id.
    pub parent_region_id: Option<i64>,
    /// XProf's node name.
    pub name: String,
    /// XProf's node kind.
    pub kind: &'static str,
    /// First bundle, `None` when not placed.
    pub start_bundle: Option<i64>,
    /// Bundle past the last, `None` when not placed.
    pub limit_bundle: Option<i64>,
    /// Instructions directly in the region.
    pub instructions: i64,
    /// Trips of a loop node.
    pub trip_count: Option<i64>,
    /// The node's path (`region/region/loop/region`).
    pub region_path: String,
    /// The provenance most of its own instructions carry.
    pub source: Provenance,
}

/// Slot use of one unit in one bundle.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleUnit {
    /// Bundle.
    pub bundle: i64,
    /// Unit in this project's vocabulary (`MXU`, `VALU`, ...).
    pub unit: &'static str,
    /// Unit as XProf names it (`mxu`, `vector_alu`, ...).
    pub xprof_unit: &'static str,
    /// Used slots.
    pub used: i64,
    /// Slots per bundle (`None` for spills and fills).
    pub capacity: Option<i64>,
    /// The last placed region in program order whose range holds the
    /// bundle (the innermost where regions nest).
    pub region_id: Option<i64>,
}

/// One instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction {
    /// Instruction id.
    pub instruction_id: i64,
    /// Opcode name.
    pub opcode: String,
    /// Opcode number.
    pub opcode_value: i32,
    /// XProf's category.
    pub category: &'static str,
    /// XProf's execution unit.
    pub unit: &'static str,
    /// Bundle, `None` when unscheduled.
    pub bundle: Option<i64>,
    /// Region holding it.
    pub region_id: Option<i64>,
    /// MXU index.
    pub mxu: Option<i32>,
    /// Result register class.
    pub register_type: Option<&'static str>,
    /// Pseudo kind.
    pub pseudo_kind: Option<&'static str>,
    /// Comment.
    pub comment: Option<String>,
    /// JAX primitive.
    pub primitive: Option<String>,
    /// Named scopes joined by `/`.
    pub named_scope: Option<String>,
    /// Source file.
    pub source_file: Option<String>,
    /// Source line.
    pub source_line: Option<i64>,
    /// Counted by XProf's `get_llo_analysis`.
    pub on_analysis_walk: bool,
}

/// One buffer allocation.
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    /// `#allocationN`.
    pub ordinal: i64,
    /// Bytes.
    pub size_bytes: i64,
    /// `vmem`, `smem`, `sflag` or `space_<n>`.
    pub memory_space: String,
    /// The space number.
    pub space: i32,
    /// Flags.
    pub is_spill: bool,
    /// Scoped.
    pub is_scoped: bool,
    /// Virtual.
    pub is_virtual: bool,
    /// Remote.
    pub is_remote: bool,
}

/// A decoded program.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    /// HLO op (field 1).
    pub hlo_op: String,
    /// HLO module (field 10).
    pub hlo_module: String,
    /// Module id (field 11).
    pub module_id: i64,
    /// Bundles (the length of the longest utilization array).
    pub bundles: i64,
    /// Region tree, in program order.
    pub regions: Vec<RegionNode>,
    /// Slot use per bundle and unit, bundle by bundle.
    pub bundle_units: Vec<BundleUnit>,
    /// Instructions, in program order.
    pub instructions: Vec<Instruction>,
    /// Allocations, in constant-pool order.
    pub allocations: Vec<Allocation>,
    /// Register live ranges (XProf's `register_pressure`).
    pub live_ranges: Vec<LiveRange>,
    /// Live registers per bundle and register type.
    pub register_pressure: Vec<BundlePressure>,
    /// Stall codes of annotated instructions (XProf's `bdi_stalls`).
    pub bdi_stalls: Vec<BdiStall>,
    /// Source lines of each bundle (XProf's `source_for_bundle`).
    pub bundle_sources: Vec<BundleSource>,
    /// The compile target (XProf's `target_info`), when field 7 is there.
    pub target: Option<TargetInfo>,
    /// The region holding each bundle (the last placed region in program
    /// order whose range holds it), bundle 0 first.
    pub bundle_regions: Vec<Option<i64>>,
}

impl Program {
    /// The region holding bundle `b`; `None` past the program or outside
    /// every placed region.
    pub fn region_of_bundle(&self, b: i64) -> Option<i64> {
        usize::try_from(b)
            .ok()
            .and_then(|b| self.bundle_regions.get(b).copied().flatten())
    }

    /// Instructions XProf's `get_llo_analysis` counts.
    pub fn analysis_instructions(&self) -> i64 {
        self.instructions
            .iter()
            .filter(|i| i.on_analysis_walk)
            .count() as i64
    }
}

/// Why a payload did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LloDecodeError(pub String);

impl std::fmt::Display for LloDecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The name, category and execution unit of an opcode, as XProf prints
/// them.
pub fn opcode_info(value: i32) -> (std::borrow::Cow<'static, str>, &'static str, &'static str) {
    match OPCODES.binary_search_by_key(&value, |o| o.0) {
        Ok(i) => {
            let (_, name, category, unit) = OPCODES[i];
            (name.into(), category, unit)
        }
        Err(_) => (format!("OPCODE_UNKNOWN_{value}").into(), "other", "OTHER"),
    }
}

/// The parts of a loop in field order, as XProf names them, and whether
/// XProf's `get_llo_analysis` walks them.
const LOOP_PARTS: [(&str, bool); 7] = [
    ("pre_header", true),
    ("header", false),
    ("header_branch", false),
    ("body", true),
    ("footer", false),
    ("footer_branch", false),
    ("exit", true),
];
/// The parts of a predicated region, likewise.
const PREDICATED_PARTS: [(&str, bool); 4] = [
    ("check_region", false),
    ("check_branch_region", false),
    ("predicated_region", true),
    ("fallthru_region", true),
];

/// Units of field 6 in order: (XProf's name, this project's name).
const UNITS: [(&str, &str); 7] = [
    ("mxu", "MXU"),
    ("xlu", "XLU"),
    ("vector_alu", "VALU"),
    ("vector_eup", "EUP"),
    ("vector_load", "VLD"),
    ("vector_store", "VST"),
    ("scalar_alu", "SALU"),
];

fn unit_vectors(u: &StaticPerBundleUtilizationProto) -> [Option<&RationalVectorProto>; 7] {
    [
        u.mxu.as_ref(),
        u.xlu.as_ref(),
        u.vector_alu.as_ref(),
        u.vector_eup.as_ref(),
        u.vector_load.as_ref(),
        u.vector_store.as_ref(),
        u.scalar_alu.as_ref(),
    ]
}

fn pseudo_kind(v: i32) -> Option<&'static str> {
    const KINDS: [&str; 13] = [
        "NONE",
        "TO_REMOVE",
        "COPY_REGISTER",
        "SPILL_TO_MEMORY",
        "FILL_FROM_MEMORY",
        "SPILL_TO_REGISTER",
        "SPILL_TO_HBM",
        "FILL_FROM_HBM",
        "SPILL_TO_VIRTUAL",
        "FILL_FROM_VIRTUAL",
        "RESERVE_REGISTER",
        "REMATERIALIZE",
        "SPLIT_COPY",
    ];
    match v {
        1..=12 => Some(KINDS[v as usize]),
        _ => None,
    }
}

/// A region's component of a bundle's `region_path`: its name, else
/// `region`.
fn region_name(r: &LloRegionProto) -> &str {
    if r.name.is_empty() { "region" } else { &r.name }
}

fn placed(v: i32) -> Option<i64> {
    (v >= 0).then_some(v as i64)
}

/// Where an instruction came from (the program's source map).
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Provenance {
    /// Named scopes, outermost first, joined by `/`.
    pub named_scope: Option<String>,
    /// JAX primitive.
    pub primitive: Option<String>,
    /// Source file of the innermost frame.
    pub file: Option<String>,
    /// Its line.
    pub line: Option<i64>,
}

impl Provenance {
    fn is_empty(&self) -> bool {
        self.named_scope.is_none()
            && self.primitive.is_none()
            && self.file.is_none()
            && self.line.is_none()
    }
}

/// Walks the region tree once, in program order.
struct Walker<'m> {
    module: &'m LloModuleProto,
    provenance: std::collections::HashMap<i32, Provenance>,
    region_of_bundle: Vec<Option<i64>>,
    raw: Vec<RawInstruction>,
    out: Program,
}

impl Walker<'_> {
    #[allow(clippy::too_many_arguments)]
    fn region(
        &mut self,
        r: &LloRegionProto,
        parent_node: Option<usize>,
        depth: i32,
        parent_region_id: Option<i64>,
        kind: &'static str,
        default_name: &str,
        path: String,
        analysis: bool,
    ) {
        let node = self.out.regions.len();
        let region_id = Some(r.ordinal as i64);
        let direct = r
            .members
            .iter()
            .filter(|m| matches!(m.member, Some(Member::Instruction(_))))
            .count() as i64;
        self.out.regions.push(RegionNode {
            node,
            parent_node,
            depth,
            region_id,
            parent_region_id,
            name: if r.name.is_empty() {
                default_name.to_string()
            } else {
                r.name.clone()
            },
            kind,
            start_bundle: placed(r.start_bundleno),
            limit_bundle: placed(r.limit_bundleno),
            instructions: direct,
            trip_count: None,
            region_path: path.clone(),
            source: Provenance::default(),
        });
        if let (Some(start), Some(limit)) = (placed(r.start_bundleno), placed(r.limit_bundleno)) {
            let n = self.region_of_bundle.len() as i64;
            for b in start.min(n)..limit.min(n) {
                self.region_of_bundle[b as usize] = region_id;
            }
        }
        for m in &r.members {
            match &m.member {
                Some(Member::Instruction(i)) => self.instruction(i, region_id, analysis),
                Some(Member::Region(sub)) => {
                    let p = format!("{path}/{}", region_name(sub));
                    self.region(
                        sub,
                        Some(node),
                        depth + 1,
                        region_id,
                        "sub_region",
                        "sub_region",
                        p,
                        analysis,
                    );
                }
                Some(Member::Loop(l)) => {
                    let parts = [
                        &l.pre_header,
                        &l.header,
                        &l.header_branch,
                        &l.body,
                        &l.footer,
                        &l.footer_branch,
                        &l.exit,
                    ];
                    let group = self.group(node, depth + 1, region_id, "loop", &path);
                    if let Some(ix) = &l.index_space
                        && ix.step != 0
                    {
                        self.out.regions[group].trip_count = Some((ix.limit - ix.start) / ix.step);
                    }
                    for (part, (name, walked)) in parts.into_iter().zip(LOOP_PARTS) {
                        self.part(
                            part.as_ref(),
                            group,
                            depth + 2,
                            region_id,
                            &path,
                            "loop",
                            name,
                            analysis && walked,
                        );
                    }
                }
                Some(Member::PredicatedRegion(pr)) => {
                    let parts = [
                        &pr.check_region,
                        &pr.check_branch_region,
                        &pr.predicated_region,
                        &pr.fallthru_region,
                    ];
                    let group = self.group(node, depth + 1, region_id, "predicated_region", &path);
                    for (part, (name, walked)) in parts.into_iter().zip(PREDICATED_PARTS) {
                        self.part(
                            part.as_ref(),
                            group,
                            depth + 2,
                            region_id,
                            &path,
                            "predicated",
                            name,
                            analysis && walked,
                        );
                    }
                }
                None => {}
            }
        }
    }

    /// One part of a loop or predicated region (`body`, `check_region`,
    /// ...), a region named by its part, under the group node `group`.
    #[allow(clippy::too_many_arguments)]
    fn part(
        &mut self,
        part: Option<&LloRegionProto>,
        group: usize,
        depth: i32,
        parent_region_id: Option<i64>,
        path: &str,
        component: &str,
        name: &str,
        walked: bool,
    ) {
        if let Some(sub) = part {
            let p = format!("{path}/{component}/{}", region_name(sub));
            self.region(
                sub,
                Some(group),
                depth,
                parent_region_id,
                "region",
                name,
                p,
                walked,
            );
        }
    }

    /// A loop or predicated-region node; returns its position.
    fn group(
        &mut self,
        parent: usize,
        depth: i32,
        parent_region_id: Option<i64>,
        kind: &'static str,
        path: &str,
    ) -> usize {
        let node = self.out.regions.len();
        self.out.regions.push(RegionNode {
            node,
            parent_node: Some(parent),
            depth,
            region_id: None,
            parent_region_id,
            name: kind.to_string(),
            kind,
            start_bundle: None,
            limit_bundle: None,
            instructions: 0,
            trip_count: None,
            source: Provenance::default(),
            region_path: format!(
                "{path}/{}",
                if kind == "loop" { "loop" } else { "predicated" }
            ),
        });
        node
    }

    fn instruction(&mut self, i: &LloInstructionProto, region_id: Option<i64>, analysis: bool) {
        let (opcode, category, unit) = opcode_info(i.opcode);
        let prov = self.provenance.get(&i.ordinal).cloned().unwrap_or_default();
        self.raw.push(RawInstruction {
            ordinal: i.ordinal,
            bundle: i.bundle,
            register: i.register,
            register_type: i.register_type,
            operand_ids: i
                .operands
                .iter()
                .filter_map(|o| match o.operand {
                    Some(llo_operand::Operand::InstructionOrdinal(id)) => Some(id),
                    _ => None,
                })
                .collect(),
            comment_index: i.comment_index,
            frame: prov.file.clone().zip(prov.line.map(|l| l as i32)),
        });
        let comment = i
            .comment_index
            .and_then(|c| usize::try_from(c).ok())
            .and_then(|c| self.module.interned_strings.get(c))
            .cloned();
        self.out.instructions.push(Instruction {
            instruction_id: i.ordinal as i64,
            opcode: opcode.into_owned(),
            opcode_value: i.opcode,
            category,
            unit,
            bundle: i.bundle.map(|b| b as i64),
            region_id,
            mxu: i.mxu,
            register_type: register_type(i.register_type),
            pseudo_kind: i.pseudo_kind.and_then(pseudo_kind),
            comment,
            primitive: prov.primitive,
            named_scope: prov.named_scope,
            source_file: prov.file,
            source_line: prov.line,
            on_analysis_walk: analysis,
        });
    }
}

/// Decodes one payload.
pub fn decode(bytes: &[u8]) -> Result<Program, LloDecodeError> {
    let module = LloModuleProto::decode(bytes)
        .map_err(|e| LloDecodeError(format!("not an LloModuleProto: {e}")))?;
    let Some(root) = &module.root_region else {
        return Err(LloDecodeError("no root region (field 2)".into()));
    };
    let util = module
        .static_per_bundle_utilization
        .clone()
        .unwrap_or_default();
    let vectors = unit_vectors(&util);
    let bundles = vectors
        .iter()
        .map(|v| v.map_or(0, |v| v.values.len()))
        .chain([util.spill.len(), util.fill.len()])
        .max()
        .unwrap_or(0);

    // Provenance: each source info names its instructions; a later entry
    // wins, as in XProf's source map.
    let mut provenance = std::collections::HashMap::new();
    if let Some(map) = &module.source_map {
        let s = |i: i32| {
            usize::try_from(i)
                .ok()
                .and_then(|i| map.strings.get(i))
                .cloned()
        };
        for info in &map.source_infos {
            let frame = info.frames.last();
            let scopes: Vec<String> = info
                .scope_string_indices
                .iter()
                .filter_map(|i| s(*i))
                .collect();
            let p = Provenance {
                primitive: info.primitive_string_index.and_then(s),
                named_scope: (!scopes.is_empty()).then(|| scopes.join("/")),
                file: frame.and_then(|f| s(f.file_string_index)),
                line: frame
                    .filter(|f| s(f.file_string_index).is_some())
                    .map(|f| f.line as i64),
            };
            for id in &info.instruction_ordinals {
                provenance.insert(*id, p.clone());
            }
        }
    }
    let mut w = Walker {
        module: &module,
        provenance,
        region_of_bundle: vec![None; bundles],
        raw: Vec::new(),
        out: Program {
            hlo_op: module.hlo_instruction_name.clone(),
            hlo_module: module.hlo_module_name.clone(),
            module_id: module.hlo_module_id,
            bundles: bundles as i64,
            ..Default::default()
        },
    };
    let root_path = region_name(root).to_string();
    w.region(root, None, 0, None, "region", "top", root_path, true);

    // Each region's provenance: what most of its own instructions carry
    // (ties to the smallest, so the answer does not depend on order).
    let mut counts: std::collections::HashMap<(i64, Provenance), usize> =
        std::collections::HashMap::new();
    for i in &w.out.instructions {
        let p = Provenance {
            named_scope: i.named_scope.clone(),
            primitive: i.primitive.clone(),
            file: i.source_file.clone(),
            line: i.source_line,
        };
        if let Some(r) = i.region_id
            && !p.is_empty()
        {
            *counts.entry((r, p)).or_default() += 1;
        }
    }
    let mut best: std::collections::HashMap<i64, (usize, Provenance)> =
        std::collections::HashMap::new();
    for ((r, p), n) in counts {
        let e = best.entry(r).or_insert((0, Provenance::default()));
        if n > e.0 || (n == e.0 && p < e.1) {
            *e = (n, p);
        }
    }
    for node in &mut w.out.regions {
        if let Some((_, p)) = node.region_id.and_then(|r| best.get(&r)) {
            node.source = p.clone();
        }
    }

    let mut bundle_units = Vec::with_capacity(bundles * 9);
    let at = |v: &[i32], b: usize| v.get(b).copied().unwrap_or(0) as i64;
    for b in 0..bundles {
        let region_id = w.region_of_bundle[b];
        for ((xprof_unit, unit), v) in UNITS.iter().zip(vectors) {
            bundle_units.push(BundleUnit {
                bundle: b as i64,
                unit,
                xprof_unit,
                used: v.map_or(0, |v| at(&v.values, b)),
                capacity: Some(v.map_or(0, |v| v.capacity as i64)),
                region_id,
            });
        }
        for (xprof_unit, unit, v) in [
            ("spill", "SPILL", &util.spill),
            ("fill", "FILL", &util.fill),
        ] {
            bundle_units.push(BundleUnit {
                bundle: b as i64,
                unit,
                xprof_unit,
                used: at(v, b),
                capacity: None,
                region_id,
            });
        }
    }
    w.out.bundle_units = bundle_units;
    w.out.allocations = module
        .constants
        .iter()
        .filter_map(|c| match &c.value {
            Some(llo_constant::Value::Allocation(a)) => Some(Allocation {
                ordinal: a.ordinal as i64,
                size_bytes: a.size,
                memory_space: match a.space {
                    2 => "vmem".to_string(),
                    3 => "smem".to_string(),
                    4 => "sflag".to_string(),
                    n => format!("space_{n}"),
                },
                space: a.space,
                is_spill: a.is_spill,
                is_scoped: a.is_scoped,
                is_virtual: a.is_virtual,
                is_remote: a.is_remote,
            }),
            _ => None,
        })
        .collect();
    let (live_ranges, register_pressure) = registers::derive(&w.raw);
    w.out.live_ranges = live_ranges;
    w.out.register_pressure = register_pressure;
    w.out.bdi_stalls = bdi_stalls::derive(&w.raw, &module.interned_strings);
    w.out.bundle_sources = bundle_sources::derive(&w.raw);
    w.out.target = module.target_arguments.as_ref().map(target::derive);
    w.out.bundle_regions = std::mem::take(&mut w.region_of_bundle);
    Ok(w.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_are_named_as_xprof_names_them() {
        assert_eq!(
            opcode_info(50),
            ("OPCODE_VECTOR_LOAD".into(), "load_store", "LOAD_STORE")
        );
        assert_eq!(opcode_info(186).0, "OPCODE_VECTOR_MATMUL_MUBR");
        assert_eq!(
            opcode_info(99_999),
            ("OPCODE_UNKNOWN_99999".into(), "other", "OTHER")
        );
        assert!(OPCODES.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode(&[0xff; 16]).is_err());
        // A valid message without a root region.
        let m = LloModuleProto {
            hlo_instruction_name: "x".into(),
            ..Default::default()
        };
        let e = decode(&m.encode_to_vec()).unwrap_err();
        assert!(e.0.contains("root region"), "{e}");
    }
}
