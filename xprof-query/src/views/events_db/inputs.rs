//! The SQL of each input (the definition's shared CTEs and a `SELECT` of
//! its own), the parsers it names, and the base input's batches typed.

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, RecordBatch, StringViewArray};
use arrow::datatypes::{DataType, Int32Type, Int64Type, UInt64Type};
use datafusion::common::{DataFusionError, Result};
use xprof_format::hash::FxHashMap;

use crate::views::nodes::RANGES_SQL;

use super::columns::col;

/// The comment that ends the definition's shared CTEs: every input is the
/// text above it (its trailing comma dropped) and a `SELECT` of its own.
pub(super) const SHARED_CTES_END: &str = "-- @shared-ctes-end";

/// The inputs, in the order they are read (the base last, streamed).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Input {
    /// Which parsers the kept lines have (to skip inputs no row needs).
    Kinds = 0,
    Ranges,
    EventArgs,
    MetadataArgs,
    Steps,
    Nested,
    Instructions,
    Names,
    Base,
}

pub(super) const INPUT_COUNT: usize = 9;

/// The `SELECT` of each input after the definition's CTEs (`None`: a
/// query of its own, without them).
pub(super) fn input_select(input: Input) -> (bool, &'static str) {
    match input {
        Input::Kinds => (true, "SELECT DISTINCT parser, tensor_core FROM kept"),
        Input::Ranges => (false, RANGES_SQL),
        Input::EventArgs => (
            false,
            "SELECT trace_id, event_id, key, value_type, int_value, uint_value, double_value, \
             str_value FROM event_args",
        ),
        Input::MetadataArgs => (
            false,
            "SELECT trace_id, device_id, metadata_id, key, value_type, int_value, uint_value, \
             double_value, str_value FROM metadata_args",
        ),
        Input::Steps => (
            false,
            "SELECT trace_id, event_id, step_name, step_root_event_id FROM event_steps",
        ),
        Input::Nested => (true, "SELECT trace_id, parent, children_ns FROM nested"),
        // The SQL joins `instructions i` then `operand_shapes os` (one row
        // per instruction name): one row here per row that join gives.
        Input::Instructions => (
            true,
            "SELECT i.trace_id, i.program_id, i.name, i.tf_op, i.output_tensor, os.input_tensors \
             FROM instructions i LEFT JOIN operand_shapes os \
               ON os.trace_id = i.trace_id AND os.program_id = i.program_id AND os.name = i.name",
        ),
        // The names of the `Steps` and `XLA Modules` events TPU ops point
        // at (the SQL's `sp` and `m`).
        Input::Names => (
            true,
            "SELECT DISTINCT e.trace_id, e.event_id, CAST(e.name AS VARCHAR) AS name \
             FROM events e \
             JOIN (SELECT trace_id, step_event_id AS id FROM base \
                   WHERE parser = 'tpu' AND line_name = 'XLA Ops' AND step_event_id IS NOT NULL \
                   UNION ALL \
                   SELECT trace_id, module_event_id FROM base \
                   WHERE parser = 'tpu' AND line_name = 'XLA Ops' AND module_event_id IS NOT NULL) r \
               ON r.trace_id = e.trace_id AND r.id = e.event_id",
        ),
        // Written by [`base_select`].
        Input::Base => (true, ""),
    }
}

/// The base input's `SELECT`: its string columns that none of
/// `projection`'s columns reads are NULL (and so not read at all).
pub(super) fn base_select(projection: &[usize]) -> String {
    let has = |columns: &[usize]| columns.iter().any(|c| projection.contains(c));
    let string = |name: &str, read_by: &[usize]| {
        if has(read_by) {
            name.to_string()
        } else {
            format!("CAST(NULL AS VARCHAR) AS {name}")
        }
    };
    let tf_op = [col::TF_OP_NAME, col::TF_OP_TYPE];
    format!(
        "SELECT trace_id, event_id, parser, tensor_core, line_name, line_id, {}, plane_id, {}, {}, \
         start_ns, dur_ps, correlation_id, flops, bytes_accessed, program_id, hlo_op, {}, {}, \
         step_event_id, module_event_id, device_id, metadata_id FROM base",
        string("plane_name", &[col::DEVICE]),
        string("name", &[col::KERNEL_NAME, tf_op[0], tf_op[1]]),
        string("display_name", &[col::HLO_OP]),
        string("hlo_module", &[col::HLO_MODULE]),
        string("tf_op", &tf_op),
    )
}

pub(super) const INPUTS: [Input; INPUT_COUNT] = [
    Input::Kinds,
    Input::Ranges,
    Input::EventArgs,
    Input::MetadataArgs,
    Input::Steps,
    Input::Nested,
    Input::Instructions,
    Input::Names,
    Input::Base,
];

/// The SQL of every input, from the view's `definition`, for the columns
/// of `projection`.
pub fn input_sql(definition: &str, projection: &[usize]) -> Result<Vec<String>> {
    let end = definition.find(SHARED_CTES_END).ok_or_else(|| {
        DataFusionError::Internal(format!(
            "events_db: the definition has no `{SHARED_CTES_END}` line after its shared CTEs"
        ))
    })?;
    let ctes = definition[..end].trim_end().trim_end_matches(',');
    Ok(INPUTS
        .iter()
        .map(|&input| match input_select(input) {
            (true, _) if input == Input::Base => format!("{ctes}\n{}", base_select(projection)),
            (true, select) => format!("{ctes}\n{select}"),
            // Without `trace_args`, only the `stats` CTE's keys are read
            // (an event's own stat overrides its metadata's of the same
            // key only, so the rest cannot change them).
            (false, select)
                if matches!(input, Input::EventArgs | Input::MetadataArgs)
                    && !projection.contains(&col::TRACE_ARGS) =>
            {
                format!("{select} WHERE key IN ('kernel_details', 'flow', 'source')")
            }
            (false, select) => select.to_string(),
        })
        .collect())
}

/// The parser of a kept line (the SQL's `parser`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Parser {
    Host,
    GpuXla,
    GpuStream,
    Tpu,
    Custom,
}

impl Parser {
    pub(super) fn of(text: &str) -> Option<Self> {
        Some(match text {
            "host" => Self::Host,
            "gpu_xla" => Self::GpuXla,
            "gpu_stream" => Self::GpuStream,
            "tpu" => Self::Tpu,
            "custom" => Self::Custom,
            _ => return None,
        })
    }

    /// Bit of [`KeyInfo::left_out`] for this parser's `args` rule.
    pub(super) fn rule_bit(self) -> u8 {
        match self {
            Self::Host => 1,
            Self::GpuStream => 2,
            _ => 4,
        }
    }
}

/// Strings numbered in the order first seen.
#[derive(Default)]
pub(super) struct StringIds {
    pub(super) ids: FxHashMap<Box<str>, u32>,
    pub(super) values: Vec<Box<str>>,
    pub(super) bytes: usize,
}

impl StringIds {
    pub(super) fn id(&mut self, value: &str) -> u32 {
        if let Some(&id) = self.ids.get(value) {
            return id;
        }
        let id = self.values.len() as u32;
        self.ids.insert(value.into(), id);
        self.values.push(value.into());
        self.bytes += 2 * value.len() + 48;
        id
    }

    /// The ids of a string column's rows, `None` for NULL: a dictionary's
    /// values are looked up once each.
    pub(super) fn column(&mut self, array: &ArrayRef) -> Result<Vec<Option<u32>>> {
        if let DataType::Dictionary(_, _) = array.data_type() {
            let dict = array.as_any_dictionary();
            let values = arrow::compute::cast(dict.values(), &DataType::Utf8View)?;
            let values = values.as_string_view();
            let ids: Vec<Option<u32>> = (0..values.len())
                .map(|i| values.is_valid(i).then(|| self.id(values.value(i))))
                .collect();
            let keys = dict.normalized_keys();
            return Ok((0..array.len())
                .map(|row| {
                    if array.is_valid(row) {
                        ids[keys[row]]
                    } else {
                        None
                    }
                })
                .collect());
        }
        let strings = arrow::compute::cast(array, &DataType::Utf8View)?;
        let strings = strings.as_string_view();
        let mut last: Option<(&str, u32)> = None;
        Ok((0..strings.len())
            .map(|row| {
                if strings.is_null(row) {
                    return None;
                }
                let value = strings.value(row);
                if let Some((text, id)) = last
                    && text == value
                {
                    return Some(id);
                }
                let id = self.id(value);
                last = Some((value, id));
                Some(id)
            })
            .collect())
    }

    pub(super) fn get(&self, id: u32) -> &str {
        &self.values[id as usize]
    }
}

/// Column `index` of `batch` as `data_type`.
pub(super) fn column(batch: &RecordBatch, index: usize, data_type: &DataType) -> Result<ArrayRef> {
    Ok(arrow::compute::cast(batch.column(index), data_type)?)
}

/// Column `index` of `batch` as strings.
pub(super) fn strings(batch: &RecordBatch, index: usize) -> Result<StringViewArray> {
    Ok(column(batch, index, &DataType::Utf8View)?
        .as_string_view()
        .clone())
}

pub(super) fn opt_str(array: &StringViewArray, row: usize) -> Option<&str> {
    array.is_valid(row).then(|| array.value(row))
}

/// A batch of the base input, its columns typed.
pub(super) struct BaseBatch {
    pub(super) trace: arrow::array::Int32Array,
    pub(super) event: arrow::array::Int64Array,
    pub(super) parser: StringViewArray,
    pub(super) tensor_core: BooleanArray,
    pub(super) line_name: StringViewArray,
    pub(super) line_id: arrow::array::Int64Array,
    pub(super) plane_name: StringViewArray,
    pub(super) plane_id: arrow::array::Int64Array,
    pub(super) name: StringViewArray,
    pub(super) display_name: StringViewArray,
    pub(super) start: arrow::array::Int64Array,
    pub(super) dur: arrow::array::Int64Array,
    pub(super) correlation: arrow::array::Int64Array,
    pub(super) flops: arrow::array::Int64Array,
    pub(super) bytes_accessed: arrow::array::Int64Array,
    pub(super) program: arrow::array::UInt64Array,
    pub(super) hlo_op: StringViewArray,
    pub(super) hlo_module: StringViewArray,
    pub(super) tf_op: StringViewArray,
    pub(super) step_event: arrow::array::Int64Array,
    pub(super) module_event: arrow::array::Int64Array,
    pub(super) device: arrow::array::Int32Array,
    pub(super) metadata: arrow::array::Int64Array,
}

impl BaseBatch {
    pub(super) fn read(batch: &RecordBatch) -> Result<Self> {
        let i64s = |i: usize| -> Result<arrow::array::Int64Array> {
            Ok(column(batch, i, &DataType::Int64)?
                .as_primitive::<Int64Type>()
                .clone())
        };
        let i32s = |i: usize| -> Result<arrow::array::Int32Array> {
            Ok(column(batch, i, &DataType::Int32)?
                .as_primitive::<Int32Type>()
                .clone())
        };
        Ok(Self {
            trace: i32s(0)?,
            event: i64s(1)?,
            parser: strings(batch, 2)?,
            tensor_core: column(batch, 3, &DataType::Boolean)?.as_boolean().clone(),
            line_name: strings(batch, 4)?,
            line_id: i64s(5)?,
            plane_name: strings(batch, 6)?,
            plane_id: i64s(7)?,
            name: strings(batch, 8)?,
            display_name: strings(batch, 9)?,
            start: i64s(10)?,
            dur: i64s(11)?,
            correlation: i64s(12)?,
            flops: i64s(13)?,
            bytes_accessed: i64s(14)?,
            program: column(batch, 15, &DataType::UInt64)?
                .as_primitive::<UInt64Type>()
                .clone(),
            hlo_op: strings(batch, 16)?,
            hlo_module: strings(batch, 17)?,
            tf_op: strings(batch, 18)?,
            step_event: i64s(19)?,
            module_event: i64s(20)?,
            device: i32s(21)?,
            metadata: i64s(22)?,
        })
    }
}
