//! The final `SELECT`: the output rows of one base row, one per HLO
//! instruction its kernel runs.

use arrow::array::{Array, RecordBatch};
use arrow::datatypes::SchemaRef;
use datafusion::common::Result;

use crate::functions::parse_tf_op::TfOp;

use super::columns::OutputColumns;
use super::inputs::{BaseBatch, Parser, opt_str};
use super::lookups::{Instruction, Lookups};
use super::stats::{ArgsBuffers, EventStats};

/// A row's step ([`Lookups::step`]).
#[derive(Clone, Copy)]
pub(super) enum Step<'a> {
    /// The name of the step the walk put the event in, as it is.
    Walked(&'a str),
    /// The name of a TPU op's `Steps` event, written `step:NAME`.
    TpuStep(&'a str),
}

/// What one base row's output rows share: the row, and what was looked up
/// for it once (its step, its stats and their `trace_args` text).
#[derive(Clone, Copy)]
pub(super) struct BaseRow<'a> {
    pub(super) base: &'a BaseBatch,
    pub(super) row: usize,
    pub(super) trace: i32,
    pub(super) parser: Parser,
    pub(super) step: Option<Step<'a>>,
    pub(super) line_name: &'a str,
    /// The event's name.
    pub(super) name: &'a str,
    pub(super) tensor_core: bool,
    pub(super) hlo_op: Option<&'a str>,
    pub(super) tf_op: Option<&'a str>,
    pub(super) stats: &'a EventStats,
    /// The `trace_args` text, when `stats.trace_args` says there is one.
    pub(super) trace_args_text: &'a [u8],
}

impl Lookups {
    /// The view's rows for one batch of the base, `projection`'s columns.
    pub(super) fn rows(
        &self,
        batch: &RecordBatch,
        projection: &[usize],
        schema: &SchemaRef,
        with_step_only: bool,
    ) -> Result<RecordBatch> {
        let base = BaseBatch::read(batch)?;
        let mut out = OutputColumns::new(projection, batch.num_rows());
        let mut scratch = ArgsBuffers::default();
        for row in 0..batch.num_rows() {
            self.row(&base, row, &mut out, &mut scratch, with_step_only);
        }
        out.finish(projection, schema)
    }

    /// Appends the rows of base row `row` (one, or one per HLO instruction
    /// of its kernel) to `out`.
    pub(super) fn row(
        &self,
        base: &BaseBatch,
        row: usize,
        out: &mut OutputColumns,
        scratch: &mut ArgsBuffers,
        with_step_only: bool,
    ) {
        let Some(parser) = opt_str(&base.parser, row).and_then(Parser::of) else {
            return;
        };
        let trace = base.trace.value(row);
        let event = base.event.value(row);
        let node = self.nodes.get((trace, event));
        let line_name = base.line_name.value(row);
        // Looked up once per event, for the filter and the column.
        let step = if with_step_only || out.step.is_some() {
            self.step(base, row, parser, line_name, node)
        } else {
            None
        };
        if with_step_only && step.is_none() {
            return;
        }
        let name = base.name.value(row);
        let tensor_core = base.tensor_core.is_valid(row) && base.tensor_core.value(row);
        let hlo_op = opt_str(&base.hlo_op, row);
        let tf_op = opt_str(&base.tf_op, row);
        let int = |a: &arrow::array::Int64Array| a.is_valid(row).then(|| a.value(row));
        let stats = if self.need.stats {
            let metadata = match (int(&base.metadata), base.device.is_valid(row)) {
                (Some(m), true) => self
                    .metadata
                    .get(&(trace, base.device.value(row), m))
                    .map(Vec::as_slice),
                _ => None,
            };
            self.event_stats(node, metadata, parser, scratch)
        } else {
            EventStats::default()
        };
        let instructions: &[Instruction] = match (parser, hlo_op, base.program.is_valid(row)) {
            (Parser::GpuStream, Some(op), true) => {
                let short = op.rsplit("::").next().unwrap_or(op);
                self.instructions
                    .get(&(trace, base.program.value(row)))
                    .and_then(|by_name| by_name.get(short))
                    .map_or(&[], Vec::as_slice)
            }
            _ => &[],
        };
        let context = BaseRow {
            base,
            row,
            trace,
            parser,
            step,
            line_name,
            name,
            tensor_core,
            hlo_op,
            tf_op,
            stats: &stats,
            trace_args_text: &scratch.text,
        };
        if instructions.is_empty() {
            self.write_row(out, &context, None);
        }
        for instruction in instructions {
            self.write_row(out, &context, Some(instruction));
        }
    }

    /// The `step` column of a row: on the host and GPU streams the step
    /// the walk put the event in (`event_steps`); on TPU `XLA Ops` the
    /// name of its `Steps` event.
    pub(super) fn step(
        &self,
        base: &BaseBatch,
        row: usize,
        parser: Parser,
        line_name: &str,
        node: Option<u32>,
    ) -> Option<Step<'_>> {
        let trace = base.trace.value(row);
        match parser {
            Parser::Host | Parser::GpuStream => self
                .steps
                .step(node, (trace, base.event.value(row)))
                .map(Step::Walked),
            Parser::Tpu if line_name == "XLA Ops" => {
                let step_event = &base.step_event;
                step_event
                    .is_valid(row)
                    .then(|| self.names.get(&(trace, step_event.value(row))))
                    .flatten()
                    .map(|name| Step::TpuStep(name.as_str()))
            }
            _ => None,
        }
    }

    /// Appends one output row of `context`'s base row, for one of the
    /// HLO instructions its kernel runs (or none).
    pub(super) fn write_row(
        &self,
        out: &mut OutputColumns,
        context: &BaseRow<'_>,
        instruction: Option<&Instruction>,
    ) {
        let BaseRow {
            base,
            row,
            trace,
            parser,
            step,
            line_name,
            name,
            tensor_core,
            hlo_op,
            tf_op,
            stats,
            trace_args_text,
        } = *context;
        let int = |a: &arrow::array::Int64Array| a.is_valid(row).then(|| a.value(row));
        let host = parser == Parser::Host;
        let xla_ops = parser == Parser::Tpu && line_name == "XLA Ops";
        out.rows += 1;
        if let Some(b) = &mut out.device {
            match parser {
                Parser::Host => b.append_value("cpu:0"),
                Parser::Tpu => {
                    let plane = base.plane_name.value(row);
                    b.append_value(plane.get("/device:".len()..).unwrap_or(""));
                }
                Parser::Custom => b.append_value(base.plane_name.value(row)),
                _ => match int(&base.plane_id) {
                    Some(id) => b.append_value(format!("gpu:{id}")),
                    None => b.append_null(),
                },
            }
        }
        let line_id = int(&base.line_id).map(|l| (l & 0xffff_ffff) as u32);
        if let Some(b) = &mut out.stream_id {
            b.append_option(line_id.filter(|_| !host));
        }
        if let Some(b) = &mut out.thread_id {
            b.append_option(line_id.filter(|_| host));
        }
        if let Some(b) = &mut out.thread_name {
            b.append_option(host.then_some(line_name));
        }
        if let Some(b) = &mut out.correlation_id {
            let id = int(&base.correlation)
                .filter(|_| matches!(parser, Parser::Host | Parser::GpuStream))
                .map(|c| (c & 0xffff_ffff) as u32);
            b.append_option(id);
        }
        if let Some(b) = &mut out.kernel_name {
            if matches!(parser, Parser::GpuXla | Parser::Tpu)
                && line_name.starts_with("XLA Modules")
            {
                b.append_value(format!("HLO Module:{name}"));
            } else if parser == Parser::Tpu && line_name == "Steps" {
                b.append_value(format!("step:{name}"));
            } else {
                b.append_value(name);
            }
        }
        if let Some(b) = &mut out.kernel_details {
            let details = stats
                .kernel_details
                .filter(|_| parser == Parser::GpuStream)
                .map(|id| self.strs.get(id));
            b.append_option(details);
        }
        if out.tf_op_name.is_some() || out.tf_op_type.is_some() {
            let (op_name, op_type) = tf_op_columns(parser, name, tf_op, instruction);
            if let Some(b) = &mut out.tf_op_name {
                b.append_option(op_name.as_deref());
            }
            if let Some(b) = &mut out.tf_op_type {
                b.append_option(op_type.as_deref());
            }
        }
        if let Some(b) = &mut out.hlo_op {
            match parser {
                Parser::GpuStream => {
                    b.append_option(hlo_op.map(|op| op.rsplit("::").next().unwrap_or(op)))
                }
                _ if xla_ops => b.append_option(opt_str(&base.display_name, row)),
                _ => b.append_null(),
            }
        }
        if let Some(b) = &mut out.hlo_module {
            match parser {
                Parser::GpuStream => b.append_option(opt_str(&base.hlo_module, row)),
                _ if xla_ops => b.append_option(
                    int(&base.module_event)
                        .and_then(|m| self.names.get(&(trace, m)))
                        .map(String::as_str),
                ),
                _ => b.append_null(),
            }
        }
        let start = int(&base.start);
        let dur = int(&base.dur);
        if let Some(b) = &mut out.start_ns {
            b.append_option(start.and_then(|s| u64::try_from(s).ok()));
        }
        if let Some(b) = &mut out.end_ns {
            // CAST(CAST(start_ns AS DOUBLE) + dur_ps / 1000.0 AS BIGINT)
            let end = match (start, dur) {
                (Some(s), Some(d)) => {
                    let end = s as f64 + d as f64 / 1000.0;
                    (0.0..9.223_372_036_854_776e18)
                        .contains(&end)
                        .then_some(end as i64 as u64)
                }
                _ => None,
            };
            b.append_option(end);
        }
        if let Some(b) = &mut out.self_time_ns {
            let value = dur.map(|d| {
                if parser == Parser::Tpu && tensor_core {
                    let children = self.nested.get(&(trace, base.event.value(row))).copied();
                    (d / 1000 - children.unwrap_or(0)).max(0)
                } else {
                    d / 1000
                }
            });
            b.append_option(value.and_then(|v| u64::try_from(v).ok()));
        }
        if let Some(b) = &mut out.step {
            match step {
                Some(Step::Walked(name)) => b.append_value(name),
                Some(Step::TpuStep(name)) => b.append_value(format!("step:{name}")),
                None => b.append_null(),
            }
        }
        if let Some(b) = &mut out.category {
            b.append_value(match parser {
                Parser::Host => "host",
                Parser::GpuStream => "device",
                _ => line_name,
            });
        }
        let on_op_line = matches!(parser, Parser::GpuXla | Parser::Tpu | Parser::Custom);
        if let Some(b) = &mut out.flops {
            b.append_option(
                int(&base.flops)
                    .filter(|_| on_op_line)
                    .and_then(|v| u64::try_from(v).ok()),
            );
        }
        if let Some(b) = &mut out.memory_accessed {
            b.append_option(
                int(&base.bytes_accessed)
                    .filter(|_| on_op_line)
                    .and_then(|v| u64::try_from(v).ok()),
            );
        }
        if let Some(b) = &mut out.input_tensors {
            match instruction.and_then(|i| i.input_tensors.as_ref()) {
                Some(list) => {
                    for t in list {
                        b.values().append_option(t.as_deref());
                    }
                    b.append(true);
                }
                None => b.append(false),
            }
        }
        if let Some(b) = &mut out.output_tensors {
            match instruction {
                Some(i) => {
                    b.values().append_option(i.output_tensor.as_deref());
                    b.append(true);
                }
                None => b.append(false),
            }
        }
        if let Some(b) = &mut out.trace_args {
            let args = stats
                .trace_args
                .then(|| std::str::from_utf8(trace_args_text).unwrap_or_default());
            let root = if host {
                self.steps.root((trace, base.event.value(row)))
            } else {
                None
            };
            match (args, root) {
                (Some(args), Some(root)) => b.append_value(format!("{args},step_name={root}")),
                (None, Some(root)) => b.append_value(format!("step_name={root}")),
                (args, None) => b.append_option(args),
            }
        }
        if let Some(b) = &mut out.flow {
            b.append_option(stats.flow.filter(|_| host));
        }
        if let Some(b) = &mut out.source_line {
            b.append_option(
                stats
                    .source
                    .filter(|_| parser != Parser::GpuStream)
                    .map(|id| self.strs.get(id)),
            );
        }
    }
}

/// `tf_op_name` and `tf_op_type` of a row (the final SELECT's two CASEs).
pub(super) fn tf_op_columns(
    parser: Parser,
    name: &str,
    tf_op: Option<&str>,
    instruction: Option<&Instruction>,
) -> (Option<String>, Option<String>) {
    match parser {
        Parser::Host => {
            let parsed = TfOp::parse(name);
            if !parsed.op_type.is_empty() && parsed.kind == "tensorflow" && name.contains(':') {
                (Some(parsed.name), Some(parsed.op_type))
            } else {
                (None, None)
            }
        }
        Parser::GpuStream => {
            // `parse_tf_op(i.tf_op)['name']`: a NULL op (no instruction, or
            // none named) reads as the fields of an empty one, ''.
            let parsed = TfOp::parse(instruction.and_then(|i| i.tf_op.as_deref()).unwrap_or(""));
            (Some(parsed.name), Some(parsed.op_type))
        }
        _ => match tf_op {
            Some(op) => match op.split_once(':') {
                Some((op_name, op_type)) => (Some(op_name.to_string()), Some(op_type.to_string())),
                None => (Some(op.to_string()), Some(String::new())),
            },
            None => (None, None),
        },
    }
}
