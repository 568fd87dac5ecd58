//! LLO region entries on a timeline: a TPU kernel-profiling capture's
//! region markers are zero-length events; exported, each selected marker
//! becomes a slice of its measured time (`llo_region_entries.dur_ps`),
//! named by its region, with the region's name, static occupancy per unit
//! and source line as args, nested under a slice of its kernel execution
//! on the markers' own track. A leaf: the export loop asks it, it imports
//! only the timeline's types.

use std::collections::HashMap;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type, Int32Type, Int64Type};

use super::timeline::ArgValue;
use crate::error::Result;
use crate::session::ProfileSession;

/// The kernel execution a region entry fired in.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct KernelRun {
    /// The `XLA Ops` event of the execution.
    pub event_id: i64,
    /// Its HLO op.
    pub hlo_op: String,
    /// Its start, ps.
    pub ts_ps: i64,
    /// Its duration, ps.
    pub dur_ps: i64,
}

/// What a selected region marker is written as.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RegionSlice {
    /// `R<id> <region name>`.
    pub name: String,
    /// The measured time to the next marker or the kernel's end.
    pub dur_ps: i64,
    /// The execution, when the marker lies in one.
    pub kernel: Option<KernelRun>,
    /// Region id, name, named scope, the source file and line and the
    /// static occupancy per unit (`<unit>_occupancy_pct`) of the bundles
    /// the slice's time executes (the region's own segment,
    /// `segment_start_bundle`..`segment_limit_bundle`), the occupancy of
    /// its nested range (`<unit>_nested_occupancy_pct`), the marker's name.
    pub args: Vec<(String, ArgValue)>,
}

/// The selected events of `cte`'s selection that are region markers, by
/// (trace, event); empty (and no view evaluated) when no selected trace
/// has a region-marker track.
pub(super) async fn region_slices(
    session: &ProfileSession,
    cte: &str,
) -> Result<HashMap<(i32, i64), RegionSlice>> {
    let mut out = HashMap::new();
    let tracks = session
        .collect(&format!(
            "{cte} SELECT count(*) FROM tracks t WHERE t.kind = 'llo_region_markers' \
             AND t.trace_id IN (SELECT DISTINCT trace_id FROM xprof_export_selection)"
        ))
        .await?;
    if count(&tracks) == 0 {
        return Ok(out);
    }
    let batches = session
        .collect(&format!(
            "{cte} SELECT e.trace_id, e.event_id, e.region_id, e.dur_ps, e.kernel_event_id, \
             e.hlo_op, k.ts_ps AS kernel_ts_ps, k.dur_ps AS kernel_dur_ps, e.name AS marker, \
             p.name AS region_name, p.named_scope, \
             p.self_source_file AS source_file, p.self_source_line AS source_line, \
             p.self_start_bundle, p.self_limit_bundle, \
             p.self_mxu_pct AS mxu_pct, p.self_xlu_pct AS xlu_pct, p.self_valu_pct AS valu_pct, \
             p.self_eup_pct AS eup_pct, p.self_vld_pct AS vld_pct, p.self_vst_pct AS vst_pct, \
             p.self_salu_pct AS salu_pct, \
             p.nested_mxu_pct, p.nested_xlu_pct, p.nested_valu_pct, p.nested_eup_pct, \
             p.nested_vld_pct, p.nested_vst_pct, p.nested_salu_pct \
             FROM (SELECT r.*, m.name FROM llo_region_entries r \
                   JOIN events m ON m.trace_id = r.trace_id AND m.event_id = r.event_id) e \
             LEFT JOIN events k ON k.trace_id = e.trace_id AND k.event_id = e.kernel_event_id \
             LEFT JOIN llo_region_profile p ON p.trace_id = e.trace_id AND p.hlo_op = e.hlo_op \
               AND (p.hlo_module IS NOT DISTINCT FROM e.hlo_module) AND p.region_id = e.region_id \
             WHERE EXISTS (SELECT 1 FROM xprof_export_selection s \
                           WHERE s.trace_id = e.trace_id AND s.event_id = e.event_id)"
        ))
        .await?;
    const UNITS: [&str; 7] = ["mxu", "xlu", "valu", "eup", "vld", "vst", "salu"];
    for b in &batches {
        let int = |name: &str| -> Result<Vec<Option<i64>>> { ints(b, name) };
        let text = |name: &str| -> Result<Vec<Option<String>>> { texts(b, name) };
        let trace = b
            .column_by_name("trace_id")
            .map(|c| arrow::compute::cast(c, &DataType::Int32))
            .transpose()
            .map_err(datafusion::error::DataFusionError::from)?;
        let Some(trace) = trace else { continue };
        let trace = trace.as_primitive::<Int32Type>();
        let (event, region, dur, kernel, kernel_ts, kernel_dur, source_line) = (
            int("event_id")?,
            int("region_id")?,
            int("dur_ps")?,
            int("kernel_event_id")?,
            int("kernel_ts_ps")?,
            int("kernel_dur_ps")?,
            int("source_line")?,
        );
        let (segment_start, segment_limit) = (int("self_start_bundle")?, int("self_limit_bundle")?);
        let (hlo_op, marker, region_name, scope, source_file) = (
            text("hlo_op")?,
            text("marker")?,
            text("region_name")?,
            text("named_scope")?,
            text("source_file")?,
        );
        let occupancy: Vec<Vec<Option<f64>>> = UNITS
            .iter()
            .map(|u| floats(b, &format!("{u}_pct")))
            .collect::<Result<_>>()?;
        let nested: Vec<Vec<Option<f64>>> = UNITS
            .iter()
            .map(|u| floats(b, &format!("nested_{u}_pct")))
            .collect::<Result<_>>()?;
        for i in 0..b.num_rows() {
            let (Some(event_id), Some(dur_ps)) = (event[i], dur[i]) else {
                continue;
            };
            let mut name = region[i].map_or_else(|| "region".to_string(), |r| format!("R{r}"));
            let mut args = Vec::new();
            if let Some(r) = region[i] {
                args.push(("region_id".to_string(), ArgValue::Int(r)));
            }
            if let Some(n) = &region_name[i] {
                name.push(' ');
                name.push_str(n);
                args.push(("region_name".to_string(), ArgValue::Str(n.clone())));
            }
            if let Some(s) = &scope[i] {
                args.push(("named_scope".to_string(), ArgValue::Str(s.clone())));
            }
            if let Some(f) = &source_file[i] {
                args.push(("source_file".to_string(), ArgValue::Str(f.clone())));
            }
            if let Some(l) = source_line[i] {
                args.push(("source_line".to_string(), ArgValue::Int(l)));
            }
            if let (Some(start), Some(limit)) = (segment_start[i], segment_limit[i]) {
                args.push(("segment_start_bundle".to_string(), ArgValue::Int(start)));
                args.push(("segment_limit_bundle".to_string(), ArgValue::Int(limit)));
            }
            for (unit, values) in UNITS.iter().zip(&occupancy) {
                if let Some(v) = values[i] {
                    args.push((format!("{unit}_occupancy_pct"), ArgValue::Double(v)));
                }
            }
            for (unit, values) in UNITS.iter().zip(&nested) {
                if let Some(v) = values[i] {
                    args.push((format!("{unit}_nested_occupancy_pct"), ArgValue::Double(v)));
                }
            }
            if let Some(m) = &marker[i] {
                args.push(("marker".to_string(), ArgValue::Str(m.clone())));
            }
            let kernel = match (kernel[i], kernel_ts[i], kernel_dur[i]) {
                (Some(event_id), Some(ts_ps), Some(dur_ps)) => Some(KernelRun {
                    event_id,
                    hlo_op: hlo_op[i].clone().unwrap_or_default(),
                    ts_ps,
                    dur_ps,
                }),
                _ => None,
            };
            out.insert(
                (trace.value(i), event_id),
                RegionSlice {
                    name,
                    dur_ps,
                    kernel,
                    args,
                },
            );
        }
    }
    Ok(out)
}

fn count(batches: &[RecordBatch]) -> i64 {
    batches
        .iter()
        .find(|b| b.num_rows() > 0)
        .and_then(|b| {
            let c = arrow::compute::cast(b.column(0), &DataType::Int64).ok()?;
            Some(c.as_primitive::<Int64Type>().value(0))
        })
        .unwrap_or(0)
}

fn column(b: &RecordBatch, name: &str, ty: &DataType) -> Result<Option<arrow::array::ArrayRef>> {
    b.column_by_name(name)
        .map(|c| arrow::compute::cast(c, ty))
        .transpose()
        .map_err(|e| datafusion::error::DataFusionError::from(e).into())
}

fn ints(b: &RecordBatch, name: &str) -> Result<Vec<Option<i64>>> {
    Ok(match column(b, name, &DataType::Int64)? {
        Some(c) => c.as_primitive::<Int64Type>().iter().collect(),
        None => vec![None; b.num_rows()],
    })
}

fn floats(b: &RecordBatch, name: &str) -> Result<Vec<Option<f64>>> {
    Ok(match column(b, name, &DataType::Float64)? {
        Some(c) => c.as_primitive::<Float64Type>().iter().collect(),
        None => vec![None; b.num_rows()],
    })
}

fn texts(b: &RecordBatch, name: &str) -> Result<Vec<Option<String>>> {
    Ok(match column(b, name, &DataType::Utf8)? {
        Some(c) => {
            let s = c.as_string::<i32>();
            (0..s.len())
                .map(|i| s.is_valid(i).then(|| s.value(i).to_string()))
                .collect()
        }
        None => vec![None; b.num_rows()],
    })
}
