//! The `llo_*` tables decoded from the `llo_proto` payloads of a TPU
//! kernel-profiling capture: each program, its region tree, static unit
//! use, instructions, allocations, registers, stalls, source lines and
//! compile target. Everything here is static (the compiler's schedule).

table! {
    /// One row per `llo_proto` payload of a TPU kernel-profiling capture (an event metadata of
    /// `/host:metadata` named `<module>(<module id>)::<HLO op>`): the compiled LLO program of one
    /// HLO op, decoded (static: the compiler's schedule, not a measurement). A payload that does
    /// not decode is a row with `decode_status` saying why, and its bytes stay in `metadata_args`.
    LloPrograms: LLO_PROGRAMS = "llo_programs", sorted by ["device_id", "metadata_id"],
    LloProgramRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        metadata_id: i64 = (= LLO_METADATA_ID),
        hlo_op: &'a str = (= LLO_HLO_OP),
        /// The event metadata name, `<module>(<module id>)::<HLO op>`.
        program: &'a str = (Utf8),
        /// The HLO module (`llo_proto` field 10), e.g. `jit_matmul_optimized`.
        hlo_module: Option<&'a str> = (Utf8 null),
        /// `HloModuleProto.id` (field 11), the `(35)` of the name; NULL when the payload did not
        /// decode.
        module_id: Option<i64> = (Int64 null),
        /// Size of the payload.
        bytes: i64 = (Int64),
        /// Bundles (schedule slots) of the program: the length of its static utilization arrays,
        /// XProf's `total_bundles`.
        bundles: Option<i64> = (Int64 null),
        /// Regions in `llo_regions`.
        regions: Option<i64> = (Int64 null),
        /// Instructions in `llo_program_instructions`, XProf's `total_instructions` of
        /// `get_llo_dump_analysis --mode=opcodes`.
        instructions: Option<i64> = (Int64 null),
        /// Instructions XProf's `get_llo_analysis` counts for the program (`total_instructions`
        /// there): it walks a loop's pre-header, body and exit and a predicated region's body and
        /// fall-through only.
        analysis_instructions: Option<i64> = (Int64 null),
        /// Buffer allocations in `llo_allocations`.
        allocations: Option<i64> = (Int64 null),
        /// `ok`, or why the payload did not decode (with the byte offset).
        decode_status: &'a str = (Utf8),
    }
}

table! {
    /// The region tree of each LLO program (static), as XProf's `get_llo_dump_analysis
    /// --mode=region_tree` shows it: one row per node, in program order. A loop or predicated
    /// region is a node of its own (`kind` `loop`/`predicated_region`, no region id) whose children
    /// are its parts (`pre_header`, `body`, `check_branch_region`, ...).
    LloRegions: LLO_REGIONS = "llo_regions", sorted by ["device_id", "metadata_id"],
    LloRegionRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        metadata_id: i64 = (= LLO_METADATA_ID),
        hlo_op: &'a str = (= LLO_HLO_OP),
        /// Position of the node in program order (0 is the root); `parent_node` refers to it.
        node: i64 = (Int64),
        /// `node` of the enclosing node; NULL for the root.
        parent_node: Option<i64> = (Int64 null),
        /// Depth in the tree (0 for the root).
        depth: i32 = (Int32),
        /// The LLO region id (`ordinal`): the id of the `Tensor Core` markers
        /// (`llo_region_entries.region_id`), the `_counters_` regions and the compiler's
        /// `$regionN`; NULL on loop and predicated-region nodes.
        region_id: Option<i64> = (Int64 null),
        /// `region_id` of the nearest enclosing region.
        parent_region_id: Option<i64> = (Int64 null),
        /// XProf's node name: the region's own name, else `top` (root), `sub_region`, `loop`,
        /// `predicated_region`, or the part it is (`pre_header`, `header`, `header_branch`, `body`,
        /// `footer`, `footer_branch`, `exit`, `check_region`, `check_branch_region`,
        /// `predicated_region`, `fallthru_region`).
        name: &'a str = (Utf8),
        /// XProf's node kind: `region` (the root and the parts of loops and predicated regions),
        /// `sub_region`, `loop`, `predicated_region`.
        kind: &'a str = (Utf8),
        /// First bundle (XProf's `start_bundleno`); NULL when the region is not placed (written as
        /// -1).
        start_bundle: Option<i64> = (Int64 null),
        /// Bundle past the last (`limit_bundleno`); NULL when not placed.
        limit_bundle: Option<i64> = (Int64 null),
        /// Instructions directly in the region (XProf's `num_instructions`, not counting nested
        /// regions).
        instructions: i64 = (Int64),
        /// On a `loop` node: its trips, from the loop's index space ((limit - start) / step).
        trip_count: Option<i64> = (Int64 null),
        /// The node's path as XProf's `bundle_util` names the innermost region of a bundle
        /// (`region/region/loop/region`, ...).
        region_path: &'a str = (Utf8),
        /// The named scopes (outermost first, joined by `/`) that most of the region's own
        /// instructions carry, from the program's provenance (`llo_program_instructions`); NULL
        /// when none carries one.
        named_scope: Option<&'a str> = (Utf8 null),
        /// Likewise, the JAX primitive.
        primitive: Option<&'a str> = (Utf8 null),
        /// Likewise, the source file.
        source_file: Option<&'a str> = (Utf8 null),
        /// Likewise, the source line.
        source_line: Option<i64> = (Int64 null),
    }
}

table! {
    /// Static slot use of each functional unit in each bundle of an LLO program (`llo_proto` field
    /// 6; XProf's `bundle_util` rows, one row per bundle and unit here): what the compiler
    /// scheduled, not a measurement. Spills and fills are units with no capacity.
    LloBundleUnits: LLO_BUNDLE_UNITS = "llo_bundle_units", sorted by ["device_id", "metadata_id"],
    LloBundleUnitRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        metadata_id: i64 = (= LLO_METADATA_ID),
        hlo_op: &'a str = (= LLO_HLO_OP),
        /// Bundle (schedule slot) number.
        bundle: i64 = (Int64),
        /// Unit in this project's vocabulary: `MXU`, `XLU`, `VALU`, `EUP`, `VLD`, `VST`, `SALU`,
        /// `SPILL`, `FILL` (the same names as `tracks.unit` and `unit_counters.unit`).
        unit: &'a str = (Utf8),
        /// The unit as XProf's `bundle_util` names it: `mxu`, `xlu`, `vector_alu`, `vector_eup`,
        /// `vector_load`, `vector_store`, `scalar_alu`, `spill`, `fill`.
        xprof_unit: &'a str = (Utf8),
        /// Slots of the unit used in the bundle.
        used: i64 = (Int64),
        /// Slots of the unit per bundle; NULL for spills and fills.
        capacity: Option<i64> = (Int64 null),
        /// The region holding the bundle (`llo_regions.region_id`): of the placed regions whose
        /// range holds it, the last in program order (the innermost where regions nest), as XProf's
        /// `region_path` picks it.
        region_id: Option<i64> = (Int64 null),
    }
}

table! {
    /// Every instruction of every LLO program (static), with its opcode as XProf prints it, its
    /// category and execution unit, its bundle, its region, and where it came from (JAX primitive,
    /// named scopes, source line) when the program carries provenance.
    LloProgramInstructions: LLO_PROGRAM_INSTRUCTIONS = "llo_program_instructions", sorted by ["device_id", "metadata_id"],
    LloProgramInstructionRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        metadata_id: i64 = (= LLO_METADATA_ID),
        hlo_op: &'a str = (= LLO_HLO_OP),
        /// Instruction id (the SSA number of the compiler's dumps, XProf's `ordinal`).
        instruction_id: i64 = (Int64),
        /// Opcode as XProf names it (`OPCODE_VECTOR_LOAD`, ...; `OPCODE_UNKNOWN_<n>` for a value
        /// XProf 2.24.2 does not know).
        opcode: &'a str = (Utf8),
        /// The opcode's number as written.
        opcode_value: i32 = (Int32),
        /// Category as XProf's `--mode=opcodes` prints it (`load_store`, `matrix`, `vector`,
        /// `scalar`, `dma`, `control`, ...).
        category: &'a str = (Utf8),
        /// Execution unit as XProf's `get_llo_analysis` counts it (`MXU`, `VALU`, `SALU`,
        /// `LOAD_STORE`, `DMA`, `XLU`, `SYNC`, `OTHER`, ...).
        unit: &'a str = (Utf8),
        /// Bundle (schedule slot); NULL for an unscheduled instruction.
        bundle: Option<i64> = (Int64 null),
        /// The region whose members hold the instruction.
        region_id: Option<i64> = (Int64 null),
        /// MXU index on MXU-related ops (`llo_proto` instruction field 11, inferred).
        mxu: Option<i32> = (Int32 null),
        /// Class of the result register (`PREG`, `SREG`, `VMREG`, `VREG`, ...); NULL for none.
        register_type: Option<&'a str> = (Utf8 null),
        /// Pseudo-instruction kind (`SPILL_TO_MEMORY`, `FILL_FROM_MEMORY`, `COPY_REGISTER`, ...);
        /// NULL for a real instruction.
        pseudo_kind: Option<&'a str> = (Utf8 null),
        /// The instruction's comment (`materialized constant`, `TraceMeStart(acc) [`, `BoundsCheck
        /// ...`).
        comment: Option<&'a str> = (Utf8 null),
        /// JAX primitive it lowers (`dot_general`, `dma_start`, ...), from the provenance table.
        primitive: Option<&'a str> = (Utf8 null),
        /// Named scopes, outermost first, joined by `/` (`ep_run_kernel/acc`).
        named_scope: Option<&'a str> = (Utf8 null),
        /// Source file of the innermost frame (XProf's source map).
        source_file: Option<&'a str> = (Utf8 null),
        /// Its line.
        source_line: Option<i64> = (Int64 null),
    }
}

table! {
    /// Buffer allocations of each LLO program (its constant pool's allocation entries, XProf's
    /// `--mode=spills` allocations): VMEM, SMEM and sync-flag buffers with their size and flags
    /// (static).
    LloAllocations: LLO_ALLOCATIONS = "llo_allocations", sorted by ["device_id", "metadata_id"],
    LloAllocationRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        metadata_id: i64 = (= LLO_METADATA_ID),
        hlo_op: &'a str = (= LLO_HLO_OP),
        /// Allocation number (`#allocationN` of the compiler's dumps).
        ordinal: i64 = (Int64),
        /// Size in bytes.
        size_bytes: i64 = (Int64),
        /// `vmem`, `smem` or `sflag` for spaces 2, 3 and 4 (inferred from the dumps), else
        /// `space_<n>`.
        memory_space: &'a str = (Utf8),
        /// The memory space number as written.
        space: i32 = (Int32),
        /// A spill slot.
        is_spill: bool = (Boolean),
        /// Scoped to the kernel (else at a fixed address).
        is_scoped: bool = (Boolean),
        /// Virtual.
        is_virtual: bool = (Boolean),
        /// Remote.
        is_remote: bool = (Boolean),
    }
}

table! {
    /// One row per register live range of each LLO program (static), as XProf's
    /// `get_llo_dump_analysis --mode=register_pressure` builds them: an instruction that defines a
    /// register (register type set, register not negative) opens a range at its bundle (0 when
    /// unscheduled), which ends at the latest bundle of an instruction using it as an operand,
    /// never before it starts. XProf's `total_live_ranges` is the row count.
    LloRegisterLiveRanges: LLO_REGISTER_LIVE_RANGES = "llo_register_live_ranges", sorted by ["device_id", "metadata_id"],
    LloRegisterLiveRangeRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        metadata_id: i64 = (= LLO_METADATA_ID),
        hlo_op: &'a str = (= LLO_HLO_OP),
        /// The defining instruction (`llo_program_instructions.instruction_id`); of instructions
        /// with the same id, the last in program order.
        instruction_id: i64 = (Int64),
        /// `PREG`, `SREG`, `VMREG`, `VREG`, `RPREG`, `DREG` or `CBREG`.
        register_type: &'a str = (Utf8),
        /// Register number.
        register: i32 = (Int32),
        /// First bundle the register is live in.
        start_bundle: i64 = (Int64),
        /// Last bundle it is live in (inclusive): the latest bundle of its users, or
        /// `start_bundle`.
        end_bundle: i64 = (Int64),
    }
}

table! {
    /// Live registers of each type in each bundle of an LLO program (static): the
    /// `llo_register_live_ranges` covering the bundle, one row per bundle and register type that
    /// has any. XProf's `peak_by_register_type` is `max(live)` by type, and its `hottest_bundles`
    /// the 15 bundles of highest `sum(live)` (ties to the lower bundle).
    LloRegisterPressure: LLO_REGISTER_PRESSURE = "llo_register_pressure", sorted by ["device_id", "metadata_id"],
    LloRegisterPressureRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        metadata_id: i64 = (= LLO_METADATA_ID),
        hlo_op: &'a str = (= LLO_HLO_OP),
        /// Bundle.
        bundle: i64 = (Int64),
        /// Register type, as in `llo_register_live_ranges`.
        register_type: &'a str = (Utf8),
        /// Live ranges of that type covering the bundle (at least 1).
        live: i64 = (Int64),
        /// The region holding the bundle, as `llo_bundle_units.region_id`; NULL for a bundle past
        /// the program's.
        region_id: Option<i64> = (Int64 null),
    }
}

table! {
    /// Stall codes the compiler wrote in LLO instruction comments (static), as XProf's
    /// `get_llo_dump_analysis --mode=bdi_stalls` reads them: after the first `bdi:` of the comment,
    /// up to a space, each comma-separated part's text before `:`, kept when it is `A`, `B`, `F`,
    /// `H`, `O` or `R`, once per instruction. One row per code of each annotated instruction;
    /// XProf's `code_histogram` is `count(*)` by code and `total_annotated_instructions` the
    /// distinct instructions.
    LloBdiStalls: LLO_BDI_STALLS = "llo_bdi_stalls", sorted by ["device_id", "metadata_id"],
    LloBdiStallRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        metadata_id: i64 = (= LLO_METADATA_ID),
        hlo_op: &'a str = (= LLO_HLO_OP),
        /// The annotated instruction.
        instruction_id: i64 = (Int64),
        /// Its bundle; NULL when unscheduled (XProf prints 0).
        bundle: Option<i64> = (Int64 null),
        /// The stall code: `A`, `B`, `F`, `H`, `O` or `R`.
        code: &'a str = (Utf8),
        /// The code's place among the instruction's codes, from 1 (XProf's `codes` order).
        position: i32 = (Int32),
        /// The whole comment.
        comment: &'a str = (Utf8),
        /// The region whose members hold the instruction.
        region_id: Option<i64> = (Int64 null),
    }
}

table! {
    /// The source lines of the instructions scheduled in each bundle of an LLO program (static):
    /// XProf's `get_llo_dump_analysis --mode=source_for_bundle --bundle=N` for every bundle at
    /// once. One row per bundle and source; a bundle whose instructions carry no provenance has
    /// none.
    LloBundleSources: LLO_BUNDLE_SOURCES = "llo_bundle_sources", sorted by ["device_id", "metadata_id"],
    LloBundleSourceRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        metadata_id: i64 = (= LLO_METADATA_ID),
        hlo_op: &'a str = (= LLO_HLO_OP),
        /// Bundle.
        bundle: i64 = (Int64),
        /// `file:line` as XProf prints it (`file` alone when the line is written as 0): the last
        /// frame of the instruction's source-map entry.
        source: &'a str = (Utf8),
        /// The file.
        source_file: &'a str = (Utf8),
        /// The line; NULL when written as 0.
        source_line: Option<i64> = (Int64 null),
        /// Instructions of the bundle with this source.
        instructions: i64 = (Int64),
        /// The region holding the bundle, as `llo_bundle_units.region_id`.
        region_id: Option<i64> = (Int64 null),
    }
}

table! {
    /// The target each LLO program was compiled for (`llo_proto` field 7; XProf's
    /// `get_llo_dump_analysis --mode=target_info` key fields): one row per program that carries it.
    /// The topology columns are NULL when the payload has no topology (XProf then prints only the
    /// replica count and reserved HBM).
    LloTargetInfo: LLO_TARGET_INFO = "llo_target_info", sorted by ["device_id", "metadata_id"],
    LloTargetInfoRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        metadata_id: i64 = (= LLO_METADATA_ID),
        hlo_op: &'a str = (= LLO_HLO_OP),
        /// Replicas (`replica_count`).
        replica_count: i64 = (Int64),
        /// HBM bytes reserved (`reserved_hbm_usage_bytes`).
        reserved_hbm_usage_bytes: i64 = (Int64),
        /// Chip configuration (`megachip_tccontrol` on a real v6e capture).
        chip_config_name: Option<&'a str> = (Utf8 null),
        /// Platform type, as written.
        platform_type: Option<i32> = (Int32 null),
        /// Chip variant, as written (XProf does not print it).
        variant: Option<i32> = (Int32 null),
        /// Enhanced barrier.
        enhanced_barrier_enabled: Option<bool> = (Boolean null),
        /// Chips per host along x (`chips_per_host_bounds`).
        chips_per_host_x: Option<i32> = (Int32 null),
        /// Along y.
        chips_per_host_y: Option<i32> = (Int32 null),
        /// Along z.
        chips_per_host_z: Option<i32> = (Int32 null),
        /// Hosts along x (`host_bounds`).
        host_x: Option<i32> = (Int32 null),
        /// Along y.
        host_y: Option<i32> = (Int32 null),
        /// Along z.
        host_z: Option<i32> = (Int32 null),
        /// XProf's text of both bounds, `chips x=2, y=2, z=1; hosts x=1, y=1, z=1` (each part only
        /// when present).
        bounds: Option<&'a str> = (Utf8 null),
    }
}
