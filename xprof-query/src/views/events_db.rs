//! The `events_db` view (XProf's Events DB), computed in one pass over the
//! events instead of the SQL's chain of joins.
//!
//! The view's definition is `views/events_db.sql` (what `xprof-sql schema
//! events_db` prints, and what a test compares this with on every profile
//! it has). Run as SQL, DataFusion attaches the stats, `trace_args`, the
//! step, the step roots and the nested ops' time to the 2.8 M events of a
//! real 102 MiB profile by six left hash joins, each building a table of
//! the wide event rows: 23 s and 5.1 GB. Here the small inputs (stats,
//! steps, nested time, HLO instructions) are read once into arrays indexed
//! by event ([`Nodes`]), and each batch of the SQL's own `base` rows is
//! turned into the view's rows by looking them up: linear in the events
//! and stats, each of the base's partitions on its own core.
//!
//! The inputs are the definition's own CTEs (the text up to `rows AS (`)
//! with a `SELECT` of their own, so the rules that pick rows and compute
//! times stay written once, in the SQL. What this file computes itself is
//! the final `SELECT` and the `stats`/`args`/`step_roots` CTEs: each is
//! written here next to the SQL it reproduces. Columns the query does not
//! read are not computed, and inputs no row needs are not run.

use std::fmt;
use std::io::Write as _;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, ListBuilder, RecordBatch, RecordBatchOptions,
    StringBuilder, StringViewArray, UInt32Builder, UInt64Builder,
};
use arrow::datatypes::{
    DataType, Field, Float64Type, Int32Type, Int64Type, Schema, SchemaRef, UInt64Type,
};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::TableType;
use datafusion::execution::TaskContext;
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream, execute_stream,
};
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner as _};
use futures_util::{StreamExt as _, TryStreamExt as _, stream};
use tokio::sync::OnceCell;
use xprof_format::hash::FxHashMap;

use crate::functions::format_g::format_g;
use crate::functions::parse_tf_op::TfOp;
use crate::plan::{plan_in_schema, session_state};
use crate::views::nodes::{EventKey, Nodes, RANGES_SQL};

/// Where the definition's shared CTEs end: every input is the text before
/// it and a `SELECT` of its own.
const ROWS_CTE: &str = ",\nrows AS (";

/// The inputs, in the order they are read (the base last, streamed).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Input {
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

const INPUT_COUNT: usize = 9;

/// The `SELECT` of each input after the definition's CTEs (`None`: a
/// query of its own, without them).
fn input_select(input: Input) -> (bool, &'static str) {
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
fn base_select(projection: &[usize]) -> String {
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

const INPUTS: [Input; INPUT_COUNT] = [
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
    let end = definition.find(ROWS_CTE).ok_or_else(|| {
        DataFusionError::Internal(format!(
            "events_db: the definition has no {ROWS_CTE:?} after its shared CTEs"
        ))
    })?;
    let ctes = &definition[..end];
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

/// The view's columns, names and types as the definition's final `SELECT`
/// gives them (every column declared nullable).
const COLUMNS: [(&str, ColumnType); 31] = [
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
mod col {
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
enum ColumnType {
    Utf8,
    UInt32,
    UInt64,
    Int64,
    ListUtf8,
}

/// The view's schema.
fn view_schema() -> SchemaRef {
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

/// The `events_db` view of the tables in one schema.
#[derive(Debug)]
pub(crate) struct EventsDbTable {
    tables_schema: String,
    definition: &'static str,
    schema: SchemaRef,
}

/// The `events_db` view's [`NativeView`](crate::views::NativeView).
pub(crate) fn native_view(tables_schema: &str, definition: &'static str) -> Arc<dyn TableProvider> {
    Arc::new(EventsDbTable {
        tables_schema: tables_schema.to_string(),
        definition,
        schema: view_schema(),
    })
}

#[async_trait]
impl TableProvider for EventsDbTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    fn get_table_definition(&self) -> Option<&str> {
        Some(self.definition)
    }

    /// `step IS NOT NULL` is taken (inexactly: it is checked again above),
    /// so that rows without a step are never made; nothing else.
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if is_step_not_null(f) {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let state = session_state(state, "events_db")?;
        let with_step_only = filters.iter().any(is_step_not_null);
        let projection = projection
            .cloned()
            .unwrap_or_else(|| (0..COLUMNS.len()).collect());
        let mut inputs = Vec::with_capacity(INPUT_COUNT);
        for sql in input_sql(self.definition, &projection)? {
            let logical = plan_in_schema(state, &self.tables_schema, &sql).await?;
            let logical = state.optimize(&logical)?;
            // This process's own planner, also in a cluster session: the
            // rows are made here, as event_steps' are.
            inputs.push(
                DefaultPhysicalPlanner::default()
                    .create_physical_plan(&logical, state)
                    .await?,
            );
        }
        Ok(Arc::new(EventsDbExec::new(
            inputs,
            self.schema.clone(),
            projection,
            with_step_only,
        )?))
    }
}

/// Reads the small inputs once, then makes the view's rows from each
/// partition of the base rows. Its inputs are planned and run by it (not
/// children of the plan), so a cluster session runs it in the client.
#[derive(Debug)]
pub struct EventsDbExec {
    inputs: Vec<Arc<dyn ExecutionPlan>>,
    projection: Vec<usize>,
    schema: SchemaRef,
    properties: Arc<PlanProperties>,
    /// The small inputs, read by the first partition to run.
    lookups: Arc<OnceCell<Arc<Lookups>>>,
    /// Only rows with a step are made (the query filters `step IS NOT
    /// NULL`, [`EventsDbTable::supports_filters_pushdown`]).
    with_step_only: bool,
}

impl EventsDbExec {
    fn new(
        inputs: Vec<Arc<dyn ExecutionPlan>>,
        full_schema: SchemaRef,
        projection: Vec<usize>,
        with_step_only: bool,
    ) -> Result<Self> {
        let schema = Arc::new(full_schema.project(&projection)?);
        let partitions = inputs[Input::Base as usize]
            .properties()
            .output_partitioning()
            .partition_count();
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions.max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Ok(Self {
            inputs,
            projection,
            schema,
            properties: Arc::new(properties),
            lookups: Arc::new(OnceCell::new()),
            with_step_only,
        })
    }
}

impl DisplayAs for EventsDbExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "EventsDbExec: {} of 31 columns over {} input queries{}",
            self.projection.len(),
            self.inputs.len(),
            if self.with_step_only {
                ", rows with a step only"
            } else {
                ""
            }
        )
    }
}

impl ExecutionPlan for EventsDbExec {
    fn name(&self) -> &str {
        "EventsDbExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal(
                "EventsDbExec has no children".into(),
            ))
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let base = self.inputs[Input::Base as usize].clone();
        let base_partitions = base.properties().output_partitioning().partition_count();
        let inputs = self.inputs.clone();
        let lookups = self.lookups.clone();
        let need = Need::of(&self.projection, self.with_step_only);
        let with_step_only = self.with_step_only;
        let projection = self.projection.clone();
        let schema = self.schema.clone();
        let out_schema = schema.clone();
        let rows = async move {
            let lookups = lookups
                .get_or_try_init(|| Lookups::read(inputs, need, context.clone()))
                .await?
                .clone();
            let batches = if partition < base_partitions {
                base.execute(partition, context)?
            } else {
                return Ok::<_, DataFusionError>(stream::empty().boxed());
            };
            Ok(batches
                .map(move |batch| lookups.rows(&batch?, &projection, &schema, with_step_only))
                .boxed())
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            out_schema,
            stream::once(rows).try_flatten(),
        )))
    }
}

/// A row's step ([`Lookups::step`]).
#[derive(Clone, Copy)]
enum Step<'a> {
    /// The name of the step the walk put the event in, as it is.
    Walked(&'a str),
    /// The name of a TPU op's `Steps` event, written `step:NAME`.
    TpuStep(&'a str),
}

/// `step IS NOT NULL`, the one filter the view takes.
fn is_step_not_null(filter: &Expr) -> bool {
    matches!(filter, Expr::IsNotNull(inner)
        if matches!(inner.as_ref(), Expr::Column(c) if c.name == "step"))
}

/// Which of the costly parts the projected columns need.
#[derive(Clone, Copy, Debug)]
struct Need {
    /// `trace_args`, `kernel_details`, `flow` or `source_line`: the stats.
    stats: bool,
    /// `trace_args`: every stat, formatted.
    trace_args: bool,
    /// `step` or `trace_args` (the step roots' names).
    steps: bool,
    /// `self_time_ns`.
    nested: bool,
    /// `step` or `hlo_module` on TPU ops.
    names: bool,
}

impl Need {
    /// What `projection` needs, and a `step IS NOT NULL` filter if
    /// `with_step_only`.
    fn of(projection: &[usize], with_step_only: bool) -> Self {
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

/// The parser of a kept line (the SQL's `parser`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Parser {
    Host,
    GpuXla,
    GpuStream,
    Tpu,
    Custom,
}

impl Parser {
    fn of(text: &str) -> Option<Self> {
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
    fn rule_bit(self) -> u8 {
        match self {
            Self::Host => 1,
            Self::GpuStream => 2,
            _ => 4,
        }
    }
}

/// How a stat's value is written in `trace_args` (by `value_type`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Int,
    Uint,
    Double,
    /// `str`, `ref`, `compressed_str`, `none`: `str_value`.
    Str,
    Bytes,
    /// The value column `value_type` names is NULL: a NULL entry.
    Null,
}

/// One stat: its event (node), key, and value as [`Kind`] says.
#[derive(Clone, Copy, Debug)]
struct Stat {
    /// The value's bits: an int's, a uint, a double's, an interned string.
    value: u64,
    node: u32,
    key: u32,
    kind: Kind,
}

/// What the SQL does with a stat key.
#[derive(Clone, Copy, Default)]
struct KeyInfo {
    /// The parsers whose `args` rule leaves the key out
    /// ([`Parser::rule_bit`]).
    left_out: u8,
    /// `kernel_details`, `flow` or `source` (the `stats` CTE's columns).
    pivot: Option<Pivot>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pivot {
    KernelDetails,
    Flow,
    Source,
}

impl KeyInfo {
    /// The `args` CTE's exclusion lists and the `stats` CTE's keys.
    fn of(key: &str) -> Self {
        let host = ["group_id", "correlation_id", "flow", "source"];
        let gpu_stream = [
            "tf_op",
            "hlo_op",
            "hlo_module",
            "program_id",
            "group_id",
            "correlation_id",
            "kernel_details",
            "tensor_shapes",
            "source_info",
        ];
        let other = ["flops", "bytes_accessed", "tf_op", "source", "source_info"];
        let mut left_out = 0;
        if host.contains(&key) {
            left_out |= Parser::Host.rule_bit();
        }
        if gpu_stream.contains(&key) {
            left_out |= Parser::GpuStream.rule_bit();
        }
        if other.contains(&key) {
            left_out |= Parser::Tpu.rule_bit();
        }
        let pivot = match key {
            "kernel_details" => Some(Pivot::KernelDetails),
            "flow" => Some(Pivot::Flow),
            "source" => Some(Pivot::Source),
            _ => None,
        };
        Self { left_out, pivot }
    }
}

/// Strings numbered in the order first seen.
#[derive(Default)]
struct Interner {
    ids: FxHashMap<Box<str>, u32>,
    values: Vec<Box<str>>,
    bytes: usize,
}

impl Interner {
    fn id(&mut self, value: &str) -> u32 {
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
    fn column(&mut self, array: &ArrayRef) -> Result<Vec<Option<u32>>> {
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

    fn get(&self, id: u32) -> &str {
        &self.values[id as usize]
    }
}

/// A stat of an event metadata: its key and value, and the `flow` pivot's
/// reading of it.
#[derive(Clone, Copy)]
struct MetadataStat {
    key: u32,
    kind: Kind,
    value: u64,
    /// `coalesce(uint_value, CAST(int_value AS BIGINT UNSIGNED))`.
    as_uint: Option<u64>,
}

/// An HLO instruction a GPU kernel runs (the SQL's `i` and `os`).
struct Instruction {
    tf_op: Option<String>,
    output_tensor: Option<String>,
    input_tensors: Option<Vec<Option<String>>>,
}

/// Everything the rows look up, read once from the small inputs.
struct Lookups {
    nodes: Nodes,
    keys: Interner,
    key_info: Vec<KeyInfo>,
    strs: Interner,
    /// The events' own stats, by node ([`Lookups::own_stats`]).
    stats: Vec<Stat>,
    /// Where each node's stats start in `stats` (one more than nodes).
    stats_at: Vec<u32>,
    /// The own `flow` stats' uint readings, by node (sorted).
    flows: Vec<(u32, u64)>,
    /// Stats of each (trace, device, metadata id).
    metadata: FxHashMap<(i32, i32, i64), Vec<MetadataStat>>,
    steps: Steps,
    /// Time of the ops nested in each TPU op (the SQL's `nested`).
    nested: FxHashMap<EventKey, i64>,
    /// By (trace, program id), then instruction name.
    instructions: FxHashMap<(i32, u64), FxHashMap<String, Vec<Instruction>>>,
    names: FxHashMap<EventKey, String>,
    need: Need,
    /// What `bytes` estimates, held in the session's memory pool.
    reservation: MemoryReservation,
}

/// Column `index` of `batch` as `data_type`.
fn column(batch: &RecordBatch, index: usize, data_type: &DataType) -> Result<ArrayRef> {
    Ok(arrow::compute::cast(batch.column(index), data_type)?)
}

/// Column `index` of `batch` as strings.
fn strings(batch: &RecordBatch, index: usize) -> Result<StringViewArray> {
    Ok(column(batch, index, &DataType::Utf8View)?
        .as_string_view()
        .clone())
}

fn opt_str(array: &StringViewArray, row: usize) -> Option<&str> {
    array.is_valid(row).then(|| array.value(row))
}

/// The value columns (`value_type`, int, uint, double, str) of a stats
/// batch, from column `at` on.
struct Values {
    kinds: Vec<Option<u32>>,
    int: ArrayRef,
    uint: ArrayRef,
    double: ArrayRef,
    strs: Vec<Option<u32>>,
}

impl Values {
    fn read(
        batch: &RecordBatch,
        at: usize,
        types: &mut Interner,
        strs: &mut Interner,
    ) -> Result<Self> {
        Ok(Self {
            kinds: types.column(batch.column(at))?,
            int: column(batch, at + 1, &DataType::Int64)?,
            uint: column(batch, at + 2, &DataType::UInt64)?,
            double: column(batch, at + 3, &DataType::Float64)?,
            strs: strs.column(batch.column(at + 4))?,
        })
    }

    /// Row `row`'s kind and value bits, and its uint reading.
    fn value(&self, row: usize, type_kinds: &[Kind]) -> (Kind, u64, Option<u64>) {
        let int = self.int.as_primitive::<Int64Type>();
        let uint = self.uint.as_primitive::<UInt64Type>();
        let double = self.double.as_primitive::<Float64Type>();
        let as_uint = if uint.is_valid(row) {
            Some(uint.value(row))
        } else {
            int.is_valid(row).then(|| int.value(row) as u64)
        };
        let kind = self.kinds[row].map_or(Kind::Str, |k| type_kinds[k as usize]);
        let (kind, bits) = match kind {
            Kind::Int if int.is_valid(row) => (Kind::Int, int.value(row) as u64),
            Kind::Uint if uint.is_valid(row) => (Kind::Uint, uint.value(row)),
            Kind::Double if double.is_valid(row) => (Kind::Double, double.value(row).to_bits()),
            Kind::Bytes => (Kind::Bytes, 0),
            Kind::Str => match self.strs[row] {
                Some(id) => (Kind::Str, u64::from(id)),
                None => (Kind::Null, 0),
            },
            _ => (Kind::Null, 0),
        };
        (kind, bits, as_uint)
    }
}

/// The kind each interned `value_type` is, as the `args` CTE's CASE reads it.
fn type_kinds(types: &Interner) -> Vec<Kind> {
    types
        .values
        .iter()
        .map(|t| match &**t {
            "int" => Kind::Int,
            "uint" => Kind::Uint,
            "double" => Kind::Double,
            "bytes" => Kind::Bytes,
            _ => Kind::Str,
        })
        .collect()
}

impl fmt::Debug for Lookups {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("Lookups")
            .field("stats", &self.stats.len())
            .field("need", &self.need)
            .finish_non_exhaustive()
    }
}

impl Lookups {
    /// Runs the inputs the projection needs (all but the base) and keeps
    /// what the rows look up.
    async fn read(
        inputs: Vec<Arc<dyn ExecutionPlan>>,
        need: Need,
        context: Arc<TaskContext>,
    ) -> Result<Arc<Self>> {
        let mut me = Self {
            nodes: Nodes::default(),
            keys: Interner::default(),
            key_info: Vec::new(),
            strs: Interner::default(),
            stats: Vec::new(),
            stats_at: Vec::new(),
            flows: Vec::new(),
            metadata: FxHashMap::default(),
            steps: Steps::default(),
            nested: FxHashMap::default(),
            instructions: FxHashMap::default(),
            names: FxHashMap::default(),
            need,
            reservation: MemoryConsumer::new("EventsDbExec").register(context.memory_pool()),
        };
        let mut parsers = Vec::new();
        let mut types = Interner::default();
        let read = |which: Input| execute_stream(inputs[which as usize].clone(), context.clone());
        let mut kinds = read(Input::Kinds)?;
        while let Some(batch) = kinds.next().await {
            let batch = batch?;
            let parser = strings(&batch, 0)?;
            let core = column(&batch, 1, &DataType::Boolean)?;
            let core: &BooleanArray = core.as_boolean();
            for row in 0..batch.num_rows() {
                if let Some(p) = opt_str(&parser, row).and_then(Parser::of) {
                    parsers.push((p, core.is_valid(row) && core.value(row)));
                }
            }
        }
        let has = |p: Parser| parsers.iter().any(|&(q, _)| q == p);
        let host_or_stream = has(Parser::Host) || has(Parser::GpuStream);
        let mut ranges = read(Input::Ranges)?;
        while let Some(batch) = ranges.next().await {
            let batch = batch?;
            let trace = column(&batch, 0, &DataType::Int32)?;
            let min = column(&batch, 1, &DataType::Int64)?;
            let max = column(&batch, 2, &DataType::Int64)?;
            let ids = column(&batch, 3, &DataType::Int64)?;
            let (trace, min, max, ids) = (
                trace.as_primitive::<Int32Type>(),
                min.as_primitive::<Int64Type>(),
                max.as_primitive::<Int64Type>(),
                ids.as_primitive::<Int64Type>(),
            );
            for row in 0..batch.num_rows() {
                if min.is_valid(row) && max.is_valid(row) {
                    me.nodes.add_range(
                        trace.value(row),
                        min.value(row),
                        max.value(row),
                        ids.value(row),
                    );
                }
            }
        }
        // The steps (event_steps' walk) on another core while the stats
        // are read here.
        let steps = (need.steps && host_or_stream).then(|| {
            let plan = inputs[Input::Steps as usize].clone();
            let (nodes, context) = (me.nodes.clone(), context.clone());
            SpawnedTask::spawn(async move { Steps::read(plan, nodes, context).await })
        });
        if need.stats {
            let mut args = read(Input::EventArgs)?;
            while let Some(batch) = args.next().await {
                me.read_event_args(&batch?, &mut types)?;
                me.reserve()?;
            }
            let mut metadata = read(Input::MetadataArgs)?;
            while let Some(batch) = metadata.next().await {
                me.read_metadata_args(&batch?, &mut types)?;
            }
            me.settle_stats();
            me.reserve()?;
        }
        if let Some(steps) = steps {
            me.steps = steps
                .join()
                .await
                .map_err(|e| DataFusionError::External(Box::new(e)))??;
        }
        if need.nested && parsers.iter().any(|&(p, core)| p == Parser::Tpu && core) {
            let mut nested = read(Input::Nested)?;
            while let Some(batch) = nested.next().await {
                let batch = batch?;
                let trace = column(&batch, 0, &DataType::Int32)?;
                let parent = column(&batch, 1, &DataType::Int64)?;
                let children = column(&batch, 2, &DataType::Int64)?;
                let (trace, parent, children) = (
                    trace.as_primitive::<Int32Type>(),
                    parent.as_primitive::<Int64Type>(),
                    children.as_primitive::<Int64Type>(),
                );
                for row in 0..batch.num_rows() {
                    if parent.is_valid(row) && children.is_valid(row) {
                        me.nested
                            .insert((trace.value(row), parent.value(row)), children.value(row));
                    }
                }
            }
        }
        if has(Parser::GpuStream) {
            let mut instructions = read(Input::Instructions)?;
            while let Some(batch) = instructions.next().await {
                me.read_instructions(&batch?)?;
            }
        }
        if need.names && has(Parser::Tpu) {
            let mut names = read(Input::Names)?;
            while let Some(batch) = names.next().await {
                let batch = batch?;
                let trace = column(&batch, 0, &DataType::Int32)?;
                let event = column(&batch, 1, &DataType::Int64)?;
                let name = strings(&batch, 2)?;
                let (trace, event) = (
                    trace.as_primitive::<Int32Type>(),
                    event.as_primitive::<Int64Type>(),
                );
                for row in 0..batch.num_rows() {
                    if let Some(n) = opt_str(&name, row) {
                        me.names
                            .insert((trace.value(row), event.value(row)), n.to_string());
                    }
                }
            }
        }
        me.reserve()?;
        Ok(Arc::new(me))
    }

    /// Resizes the reservation to [`Lookups::bytes`].
    fn reserve(&mut self) -> Result<()> {
        let bytes = self.bytes();
        self.reservation.try_resize(bytes)
    }

    /// Bytes held, for the memory pool (an estimate from the capacities).
    fn bytes(&self) -> usize {
        self.nodes.bytes()
            + self.stats.capacity() * std::mem::size_of::<Stat>()
            + self.stats_at.capacity() * 4
            + self.flows.capacity() * 16
            + self.steps.bytes()
            + self.keys.bytes
            + self.strs.bytes
            + self.metadata.len() * 64
    }

    /// The key ids of a stats batch's `key` column, each key's
    /// [`KeyInfo`] known.
    fn key_ids(&mut self, keys: &ArrayRef) -> Result<Vec<Option<u32>>> {
        let ids = self.keys.column(keys)?;
        let known = self.key_info.len();
        let new = self.keys.values[known..].iter().map(|k| KeyInfo::of(k));
        self.key_info.extend(new.collect::<Vec<_>>());
        Ok(ids)
    }

    fn read_event_args(&mut self, batch: &RecordBatch, types: &mut Interner) -> Result<()> {
        let trace = column(batch, 0, &DataType::Int32)?;
        let trace = trace.as_primitive::<Int32Type>();
        let event = column(batch, 1, &DataType::Int64)?;
        let event = event.as_primitive::<Int64Type>();
        let keys = self.key_ids(batch.column(2))?;
        let values = Values::read(batch, 3, types, &mut self.strs)?;
        let kinds = type_kinds(types);
        for (row, &key) in keys.iter().enumerate() {
            let Some(key) = key else { continue };
            if !self.need.trace_args && self.key_info[key as usize].pivot.is_none() {
                continue;
            }
            let node = self.nodes.node((trace.value(row), event.value(row)));
            let (kind, value, as_uint) = values.value(row, &kinds);
            if self.key_info[key as usize].pivot == Some(Pivot::Flow)
                && let Some(flow) = as_uint
            {
                self.flows.push((node, flow));
            }
            self.stats.push(Stat {
                value,
                node,
                key,
                kind,
            });
        }
        Ok(())
    }

    fn read_metadata_args(&mut self, batch: &RecordBatch, types: &mut Interner) -> Result<()> {
        let trace = column(batch, 0, &DataType::Int32)?;
        let trace = trace.as_primitive::<Int32Type>();
        let device = column(batch, 1, &DataType::Int32)?;
        let device = device.as_primitive::<Int32Type>();
        let metadata = column(batch, 2, &DataType::Int64)?;
        let metadata = metadata.as_primitive::<Int64Type>();
        let keys = self.key_ids(batch.column(3))?;
        let values = Values::read(batch, 4, types, &mut self.strs)?;
        let kinds = type_kinds(types);
        for (row, &key) in keys.iter().enumerate() {
            let Some(key) = key else { continue };
            let (kind, value, as_uint) = values.value(row, &kinds);
            self.metadata
                .entry((trace.value(row), device.value(row), metadata.value(row)))
                .or_default()
                .push(MetadataStat {
                    key,
                    kind,
                    value,
                    as_uint,
                });
        }
        Ok(())
    }

    /// The stats ordered by node (a counting sort: their order within a
    /// node does not matter), with each node's start.
    fn settle_stats(&mut self) {
        self.flows.sort_unstable();
        let count = self.nodes.count();
        let mut at = vec![0u32; count + 1];
        for s in &self.stats {
            at[s.node as usize + 1] += 1;
        }
        for n in 0..count {
            at[n + 1] += at[n];
        }
        if !self.stats.is_sorted_by_key(|s| s.node) {
            let mut fill = at.clone();
            let mut sorted = vec![
                Stat {
                    value: 0,
                    node: 0,
                    key: 0,
                    kind: Kind::Null,
                };
                self.stats.len()
            ];
            for s in &self.stats {
                let slot = &mut fill[s.node as usize];
                sorted[*slot as usize] = *s;
                *slot += 1;
            }
            self.stats = sorted;
        }
        self.stats_at = at;
    }

    fn read_instructions(&mut self, batch: &RecordBatch) -> Result<()> {
        let trace = column(batch, 0, &DataType::Int32)?;
        let trace = trace.as_primitive::<Int32Type>();
        let program = column(batch, 1, &DataType::UInt64)?;
        let program = program.as_primitive::<UInt64Type>();
        let name = strings(batch, 2)?;
        let tf_op = strings(batch, 3)?;
        let output = strings(batch, 4)?;
        let inputs = column(
            batch,
            5,
            &DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
        )?;
        let inputs = inputs.as_list::<i32>();
        for row in 0..batch.num_rows() {
            let (Some(n), true) = (opt_str(&name, row), program.is_valid(row)) else {
                continue;
            };
            let input_tensors = inputs.is_valid(row).then(|| {
                let list = inputs.value(row);
                let list = list.as_string::<i32>();
                (0..list.len())
                    .map(|i| list.is_valid(i).then(|| list.value(i).to_string()))
                    .collect()
            });
            self.instructions
                .entry((trace.value(row), program.value(row)))
                .or_default()
                .entry(n.to_string())
                .or_default()
                .push(Instruction {
                    tf_op: opt_str(&tf_op, row).map(str::to_string),
                    output_tensor: opt_str(&output, row).map(str::to_string),
                    input_tensors,
                });
        }
        Ok(())
    }

    /// The event's own stats.
    fn own_stats(&self, node: Option<u32>) -> &[Stat] {
        match node {
            Some(n) if (n as usize) + 1 < self.stats_at.len() => {
                &self.stats
                    [self.stats_at[n as usize] as usize..self.stats_at[n as usize + 1] as usize]
            }
            _ => &[],
        }
    }

    /// Writes one stat's `trace_args` entry (`key` U+0001 value) to
    /// `out`; false for a NULL entry.
    fn write_entry(&self, out: &mut Vec<u8>, key: u32, kind: Kind, value: u64) -> bool {
        out.extend_from_slice(self.keys.get(key).as_bytes());
        out.push(1);
        match kind {
            Kind::Int => write!(out, "{}", value as i64).is_ok(),
            Kind::Uint => write!(out, "{value}").is_ok(),
            Kind::Double => {
                out.extend_from_slice(format_g(f64::from_bits(value)).as_bytes());
                true
            }
            Kind::Bytes => {
                out.extend_from_slice(b"<opaque bytes>");
                true
            }
            Kind::Str => {
                out.extend_from_slice(self.strs.get(value as u32).as_bytes());
                true
            }
            Kind::Null => false,
        }
    }

    /// The view's rows for one batch of the base, `projection`'s columns.
    fn rows(
        &self,
        batch: &RecordBatch,
        projection: &[usize],
        schema: &SchemaRef,
        with_step_only: bool,
    ) -> Result<RecordBatch> {
        let base = Base::read(batch)?;
        let mut out = Out::new(projection, batch.num_rows());
        let mut scratch = Scratch::default();
        for row in 0..batch.num_rows() {
            self.row(&base, row, &mut out, &mut scratch, with_step_only);
        }
        out.finish(projection, schema)
    }

    /// The `stats` CTE's columns and the `args` CTE's `trace_args` of one
    /// event (`Parser` picks the `args` rule; `None` for `trace_args` when
    /// not needed).
    fn event_stats(
        &self,
        node: Option<u32>,
        metadata: Option<&[MetadataStat]>,
        parser: Parser,
        scratch: &mut Scratch,
    ) -> EventStats {
        let own = self.own_stats(node);
        let metadata = metadata.unwrap_or(&[]);
        // The metadata's stats the event does not override (event_stats).
        let inherited = |m: &&MetadataStat| !own.iter().any(|s| s.key == m.key);
        let mut stats = EventStats::default();
        let larger_str = |best: &mut Option<u32>, kind: Kind, value: u64| {
            if kind == Kind::Str {
                let id = value as u32;
                if best.is_none_or(|b| self.strs.get(id) > self.strs.get(b)) {
                    *best = Some(id);
                }
            }
        };
        let pivot = |key: u32, kind: Kind, value: u64, stats: &mut EventStats| match self.key_info
            [key as usize]
            .pivot
        {
            Some(Pivot::KernelDetails) => larger_str(&mut stats.kernel_details, kind, value),
            Some(Pivot::Source) => larger_str(&mut stats.source, kind, value),
            _ => {}
        };
        for s in own {
            pivot(s.key, s.kind, s.value, &mut stats);
        }
        if let Some(n) = node {
            let first = self.flows.partition_point(|f| f.0 < n);
            stats.flow = self.flows[first..]
                .iter()
                .take_while(|f| f.0 == n)
                .map(|f| f.1)
                .max();
        }
        for m in metadata.iter().filter(inherited) {
            pivot(m.key, m.kind, m.value, &mut stats);
            if self.key_info[m.key as usize].pivot == Some(Pivot::Flow)
                && let Some(flow) = m.as_uint
            {
                stats.flow = stats.flow.max(Some(flow));
            }
        }
        if !self.need.trace_args {
            return stats;
        }
        // args: on the host the event's own stats only; elsewhere the
        // metadata's (sorted), then the event's (sorted), joined by ','.
        let bit = parser.rule_bit();
        let kept = |key: u32| self.key_info[key as usize].left_out & bit == 0;
        let text = &mut scratch.text;
        text.clear();
        let mut any = false;
        if parser != Parser::Host {
            let entries = metadata
                .iter()
                .filter(inherited)
                .filter(|m| kept(m.key))
                .map(|m| (m.key, m.kind, m.value));
            any |= self.write_sorted(entries, text, &mut scratch.entries, &mut scratch.spans);
        }
        let entries = own
            .iter()
            .filter(|s| kept(s.key))
            .map(|s| (s.key, s.kind, s.value));
        let own_text = &mut scratch.own;
        own_text.clear();
        let own_any =
            self.write_sorted(entries, own_text, &mut scratch.entries, &mut scratch.spans);
        if own_any {
            if any {
                text.push(b',');
            }
            text.extend_from_slice(own_text);
        }
        any |= own_any;
        if any && !text.is_empty() {
            for b in text.iter_mut() {
                if *b == 1 {
                    *b = b'=';
                }
            }
            stats.trace_args = true;
        }
        stats
    }

    /// Writes `entries` sorted and joined by ',' to `out` (the SQL's
    /// `array_to_string(array_sort(array_agg(entry)), ',')`, NULL entries
    /// skipped); false when there are none (a NULL list).
    fn write_sorted(
        &self,
        entries: impl Iterator<Item = (u32, Kind, u64)>,
        out: &mut Vec<u8>,
        buffer: &mut Vec<u8>,
        spans: &mut Vec<(usize, usize)>,
    ) -> bool {
        buffer.clear();
        spans.clear();
        let mut any = false;
        for (key, kind, value) in entries {
            any = true;
            let start = buffer.len();
            if self.write_entry(buffer, key, kind, value) {
                spans.push((start, buffer.len()));
            } else {
                buffer.truncate(start);
            }
        }
        spans.sort_by(|a, b| buffer[a.0..a.1].cmp(&buffer[b.0..b.1]));
        for (i, &(from, to)) in spans.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&buffer[from..to]);
        }
        any
    }

    /// Appends the rows of base row `row` (one, or one per HLO instruction
    /// of its kernel) to `out`.
    fn row(
        &self,
        base: &Base,
        row: usize,
        out: &mut Out,
        scratch: &mut Scratch,
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
        let times = instructions.len().max(1);
        for copy in 0..times {
            let instruction = instructions.get(copy);
            self.write_row(
                out,
                base,
                row,
                parser,
                step,
                line_name,
                name,
                tensor_core,
                hlo_op,
                tf_op,
                &stats,
                instruction,
                &scratch.text,
            );
        }
    }

    /// The `step` column of a row: on the host and GPU streams the step
    /// the walk put the event in (`event_steps`); on TPU `XLA Ops` the
    /// name of its `Steps` event.
    fn step(
        &self,
        base: &Base,
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

    #[allow(clippy::too_many_arguments)]
    fn write_row(
        &self,
        out: &mut Out,
        base: &Base,
        row: usize,
        parser: Parser,
        step: Option<Step<'_>>,
        line_name: &str,
        name: &str,
        tensor_core: bool,
        hlo_op: Option<&str>,
        tf_op: Option<&str>,
        stats: &EventStats,
        instruction: Option<&Instruction>,
        args_text: &[u8],
    ) {
        let int = |a: &arrow::array::Int64Array| a.is_valid(row).then(|| a.value(row));
        let trace = base.trace.value(row);
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
                .then(|| std::str::from_utf8(args_text).unwrap_or_default());
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

/// The steps of `event_steps` and the step roots' names (the SQL's `st`
/// and `step_roots`).
#[derive(Default)]
struct Steps {
    names: Interner,
    /// Each dense node's step (index into `names`), `u32::MAX` for none.
    dense: Vec<u32>,
    /// The steps of events outside the dense ranges.
    extra: FxHashMap<EventKey, u32>,
    /// Each step root's `max(step_name)`.
    roots: FxHashMap<EventKey, u32>,
}

impl Steps {
    /// Reads `plan` (the `event_steps` view's rows), numbering events by
    /// `nodes` (its dense ranges).
    async fn read(
        plan: Arc<dyn ExecutionPlan>,
        nodes: Nodes,
        context: Arc<TaskContext>,
    ) -> Result<Self> {
        let mut me = Self {
            dense: vec![u32::MAX; nodes.count()],
            ..Self::default()
        };
        let mut batches = execute_stream(plan, context)?;
        while let Some(batch) = batches.next().await {
            let batch = batch?;
            let trace = column(&batch, 0, &DataType::Int32)?;
            let trace = trace.as_primitive::<Int32Type>();
            let event = column(&batch, 1, &DataType::Int64)?;
            let event = event.as_primitive::<Int64Type>();
            let names = me.names.column(batch.column(2))?;
            let root = column(&batch, 3, &DataType::Int64)?;
            let root = root.as_primitive::<Int64Type>();
            for row in 0..batch.num_rows() {
                let Some(name) = names[row] else { continue };
                let key = (trace.value(row), event.value(row));
                match nodes.get(key).and_then(|n| me.dense.get_mut(n as usize)) {
                    Some(slot) => *slot = name,
                    None => {
                        me.extra.insert(key, name);
                    }
                }
                if root.is_valid(row) {
                    let names = &me.names;
                    me.roots
                        .entry((key.0, root.value(row)))
                        .and_modify(|best| {
                            if names.get(name) > names.get(*best) {
                                *best = name;
                            }
                        })
                        .or_insert(name);
                }
            }
        }
        Ok(me)
    }

    /// The step of the event `key` (node `node`).
    fn step(&self, node: Option<u32>, key: EventKey) -> Option<&str> {
        let id = match node.and_then(|n| self.dense.get(n as usize)) {
            Some(&id) => id,
            None => *self.extra.get(&key)?,
        };
        (id != u32::MAX).then(|| self.names.get(id))
    }

    /// The name a step root's stats get (`step_roots.step_name`).
    fn root(&self, key: EventKey) -> Option<&str> {
        self.roots.get(&key).map(|&id| self.names.get(id))
    }

    fn bytes(&self) -> usize {
        self.dense.capacity() * 4 + self.names.bytes + (self.extra.len() + self.roots.len()) * 24
    }
}

/// `tf_op_name` and `tf_op_type` of a row (the final SELECT's two CASEs).
fn tf_op_columns(
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

/// The `stats` and `args` CTEs' columns for one event.
#[derive(Default)]
struct EventStats {
    kernel_details: Option<u32>,
    flow: Option<u64>,
    source: Option<u32>,
    /// Whether `trace_args` is not NULL: its text is then in
    /// [`Scratch::text`].
    trace_args: bool,
}

/// Reused buffers for one batch's `trace_args`.
#[derive(Default)]
struct Scratch {
    text: Vec<u8>,
    own: Vec<u8>,
    entries: Vec<u8>,
    spans: Vec<(usize, usize)>,
}

/// A batch of the base input, its columns typed.
struct Base {
    trace: arrow::array::Int32Array,
    event: arrow::array::Int64Array,
    parser: StringViewArray,
    tensor_core: BooleanArray,
    line_name: StringViewArray,
    line_id: arrow::array::Int64Array,
    plane_name: StringViewArray,
    plane_id: arrow::array::Int64Array,
    name: StringViewArray,
    display_name: StringViewArray,
    start: arrow::array::Int64Array,
    dur: arrow::array::Int64Array,
    correlation: arrow::array::Int64Array,
    flops: arrow::array::Int64Array,
    bytes_accessed: arrow::array::Int64Array,
    program: arrow::array::UInt64Array,
    hlo_op: StringViewArray,
    hlo_module: StringViewArray,
    tf_op: StringViewArray,
    step_event: arrow::array::Int64Array,
    module_event: arrow::array::Int64Array,
    device: arrow::array::Int32Array,
    metadata: arrow::array::Int64Array,
}

impl Base {
    fn read(batch: &RecordBatch) -> Result<Self> {
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

type ListOfStrings = ListBuilder<StringBuilder>;

/// The output columns being built: `None` for those not projected.
#[derive(Default)]
struct Out {
    rows: usize,
    device: Option<StringBuilder>,
    stream_id: Option<UInt32Builder>,
    thread_id: Option<UInt32Builder>,
    thread_name: Option<StringBuilder>,
    correlation_id: Option<UInt32Builder>,
    kernel_name: Option<StringBuilder>,
    kernel_details: Option<StringBuilder>,
    tf_op_name: Option<StringBuilder>,
    tf_op_type: Option<StringBuilder>,
    hlo_op: Option<StringBuilder>,
    hlo_module: Option<StringBuilder>,
    start_ns: Option<UInt64Builder>,
    end_ns: Option<UInt64Builder>,
    self_time_ns: Option<UInt64Builder>,
    step: Option<StringBuilder>,
    category: Option<StringBuilder>,
    flops: Option<UInt64Builder>,
    memory_accessed: Option<UInt64Builder>,
    input_tensors: Option<ListOfStrings>,
    output_tensors: Option<ListOfStrings>,
    trace_args: Option<StringBuilder>,
    flow: Option<UInt64Builder>,
    source_line: Option<StringBuilder>,
}

impl Out {
    fn new(projection: &[usize], rows: usize) -> Self {
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
    fn finish(mut self, projection: &[usize], schema: &SchemaRef) -> Result<RecordBatch> {
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
