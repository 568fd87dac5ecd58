//! `hlo_instructions` rows of one decoded HLO module.

use xprof_format::schema::HloInstructionRow;

use super::HloModule;
use crate::assembler::TraceAssembler;

/// `hlo_instructions` rows of one `Hlo Proto` stat. A proto that does not
/// decode is kept as bytes in `metadata_args` and named in
/// `traces.converter_warnings`; the conversion goes on, as XProf's does.
pub(crate) fn hlo_instruction_rows(
    asm: &mut TraceAssembler<'_>,
    device_id: i32,
    metadata_id: i64,
    program_id: Option<u64>,
    bytes: &[u8],
    metadata_name: &str,
) {
    let module = match HloModule::decode(bytes) {
        Ok(m) => m,
        Err(e) => {
            asm.warn(format!(
                "/host:metadata `{metadata_name}`: Hlo Proto not decoded ({e}); kept as bytes"
            ));
            return;
        }
    };
    let trace_id = asm.trace_id();
    let program_id = program_id.or(u64::try_from(module.id).ok());
    let roles = module.computation_roles();
    for (computation, role) in module.computations.iter().zip(roles) {
        for instr in &computation.instructions {
            let operands: Vec<String> = instr
                .operand_ids
                .iter()
                .map(|id| module.instruction_name(*id).into_owned())
                .collect();
            let called: Vec<String> = instr
                .called_computation_ids
                .iter()
                .map(|id| module.computation_name(*id).into_owned())
                .collect();
            let stack = module.stack(instr);
            let source = module.source(instr, &stack);
            asm.device_row(&HloInstructionRow {
                trace_id,
                device_id,
                metadata_id,
                program_id,
                hlo_module: &module.name,
                computation: &computation.name,
                computation_role: role.name(),
                instruction_id: instr.id,
                name: &instr.name,
                opcode: &instr.opcode,
                category: &module.category(instr),
                expression: &module.expression(instr),
                shape: &module.shape_text(instr),
                operands: &operands,
                called_computations: &called,
                fusion_kind: non_empty(&instr.fusion_kind),
                custom_call_target: non_empty(&instr.custom_call_target),
                op_type: non_empty(&instr.op_type),
                op_name: non_empty(&instr.op_name),
                tf_op: &instr.tf_op(),
                deduplicated_name: non_empty(&instr.deduplicated_name),
                source: source.as_deref(),
                source_stack: non_empty(&stack),
            });
        }
    }
}

fn non_empty(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}
