//! The view's 31 columns, which costly parts a projection of them needs,
//! and the builders of the projected ones.

use std::sync::Arc;

use arrow::array::{
    ArrayRef, ListBuilder, RecordBatch, RecordBatchOptions, StringBuilder, UInt32Builder,
    UInt64Builder,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::common::{DataFusionError, Result};

/// The view's columns, names and types as the definition's final `SELECT`
/// gives them (every column declared nullable).
pub(super) const COLUMNS: [(&str, ColumnType); 31] = [
    ("device", ColumnType::Utf8),
    ("stream_id", ColumnType::UInt32),
    ("thread_id", ColumnType::UInt32),
    ("thread_name", ColumnType::Utf8),
    ("correlation_id", ColumnType::UInt32),
    ("kernel_name", ColumnType::Utf8),
    ("kernel_details", ColumnType::Utf8),
    ("tf_op_name", ColumnType::Utf8),
    ("tf_op_type", ColumnType::Utf8),
    ("hlo_op", ColumnType::Utf8),
    ("hlo_module", ColumnType::Utf8),
    ("start_ns", ColumnType::UInt64),
    ("end_ns", ColumnType::UInt64),
    ("self_time_ns", ColumnType::UInt64),
    ("step", ColumnType::Utf8),
    ("category", ColumnType::Utf8),
    ("flops", ColumnType::UInt64),
    ("memory_accessed", ColumnType::UInt64),
    ("input_tensors", ColumnType::ListUtf8),
    ("output_tensors", ColumnType::ListUtf8),
    ("trace_args", ColumnType::Utf8),
    ("hlo_fingerprint", ColumnType::UInt64),
    ("flow", ColumnType::UInt64),
    ("source_line", ColumnType::Utf8),
    ("dcn_src_slice_id", ColumnType::Int64),
    ("dcn_dst_slice_id", ColumnType::Int64),
    ("dcn_src_logical_device_id", ColumnType::Int64),
    ("dcn_dst_logical_device_id", ColumnType::Int64),
    ("dcn_collective_name", ColumnType::Utf8),
    ("dcn_duration_us", ColumnType::UInt64),
    ("dcn_payload_size_bytes", ColumnType::UInt64),
];

/// Column numbers of [`COLUMNS`] this file computes by name.
pub(super) mod col {
    pub const DEVICE: usize = 0;
    pub const STREAM_ID: usize = 1;
    pub const THREAD_ID: usize = 2;
    pub const THREAD_NAME: usize = 3;
    pub const CORRELATION_ID: usize = 4;
    pub const KERNEL_NAME: usize = 5;
    pub const KERNEL_DETAILS: usize = 6;
    pub const TF_OP_NAME: usize = 7;
    pub const TF_OP_TYPE: usize = 8;
    pub const HLO_OP: usize = 9;
    pub const HLO_MODULE: usize = 10;
    pub const START_NS: usize = 11;
    pub const END_NS: usize = 12;
    pub const SELF_TIME_NS: usize = 13;
    pub const STEP: usize = 14;
    pub const CATEGORY: usize = 15;
    pub const FLOPS: usize = 16;
    pub const MEMORY_ACCESSED: usize = 17;
    pub const INPUT_TENSORS: usize = 18;
    pub const OUTPUT_TENSORS: usize = 19;
    pub const TRACE_ARGS: usize = 20;
    pub const FLOW: usize = 22;
    pub const SOURCE_LINE: usize = 23;
}

#[derive(Clone, Copy)]
pub(super) enum ColumnType {
    Utf8,
    UInt32,
    UInt64,
    Int64,
    ListUtf8,
}

/// The view's schema.
pub(super) fn view_schema() -> SchemaRef {
    Arc::new(Schema::new(
        COLUMNS
            .iter()
            .map(|(name, t)| {
                let data_type = match t {
                    ColumnType::Utf8 => DataType::Utf8,
                    ColumnType::UInt32 => DataType::UInt32,
                    ColumnType::UInt64 => DataType::UInt64,
                    ColumnType::Int64 => DataType::Int64,
                    ColumnType::ListUtf8 => {
                        DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
                    }
                };
                Field::new(*name, data_type, true)
            })
            .collect::<Vec<_>>(),
    ))
}

/// Which of the costly parts the projected columns need.
#[derive(Clone, Copy, Debug)]
pub(super) struct NeededParts {
    /// `trace_args`, `kernel_details`, `flow` or `source_line`: the stats.
    pub(super) stats: bool,
    /// `trace_args`: every stat, formatted.
    pub(super) trace_args: bool,
    /// `step` or `trace_args` (the step roots' names).
    pub(super) steps: bool,
    /// `self_time_ns`.
    pub(super) nested: bool,
    /// `step` or `hlo_module` on TPU ops.
    pub(super) names: bool,
}

impl NeededParts {
    /// What `projection` needs, and a `step IS NOT NULL` filter if
    /// `with_step_only`.
    pub(super) fn of(projection: &[usize], with_step_only: bool) -> Self {
        let has = |c: usize| projection.contains(&c) || (with_step_only && c == col::STEP);
        Self {
            stats: has(col::TRACE_ARGS)
                || has(col::KERNEL_DETAILS)
                || has(col::FLOW)
                || has(col::SOURCE_LINE),
            trace_args: has(col::TRACE_ARGS),
            steps: has(col::STEP) || has(col::TRACE_ARGS),
            nested: has(col::SELF_TIME_NS),
            names: has(col::STEP) || has(col::HLO_MODULE),
        }
    }
}

pub(super) type ListOfStrings = ListBuilder<StringBuilder>;

/// The output columns being built: `None` for those not projected.
#[derive(Default)]
pub(super) struct OutputColumns {
    pub(super) rows: usize,
    pub(super) device: Option<StringBuilder>,
    pub(super) stream_id: Option<UInt32Builder>,
    pub(super) thread_id: Option<UInt32Builder>,
    pub(super) thread_name: Option<StringBuilder>,
    pub(super) correlation_id: Option<UInt32Builder>,
    pub(super) kernel_name: Option<StringBuilder>,
    pub(super) kernel_details: Option<StringBuilder>,
    pub(super) tf_op_name: Option<StringBuilder>,
    pub(super) tf_op_type: Option<StringBuilder>,
    pub(super) hlo_op: Option<StringBuilder>,
    pub(super) hlo_module: Option<StringBuilder>,
    pub(super) start_ns: Option<UInt64Builder>,
    pub(super) end_ns: Option<UInt64Builder>,
    pub(super) self_time_ns: Option<UInt64Builder>,
    pub(super) step: Option<StringBuilder>,
    pub(super) category: Option<StringBuilder>,
    pub(super) flops: Option<UInt64Builder>,
    pub(super) memory_accessed: Option<UInt64Builder>,
    pub(super) input_tensors: Option<ListOfStrings>,
    pub(super) output_tensors: Option<ListOfStrings>,
    pub(super) trace_args: Option<StringBuilder>,
    pub(super) flow: Option<UInt64Builder>,
    pub(super) source_line: Option<StringBuilder>,
}

impl OutputColumns {
    pub(super) fn new(projection: &[usize], rows: usize) -> Self {
        let has = |c: usize| projection.contains(&c);
        let s = |c: usize| has(c).then(|| StringBuilder::with_capacity(rows, rows * 8));
        let u32s = |c: usize| has(c).then(|| UInt32Builder::with_capacity(rows));
        let u64s = |c: usize| has(c).then(|| UInt64Builder::with_capacity(rows));
        let list = |c: usize| has(c).then(|| ListBuilder::new(StringBuilder::new()));
        Self {
            rows: 0,
            device: s(col::DEVICE),
            stream_id: u32s(col::STREAM_ID),
            thread_id: u32s(col::THREAD_ID),
            thread_name: s(col::THREAD_NAME),
            correlation_id: u32s(col::CORRELATION_ID),
            kernel_name: s(col::KERNEL_NAME),
            kernel_details: s(col::KERNEL_DETAILS),
            tf_op_name: s(col::TF_OP_NAME),
            tf_op_type: s(col::TF_OP_TYPE),
            hlo_op: s(col::HLO_OP),
            hlo_module: s(col::HLO_MODULE),
            start_ns: u64s(col::START_NS),
            end_ns: u64s(col::END_NS),
            self_time_ns: u64s(col::SELF_TIME_NS),
            step: s(col::STEP),
            category: s(col::CATEGORY),
            flops: u64s(col::FLOPS),
            memory_accessed: u64s(col::MEMORY_ACCESSED),
            input_tensors: list(col::INPUT_TENSORS),
            output_tensors: list(col::OUTPUT_TENSORS),
            trace_args: s(col::TRACE_ARGS),
            flow: u64s(col::FLOW),
            source_line: s(col::SOURCE_LINE),
        }
    }

    /// The projected columns, in `projection`'s order.
    pub(super) fn finish(
        mut self,
        projection: &[usize],
        schema: &SchemaRef,
    ) -> Result<RecordBatch> {
        fn done<B: arrow::array::ArrayBuilder>(b: &mut Option<B>) -> Result<ArrayRef> {
            b.as_mut()
                .map(|b| b.finish())
                .ok_or_else(|| DataFusionError::Internal("events_db: column not built".into()))
        }
        let rows = self.rows;
        let mut columns = Vec::with_capacity(projection.len());
        for (at, &c) in projection.iter().enumerate() {
            let array: ArrayRef = match c {
                col::DEVICE => done(&mut self.device)?,
                col::STREAM_ID => done(&mut self.stream_id)?,
                col::THREAD_ID => done(&mut self.thread_id)?,
                col::THREAD_NAME => done(&mut self.thread_name)?,
                col::CORRELATION_ID => done(&mut self.correlation_id)?,
                col::KERNEL_NAME => done(&mut self.kernel_name)?,
                col::KERNEL_DETAILS => done(&mut self.kernel_details)?,
                col::TF_OP_NAME => done(&mut self.tf_op_name)?,
                col::TF_OP_TYPE => done(&mut self.tf_op_type)?,
                col::HLO_OP => done(&mut self.hlo_op)?,
                col::HLO_MODULE => done(&mut self.hlo_module)?,
                col::START_NS => done(&mut self.start_ns)?,
                col::END_NS => done(&mut self.end_ns)?,
                col::SELF_TIME_NS => done(&mut self.self_time_ns)?,
                col::STEP => done(&mut self.step)?,
                col::CATEGORY => done(&mut self.category)?,
                col::FLOPS => done(&mut self.flops)?,
                col::MEMORY_ACCESSED => done(&mut self.memory_accessed)?,
                col::INPUT_TENSORS => done(&mut self.input_tensors)?,
                col::OUTPUT_TENSORS => done(&mut self.output_tensors)?,
                col::TRACE_ARGS => done(&mut self.trace_args)?,
                col::FLOW => done(&mut self.flow)?,
                col::SOURCE_LINE => done(&mut self.source_line)?,
                // hlo_fingerprint and the dcn_* columns: always NULL.
                _ => arrow::array::new_null_array(schema.field(at).data_type(), rows),
            };
            columns.push(array);
        }
        Ok(RecordBatch::try_new_with_options(
            schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )?)
    }
}
