//! The `llo_*` rows of one decoded LLO program: `llo_programs`,
//! `llo_regions`, `llo_bundle_units`, `llo_program_instructions`,
//! `llo_allocations`, the register and stall tables, `llo_bundle_sources`
//! and `llo_target_info`.

use std::path::Path;

use xprof_format::schema::{
    LloAllocationRow, LloBdiStallRow, LloBundleSourceRow, LloBundleUnitRow,
    LloProgramInstructionRow, LloProgramRow, LloRegionRow, LloRegisterLiveRangeRow,
    LloRegisterPressureRow, LloTargetInfoRow,
};

use crate::assembler::TraceAssembler;

/// The `llo_*` rows of one `llo_proto` stat. A payload that does not
/// decode is a `llo_programs` row saying why, and a converter warning with
/// the payload's byte offset in the file; its bytes stay in
/// `metadata_args`.
pub(crate) fn llo_program_rows(
    asm: &mut TraceAssembler<'_>,
    device_id: i32,
    metadata_id: i64,
    bytes: &[u8],
    metadata_name: &str,
    path: &Path,
    offset: usize,
) {
    let trace_id = asm.trace_id();
    // `<module>(<module id>)::<HLO op>`.
    let named_op = metadata_name.rsplit_once("::").map(|(_, op)| op);
    let program = match super::decode(bytes) {
        Ok(p) => p,
        Err(e) => {
            let status = format!(
                "{e} (payload of {} bytes at byte offset {offset} of {})",
                bytes.len(),
                path.display()
            );
            asm.warn(format!(
                "/host:metadata `{metadata_name}`: llo_proto not decoded: {status}; kept as bytes"
            ));
            asm.device_row(&LloProgramRow {
                trace_id,
                device_id,
                metadata_id,
                hlo_op: named_op.unwrap_or(metadata_name),
                program: metadata_name,
                hlo_module: None,
                module_id: None,
                bytes: bytes.len() as i64,
                bundles: None,
                regions: None,
                instructions: None,
                analysis_instructions: None,
                allocations: None,
                decode_status: &status,
            });
            return;
        }
    };
    let hlo_op = if program.hlo_op.is_empty() {
        named_op.unwrap_or(metadata_name)
    } else {
        program.hlo_op.as_str()
    };
    asm.device_row(&LloProgramRow {
        trace_id,
        device_id,
        metadata_id,
        hlo_op,
        program: metadata_name,
        hlo_module: non_empty(&program.hlo_module),
        module_id: Some(program.module_id),
        bytes: bytes.len() as i64,
        bundles: Some(program.bundles),
        regions: Some(
            program
                .regions
                .iter()
                .filter(|r| r.region_id.is_some())
                .count() as i64,
        ),
        instructions: Some(program.instructions.len() as i64),
        analysis_instructions: Some(program.analysis_instructions()),
        allocations: Some(program.allocations.len() as i64),
        decode_status: "ok",
    });
    for r in &program.regions {
        asm.device_row(&LloRegionRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            node: r.node as i64,
            parent_node: r.parent_node.map(|n| n as i64),
            depth: r.depth,
            region_id: r.region_id,
            parent_region_id: r.parent_region_id,
            name: &r.name,
            kind: r.kind,
            start_bundle: r.start_bundle,
            limit_bundle: r.limit_bundle,
            instructions: r.instructions,
            trip_count: r.trip_count,
            region_path: &r.region_path,
            named_scope: r.source.named_scope.as_deref(),
            primitive: r.source.primitive.as_deref(),
            source_file: r.source.file.as_deref(),
            source_line: r.source.line,
        });
    }
    for u in &program.bundle_units {
        asm.device_row(&LloBundleUnitRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            bundle: u.bundle,
            unit: u.unit,
            xprof_unit: u.xprof_unit,
            used: u.used,
            capacity: u.capacity,
            region_id: u.region_id,
        });
    }
    for i in &program.instructions {
        asm.device_row(&LloProgramInstructionRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            instruction_id: i.instruction_id,
            opcode: &i.opcode,
            opcode_value: i.opcode_value,
            category: i.category,
            unit: i.unit,
            bundle: i.bundle,
            region_id: i.region_id,
            mxu: i.mxu,
            register_type: i.register_type,
            pseudo_kind: i.pseudo_kind,
            comment: i.comment.as_deref(),
            primitive: i.primitive.as_deref(),
            named_scope: i.named_scope.as_deref(),
            source_file: i.source_file.as_deref(),
            source_line: i.source_line,
        });
    }
    for a in &program.allocations {
        asm.device_row(&LloAllocationRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            ordinal: a.ordinal,
            size_bytes: a.size_bytes,
            memory_space: &a.memory_space,
            space: a.space,
            is_spill: a.is_spill,
            is_scoped: a.is_scoped,
            is_virtual: a.is_virtual,
            is_remote: a.is_remote,
        });
    }
    for r in &program.live_ranges {
        asm.device_row(&LloRegisterLiveRangeRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            instruction_id: r.instruction_id,
            register_type: r.register_type,
            register: r.register,
            start_bundle: r.start_bundle,
            end_bundle: r.end_bundle,
        });
    }
    for p in &program.register_pressure {
        asm.device_row(&LloRegisterPressureRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            bundle: p.bundle,
            register_type: p.register_type,
            live: p.live,
            region_id: program.region_of_bundle(p.bundle),
        });
    }
    for b in &program.bdi_stalls {
        let i = &program.instructions[b.walk_index];
        asm.device_row(&LloBdiStallRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            instruction_id: b.instruction_id,
            bundle: b.bundle,
            code: b.code,
            position: b.position,
            comment: i.comment.as_deref().unwrap_or_default(),
            region_id: i.region_id,
        });
    }
    for b in &program.bundle_sources {
        asm.device_row(&LloBundleSourceRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            bundle: b.bundle,
            source: &b.source,
            source_file: &b.source_file,
            source_line: b.source_line,
            instructions: b.instructions,
            region_id: program.region_of_bundle(b.bundle),
        });
    }
    if let Some(t) = &program.target {
        let topo = |v| t.has_topology.then_some(v);
        let part = |name: &str, b: Option<[i32; 3]>| {
            b.map(|[x, y, z]| format!("{name} x={x}, y={y}, z={z}"))
        };
        let bounds: Vec<String> = [
            part("chips", t.chips_per_host_bounds),
            part("hosts", t.host_bounds),
        ]
        .into_iter()
        .flatten()
        .collect();
        let bounds = (!bounds.is_empty()).then(|| bounds.join("; "));
        asm.device_row(&LloTargetInfoRow {
            trace_id,
            device_id,
            metadata_id,
            hlo_op,
            replica_count: t.replica_count,
            reserved_hbm_usage_bytes: t.reserved_hbm_usage_bytes,
            chip_config_name: t.has_topology.then_some(t.chip_config_name.as_str()),
            platform_type: topo(t.platform_type),
            variant: topo(t.variant),
            enhanced_barrier_enabled: t.has_topology.then_some(t.enhanced_barrier_enabled),
            chips_per_host_x: t.chips_per_host_bounds.map(|b| b[0]),
            chips_per_host_y: t.chips_per_host_bounds.map(|b| b[1]),
            chips_per_host_z: t.chips_per_host_bounds.map(|b| b[2]),
            host_x: t.host_bounds.map(|b| b[0]),
            host_y: t.host_bounds.map(|b| b[1]),
            host_z: t.host_bounds.map(|b| b[2]),
            bounds: bounds.as_deref(),
        });
    }
}

fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}
