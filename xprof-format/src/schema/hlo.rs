//! The HLO tables of an XSpace: the op table XProf's tools read
//! (`hlo_ops`) and every instruction of the HLO modules in
//! `/host:metadata` (`hlo_instructions`).

table! {
    /// The static HLO op table: event metadata of device planes used on `XLA Ops`/`Async XLA Ops`
    /// lines, and any event metadata carrying cost-model stats (`hlo_category`, `flops`,
    /// `bytes_accessed`).
    HloOps: HLO_OPS = "hlo_ops", sorted by ["device_id", "metadata_id"],
    HloOpRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        /// Event metadata id; joins `events.metadata_id`.
        metadata_id: i64 = (Int64),
        /// Stat `program_id` (unsigned, as XLA writes it).
        program_id: Option<u64> = (UInt64 null),
        /// Stat `hlo_module`.
        hlo_module: Option<&'a str> = (Utf8 null),
        /// Op name: stat `hlo_op`, else the metadata display name, else its name.
        hlo_op: &'a str = (Utf8),
        /// Stat `hlo_category`.
        category: Option<&'a str> = (Utf8 null),
        /// The metadata name (on XLA op lines, the full HLO text).
        expression: &'a str = (Utf8),
        /// Stat `shape_with_layout`.
        shape: Option<&'a str> = (Utf8 null),
        /// Stat `flops`.
        flops: Option<i64> = (Int64 null),
        /// Stat `model_flops`.
        model_flops: Option<i64> = (Int64 null),
        /// Stat `bytes_accessed`.
        bytes_accessed: Option<i64> = (Int64 null),
        /// Stat `tf_op`.
        tf_op: Option<&'a str> = (Utf8 null),
        /// Stat `source`.
        source: Option<&'a str> = (Utf8 null),
    }
}

table! {
    /// Every instruction of every HLO module stored in `/host:metadata` (the `Hlo Proto` stat of
    /// its event metadata, decoded; the bytes stay in `metadata_args`). A device op joins its
    /// instruction on `(trace_id, program_id, name)` = the op's `program_id` and `hlo_op`.
    /// Category, expression, framework op and source are derived from the instruction as XProf
    /// derives them.
    HloInstructions: HLO_INSTRUCTIONS = "hlo_instructions", sorted by ["device_id", "metadata_id"],
    HloInstructionRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        /// Event metadata of `/host:metadata` whose `Hlo Proto` stat holds the module; joins
        /// `metadata_args`.
        metadata_id: i64 = (Int64),
        /// Stat `program_id` of that metadata (unsigned), else `HloModuleProto.id`.
        program_id: Option<u64> = (UInt64 null),
        /// `HloModuleProto.name`.
        hlo_module: &'a str = (Utf8),
        /// Name of the computation holding the instruction.
        computation: &'a str = (Utf8),
        /// `entry` (the module's entry computation), `fused` (the body of a `fusion` instruction),
        /// or `called` (any other computation: reductions, loop bodies, ...).
        computation_role: &'a str = (DictUtf8),
        /// `HloInstructionProto.id`.
        instruction_id: i64 = (Int64),
        /// Instruction name; what `hlo_op` stats name.
        name: &'a str = (Utf8),
        /// HLO opcode (`fusion`, `custom-call`, `dot`, ...).
        opcode: &'a str = (DictUtf8),
        /// XLA's category of the instruction (`HloInstruction::ToCategory`): `data formatting`,
        /// `non-fusion elementwise`, or the opcode.
        category: &'a str = (DictUtf8),
        /// The instruction as HLO text, printed as XProf prints it (operand shapes, no metadata or
        /// backend config), cut at 1000 bytes.
        expression: &'a str = (Utf8),
        /// Result shape with layout, e.g. `f32[1024]{0}`.
        shape: &'a str = (Utf8),
        /// Operand instruction names, in order.
        operands: &'a [String] = (ListUtf8),
        /// Names of the computations the instruction calls (fused body, reducer, loop body, ...).
        called_computations: &'a [String] = (ListUtf8),
        /// `kLoop`, `kInput`, `kOutput` or `kCustom` for fusions.
        fusion_kind: Option<&'a str> = (Utf8 null),
        /// Target of a `custom-call`.
        custom_call_target: Option<&'a str> = (Utf8 null),
        /// `OpMetadata.op_type`; NULL when empty.
        op_type: Option<&'a str> = (Utf8 null),
        /// `OpMetadata.op_name`; NULL when empty.
        op_name: Option<&'a str> = (Utf8 null),
        /// Framework op as XProf names it: `op_name:op_type`; empty when the instruction has
        /// neither.
        tf_op: &'a str = (Utf8),
        /// `OpMetadata.deduplicated_name`; NULL when empty.
        deduplicated_name: Option<&'a str> = (Utf8 null),
        /// `file:line` of the instruction: `OpMetadata.source_file`/`source_line`, else the
        /// innermost frame of its stack.
        source: Option<&'a str> = (Utf8 null),
        /// The instruction's Python stack from the module's stack frame index, innermost first, one
        /// `file:line:column` per line.
        source_stack: Option<&'a str> = (Utf8 null),
    }
}
