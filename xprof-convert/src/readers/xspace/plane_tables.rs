//! The per-plane tables of an XSpace: `devices`, `device_args`,
//! `event_metadata`, `metadata_args`, `stat_metadata` and `hlo_ops`, and
//! the programs a metadata plane stores (HLO modules to
//! `hlo_instructions`, LLO programs to the `llo_*` tables).

use std::borrow::Cow;

use xprof_format::hash::FxHashMap;
use xprof_format::schema::{
    DeviceArgRow, DeviceRow, EventMetadataRow, HloOpRow, MetadataArgRow, StatMetadataRow,
};
use xprof_format::{StatValue, Sym};

use super::emit::{Decoder, PlaneCtx};
use super::hlo::hlo_instruction_rows;
use super::llo_proto::llo_program_rows;
use super::meta::decode_stat;
use super::scan::{PlaneScan, malformed};
use crate::assembler::TraceAssembler;
use crate::codec::pb::PbError;
use crate::error::Result;
use crate::names::{self, DeviceKind};

impl<'a> Decoder<'a> {
    /// `devices`, `device_args`, `event_metadata`, `metadata_args`,
    /// `stat_metadata` and `hlo_ops` rows of one plane, each in its
    /// table's order (metadata by id, not map order).
    pub(super) fn write_plane_tables(
        &self,
        asm: &mut TraceAssembler<'_>,
        ctx: &PlaneCtx<'a>,
        plane: &PlaneScan<'a>,
        device_id: i32,
        ordinal: Option<i32>,
    ) -> Result<()> {
        let trace_id = asm.trace_id();
        let err = |e: PbError| malformed(self.path, e);
        let meta = &ctx.meta;

        // Plane stats.
        let mut plane_stats: FxHashMap<&str, StatValue<'_>> = FxHashMap::default();
        for s in &plane.stats {
            let raw = decode_stat(*s).map_err(err)?;
            let value = meta.resolve(raw.value).map_err(err)?;
            let key: Cow<'_, str> = match meta.stats.get(&raw.metadata_id) {
                Some(st) => Cow::Borrowed(st.name.as_ref()),
                None => Cow::Owned(format!("#{}", raw.metadata_id)),
            };
            asm.device_row(&DeviceArgRow {
                trace_id,
                device_id,
                key: &key,
                value: value.clone(),
            });
            if let Cow::Borrowed(k) = key {
                plane_stats.insert(k, value);
            }
        }

        let mut stat_ids: Vec<u64> = meta.stat_order.clone();
        stat_ids.sort_unstable_by_key(|id| *id as i64);
        for id in stat_ids {
            let s = &meta.stats[&id];
            asm.device_row(&StatMetadataRow {
                trace_id,
                device_id,
                stat_metadata_id: id as i64,
                name: &s.name,
                description: (!s.description.is_empty()).then_some(s.description.as_ref()),
            });
        }

        let mut event_ids: Vec<i64> = meta.event_order.clone();
        event_ids.sort_unstable();
        for id in event_ids {
            let m = &meta.events[&id];
            asm.device_row(&EventMetadataRow {
                trace_id,
                device_id,
                metadata_id: id,
                name: &m.name,
                display_name: (!m.display_name.is_empty()).then_some(m.display_name.as_ref()),
                metadata: (!m.metadata.is_empty()).then_some(m.metadata),
                child_ids: &m.child_ids,
                stat_count: m.stats.len() as i32,
            });
            let mut hlo_proto: Option<&[u8]> = None;
            let mut llo_proto: Option<&[u8]> = None;
            let mut hlo_program_id: Option<u64> = None;
            for s in &m.stats {
                let raw = decode_stat(*s).map_err(err)?;
                let value = meta.resolve(raw.value).map_err(err)?;
                let key: Cow<'_, str> = match meta.stats.get(&raw.metadata_id) {
                    Some(st) => Cow::Borrowed(st.name.as_ref()),
                    None => Cow::Owned(format!("#{}", raw.metadata_id)),
                };
                if ctx.kind == DeviceKind::Metadata {
                    match (key.as_ref(), &value) {
                        (names::HLO_PROTO_STAT, StatValue::Bytes(b)) => hlo_proto = Some(b),
                        ("program_id", v) => hlo_program_id = v.as_u64(),
                        _ => {}
                    }
                }
                // XProf reads an `llo_proto` of any plane's event metadata.
                if let (names::LLO_PROTO_STAT, StatValue::Bytes(b)) = (key.as_ref(), &value) {
                    llo_proto = Some(b);
                }
                asm.device_row(&MetadataArgRow {
                    trace_id,
                    device_id,
                    metadata_id: id,
                    key: &key,
                    value,
                });
            }
            if let Some(bytes) = hlo_proto {
                hlo_instruction_rows(asm, device_id, id, hlo_program_id, bytes, &m.name);
            }
            if let Some(bytes) = llo_proto {
                let offset = (bytes.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
                llo_program_rows(asm, device_id, id, bytes, &m.name, self.path, offset);
            }
            let p = &m.promoted;
            if p.has_cost_model() || (ctx.kind.is_accelerator() && ctx.op_metadata.contains(&id)) {
                let s = |asm: &mut TraceAssembler<'_>, x: Option<Sym>| {
                    x.map(|x| asm.interner().get(x).to_string())
                };
                let (module, op, category) = (
                    s(asm, p.hlo_module),
                    s(asm, p.hlo_op),
                    s(asm, p.hlo_category),
                );
                let (shape, tf_op, source) = (s(asm, p.shape), s(asm, p.tf_op), s(asm, p.source));
                let op_name = op.as_deref().unwrap_or(if m.display_name.is_empty() {
                    &m.name
                } else {
                    &m.display_name
                });
                asm.device_row(&HloOpRow {
                    trace_id,
                    device_id,
                    metadata_id: id,
                    program_id: p.program_id,
                    hlo_module: module.as_deref(),
                    hlo_op: op_name,
                    category: category.as_deref(),
                    expression: &m.name,
                    shape: shape.as_deref(),
                    flops: p.flops,
                    model_flops: p.model_flops,
                    bytes_accessed: p.bytes_accessed,
                    tf_op: tf_op.as_deref(),
                    source: source.as_deref(),
                });
            }
        }

        let f = |k: &str| plane_stats.get(k).and_then(|v| v.as_f64());
        asm.end_device(DeviceRow {
            trace_id,
            device_id,
            plane_id: plane.id,
            name: &plane.name,
            kind: ctx.kind.name(),
            ordinal,
            r#type: plane_stats
                .get("device_type_string")
                .and_then(|v| v.as_str()),
            vendor: plane_stats.get("device_vendor").and_then(|v| v.as_str()),
            peak_tflops: f("peak_teraflops_per_second"),
            peak_hbm_gbps: f("peak_hbm_bw_gigabytes_per_second"),
            clock_rate: f("clock_rate"),
            core_count: plane_stats.get("core_count").and_then(|v| v.as_i64()),
            // Filled by the assembler.
            line_count: 0,
            event_count: 0,
            stat_count: plane.stats.len() as i32,
            process_name: None,
        })
    }
}
