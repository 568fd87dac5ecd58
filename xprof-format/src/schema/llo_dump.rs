//! The `llo_dump_*` tables of a TPU LLO compiler dump folder (static):
//! bundles, ops, per-bundle unit use, the schedule analysis and the
//! allocations.

table! {
    /// One row per bundle of an LLO compiler dump's final bundles (`…-final_bundles.txt` of
    /// `--xla_jf_dump_to`; static). The dump is of an uninstrumented compile, so addresses are not
    /// a capture's marker addresses: `region_id` links the two.
    LloDumpBundles: LLO_DUMP_BUNDLES = "llo_dump_bundles", sorted by ["address"],
    LloDumpBundleRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        hlo_op: &'a str = (= DUMP_HLO_OP),
        /// Bundle address (0, then `0x…` in the dump); NULL when the written address does not fit
        /// in 64 bits (the bundle is then unread: see `unread_text`).
        address: Option<i64> = (Int64 null),
        /// The file line (1-based) where the bundle starts: the file's order, kept where the
        /// addresses are not in order (rows are sorted by address, with a converter warning).
        line: i64 = (Int64),
        /// Control-target tag as written (`LB` loop body, `PF` predicated fallthrough, `LH`, `LE`,
        /// `PB`, `CT`); NULL for none.
        tag: Option<&'a str> = (Utf8 null),
        /// The bundle carries the `>` mark (inside the loop: inferred).
        in_loop: bool = (Boolean),
        /// Ops in the bundle (0 for an empty `{}` bundle); NULL for a bundle that could not be read
        /// (`unread_text`).
        ops: Option<i64> = (Int64 null),
        /// The innermost LLO region open at the bundle, from the `Start region N`/`End region N`
        /// comments: the `region_id` of `llo_regions` and `llo_region_entries`.
        region_id: Option<i64> = (Int64 null),
        /// Regions whose `Start region N` comment is on the bundle, in the comment's order.
        regions_started: &'a [i64] = (ListInt64),
        /// Regions whose `End region N` comment is on the bundle, in the comment's order.
        regions_ended: &'a [i64] = (ListInt64),
        /// Regions whose `Start/End empty region N` comment is on the bundle: regions the compiler
        /// kept with no bundle of their own (they open no region at the bundle).
        regions_empty: &'a [i64] = (ListInt64),
        /// The bundle's comment says `entry bundle`.
        is_entry: bool = (Boolean),
        /// The bundle's comment says `exit bundle`.
        is_exit: bool = (Boolean),
        /// The trailing comment as written (region events joined by ` :: `).
        comment: Option<&'a str> = (Utf8 null),
        /// The bundle's text as written when it could not be read (a converter warning names its
        /// file, line and byte offset); NULL otherwise.
        unread_text: Option<&'a str> = (Utf8 null),
    }
}

table! {
    /// One row per op of each bundle of an LLO compiler dump's final bundles (static).
    LloDumpOps: LLO_DUMP_OPS = "llo_dump_ops", sorted by ["address", "position"],
    LloDumpOpRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        hlo_op: &'a str = (= DUMP_HLO_OP),
        /// Bundle address; joins `llo_dump_bundles`.
        address: i64 = (Int64),
        /// Place of the op in its bundle (0 first).
        position: i32 = (Int32),
        /// The op's mnemonic (`vmatmul.mubr.f32.gmra.mxu0`, `vld`, `dma.hbm_to_vmem`, `sadd.s32`,
        /// ...).
        opcode: &'a str = (Utf8),
        /// The unit whose slot the op takes, in the vocabulary of `tracks.unit` and
        /// `llo_bundle_units` (`MXU`, `XLU`, `VPOP`, `VALU`, `VLD`, `VST`, `SALU`; `PSEUDO` for
        /// `inlined_call_operand`, `sphi`, `int_to_ptr`; `OTHER` for a mnemonic no rule knows),
        /// decided from the mnemonic so that each op counts where the compiler's per-bundle
        /// utilization dump counts it (cross-lane `*.xlane.*` and `*.xluN` ops are `XLU`, `vpop.*`
        /// `VPOP`; docs/analyses.md lists the rules); `llo_dump_unit_check` compares it with that
        /// dump bundle by bundle. MXU ops do not add up to the dump's MXU column, which counts the
        /// MXUs modelled busy.
        unit: &'a str = (Utf8),
        /// The unit as the op names it: the `mxuN` suffix of MXU ops, else the mnemonic's first
        /// part (`vld`, `dma`, `sadd`).
        unit_as_written: &'a str = (Utf8),
        /// The result register or value (`%v88_v5`); NULL for an op without one.
        result: Option<&'a str> = (Utf8 null),
        /// The op as written.
        text: &'a str = (Utf8),
    }
}

table! {
    /// Static slot use per bundle and unit from an LLO compiler dump's
    /// `…-final_hlo-static-per-bundle-utilization.txt` (row i of the dump is bundle address i).
    LloDumpBundleUnits: LLO_DUMP_BUNDLE_UNITS = "llo_dump_bundle_units", sorted by ["address"],
    LloDumpBundleUnitRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        hlo_op: &'a str = (= DUMP_HLO_OP),
        /// Bundle address.
        address: i64 = (Int64),
        /// Unit in this project's vocabulary (`VLOAD` is `VLD`, `VSTORE` `VST`, `VLOAD:FILL`
        /// `FILL`, `VSTORE:SPILL` `SPILL`; `MXU`, `XLU`, `VALU`, `VPOP`, `EUP`, `SALU` as written).
        unit: &'a str = (Utf8),
        /// The dump's column name.
        unit_as_written: &'a str = (Utf8),
        /// Slots used (for `MXU`, the MXUs the compiler models busy).
        used: i64 = (Int64),
        /// The unit's capacity from the dump's `CAPACITY` line.
        capacity: i64 = (Int64),
    }
}

table! {
    /// The lines of an LLO compiler dump's `…-schedule-analysis_final_bundles.txt`: bundle totals,
    /// and scheduled bundles per HLO instruction and per opcode (static).
    LloDumpSchedule: LLO_DUMP_SCHEDULE = "llo_dump_schedule", sorted by ["line"],
    LloDumpScheduleRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        hlo_op: &'a str = (= DUMP_HLO_OP),
        /// Line of the file (1 first).
        line: i64 = (Int64),
        /// `total`, `empty`, `non_empty` (bundle counts), `instruction` (one HLO instruction) or
        /// `opcode` (an `[opcode]` summary).
        kind: &'a str = (Utf8),
        /// The HLO instruction text (`instruction`) or the opcode (`opcode`).
        name: Option<&'a str> = (Utf8 null),
        /// Scheduled bundles.
        bundles: f64 = (Float64),
        /// Share of the scheduled bundles, percent, as written.
        pct: Option<f64> = (Float64 null),
        /// Instances of the opcode (`opcode` rows).
        instances: Option<i64> = (Int64 null),
    }
}

table! {
    /// Buffer allocations of an LLO compiler dump's `…-original.txt` (the LLO before scheduling):
    /// `#allocationN [shape = …, space=…, size = …, scoped|fixed_abs, tag = …]` (static).
    LloDumpAllocations: LLO_DUMP_ALLOCATIONS = "llo_dump_allocations", sorted by ["line"],
    LloDumpAllocationRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        hlo_op: &'a str = (= DUMP_HLO_OP),
        /// Line of the file (1 first).
        line: i64 = (Int64),
        /// `#allocationN`.
        name: &'a str = (Utf8),
        /// XLA shape as written.
        shape: Option<&'a str> = (Utf8 null),
        /// `vmem`, `smem`, `sflag`, ... as written.
        memory_space: &'a str = (Utf8),
        /// Size in bytes.
        size_bytes: i64 = (Int64),
        /// Offset (`offset = …`), when written.
        offset_bytes: Option<i64> = (Int64 null),
        /// `scoped` (else `fixed_abs`).
        is_scoped: bool = (Boolean),
        /// The allocation's tag.
        tag: Option<&'a str> = (Utf8 null),
    }
}
