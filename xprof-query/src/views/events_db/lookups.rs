//! What the rows look up, read once from the small inputs: the events'
//! dense numbering, the stats, the steps and step roots, the nested time
//! of TPU ops, the HLO instructions of GPU kernels and the step and
//! module names of TPU ops.

use std::fmt;
use std::sync::Arc;

use arrow::array::{Array, AsArray, BooleanArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Int32Type, Int64Type, UInt64Type};
use datafusion::common::runtime::SpawnedTask;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::physical_plan::{ExecutionPlan, execute_stream};
use futures_util::StreamExt as _;
use xprof_format::hash::FxHashMap;

use crate::views::nodes::{EventKey, Nodes};

use super::columns::NeededParts;
use super::inputs::{Input, Parser, StringIds, column, opt_str, strings};
use super::stat_values::{KeyInfo, MetadataStat, Stat};

/// An HLO instruction a GPU kernel runs (the SQL's `i` and `os`).
pub(super) struct Instruction {
    pub(super) tf_op: Option<String>,
    pub(super) output_tensor: Option<String>,
    pub(super) input_tensors: Option<Vec<Option<String>>>,
}

/// Everything the rows look up, read once from the small inputs.
pub(super) struct Lookups {
    pub(super) nodes: Nodes,
    pub(super) keys: StringIds,
    pub(super) key_info: Vec<KeyInfo>,
    pub(super) strs: StringIds,
    /// The events' own stats, by node ([`Lookups::own_stats`]).
    pub(super) stats: Vec<Stat>,
    /// Where each node's stats start in `stats` (one more than nodes).
    pub(super) stats_at: Vec<u32>,
    /// The own `flow` stats' uint readings, by node (sorted).
    pub(super) flows: Vec<(u32, u64)>,
    /// Stats of each (trace, device, metadata id).
    pub(super) metadata: FxHashMap<(i32, i32, i64), Vec<MetadataStat>>,
    pub(super) steps: Steps,
    /// Time of the ops nested in each TPU op (the SQL's `nested`).
    pub(super) nested: FxHashMap<EventKey, i64>,
    /// By (trace, program id), then instruction name.
    pub(super) instructions: FxHashMap<(i32, u64), FxHashMap<String, Vec<Instruction>>>,
    pub(super) names: FxHashMap<EventKey, String>,
    pub(super) need: NeededParts,
    /// What `bytes` estimates, held in the session's memory pool.
    pub(super) reservation: MemoryReservation,
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
    pub(super) async fn read(
        inputs: Vec<Arc<dyn ExecutionPlan>>,
        need: NeededParts,
        context: Arc<TaskContext>,
    ) -> Result<Arc<Self>> {
        let mut me = Self {
            nodes: Nodes::default(),
            keys: StringIds::default(),
            key_info: Vec::new(),
            strs: StringIds::default(),
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
        let mut types = StringIds::default();
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
    pub(super) fn reserve(&mut self) -> Result<()> {
        let bytes = self.bytes();
        self.reservation.try_resize(bytes)
    }

    /// Bytes held, for the memory pool (an estimate from the capacities).
    pub(super) fn bytes(&self) -> usize {
        self.nodes.bytes()
            + self.stats.capacity() * std::mem::size_of::<Stat>()
            + self.stats_at.capacity() * 4
            + self.flows.capacity() * 16
            + self.steps.bytes()
            + self.keys.bytes
            + self.strs.bytes
            + self.metadata.len() * 64
    }

    pub(super) fn read_instructions(&mut self, batch: &RecordBatch) -> Result<()> {
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
}

/// The steps of `event_steps` and the step roots' names (the SQL's `st`
/// and `step_roots`).
#[derive(Default)]
pub(super) struct Steps {
    pub(super) names: StringIds,
    /// Each dense node's step (index into `names`), `u32::MAX` for none.
    pub(super) dense: Vec<u32>,
    /// The steps of events outside the dense ranges.
    pub(super) extra: FxHashMap<EventKey, u32>,
    /// Each step root's `max(step_name)`.
    pub(super) roots: FxHashMap<EventKey, u32>,
}

impl Steps {
    /// Reads `plan` (the `event_steps` view's rows), numbering events by
    /// `nodes` (its dense ranges).
    pub(super) async fn read(
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
    pub(super) fn step(&self, node: Option<u32>, key: EventKey) -> Option<&str> {
        let id = match node.and_then(|n| self.dense.get(n as usize)) {
            Some(&id) => id,
            None => *self.extra.get(&key)?,
        };
        (id != u32::MAX).then(|| self.names.get(id))
    }

    /// The name a step root's stats get (`step_roots.step_name`).
    pub(super) fn root(&self, key: EventKey) -> Option<&str> {
        self.roots.get(&key).map(|&id| self.names.get(id))
    }

    pub(super) fn bytes(&self) -> usize {
        self.dense.capacity() * 4 + self.names.bytes + (self.extra.len() + self.roots.len()) * 24
    }
}
