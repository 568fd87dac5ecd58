//! Synthetic `llo_proto` payloads for [`crate::llo_capture`], shaped after
//! the real capture's (`shared/formats/tpu_kernel_profiling_capture.md`
//! §7): a root region, the kernel body block, a counted loop whose body
//! holds two predicated regions (`init` and `acc`), instructions placed on
//! the bundles their units use, region-trace instructions (`0xA800_0000 |
//! R`) for the markers (those of unplaced regions unscheduled), the
//! per-bundle utilization arrays of field 6, a constant pool with buffer
//! allocations, comments, and provenance (JAX primitive, named scopes,
//! source line). XProf 2.24.2 decodes these payloads (the tests compare
//! its `get_llo_dump_analysis` and `get_llo_analysis` output with the
//! `llo_*` tables), which is what shows they are shaped like the real one.

use prost::Message;

use crate::llo_capture_truth::{CaptureTruth, HLO_OP, MODULE, MODULE_ID, ProgramRegion};
use xprof_convert::llo_proto::messages::{
    LloAllocationProto, LloBoundsProto, LloConstantProto, LloInstructionProto, LloLoopProto,
    LloModuleProto, LloOperand, LloPredicatedRegionProto, LloRegionProto, LloSourceFrameProto,
    LloSourceInfoProto, LloSourceMapProto, LloTargetArgumentsProto, LloTopologyProto,
    LoopIndexSpaceProto, RationalVectorProto, RegionMember, StaticPerBundleUtilizationProto,
    llo_constant, llo_operand, region_member::Member,
};

/// Opcode numbers used here (XProf's names).
const VECTOR_TRACE: i32 = 156;
const VECTOR_LOAD: i32 = 50;
const VECTOR_STORE: i32 = 66;
const VECTOR_ADD_F32: i32 = 321;
const VECTOR_MATMUL_MUBR: i32 = 186;
const SCALAR_ADD_S32: i32 = 408;
const SCALAR_BRANCH_REL: i32 = 159;
const INLINED_CALL_OPERAND: i32 = 270;
const DMA_HBM_TO_VMEM: i32 = 211;
const DMA_DONE_WAIT: i32 = 248;
/// Constant kind of a 32-bit immediate and of a buffer reference (§7.1).
const IMMEDIATE: i32 = 249;
const BUFFER: i32 = 45;

/// The strings of the provenance table.
const STRINGS: [&str; 9] = [
    "/work/pallas_matmul.py",
    "dot_general",
    "add",
    "get",
    "swap",
    "dma_start",
    "ep_run_kernel",
    "init",
    "acc",
];

/// Comment strings (field 9).
const COMMENTS: [&str; 4] = [
    "operand 0",
    "materialized constant",
    "TraceMeStart(acc) [",
    "] TraceMeEnd(acc)",
];

struct Builder<'t> {
    truth: &'t CaptureTruth,
    next_id: i32,
    constants: Vec<LloConstantProto>,
    /// (primitive, scopes, line, instruction ids).
    provenance: Vec<(i32, Vec<i32>, i32, Vec<i32>)>,
    /// The latest load, add and scalar add, whose results the next
    /// matmul, add, store or branch reads (so register live ranges span
    /// bundles, as on the real program).
    last_load: Option<i32>,
    last_add: Option<i32>,
    last_scalar: Option<i32>,
}

impl Builder<'_> {
    fn instr(&mut self, opcode: i32, bundle: Option<u32>) -> LloInstructionProto {
        self.next_id += 1;
        let (register_type, register) = match opcode {
            VECTOR_LOAD | VECTOR_ADD_F32 => (4, self.next_id % 64),
            SCALAR_ADD_S32 => (2, self.next_id % 31),
            _ => (0, 0),
        };
        let reads = match opcode {
            VECTOR_MATMUL_MUBR | VECTOR_ADD_F32 => self.last_load,
            VECTOR_STORE => self.last_add,
            SCALAR_BRANCH_REL => self.last_scalar,
            _ => None,
        };
        match opcode {
            VECTOR_LOAD => self.last_load = Some(self.next_id),
            VECTOR_ADD_F32 => self.last_add = Some(self.next_id),
            SCALAR_ADD_S32 => self.last_scalar = Some(self.next_id),
            _ => {}
        }
        LloInstructionProto {
            ordinal: self.next_id,
            opcode,
            operands: reads
                .map(|id| LloOperand {
                    operand: Some(llo_operand::Operand::InstructionOrdinal(id)),
                })
                .into_iter()
                .collect(),
            bundle: bundle.map(|b| b as i32),
            register,
            register_type,
            mxu: (opcode == VECTOR_MATMUL_MUBR).then_some(self.next_id % 2),
            ..Default::default()
        }
    }

    fn note(&mut self, primitive: usize, scopes: &[usize], line: i32, id: i32) {
        let scopes: Vec<i32> = scopes.iter().map(|s| *s as i32).collect();
        match self
            .provenance
            .iter_mut()
            .find(|p| p.0 == primitive as i32 && p.1 == scopes && p.2 == line)
        {
            Some(p) => p.3.push(id),
            None => self
                .provenance
                .push((primitive as i32, scopes, line, vec![id])),
        }
    }

    /// The region-trace instruction of a region: scheduled at its start
    /// when its marker fires, unscheduled otherwise.
    fn marker(&mut self, r: &ProgramRegion) -> RegionMember {
        self.constants.push(LloConstantProto {
            opcode: IMMEDIATE,
            value: Some(llo_constant::Value::Int(0xA800_0000_i64 | r.id as i64)),
        });
        let mut i = self.instr(VECTOR_TRACE, if r.marker { r.start } else { None });
        i.operands.push(LloOperand {
            operand: Some(llo_operand::Operand::ConstantIndex(
                self.constants.len() as i32 - 1,
            )),
        });
        member_instr(i)
    }

    /// A region with its marker and one instruction per used slot of each
    /// unit on the bundles it owns (those not owned by a nested region).
    fn region(&mut self, id: u32, nested: Vec<RegionMember>) -> LloRegionProto {
        let r = self.truth.region(id).clone();
        let mut members = vec![self.marker(&r)];
        if let (Some(start), Some(end)) = (r.start, r.end) {
            for b in start..end {
                // Bundles of a nested region (the loop's parts count as
                // R2's children) hold that region's instructions.
                if self
                    .truth
                    .regions
                    .iter()
                    .any(|o| o.parent == Some(id) && o.start <= Some(b) && Some(b) < o.end)
                {
                    continue;
                }
                for u in &self.truth.units {
                    let opcode = match u.unit {
                        "MXU" => VECTOR_MATMUL_MUBR,
                        "VALU" => VECTOR_ADD_F32,
                        "VLD" => VECTOR_LOAD,
                        "VST" => VECTOR_STORE,
                        "SALU" => SCALAR_ADD_S32,
                        _ => continue,
                    };
                    for _ in 0..u.used[b as usize] {
                        let mut i = self.instr(opcode, Some(b));
                        if opcode == VECTOR_STORE && b % 8 == 1 {
                            i.comment_index = Some(1);
                        }
                        let id_ = i.ordinal;
                        let body = match id {
                            28 => Some((7, 30)),
                            32 => Some((8, 34)),
                            _ => None,
                        };
                        // In a body, the loads, the matmul, the add and
                        // the store all come from one source line
                        // (`o_ref[...] += x_ref[...] @ y_ref[...]`).
                        match (opcode, body) {
                            (VECTOR_MATMUL_MUBR, Some((scope, line))) => {
                                self.note(1, &[6, scope], line, id_)
                            }
                            (VECTOR_ADD_F32, Some((scope, line))) => {
                                self.note(2, &[6, scope], line, id_)
                            }
                            (VECTOR_LOAD, Some((scope, line))) => {
                                self.note(3, &[6, scope], line, id_)
                            }
                            (VECTOR_STORE, Some((scope, line))) => {
                                self.note(4, &[6, scope], line, id_)
                            }
                            (VECTOR_LOAD, None) => self.note(3, &[], 29, id_),
                            (VECTOR_STORE, None) => self.note(4, &[], 36, id_),
                            _ => {}
                        }
                        members.push(member_instr(i));
                    }
                }
            }
            // Control at the region's last bundle.
            if matches!(id, 5 | 8 | 27 | 31) {
                members.push(member_instr(self.instr(SCALAR_BRANCH_REL, Some(end - 1))));
            }
        }
        members.extend(nested);
        LloRegionProto {
            members,
            name: String::new(),
            start_bundleno: r.start.map_or(-1, |s| s as i32),
            limit_bundleno: r.end.map_or(-1, |e| e as i32),
            ordinal: id as i32,
        }
    }

    fn predicated(&mut self, ids: [u32; 4]) -> RegionMember {
        let mut parts = ids.map(|id| Some(self.region(id, Vec::new())));
        RegionMember {
            member: Some(Member::PredicatedRegion(LloPredicatedRegionProto {
                check_region: parts[0].take(),
                check_branch_region: parts[1].take(),
                predicated_region: parts[2].take(),
                fallthru_region: parts[3].take(),
            })),
        }
    }
}

fn member_instr(i: LloInstructionProto) -> RegionMember {
    RegionMember {
        member: Some(Member::Instruction(i)),
    }
}

/// The kernel's payload.
pub fn kernel_proto(truth: &CaptureTruth) -> Vec<u8> {
    let mut b = Builder {
        truth,
        next_id: 100,
        constants: Vec::new(),
        provenance: Vec::new(),
        last_load: None,
        last_add: None,
        last_scalar: None,
    };
    // Buffer allocations (§9.4: vmem buffers, sync flags, one smem word;
    // one spill slot here).
    for (ordinal, space, size, scoped, spill) in [
        (0, 2, 2 << 20, false, false),
        (1, 2, 2 << 20, false, false),
        (2, 2, 4 << 20, true, false),
        (3, 4, 8, true, false),
        (4, 4, 8, true, false),
        (5, 3, 4, true, false),
        (6, 2, 4096, true, true),
    ] {
        b.constants.push(LloConstantProto {
            opcode: BUFFER,
            value: Some(llo_constant::Value::Allocation(LloAllocationProto {
                space,
                size,
                ordinal,
                is_scoped: scoped,
                is_spill: spill,
                ..Default::default()
            })),
        });
    }
    let first = b.predicated([26, 27, 28, 29]);
    let second = b.predicated([30, 31, 32, 33]);
    let mut dma = vec![];
    for opcode in [DMA_HBM_TO_VMEM, DMA_DONE_WAIT] {
        let i = b.instr(opcode, Some(13));
        b.note(5, &[], 27, i.ordinal);
        dma.push(member_instr(i));
    }
    dma.push(first);
    dma.push(second);
    let body = b.region(69, dma);
    let pre_header = b.region(64, Vec::new());
    let header = b.region(4, Vec::new());
    let header_branch = b.region(5, Vec::new());
    let footer = b.region(7, Vec::new());
    let footer_branch = b.region(8, Vec::new());
    let exit = b.region(68, Vec::new());
    let lp = RegionMember {
        member: Some(Member::Loop(LloLoopProto {
            pre_header: Some(pre_header),
            header: Some(header),
            header_branch: Some(header_branch),
            body: Some(body),
            footer: Some(footer),
            footer_branch: Some(footer_branch),
            exit: Some(exit),
            index_space: Some(LoopIndexSpaceProto {
                start: 0,
                limit: 4,
                step: 1,
            }),
        })),
    };
    let block = b.region(2, vec![lp]);
    let mut operands = Vec::new();
    for _ in 0..3 {
        let mut i = b.instr(INLINED_CALL_OPERAND, Some(0));
        i.comment_index = Some(0);
        operands.push(member_instr(i));
    }
    operands.push(RegionMember {
        member: Some(Member::Region(block)),
    });
    let root = b.region(0, operands);
    let util = {
        let v = |name: &str| {
            let u = truth
                .units
                .iter()
                .find(|u| u.counter == name)
                .expect("unit");
            RationalVectorProto {
                values: u.used.iter().map(|x| *x as i32).collect(),
                capacity: u.capacity.unwrap_or(0) as i32,
            }
        };
        let raw = |name: &str| -> Vec<i32> {
            truth
                .units
                .iter()
                .find(|u| u.counter == name)
                .expect("unit")
                .used
                .iter()
                .map(|x| *x as i32)
                .collect()
        };
        StaticPerBundleUtilizationProto {
            mxu: Some(v("MXU")),
            xlu: Some(v("XLU")),
            vector_alu: Some(v("Vector ALU")),
            vector_eup: Some(v("Vector EUP")),
            vector_load: Some(v("Vector Load")),
            vector_store: Some(v("Vector Store")),
            scalar_alu: Some(v("Scalar ALU")),
            spill: raw("Vector Spills"),
            fill: raw("Vector Fills"),
        }
    };
    let source_map = LloSourceMapProto {
        source_infos: b
            .provenance
            .iter()
            .map(|(primitive, scopes, line, ids)| LloSourceInfoProto {
                frames: vec![
                    LloSourceFrameProto {
                        file_string_index: 0,
                        line: 60,
                        end_line: 60,
                        column: 4,
                        end_column: 30,
                    },
                    LloSourceFrameProto {
                        file_string_index: 0,
                        line: *line,
                        end_line: *line,
                        column: 8,
                        end_column: 40,
                    },
                ],
                primitive_string_index: Some(*primitive),
                scope_string_indices: scopes.clone(),
                instruction_ordinals: ids.clone(),
            })
            .collect(),
        strings: STRINGS.iter().map(|s| s.to_string()).collect(),
    };
    LloModuleProto {
        hlo_instruction_name: HLO_OP.into(),
        root_region: Some(root),
        static_per_bundle_utilization: Some(util),
        target_arguments: Some(v6e_target()),
        constants: b.constants,
        interned_strings: COMMENTS.iter().map(|s| s.to_string()).collect(),
        hlo_module_name: MODULE.into(),
        hlo_module_id: MODULE_ID,
        source_map: Some(source_map),
    }
    .encode_to_vec()
}

/// Field 7 as a single-chip v6e program's (§7.1: the topology carries
/// `megachip_tccontrol`; the small numbers are this generator's).
fn v6e_target() -> LloTargetArgumentsProto {
    LloTargetArgumentsProto {
        replica_count: 1,
        reserved_hbm_usage_bytes: 64 << 20,
        topology: Some(LloTopologyProto {
            variant: 6,
            platform_type: 2,
            chip_config_name: "megachip_tccontrol".into(),
            chips_per_host_bounds: Some(LloBoundsProto { x: 2, y: 2, z: 1 }),
            host_bounds: Some(LloBoundsProto { x: 1, y: 1, z: 1 }),
            enhanced_barrier_enabled: true,
        }),
    }
}

/// A small fusion of another module, without provenance or loops (the
/// real capture's jax.random fusions).
pub fn small_fusion_proto() -> Vec<u8> {
    let slots = 6;
    let instr = |ordinal, opcode, bundle| LloInstructionProto {
        ordinal,
        opcode,
        bundle: Some(bundle),
        ..Default::default()
    };
    let root = LloRegionProto {
        members: vec![
            member_instr(instr(1, VECTOR_LOAD, 1)),
            member_instr(instr(2, VECTOR_ADD_F32, 2)),
            member_instr(instr(3, VECTOR_ADD_F32, 3)),
            member_instr(instr(4, VECTOR_STORE, 4)),
            member_instr(LloInstructionProto {
                ordinal: 5,
                opcode: SCALAR_ADD_S32,
                pseudo_kind: Some(2),
                ..Default::default()
            }),
        ],
        name: String::new(),
        start_bundleno: 0,
        limit_bundleno: slots,
        ordinal: 0,
    };
    let per_bundle = |b: &[i32]| b.to_vec();
    LloModuleProto {
        hlo_instruction_name: "fusion.28".into(),
        root_region: Some(root),
        static_per_bundle_utilization: Some(StaticPerBundleUtilizationProto {
            vector_load: Some(RationalVectorProto {
                values: per_bundle(&[0, 1, 0, 0, 0, 0]),
                capacity: 3,
            }),
            vector_alu: Some(RationalVectorProto {
                values: per_bundle(&[0, 0, 1, 1, 0, 0]),
                capacity: 4,
            }),
            vector_store: Some(RationalVectorProto {
                values: per_bundle(&[0, 0, 0, 0, 1, 0]),
                capacity: 2,
            }),
            ..Default::default()
        }),
        hlo_module_name: "jit__other".into(),
        hlo_module_id: 29,
        ..Default::default()
    }
    .encode_to_vec()
}

/// A hand-made payload with an edge case of each rule of XProf's
/// `register_pressure`, `bdi_stalls`, `source_for_bundle` and
/// `target_info` (docs/llo_proto.md): predicate, vector-mask and
/// register-pair results; a negative register; an ordinal written twice
/// (the later wins); a use before its definition; unscheduled users and
/// definitions; `bdi:` comments with repeated, unknown, empty and
/// trailing codes and text around them; source-map entries whose last
/// frame has line 0 or a file outside the string table, and a later entry
/// for an instruction already named; a topology with no bounds. Real
/// captures have had none of the stall comments; XProf's rules are what
/// these follow.
pub fn static_cases_proto() -> Vec<u8> {
    struct I {
        ordinal: i32,
        opcode: i32,
        bundle: Option<i32>,
        register: i32,
        register_type: i32,
        reads: &'static [i32],
        comment: Option<i32>,
    }
    let rows = [
        I {
            ordinal: 1,
            opcode: VECTOR_LOAD,
            bundle: Some(0),
            register: 5,
            register_type: 4,
            reads: &[],
            comment: None,
        },
        I {
            ordinal: 2,
            opcode: VECTOR_LOAD,
            bundle: Some(0),
            register: 6,
            register_type: 4,
            reads: &[],
            comment: Some(0),
        },
        I {
            ordinal: 3,
            opcode: VECTOR_ADD_F32,
            bundle: Some(1),
            register: 5,
            register_type: 4,
            reads: &[1, 2],
            comment: Some(1),
        },
        I {
            ordinal: 8,
            opcode: VECTOR_LOAD,
            bundle: Some(1),
            register: -1,
            register_type: 4,
            reads: &[],
            comment: Some(4),
        },
        I {
            ordinal: 4,
            opcode: VECTOR_STORE,
            bundle: Some(3),
            register: 0,
            register_type: 0,
            reads: &[3],
            comment: Some(2),
        },
        I {
            ordinal: 5,
            opcode: SCALAR_ADD_S32,
            bundle: Some(3),
            register: 1,
            register_type: 2,
            reads: &[],
            comment: Some(3),
        },
        I {
            ordinal: 7,
            opcode: SCALAR_ADD_S32,
            bundle: Some(1),
            register: 2,
            register_type: 2,
            reads: &[5],
            comment: Some(5),
        },
        I {
            ordinal: 9,
            opcode: VECTOR_LOAD,
            bundle: Some(2),
            register: 7,
            register_type: 4,
            reads: &[],
            comment: None,
        },
        I {
            ordinal: 9,
            opcode: VECTOR_LOAD,
            bundle: Some(2),
            register: 8,
            register_type: 3,
            reads: &[],
            comment: Some(6),
        },
        I {
            ordinal: 10,
            opcode: SCALAR_ADD_S32,
            bundle: None,
            register: 3,
            register_type: 1,
            reads: &[7],
            comment: Some(7),
        },
        I {
            ordinal: 11,
            opcode: VECTOR_ADD_F32,
            bundle: Some(5),
            register: 2,
            register_type: 5,
            reads: &[],
            comment: None,
        },
        I {
            ordinal: 12,
            opcode: VECTOR_STORE,
            bundle: Some(7),
            register: 0,
            register_type: 0,
            reads: &[11, 10],
            comment: Some(8),
        },
        I {
            ordinal: 13,
            opcode: SCALAR_BRANCH_REL,
            bundle: None,
            register: 0,
            register_type: 0,
            reads: &[12],
            comment: None,
        },
    ];
    let members = rows
        .iter()
        .map(|i| {
            member_instr(LloInstructionProto {
                ordinal: i.ordinal,
                opcode: i.opcode,
                operands: i
                    .reads
                    .iter()
                    .map(|id| LloOperand {
                        operand: Some(llo_operand::Operand::InstructionOrdinal(*id)),
                    })
                    .collect(),
                bundle: i.bundle,
                register: i.register,
                register_type: i.register_type,
                comment_index: i.comment,
                ..Default::default()
            })
        })
        .collect();
    let slots = 8;
    let frame = |file: i32, line: i32| LloSourceFrameProto {
        file_string_index: file,
        line,
        end_line: line,
        column: 1,
        end_column: 6,
    };
    let info = |frames: Vec<LloSourceFrameProto>, ids: &[i32]| LloSourceInfoProto {
        frames,
        primitive_string_index: None,
        scope_string_indices: vec![],
        instruction_ordinals: ids.to_vec(),
    };
    LloModuleProto {
        hlo_instruction_name: "edge_cases.1".into(),
        root_region: Some(LloRegionProto {
            members,
            name: String::new(),
            start_bundleno: 0,
            limit_bundleno: slots,
            ordinal: 0,
        }),
        static_per_bundle_utilization: Some(StaticPerBundleUtilizationProto {
            vector_load: Some(RationalVectorProto {
                values: vec![2, 1, 2, 0, 0, 0, 0, 0],
                capacity: 3,
            }),
            ..Default::default()
        }),
        target_arguments: Some(LloTargetArgumentsProto {
            replica_count: 4,
            reserved_hbm_usage_bytes: 1 << 20,
            topology: Some(LloTopologyProto {
                chip_config_name: "v5e".into(),
                ..Default::default()
            }),
        }),
        interned_strings: [
            "x bdi:A:3,F:2,Z:1 y",
            "bdi:B stall",
            "no stall here",
            "bdi:A:1,A:2 bdi:F",
            "bdi:Z:1",
            "bdi:",
            "bdi:R,",
            "pre bdi:O:1,H:1,B",
            "bdi:R:1,F:2,A",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        hlo_module_name: "jit_edge_cases".into(),
        hlo_module_id: 31,
        source_map: Some(LloSourceMapProto {
            source_infos: vec![
                info(vec![frame(0, 60), frame(1, 10)], &[1, 2]),
                info(vec![frame(0, 61), frame(1, 11)], &[3, 11]),
                info(vec![frame(1, 12), frame(0, 0)], &[4]),
                info(vec![frame(7, 13)], &[7]),
                info(vec![frame(0, 14)], &[8, 2, 12]),
            ],
            strings: vec!["/work/a.py".into(), "/work/b.py".into()],
        }),
        ..Default::default()
    }
    .encode_to_vec()
}
