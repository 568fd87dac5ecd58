//! The decoded HLO module: [`HloModule::decode`] reads an `xla.HloProto`'s
//! computations and instructions, with the stack frame index and the
//! lookups by id.

use std::borrow::Cow;

use xprof_format::hash::{FxHashMap, FxHashSet};

use super::fields::Fields;
use crate::codec::pb::PbError;

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
}
