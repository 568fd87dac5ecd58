//! The messages of the `llo_proto` payload (`xla.xprof.LloModuleProto`),
//! written by hand with `prost` derives.
//!
//! The schema is not published. Field numbers, types and the message
//! structure were read from XProf 2.24.2's compiled-in schema and agree
//! with the field-by-field decoding of a real capture
//! (`shared/formats/tpu_kernel_profiling_capture.md` §7); names follow
//! XProf's where it prints them. Fields this project does not read are
//! left out: prost skips them.

/// One LLO module: the compiled program of one HLO op (a kernel or fusion).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloModuleProto {
    /// The HLO instruction (`matmul_optimized.1`).
    #[prost(string, tag = "1")]
    pub hlo_instruction_name: String,
    /// The whole program's region tree.
    #[prost(message, optional, tag = "2")]
    pub root_region: Option<LloRegionProto>,
    /// Static per-bundle slot use of each unit.
    #[prost(message, optional, tag = "6")]
    pub static_per_bundle_utilization: Option<StaticPerBundleUtilizationProto>,
    /// The target the program was compiled for (replicas, topology).
    #[prost(message, optional, tag = "7")]
    pub target_arguments: Option<LloTargetArgumentsProto>,
    /// Constant pool (immediates, buffer allocations).
    #[prost(message, repeated, tag = "8")]
    pub constants: Vec<LloConstantProto>,
    /// Comment strings, indexed by [`LloInstructionProto::comment_index`].
    #[prost(string, repeated, tag = "9")]
    pub interned_strings: Vec<String>,
    /// The HLO module (`jit_matmul_optimized`).
    #[prost(string, tag = "10")]
    pub hlo_module_name: String,
    /// `HloModuleProto.id`.
    #[prost(int64, tag = "11")]
    pub hlo_module_id: i64,
    /// Provenance: JAX primitive, named scopes and source line of each
    /// instruction (Mosaic kernels only).
    #[prost(message, optional, tag = "12")]
    pub source_map: Option<LloSourceMapProto>,
}

/// A region of the program: its members and its schedule range.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloRegionProto {
    /// Instructions, loops, predicated regions and nested regions, in
    /// program order.
    #[prost(message, repeated, tag = "1")]
    pub members: Vec<RegionMember>,
    /// Name (empty on the real capture).
    #[prost(string, tag = "2")]
    pub name: String,
    /// First bundle (schedule slot); -1 when not placed.
    #[prost(int32, tag = "5")]
    pub start_bundleno: i32,
    /// Bundle past the last; -1 when not placed.
    #[prost(int32, tag = "6")]
    pub limit_bundleno: i32,
    /// The LLO region id.
    #[prost(int32, tag = "7")]
    pub ordinal: i32,
}

/// One member of a region.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct RegionMember {
    /// Which member it is.
    #[prost(oneof = "region_member::Member", tags = "1, 2, 3, 4")]
    pub member: Option<region_member::Member>,
}

/// The members a region can hold.
pub mod region_member {
    /// One member. The variants mirror the wire schema: a loop holds
    /// seven regions inline, as the schema does.
    #[allow(clippy::large_enum_variant)]
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub enum Member {
        /// An instruction.
        #[prost(message, tag = "1")]
        Instruction(super::LloInstructionProto),
        /// A loop.
        #[prost(message, tag = "2")]
        Loop(super::LloLoopProto),
        /// A predicated region.
        #[prost(message, tag = "3")]
        PredicatedRegion(super::LloPredicatedRegionProto),
        /// A nested region.
        #[prost(message, tag = "4")]
        Region(super::LloRegionProto),
    }
}

/// One LLO instruction.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloInstructionProto {
    /// Instruction id (the SSA number of the compiler's dumps).
    #[prost(int32, tag = "1")]
    pub ordinal: i32,
    /// Opcode (see `opcodes.rs`).
    #[prost(int32, tag = "2")]
    pub opcode: i32,
    /// Operands.
    #[prost(message, repeated, tag = "3")]
    pub operands: Vec<LloOperand>,
    /// Bundle (schedule slot); absent (0) on unscheduled instructions.
    #[prost(sint32, optional, tag = "4")]
    pub bundle: Option<i32>,
    /// Result register number.
    #[prost(sint32, tag = "7")]
    pub register: i32,
    /// Result register class (1 PREG, 2 SREG, 3 VMREG, 4 VREG, ...).
    #[prost(int32, tag = "8")]
    pub register_type: i32,
    /// Index into [`LloModuleProto::interned_strings`].
    #[prost(int32, optional, tag = "9")]
    pub comment_index: Option<i32>,
    /// MXU index on MXU-related ops (inferred).
    #[prost(int32, optional, tag = "11")]
    pub mxu: Option<i32>,
    /// Spill, fill, copy and other pseudo kinds.
    #[prost(int32, optional, tag = "29")]
    pub pseudo_kind: Option<i32>,
}

/// An operand: a constant or another instruction's result.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloOperand {
    /// Which.
    #[prost(oneof = "llo_operand::Operand", tags = "1, 2")]
    pub operand: Option<llo_operand::Operand>,
}

/// Operand kinds.
pub mod llo_operand {
    /// One operand.
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub enum Operand {
        /// Index into the constant pool.
        #[prost(int32, tag = "1")]
        ConstantIndex(i32),
        /// Another instruction's ordinal.
        #[prost(int32, tag = "2")]
        InstructionOrdinal(i32),
    }
}

/// A counted loop.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloLoopProto {
    /// Pre-header.
    #[prost(message, optional, tag = "1")]
    pub pre_header: Option<LloRegionProto>,
    /// Header.
    #[prost(message, optional, tag = "2")]
    pub header: Option<LloRegionProto>,
    /// Header branch.
    #[prost(message, optional, tag = "3")]
    pub header_branch: Option<LloRegionProto>,
    /// Body.
    #[prost(message, optional, tag = "4")]
    pub body: Option<LloRegionProto>,
    /// Footer.
    #[prost(message, optional, tag = "5")]
    pub footer: Option<LloRegionProto>,
    /// Footer branch.
    #[prost(message, optional, tag = "6")]
    pub footer_branch: Option<LloRegionProto>,
    /// Exit.
    #[prost(message, optional, tag = "7")]
    pub exit: Option<LloRegionProto>,
    /// Trip space.
    #[prost(message, optional, tag = "8")]
    pub index_space: Option<LoopIndexSpaceProto>,
}

/// A loop's trip space.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LoopIndexSpaceProto {
    /// First index.
    #[prost(int64, tag = "1")]
    pub start: i64,
    /// Index past the last.
    #[prost(int64, tag = "2")]
    pub limit: i64,
    /// Step.
    #[prost(int64, tag = "3")]
    pub step: i64,
}

/// A predicated region: check, branch, body, fall-through.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloPredicatedRegionProto {
    /// The predicate's computation.
    #[prost(message, optional, tag = "1")]
    pub check_region: Option<LloRegionProto>,
    /// The branch around the body.
    #[prost(message, optional, tag = "2")]
    pub check_branch_region: Option<LloRegionProto>,
    /// The body.
    #[prost(message, optional, tag = "3")]
    pub predicated_region: Option<LloRegionProto>,
    /// Where a skipped body lands.
    #[prost(message, optional, tag = "4")]
    pub fallthru_region: Option<LloRegionProto>,
}

/// Used slots per bundle of each unit, and its capacity.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct RationalVectorProto {
    /// Used slots, one per bundle.
    #[prost(int32, repeated, tag = "1")]
    pub values: Vec<i32>,
    /// Slots per bundle.
    #[prost(int32, tag = "2")]
    pub capacity: i32,
}

/// Field 6: static per-bundle utilization of each unit.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct StaticPerBundleUtilizationProto {
    /// MXU.
    #[prost(message, optional, tag = "1")]
    pub mxu: Option<RationalVectorProto>,
    /// XLU.
    #[prost(message, optional, tag = "2")]
    pub xlu: Option<RationalVectorProto>,
    /// Vector ALU.
    #[prost(message, optional, tag = "3")]
    pub vector_alu: Option<RationalVectorProto>,
    /// Vector EUP.
    #[prost(message, optional, tag = "4")]
    pub vector_eup: Option<RationalVectorProto>,
    /// Vector load.
    #[prost(message, optional, tag = "5")]
    pub vector_load: Option<RationalVectorProto>,
    /// Vector store.
    #[prost(message, optional, tag = "6")]
    pub vector_store: Option<RationalVectorProto>,
    /// Scalar ALU.
    #[prost(message, optional, tag = "7")]
    pub scalar_alu: Option<RationalVectorProto>,
    /// Spills per bundle (no capacity).
    #[prost(int32, repeated, tag = "8")]
    pub spill: Vec<i32>,
    /// Fills per bundle (no capacity).
    #[prost(int32, repeated, tag = "9")]
    pub fill: Vec<i32>,
}

/// A constant-pool entry.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloConstantProto {
    /// Kind of constant (an opcode value).
    #[prost(int32, tag = "1")]
    pub opcode: i32,
    /// The value.
    #[prost(oneof = "llo_constant::Value", tags = "2, 3, 5")]
    pub value: Option<llo_constant::Value>,
}

/// Constant values.
pub mod llo_constant {
    /// One value.
    #[derive(Clone, PartialEq, ::prost::Oneof)]
    pub enum Value {
        /// A boolean.
        #[prost(bool, tag = "2")]
        Bool(bool),
        /// An integer immediate.
        #[prost(int64, tag = "3")]
        Int(i64),
        /// A buffer allocation.
        #[prost(message, tag = "5")]
        Allocation(super::LloAllocationProto),
    }
}

/// A buffer allocation (VMEM, SMEM, sync flags).
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloAllocationProto {
    /// Memory space (2 vmem, 3 smem, 4 sflag: inferred).
    #[prost(int32, tag = "1")]
    pub space: i32,
    /// Size in bytes.
    #[prost(int64, tag = "4")]
    pub size: i64,
    /// Allocation number (`#allocationN` of the dumps).
    #[prost(int32, tag = "5")]
    pub ordinal: i32,
    /// Offset.
    #[prost(int32, optional, tag = "8")]
    pub offset: Option<i32>,
    /// Virtual.
    #[prost(bool, tag = "9")]
    pub is_virtual: bool,
    /// A spill slot.
    #[prost(bool, tag = "10")]
    pub is_spill: bool,
    /// Scoped to the kernel.
    #[prost(bool, tag = "11")]
    pub is_scoped: bool,
    /// Remote.
    #[prost(bool, tag = "12")]
    pub is_remote: bool,
}

/// Field 12: provenance of instructions.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloSourceMapProto {
    /// One entry per (source span, primitive, scopes).
    #[prost(message, repeated, tag = "1")]
    pub source_infos: Vec<LloSourceInfoProto>,
    /// String table.
    #[prost(string, repeated, tag = "2")]
    pub strings: Vec<String>,
}

/// Where a group of instructions came from.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloSourceInfoProto {
    /// Source frames, outermost first; the last is the line XProf shows.
    #[prost(message, repeated, tag = "1")]
    pub frames: Vec<LloSourceFrameProto>,
    /// JAX primitive (string index).
    #[prost(int32, optional, tag = "2")]
    pub primitive_string_index: Option<i32>,
    /// Named scopes, outermost first (string indices).
    #[prost(int32, repeated, tag = "3")]
    pub scope_string_indices: Vec<i32>,
    /// The instructions it describes.
    #[prost(int32, repeated, tag = "4")]
    pub instruction_ordinals: Vec<i32>,
}

/// A source span.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloSourceFrameProto {
    /// File (string index).
    #[prost(int32, tag = "1")]
    pub file_string_index: i32,
    /// Line.
    #[prost(int32, tag = "2")]
    pub line: i32,
    /// End line.
    #[prost(int32, tag = "3")]
    pub end_line: i32,
    /// Column.
    #[prost(int32, tag = "4")]
    pub column: i32,
    /// End column.
    #[prost(int32, tag = "5")]
    pub end_column: i32,
}

/// Field 7: the compile target's arguments, as XProf's `target_info`
/// mode prints them.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloTargetArgumentsProto {
    /// Replicas (`replica_count`).
    #[prost(int64, tag = "3")]
    pub replica_count: i64,
    /// HBM bytes reserved for the runtime (`reserved_hbm_usage_bytes`).
    #[prost(int64, tag = "4")]
    pub reserved_hbm_usage_bytes: i64,
    /// The chip topology.
    #[prost(message, optional, tag = "6")]
    pub topology: Option<LloTopologyProto>,
}

/// The chip topology of [`LloTargetArgumentsProto`].
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloTopologyProto {
    /// Chip variant (XProf does not print it).
    #[prost(int32, tag = "2")]
    pub variant: i32,
    /// Platform type (`platform_type`).
    #[prost(int32, tag = "3")]
    pub platform_type: i32,
    /// Chip configuration (`chip_config_name`, `megachip_tccontrol` on the
    /// real capture).
    #[prost(string, tag = "4")]
    pub chip_config_name: String,
    /// Chips per host (`chips_per_host_bounds`).
    #[prost(message, optional, tag = "5")]
    pub chips_per_host_bounds: Option<LloBoundsProto>,
    /// Hosts (`host_bounds`).
    #[prost(message, optional, tag = "6")]
    pub host_bounds: Option<LloBoundsProto>,
    /// Enhanced barrier (`enhanced_barrier_enabled`).
    #[prost(bool, tag = "9")]
    pub enhanced_barrier_enabled: bool,
}

/// A 3-D extent.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct LloBoundsProto {
    /// x.
    #[prost(int32, tag = "1")]
    pub x: i32,
    /// y.
    #[prost(int32, tag = "2")]
    pub y: i32,
    /// z.
    #[prost(int32, tag = "3")]
    pub z: i32,
}
