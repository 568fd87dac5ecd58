//! The `event_steps` view, computed by walking the event graph in memory.
//!
//! The view's definition is the recursive SQL of `views/event_steps.sql`
//! (what `xprof-sql schema event_steps` prints, and what a test compares
//! this with on every profile it has). Run as SQL, DataFusion evaluates the
//! recursive part once per hop, and each time plans and builds again the
//! edges (a grouping of the stats and three joins): 16–66 s on the real
//! 2.8 M-event profile. Here the four inputs the recursion reads are read
//! once, by plain queries ([`INPUTS`]), and the steps are found by one
//! breadth-first walk per step root over the edges held in memory: linear
//! in the events and edges.
//!
//! The walk gives exactly the rows of the SQL: each event takes the
//! earliest root (by start, then event id) that reaches it in at most
//! [`MAX_HOPS`] hops. Roots are walked in that order, and a walk stops at
//! an event an earlier root reached in as few hops or fewer: what lies
//! beyond it, the earlier root reaches within the limit too.

use std::fmt;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal128Builder, Int32Builder, Int64Builder,
    RecordBatch, StringViewBuilder,
};
use arrow::datatypes::{DataType, Field, Int32Type, Int64Type, Schema, SchemaRef, UInt64Type};
use async_trait::async_trait;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::TableType;
use datafusion::execution::TaskContext;
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream, execute_stream,
};
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner as _};
use futures_util::{StreamExt as _, TryStreamExt as _, stream};

use crate::plan::{plan_in_schema, session_state};
use crate::views::nodes::{EventKey, Nodes, RANGES_SQL};

/// Hops a step spreads from its root at most (the SQL's `hops < 64`).
pub const MAX_HOPS: u8 = 64;

/// Rows per output batch.
const BATCH_ROWS: usize = 8192;

/// The stats the steps are made of, one row per stat: which of
/// [`Slot`] it is, and its value read as XProf's unsigned 64-bit id
/// (a `uint` as it is, an `int` as its two's complement).
const STATS_SQL: &str = "SELECT trace_id, event_id, \
    CASE key WHEN '_pt' THEN 0 WHEN '_p' THEN 1 WHEN '_ct' THEN 2 WHEN '_c' THEN 3 \
             WHEN '_r' THEN 4 WHEN 'iter_num' THEN 5 ELSE 6 END AS slot, \
    value_type = 'uint' AS is_uint, int_value, uint_value \
    FROM event_stats \
    WHERE key IN ('_pt', '_p', '_ct', '_c', '_r', 'iter_num', 'step_num')";

/// The nesting edges: each event with a parent on its track.
const PARENTS_SQL: &str =
    "SELECT trace_id, parent_id, event_id FROM events WHERE parent_id IS NOT NULL";

/// Start and name of each event carrying `_r` (whether its value makes
/// it a root is decided with the other stats).
const ROOTS_SQL: &str = "SELECT e.trace_id, e.event_id, e.ts_ps, CAST(e.name AS VARCHAR) AS name \
    FROM events e \
    JOIN (SELECT DISTINCT trace_id, event_id FROM event_stats WHERE key = '_r') r \
      ON r.trace_id = e.trace_id AND r.event_id = e.event_id";

/// The launch edges: a host event with a `correlation_id` stat to the GPU
/// ops with the same id (the view's third kind of edge, as it writes it).
const LAUNCHES_SQL: &str = "WITH launches AS ( \
      SELECT trace_id, event_id, \
             max(CASE WHEN value_type = 'uint' THEN CAST(uint_value AS DECIMAL(20, 0)) \
                      WHEN int_value < 0 \
                        THEN CAST(int_value AS DECIMAL(20, 0)) + CAST(18446744073709551616 AS DECIMAL(21, 0)) \
                      ELSE CAST(int_value AS DECIMAL(20, 0)) END) AS correlation_id \
      FROM event_stats WHERE key = 'correlation_id' GROUP BY trace_id, event_id) \
    SELECT h.trace_id, h.event_id AS from_id, o.event_id AS to_id \
    FROM launches h \
    JOIN events he ON he.trace_id = h.trace_id AND he.event_id = h.event_id \
    JOIN tracks ht ON ht.trace_id = he.trace_id AND ht.track_id = he.track_id \
    JOIN devices hd ON hd.trace_id = ht.trace_id AND hd.device_id = ht.device_id \
    JOIN device_ops o ON o.trace_id = h.trace_id \
      AND CAST(o.correlation_id AS DECIMAL(20, 0)) = h.correlation_id \
    WHERE hd.kind = 'host' AND o.device_kind = 'gpu'";

/// The queries the walk reads, in the order it reads them (the stats
/// before the roots).
pub const INPUTS: [&str; 5] = [RANGES_SQL, STATS_SQL, PARENTS_SQL, ROOTS_SQL, LAUNCHES_SQL];

/// The stats of [`STATS_SQL`], by its `slot` number.
#[derive(Clone, Copy)]
enum Slot {
    ProducerType = 0,
    Producer = 1,
    ConsumerType = 2,
    Consumer = 3,
    Root = 4,
    IterNum = 5,
    StepNum = 6,
}

/// The view's columns, as the SQL definition gives them.
fn view_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("trace_id", DataType::Int32, false),
        Field::new("event_id", DataType::Int64, false),
        Field::new("step_group_id", DataType::Decimal128(20, 0), false),
        Field::new("step_root_event_id", DataType::Int64, false),
        Field::new("step_name", DataType::Utf8View, false),
    ]))
}

/// The `event_steps` view of the tables in one schema.
#[derive(Debug)]
pub(crate) struct EventStepsTable {
    /// The schema holding the profile tables the inputs read.
    tables_schema: String,
    /// The recursive SQL this computes, shown as the view's definition.
    definition: &'static str,
    schema: SchemaRef,
}

impl EventStepsTable {
    /// The view over the tables of `tables_schema`; `definition` is the
    /// SQL it answers as.
    pub(crate) fn new(tables_schema: &str, definition: &'static str) -> Self {
        Self {
            tables_schema: tables_schema.to_string(),
            definition,
            schema: view_schema(),
        }
    }
}

/// The `event_steps` view's [`NativeView`](crate::views::NativeView).
pub(crate) fn native_view(tables_schema: &str, definition: &'static str) -> Arc<dyn TableProvider> {
    Arc::new(EventStepsTable::new(tables_schema, definition))
}

#[async_trait]
impl TableProvider for EventStepsTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    fn get_table_definition(&self) -> Option<&str> {
        Some(self.definition)
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let state = session_state(state, "event_steps")?;
        let mut inputs = Vec::with_capacity(INPUTS.len());
        for sql in INPUTS {
            let logical = plan_in_schema(state, &self.tables_schema, sql).await?;
            let logical = state.optimize(&logical)?;
            // This process's own planner, also in a cluster session: the
            // walk runs here, as the recursive SQL did.
            inputs.push(
                DefaultPhysicalPlanner::default()
                    .create_physical_plan(&logical, state)
                    .await?,
            );
        }
        Ok(Arc::new(EventStepsExec::new(
            inputs,
            self.schema.clone(),
            projection.cloned(),
        )?))
    }
}

/// Runs [`INPUTS`] and walks the steps: one partition, rows in no
/// particular order. Its inputs are planned and run by it (not children
/// of the plan), so a cluster session runs it in the client process.
#[derive(Debug)]
pub struct EventStepsExec {
    inputs: Vec<Arc<dyn ExecutionPlan>>,
    full_schema: SchemaRef,
    projection: Option<Vec<usize>>,
    properties: Arc<PlanProperties>,
}

impl EventStepsExec {
    fn new(
        inputs: Vec<Arc<dyn ExecutionPlan>>,
        full_schema: SchemaRef,
        projection: Option<Vec<usize>>,
    ) -> Result<Self> {
        let schema = match &projection {
            Some(p) => Arc::new(full_schema.project(p)?),
            None => full_schema.clone(),
        };
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        );
        Ok(Self {
            inputs,
            full_schema,
            projection,
            properties: Arc::new(properties),
        })
    }
}

impl DisplayAs for EventStepsExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "EventStepsExec: walks the step roots over {} input queries",
            self.inputs.len()
        )
    }
}

impl ExecutionPlan for EventStepsExec {
    fn name(&self) -> &str {
        "EventStepsExec"
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
                "EventStepsExec has no children".into(),
            ))
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!(
                "EventStepsExec has one partition, not {partition}"
            )));
        }
        let inputs = self.inputs.clone();
        let full_schema = self.full_schema.clone();
        let projection = self.projection.clone();
        let out_schema = self.schema();
        let steps = async move {
            let mut reservation =
                MemoryConsumer::new("EventStepsExec").register(context.memory_pool());
            let mut walk = Walk::default();
            for (which, plan) in inputs.into_iter().enumerate() {
                let mut batches = execute_stream(plan, context.clone())?;
                while let Some(batch) = batches.next().await {
                    walk.read(which, &batch?)?;
                    reservation.try_resize(walk.bytes())?;
                }
            }
            let batches = walk.steps(&full_schema, &mut reservation)?;
            let batches = match projection {
                Some(p) => batches
                    .into_iter()
                    .map(|b| b.project(&p))
                    .collect::<std::result::Result<Vec<_>, _>>()?,
                None => batches,
            };
            Ok::<_, DataFusionError>(stream::iter(batches.into_iter().map(Ok)))
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            out_schema,
            stream::once(steps).try_flatten(),
        )))
    }
}

/// One stat's value for one event: its node, trace and value.
type StatRow = (u32, i32, u64);

/// A step root: an event whose `_r` is above 0.
struct Root {
    node: u32,
    ts_ps: i64,
    name: String,
    /// `iter_num`, else `step_num`.
    number: Option<u64>,
}

/// The graph and stats read from the inputs, then walked.
#[derive(Default)]
struct Walk {
    nodes: Nodes,
    /// Edges (from, to) by node number.
    edges: Vec<(u32, u32)>,
    /// The rows of each stat of [`Slot`].
    stats: [Vec<StatRow>; 7],
    /// Root nodes (`_r` above 0), sorted, once the stats are read.
    root_nodes: Vec<u32>,
    /// Whether the stats are reduced ([`Walk::settle_stats`]).
    settled: bool,
    roots: Vec<Root>,
}

/// Column `index` of `batch` as `data_type` (the inputs' types are the
/// tables', cast here so that a wider or narrower column still reads).
fn column(batch: &RecordBatch, index: usize, data_type: &DataType) -> Result<ArrayRef> {
    Ok(arrow::compute::cast(batch.column(index), data_type)?)
}

/// `rows` sorted by node with one row per node, the largest value (the
/// SQL's `max` per event and key).
///
/// The stats arrive in runs already in node order (each batch of a scan
/// is in event order), which a stable sort by node merges instead of
/// sorting every row again (benches/README.md, "`event_steps`' sorts").
fn largest_per_node(mut rows: Vec<StatRow>) -> Vec<StatRow> {
    rows.sort_by_key(|row| row.0);
    rows.dedup_by(|later, kept| {
        if later.0 != kept.0 {
            return false;
        }
        kept.2 = kept.2.max(later.2);
        true
    });
    rows
}

/// The value of `node` in `rows` (sorted by node).
fn value_of(rows: &[StatRow], node: u32) -> Option<u64> {
    rows.binary_search_by_key(&node, |r| r.0)
        .ok()
        .map(|i| rows[i].2)
}

/// (trace, kind, id, node) of the events having both stats, `kinds` and
/// `ids` sorted by node with one row each; sorted by the first three.
fn pairs(kinds: &[StatRow], ids: &[StatRow]) -> Vec<(i32, u64, u64, u32)> {
    let mut out = Vec::new();
    let mut at = 0;
    for &(node, trace, kind) in kinds {
        while at < ids.len() && ids[at].0 < node {
            at += 1;
        }
        if at < ids.len() && ids[at].0 == node {
            out.push((trace, kind, ids[at].2, node));
        }
    }
    out.sort_unstable();
    out
}

impl Walk {
    /// Bytes held, for the memory pool (an estimate from the capacities).
    fn bytes(&self) -> usize {
        self.nodes.bytes()
            + self.edges.capacity() * std::mem::size_of::<(u32, u32)>()
            + self
                .stats
                .iter()
                .map(|s| s.capacity() * std::mem::size_of::<StatRow>())
                .sum::<usize>()
            + self.root_nodes.capacity() * 4
            + self.roots.iter().map(|r| r.name.len() + 48).sum::<usize>()
    }

    /// Reads one batch of input `which` ([`INPUTS`]' order).
    fn read(&mut self, which: usize, batch: &RecordBatch) -> Result<()> {
        let trace = column(batch, 0, &DataType::Int32)?;
        let trace = trace.as_primitive::<Int32Type>();
        if which == 0 {
            let min = column(batch, 1, &DataType::Int64)?;
            let min = min.as_primitive::<Int64Type>();
            let max = column(batch, 2, &DataType::Int64)?;
            let max = max.as_primitive::<Int64Type>();
            let ids = column(batch, 3, &DataType::Int64)?;
            let ids = ids.as_primitive::<Int64Type>();
            for row in 0..batch.num_rows() {
                if min.is_valid(row) && max.is_valid(row) {
                    self.nodes.add_range(
                        trace.value(row),
                        min.value(row),
                        max.value(row),
                        ids.value(row),
                    );
                }
            }
            return Ok(());
        }
        let event = column(batch, 1, &DataType::Int64)?;
        let event = event.as_primitive::<Int64Type>();
        match which {
            1 => {
                let slot = column(batch, 2, &DataType::Int64)?;
                let slot = slot.as_primitive::<Int64Type>();
                let is_uint = column(batch, 3, &DataType::Boolean)?;
                let is_uint: &BooleanArray = is_uint.as_boolean();
                let int = column(batch, 4, &DataType::Int64)?;
                let int = int.as_primitive::<Int64Type>();
                let uint = column(batch, 5, &DataType::UInt64)?;
                let uint = uint.as_primitive::<UInt64Type>();
                for row in 0..batch.num_rows() {
                    let value = if is_uint.is_valid(row) && is_uint.value(row) {
                        uint.is_valid(row).then(|| uint.value(row))
                    } else {
                        int.is_valid(row).then(|| int.value(row) as u64)
                    };
                    // A NULL value counts for nothing in a `max`.
                    let Some(value) = value else { continue };
                    let t = trace.value(row);
                    let node = self.nodes.node((t, event.value(row)));
                    self.stats[slot.value(row) as usize].push((node, t, value));
                }
            }
            2 | 4 => {
                // (trace, from, to): a parent and its child, a launch and
                // its GPU op.
                let to = column(batch, 2, &DataType::Int64)?;
                let to = to.as_primitive::<Int64Type>();
                for row in 0..batch.num_rows() {
                    let t = trace.value(row);
                    let from = self.nodes.node((t, event.value(row)));
                    let to = self.nodes.node((t, to.value(row)));
                    self.edges.push((from, to));
                }
            }
            3 => {
                self.settle_stats();
                let ts = column(batch, 2, &DataType::Int64)?;
                let ts = ts.as_primitive::<Int64Type>();
                let name = column(batch, 3, &DataType::Utf8)?;
                let name = name.as_string::<i32>();
                for row in 0..batch.num_rows() {
                    let node = self.nodes.node((trace.value(row), event.value(row)));
                    if self.root_nodes.binary_search(&node).is_err() {
                        continue;
                    }
                    let number = value_of(&self.stats[Slot::IterNum as usize], node)
                        .or_else(|| value_of(&self.stats[Slot::StepNum as usize], node));
                    self.roots.push(Root {
                        node,
                        ts_ps: ts.value(row),
                        name: name.value(row).to_string(),
                        number,
                    });
                }
            }
            _ => {
                return Err(DataFusionError::Internal(format!(
                    "event_steps has no input {which}"
                )));
            }
        }
        Ok(())
    }

    /// Each stat reduced to its largest value per event, and the roots
    /// found (once all stats are read).
    fn settle_stats(&mut self) {
        if std::mem::replace(&mut self.settled, true) {
            return;
        }
        for rows in &mut self.stats {
            *rows = largest_per_node(std::mem::take(rows));
        }
        self.root_nodes = self.stats[Slot::Root as usize]
            .iter()
            .filter(|r| r.2 > 0)
            .map(|r| r.0)
            .collect();
    }

    /// Adds the edges from each producer (`_pt`, `_p`) to the other events
    /// consuming it (`_ct`, `_c` the same).
    fn add_context_edges(&mut self) -> Result<()> {
        // The two sorts on two cores (the walk's longest part after
        // reading its inputs).
        let stats = &self.stats;
        let (producers, consumers) = std::thread::scope(|scope| {
            let producers = scope.spawn(|| {
                pairs(
                    &stats[Slot::ProducerType as usize],
                    &stats[Slot::Producer as usize],
                )
            });
            let consumers = pairs(
                &stats[Slot::ConsumerType as usize],
                &stats[Slot::Consumer as usize],
            );
            (producers.join(), consumers)
        });
        let producers = producers.map_err(|_| {
            DataFusionError::Internal("event_steps: the producers' sort panicked".into())
        })?;
        let key = |p: &(i32, u64, u64, u32)| (p.0, p.1, p.2);
        let mut c = 0;
        for p in &producers {
            while c < consumers.len() && key(&consumers[c]) < key(p) {
                c += 1;
            }
            let mut same = c;
            while same < consumers.len() && key(&consumers[same]) == key(p) {
                let consumer = consumers[same].3;
                if consumer != p.3 {
                    self.edges.push((p.3, consumer));
                }
                same += 1;
            }
        }
        Ok(())
    }

    /// The rows of the view.
    fn steps(
        mut self,
        schema: &SchemaRef,
        reservation: &mut MemoryReservation,
    ) -> Result<Vec<RecordBatch>> {
        self.settle_stats();
        self.add_context_edges()?;
        self.stats = Default::default();
        let count = self.nodes.count();
        reservation.try_resize(self.bytes() + count * 13 + self.edges.len() * 4)?;
        // Edges by their first node (compressed rows, by counting).
        let mut first = vec![0u32; count + 1];
        for &(from, _) in &self.edges {
            first[from as usize + 1] += 1;
        }
        for n in 0..count {
            first[n + 1] += first[n];
        }
        let mut next_of = vec![0u32; self.edges.len()];
        {
            let mut fill = first.clone();
            for &(from, to) in &self.edges {
                next_of[fill[from as usize] as usize] = to;
                fill[from as usize] += 1;
            }
        }
        self.edges = Vec::new();
        // One row per root event, first by the view's order.
        let keys: Vec<EventKey> = self.roots.iter().map(|r| self.nodes.key(r.node)).collect();
        let mut order: Vec<usize> = (0..self.roots.len()).collect();
        order.sort_by_key(|&r| {
            (
                keys[r].0,
                self.roots[r].ts_ps,
                keys[r].1,
                self.roots[r].node,
            )
        });
        order.dedup_by_key(|r| self.roots[*r].node);
        const NONE: u32 = u32::MAX;
        // The root (index into `order`) each event is in, and the fewest
        // hops any root walked so far reached it in.
        let mut root_of = vec![NONE; count];
        let mut hops = vec![u8::MAX; count];
        let mut queue = std::collections::VecDeque::new();
        for (rank, &r) in order.iter().enumerate() {
            let start = self.roots[r].node as usize;
            if hops[start] == 0 {
                continue;
            }
            hops[start] = 0;
            if root_of[start] == NONE {
                root_of[start] = rank as u32;
            }
            queue.push_back(start as u32);
            while let Some(node) = queue.pop_front() {
                let at = hops[node as usize];
                if at >= MAX_HOPS {
                    continue;
                }
                let span = first[node as usize] as usize..first[node as usize + 1] as usize;
                for &next in &next_of[span] {
                    let next = next as usize;
                    if at + 1 < hops[next] {
                        hops[next] = at + 1;
                        if root_of[next] == NONE {
                            root_of[next] = rank as u32;
                        }
                        queue.push_back(next as u32);
                    }
                }
            }
        }
        // A root starts a step when no earlier root reached it; steps are
        // numbered from 0 per trace in their roots' order.
        let mut step_of_rank = vec![None; order.len()];
        let mut trace = None;
        let mut number = 0u64;
        for (rank, &r) in order.iter().enumerate() {
            let root = &self.roots[r];
            if root_of[root.node as usize] != rank as u32 {
                continue;
            }
            if trace != Some(keys[r].0) {
                trace = Some(keys[r].0);
                number = 0;
            }
            let name = match root.number {
                Some(n) => format!("{} {n}", root.name),
                None => format!("{} {number}", root.name),
            };
            step_of_rank[rank] = Some((number, keys[r].1, name));
            number += 1;
        }
        let mut out = Vec::new();
        let mut rows = Rows::default();
        for (node, &rank) in root_of.iter().enumerate() {
            if rank == NONE {
                continue;
            }
            let Some((number, root_event, name)) = &step_of_rank[rank as usize] else {
                continue;
            };
            let (trace, event) = self.nodes.key(node as u32);
            rows.push(trace, event, *number, *root_event, name);
            if rows.len() == BATCH_ROWS {
                out.push(rows.finish(schema)?);
            }
        }
        if rows.len() > 0 || out.is_empty() {
            out.push(rows.finish(schema)?);
        }
        Ok(out)
    }
}

/// Output rows being built.
#[derive(Default)]
struct Rows {
    trace: Int32Builder,
    event: Int64Builder,
    step: Decimal128Builder,
    root: Int64Builder,
    name: StringViewBuilder,
}

impl Rows {
    fn push(&mut self, trace: i32, event: i64, step: u64, root: i64, name: &str) {
        self.trace.append_value(trace);
        self.event.append_value(event);
        self.step.append_value(i128::from(step));
        self.root.append_value(root);
        self.name.append_value(name);
    }

    /// Rows pushed since the last batch.
    fn len(&self) -> usize {
        arrow::array::ArrayBuilder::len(&self.trace)
    }

    fn finish(&mut self, schema: &SchemaRef) -> Result<RecordBatch> {
        let step = self.step.finish().with_precision_and_scale(20, 0)?;
        Ok(RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(self.trace.finish()),
                Arc::new(self.event.finish()),
                Arc::new(step),
                Arc::new(self.root.finish()),
                Arc::new(self.name.finish()),
            ],
        )?)
    }
}
