//! HLO modules stored in an XSpace's `/host:metadata` plane.
//!
//! XLA records each compiled program as an `xla.HloProto` in the `Hlo
//! Proto` stat of an event metadata of `/host:metadata`. XProf decodes
//! them to name a device op's category, HLO text, framework op and source
//! line (its `HloModuleMap`). This module does the same on the raw bytes,
//! zero-copy: [`HloModule::decode`] reads the module's computations and
//! instructions, and [`HloInstruction`] derives what XProf derives:
//! [`category`](HloModule::category) (XLA's `ToCategory`),
//! [`expression`](HloModule::expression) (`ToString` with XProf's print
//! options), [`tf_op`](HloInstruction::tf_op) and
//! [`source`](HloModule::source).
//!
//! Field numbers are those of `xla/service/hlo.proto` and
//! `xla/xla_data.proto`; unknown fields are skipped, so newer XLA versions
//! decode too.

use std::borrow::Cow;

use xprof_format::hash::{FxHashMap, FxHashSet};

use crate::pb::{Cursor, PbError, PbResult, WireType, utf8};

mod text;

/// A protobuf field value kept undecoded until something asks for it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Raw<'a> {
    /// A varint (also bools and enums).
    Varint(u64),
    /// A fixed-size value.
    Fixed(u64),
    /// A length-delimited payload and its absolute offset.
    Len(&'a [u8], u64),
}

/// Every field of one message, in wire order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fields<'a>(Vec<(u32, Raw<'a>)>);

impl<'a> Fields<'a> {
    fn decode(buf: &'a [u8], base: u64) -> PbResult<Self> {
        let mut c = Cursor::new(buf, base);
        let mut out = Vec::new();
        while !c.is_empty() {
            let (field, wire) = c.tag()?;
            let v = match wire {
                WireType::Varint => Raw::Varint(c.varint()?),
                WireType::Fixed64 => Raw::Fixed(c.fixed64()?),
                WireType::Fixed32 => {
                    let at = c.offset();
                    c.skip(WireType::Fixed32)?;
                    let b = &buf[(at - base) as usize..(at - base) as usize + 4];
                    Raw::Fixed(u32::from_le_bytes(b.try_into().expect("4 bytes")) as u64)
                }
                WireType::Len => {
                    let (b, off) = c.bytes()?;
                    Raw::Len(b, off)
                }
            };
            out.push((field, v));
        }
        Ok(Self(out))
    }

    /// The last value of a scalar field (protobuf's "last one wins").
    pub(crate) fn get(&self, field: u32) -> Option<Raw<'a>> {
        self.0
            .iter()
            .rev()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| *v)
    }

    pub(crate) fn all(&self, field: u32) -> impl Iterator<Item = Raw<'a>> + '_ {
        self.0
            .iter()
            .filter(move |(f, _)| *f == field)
            .map(|(_, v)| *v)
    }

    pub(crate) fn int(&self, field: u32) -> i64 {
        match self.get(field) {
            Some(Raw::Varint(v) | Raw::Fixed(v)) => v as i64,
            _ => 0,
        }
    }

    pub(crate) fn has(&self, field: u32) -> bool {
        self.get(field).is_some()
    }

    pub(crate) fn str(&self, field: u32) -> Cow<'a, str> {
        match self.get(field) {
            Some(Raw::Len(b, _)) => utf8(b),
            _ => Cow::Borrowed(""),
        }
    }

    pub(crate) fn message(&self, field: u32) -> PbResult<Option<Fields<'a>>> {
        match self.get(field) {
            Some(Raw::Len(b, off)) => Fields::decode(b, off).map(Some),
            _ => Ok(None),
        }
    }

    pub(crate) fn messages(&self, field: u32) -> PbResult<Vec<Fields<'a>>> {
        self.all(field)
            .filter_map(|v| match v {
                Raw::Len(b, off) => Some(Fields::decode(b, off)),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn strings(&self, field: u32) -> Vec<Cow<'a, str>> {
        self.all(field)
            .filter_map(|v| match v {
                Raw::Len(b, _) => Some(utf8(b)),
                _ => None,
            })
            .collect()
    }

    /// A repeated integer field, packed or not.
    pub(crate) fn ints(&self, field: u32) -> PbResult<Vec<i64>> {
        let mut out = Vec::new();
        for v in self.all(field) {
            match v {
                Raw::Varint(x) | Raw::Fixed(x) => out.push(x as i64),
                Raw::Len(b, off) => {
                    let mut c = Cursor::new(b, off);
                    while !c.is_empty() {
                        out.push(c.varint()? as i64);
                    }
                }
            }
        }
        Ok(out)
    }
}

/// A decoding failure inside an HLO proto: byte offset within the proto's
/// bytes and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HloDecodeError {
    /// Offset from the first byte of the `HloProto`.
    pub offset: u64,
    /// What was wrong.
    pub what: &'static str,
}

impl std::fmt::Display for HloDecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HLO proto byte {}: {}", self.offset, self.what)
    }
}

impl std::error::Error for HloDecodeError {}

impl From<PbError> for HloDecodeError {
    fn from(e: PbError) -> Self {
        Self {
            offset: e.offset,
            what: e.what,
        }
    }
}

/// One instruction of an HLO computation (`xla.HloInstructionProto`).
#[derive(Debug, Clone)]
pub struct HloInstruction<'a> {
    /// Instruction name, unique in its module.
    pub name: Cow<'a, str>,
    /// Opcode as XLA prints it (`fusion`, `custom-call`, ...).
    pub opcode: Cow<'a, str>,
    /// `HloInstructionProto.id`.
    pub id: i64,
    /// Operand instruction ids.
    pub operand_ids: Vec<i64>,
    /// Called computation ids (fused body, reducer, ...).
    pub called_computation_ids: Vec<i64>,
    /// `fusion_kind` (`kLoop`, ...); empty when not a fusion.
    pub fusion_kind: Cow<'a, str>,
    /// `custom_call_target`; empty when not a custom call.
    pub custom_call_target: Cow<'a, str>,
    /// `OpMetadata.op_type`.
    pub op_type: Cow<'a, str>,
    /// `OpMetadata.op_name`.
    pub op_name: Cow<'a, str>,
    /// `OpMetadata.source_file`.
    pub source_file: Cow<'a, str>,
    /// `OpMetadata.source_line`.
    pub source_line: i64,
    /// `OpMetadata.deduplicated_name`.
    pub deduplicated_name: Cow<'a, str>,
    /// `OpMetadata.stack_frame_id` (1-based; 0 = none).
    pub stack_frame_id: i64,
    pub(crate) fields: Fields<'a>,
}

impl HloInstruction<'_> {
    /// The framework op as XProf names it (`TfOpFullname`):
    /// `op_name:op_type`, empty when the instruction has neither.
    pub fn tf_op(&self) -> String {
        if self.op_name.is_empty() && self.op_type.is_empty() {
            return String::new();
        }
        format!("{}:{}", self.op_name, self.op_type)
    }
}

/// One computation of an HLO module.
#[derive(Debug, Clone)]
pub struct HloComputation<'a> {
    /// Computation name.
    pub name: Cow<'a, str>,
    /// `HloComputationProto.id`.
    pub id: i64,
    /// Instructions, in proto order.
    pub instructions: Vec<HloInstruction<'a>>,
}

/// A decoded `xla.HloProto`: one compiled program.
#[derive(Debug, Clone)]
pub struct HloModule<'a> {
    /// `HloModuleProto.name` (e.g. `jit_train`).
    pub name: Cow<'a, str>,
    /// `HloModuleProto.id`.
    pub id: i64,
    /// Id of the entry computation.
    pub entry_computation_id: i64,
    /// Computations, in proto order.
    pub computations: Vec<HloComputation<'a>>,
    stack_frames: StackFrames<'a>,
    /// (computation, instruction) index of each instruction id.
    by_id: FxHashMap<i64, (usize, usize)>,
    computation_by_id: FxHashMap<i64, usize>,
}

/// The module's stack frame index (`StackFrameIndexProto`), decoded once.
/// Ids into each list are 1-based, as in the proto.
#[derive(Debug, Clone, Default)]
struct StackFrames<'a> {
    files: Vec<Cow<'a, str>>,
    /// (file id, line, column) per file location.
    locations: Vec<(i64, i64, i64)>,
    /// (file location id, parent frame id) per frame.
    frames: Vec<(i64, i64)>,
}

impl<'a> StackFrames<'a> {
    /// A corrupt index is an empty one: the stacks are extra, not worth
    /// losing the module over.
    fn decode(index: Option<Fields<'a>>) -> Self {
        let Some(index) = index else {
            return Self::default();
        };
        let (Ok(locations), Ok(frames)) = (index.messages(3), index.messages(4)) else {
            return Self::default();
        };
        Self {
            files: index.strings(1),
            locations: locations
                .iter()
                .map(|l| (l.int(1), l.int(3), l.int(4)))
                .collect(),
            frames: frames.iter().map(|f| (f.int(1), f.int(2))).collect(),
        }
    }
}

/// The element of 1-based id `id` in `items`.
fn by_one_based<T>(items: &[T], id: i64) -> Option<&T> {
    items.get(usize::try_from(id.checked_sub(1)?).ok()?)
}

/// How a computation is used in its module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputationRole {
    /// The module's entry computation.
    Entry,
    /// The body of a `fusion` instruction.
    Fused,
    /// Any other called computation (reducers, loop bodies, branches).
    Called,
}

impl ComputationRole {
    /// The name stored in `hlo_instructions.computation_role`.
    pub fn name(self) -> &'static str {
        match self {
            ComputationRole::Entry => "entry",
            ComputationRole::Fused => "fused",
            ComputationRole::Called => "called",
        }
    }
}

impl<'a> HloModule<'a> {
    /// Decodes an `xla.HloProto` (the `Hlo Proto` stat's bytes).
    pub fn decode(bytes: &'a [u8]) -> Result<Self, HloDecodeError> {
        let proto = Fields::decode(bytes, 0)?;
        let module = proto.message(1)?.ok_or(HloDecodeError {
            offset: 0,
            what: "HloProto has no hlo_module",
        })?;
        let mut computations = Vec::new();
        for c in module.messages(3)? {
            let mut instructions = Vec::new();
            for i in c.messages(2)? {
                let metadata = i.message(7)?.unwrap_or_default();
                instructions.push(HloInstruction {
                    name: i.str(1),
                    opcode: i.str(2),
                    id: i.int(35),
                    operand_ids: i.ints(36)?,
                    called_computation_ids: i.ints(38)?,
                    fusion_kind: i.str(11),
                    custom_call_target: i.str(28),
                    op_type: metadata.str(1),
                    op_name: metadata.str(2),
                    source_file: metadata.str(3),
                    source_line: metadata.int(4),
                    deduplicated_name: metadata.str(12),
                    stack_frame_id: metadata.int(15),
                    fields: i,
                });
            }
            computations.push(HloComputation {
                name: c.str(1),
                id: c.int(5),
                instructions,
            });
        }
        let mut by_id = FxHashMap::default();
        let mut computation_by_id = FxHashMap::default();
        for (ci, c) in computations.iter().enumerate() {
            computation_by_id.insert(c.id, ci);
            for (ii, i) in c.instructions.iter().enumerate() {
                by_id.insert(i.id, (ci, ii));
            }
        }
        Ok(Self {
            name: module.str(1),
            id: module.int(5),
            entry_computation_id: module.int(6),
            stack_frames: StackFrames::decode(module.message(17).ok().flatten()),
            computations,
            by_id,
            computation_by_id,
        })
    }

    /// The instruction with id `id`.
    pub fn instruction(&self, id: i64) -> Option<&HloInstruction<'a>> {
        let (c, i) = *self.by_id.get(&id)?;
        Some(&self.computations[c].instructions[i])
    }

    /// The computation with id `id`.
    pub fn computation(&self, id: i64) -> Option<&HloComputation<'a>> {
        Some(&self.computations[*self.computation_by_id.get(&id)?])
    }

    /// The name of instruction `id`, or `#id` when the module has none.
    pub fn instruction_name(&self, id: i64) -> Cow<'_, str> {
        match self.instruction(id) {
            Some(i) => Cow::Borrowed(i.name.as_ref()),
            None => Cow::Owned(format!("#{id}")),
        }
    }

    /// The name of computation `id`, or `#id` when the module has none.
    pub fn computation_name(&self, id: i64) -> Cow<'_, str> {
        match self.computation(id) {
            Some(c) => Cow::Borrowed(c.name.as_ref()),
            None => Cow::Owned(format!("#{id}")),
        }
    }

    /// The role of each computation, in [`computations`](Self::computations) order.
    pub fn computation_roles(&self) -> Vec<ComputationRole> {
        let mut fused = FxHashSet::default();
        for c in &self.computations {
            for i in &c.instructions {
                if i.opcode == "fusion" {
                    fused.extend(i.called_computation_ids.iter().copied());
                }
            }
        }
        self.computations
            .iter()
            .map(|c| {
                if c.id == self.entry_computation_id {
                    ComputationRole::Entry
                } else if fused.contains(&c.id) {
                    ComputationRole::Fused
                } else {
                    ComputationRole::Called
                }
            })
            .collect()
    }

    /// The instruction's Python stack from the module's stack frame index,
    /// innermost frame first, one `file:line:column` per line (each line
    /// ends with `\n`), as XProf's `GetOpLocationStack`. Empty when the
    /// instruction names no frame.
    pub fn stack(&self, instr: &HloInstruction<'_>) -> String {
        let index = &self.stack_frames;
        let mut out = String::new();
        let mut frame_id = instr.stack_frame_id;
        // Parents point outwards. Bounded by the frame count so a cycle in
        // a corrupt index cannot loop.
        for _ in 0..index.frames.len() {
            let Some((location_id, parent)) = by_one_based(&index.frames, frame_id) else {
                break;
            };
            let Some((file_id, line, column)) = by_one_based(&index.locations, *location_id) else {
                break;
            };
            let file = by_one_based(&index.files, *file_id).map_or("", |f| f.as_ref());
            out.push_str(&format!("{file}:{line}:{column}\n"));
            frame_id = *parent;
        }
        out
    }

    /// `file:line` of the instruction as XProf's `GetSourceInfo`: the
    /// metadata's source file and line, else the innermost stack frame.
    pub fn source(&self, instr: &HloInstruction<'_>, stack: &str) -> Option<String> {
        if !instr.source_file.is_empty() {
            return Some(format!("{}:{}", instr.source_file, instr.source_line));
        }
        let first = stack.lines().next()?;
        let mut parts = first.split(':');
        let file = parts.next()?;
        let line: i64 = parts.next()?.parse().ok()?;
        Some(format!("{file}:{line}"))
    }

    /// XLA's category of the instruction (`HloInstruction::ToCategory`).
    pub fn category(&self, instr: &HloInstruction<'_>) -> Cow<'a, str> {
        text::category(self, instr)
    }

    /// The instruction as HLO text, as XProf prints it (`ToString` with
    /// operand shapes, without metadata and backend config), cut at 1000
    /// bytes.
    pub fn expression(&self, instr: &HloInstruction<'_>) -> String {
        text::expression(self, instr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;
    use xprof_format::wire::{XSpace, x_stat};

    /// The real HLO protos of the H200 capture (tests/fixtures/gpu/jax_gpu).
    fn real_protos() -> Vec<Vec<u8>> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/gpu/jax_gpu.xplane.pb"
        );
        let space = XSpace::decode(std::fs::read(path).unwrap().as_slice()).unwrap();
        let plane = space
            .planes
            .iter()
            .find(|p| p.name == "/host:metadata")
            .unwrap();
        plane
            .event_metadata
            .values()
            .flat_map(|m| &m.stats)
            .filter_map(|s| match &s.value {
                Some(x_stat::Value::BytesValue(b)) => Some(b.clone()),
                _ => None,
            })
            .collect()
    }

    /// Everything derived from one module, touching every code path.
    fn derive_all(module: &HloModule<'_>) -> usize {
        let mut n = 0;
        for c in &module.computations {
            for i in &c.instructions {
                let stack = module.stack(i);
                n += module.category(i).len()
                    + module.expression(i).len()
                    + module.shape_text(i).len()
                    + module.source(i, &stack).map_or(0, |s| s.len())
                    + i.tf_op().len();
            }
        }
        n + module.computation_roles().len()
    }

    #[test]
    fn real_modules_decode_with_resolvable_operands() {
        let protos = real_protos();
        assert!(protos.len() >= 5);
        for bytes in &protos {
            let module = HloModule::decode(bytes).unwrap();
            assert!(!module.name.is_empty());
            let roles = module.computation_roles();
            assert_eq!(
                roles
                    .iter()
                    .filter(|r| **r == ComputationRole::Entry)
                    .count(),
                1,
                "{}: one entry computation",
                module.name
            );
            for c in &module.computations {
                for i in &c.instructions {
                    for id in &i.operand_ids {
                        assert!(
                            module.instruction(*id).is_some(),
                            "{}: operand {id}",
                            i.name
                        );
                    }
                    let text = module.expression(i);
                    assert!(text.starts_with(&format!("%{} = ", i.name)), "{text}");
                    assert!(text.len() <= 1000, "XProf's cut");
                }
            }
        }
    }

    /// Every prefix of a real proto and bytes flipped all over it: an error
    /// or a module, never a panic or a hang (stack walks and fusion
    /// recursion are bounded).
    #[test]
    fn truncated_and_corrupted_protos_never_panic() {
        let protos = real_protos();
        let bytes = protos.iter().min_by_key(|b| b.len()).unwrap();
        for cut in 0..bytes.len() {
            if let Ok(m) = HloModule::decode(&bytes[..cut]) {
                derive_all(&m);
            }
        }
        let big = protos.iter().max_by_key(|b| b.len()).unwrap();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..300 {
            let mut copy = big.clone();
            for _ in 0..8 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let at = (state % copy.len() as u64) as usize;
                copy[at] ^= (state >> 32) as u8 | 1;
            }
            if let Ok(m) = HloModule::decode(&copy) {
                derive_all(&m);
            }
        }
        assert!(HloModule::decode(&[0x0a, 0x05, 0x0a]).is_err());
        assert!(HloModule::decode(&[]).is_err());
    }

    #[test]
    fn floats_print_as_c_printf_g() {
        for (x, precision, want) in [
            (0.0009995, 4, "0.0009995"),
            (9.5367431640625e-07, 4, "9.537e-07"),
            (1.4140625, 4, "1.414"),
            (-1.0, 6, "-1"),
            (100000.0, 6, "100000"),
            (1000000.0, 6, "1e+06"),
            (0.0001, 6, "0.0001"),
            (0.00001, 6, "1e-05"),
            (1.23456789, 6, "1.23457"),
        ] {
            assert_eq!(text::format_g_for_tests(x, precision), want, "{x}");
        }
    }
}
