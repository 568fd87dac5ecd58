//! Partial aggregation grouped by dictionary-encoded string columns,
//! hashing each dictionary value once per dictionary instead of every row.
//!
//! Every string column of the profile tables is a dictionary (`name`,
//! `kind`, `key`, …), and DataFusion 55 has no group store for
//! dictionaries: it converts each row to its row format and hashes it, so
//! grouping 47 M events by `name` took 2.1 s of a 2.5 s query
//! (benches/README.md, issue 12). Casting the key to `Utf8View` first
//! does not help: hashing a 70-byte name per row costs as much.
//!
//! [`DictionaryGroupBy`] replaces such a `Partial` [`AggregateExec`] with
//! [`DictionaryPartialAggregateExec`]. For each dictionary key column it
//! keeps a map from dictionary index to a *value id*, filled the first time
//! an index is seen and kept while the batches share their dictionary
//! (Parquet batches of one column chunk do). With one key the value id is
//! the group; with up to [`MAX_KEYS`] keys (dictionaries and integers,
//! e.g. `GROUP BY trace_id, name`) the group is found by hashing the row's
//! few fixed-width codes, never its strings (two codes that fit in 32 bits
//! each: one packed `u64`, and a run of rows with the same pair takes the
//! first row's group without hashing). Two integer keys alone are taken
//! too (`GROUP BY device_id, step_event_id`): DataFusion hashes them as
//! two columns per row. The aggregates are
//! DataFusion's own [`GroupsAccumulator`]s, and the output is the replaced
//! operator's: the group values (as the same types) and each aggregate's
//! partial state, merged by the unchanged `Final` aggregate above. Past
//! [`MAX_GROUPS`] groups the partial state is emitted and started again,
//! which a partial aggregate may do, so memory stays bounded.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, DictionaryArray, Int64Array, RecordBatch, StringArray, UInt64Array,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Int32Type, Int64Type, SchemaRef, UInt64Type};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DataFusionError, Result as DFResult};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{EmitTo, GroupsAccumulator};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_expr::aggregate::AggregateFunctionExpr;
use datafusion::physical_expr::expressions::Column;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::metrics::{BaselineMetrics, ExecutionPlanMetricsSet, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SendableRecordBatchStream,
};
use futures_util::StreamExt;
use xprof_format::hash::FxHashMap;

/// Groups held before the partial state is emitted and started again.
pub const MAX_GROUPS: usize = 1 << 16;

/// The rule as sessions use it ([`MAX_GROUPS`]).
impl Default for DictionaryGroupBy {
    fn default() -> Self {
        Self {
            max_groups: MAX_GROUPS,
        }
    }
}

impl DictionaryGroupBy {
    /// The rule with another limit of groups held at once (at least 1).
    pub fn with_max_groups(max_groups: usize) -> Self {
        Self {
            max_groups: max_groups.max(1),
        }
    }
}

/// The physical rule: replaces each `Partial` aggregate that groups by
/// one to [`MAX_KEYS`] plain columns, at least one of them
/// `Dictionary(Int32, Utf8)` and the others integers, or two integers, with aggregates that
/// all have a [`GroupsAccumulator`] and no `FILTER`, `DISTINCT` or
/// `ORDER BY`, by a [`DictionaryPartialAggregateExec`]. Anything else is
/// left alone.
#[derive(Debug, Clone, Copy)]
pub struct DictionaryGroupBy {
    max_groups: usize,
}

impl PhysicalOptimizerRule for DictionaryGroupBy {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            Ok(
                match DictionaryPartialAggregateExec::replacing(&node, self.max_groups) {
                    Some(exec) => Transformed::yes(Arc::new(exec) as Arc<dyn ExecutionPlan>),
                    None => Transformed::no(node),
                },
            )
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "xprof_dictionary_group_by"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// Most group columns [`DictionaryGroupBy`] takes.
pub const MAX_KEYS: usize = 4;

/// How a group column's values become fixed-width codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    /// `Dictionary(Int32, Utf8)`: the value id of the string.
    Dictionary,
    /// A signed integer, as its `i64` bits.
    Signed,
    /// An unsigned integer, as its `u64` value.
    Unsigned,
}

impl KeyKind {
    fn of(data_type: &DataType) -> Option<Self> {
        match data_type {
            DataType::Dictionary(k, v) if **k == DataType::Int32 && **v == DataType::Utf8 => {
                Some(Self::Dictionary)
            }
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
                Some(Self::Signed)
            }
            DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
                Some(Self::Unsigned)
            }
            _ => None,
        }
    }
}

/// One group column: where it is in the input, and its kind.
#[derive(Debug, Clone)]
struct Key {
    index: usize,
    name: String,
    kind: KeyKind,
}

/// A `Partial` aggregate grouped by dictionary string columns (and
/// integers); see the module docs.
#[derive(Debug, Clone)]
pub struct DictionaryPartialAggregateExec {
    input: Arc<dyn ExecutionPlan>,
    keys: Vec<Key>,
    aggregates: Vec<Arc<AggregateFunctionExpr>>,
    max_groups: usize,
    /// The replaced aggregate's: same schema, partitioning, no ordering.
    properties: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl DictionaryPartialAggregateExec {
    /// The replacement of `plan` if it is an aggregate this can run.
    fn replacing(plan: &Arc<dyn ExecutionPlan>, max_groups: usize) -> Option<Self> {
        let aggregate = plan.downcast_ref::<AggregateExec>()?;
        let group_by = aggregate.group_expr();
        let exact = *aggregate.mode() == AggregateMode::Partial
            && group_by.is_single()
            && (1..=MAX_KEYS).contains(&group_by.expr().len())
            && aggregate.limit_options().is_none()
            && aggregate.filter_expr().iter().all(Option::is_none)
            && aggregate.properties().output_ordering().is_none()
            && aggregate.aggr_expr().iter().all(|a| {
                a.groups_accumulator_supported() && !a.is_distinct() && a.order_bys().is_empty()
            });
        if !exact {
            return None;
        }
        let input = aggregate.input();
        let input_schema = input.schema();
        let output_schema = aggregate.schema();
        let mut keys = Vec::with_capacity(group_by.expr().len());
        for (position, (expr, name)) in group_by.expr().iter().enumerate() {
            let column = expr.downcast_ref::<Column>()?;
            let data_type = input_schema.field(column.index()).data_type();
            // Each group column comes out as the same type.
            if output_schema.field(position).data_type() != data_type {
                return None;
            }
            keys.push(Key {
                index: column.index(),
                name: name.clone(),
                kind: KeyKind::of(data_type)?,
            });
        }
        // Integer keys alone are taken in pairs, which pack into one word
        // (DataFusion hashes two integer columns per row as two columns).
        if keys.len() != 2 && !keys.iter().any(|k| k.kind == KeyKind::Dictionary) {
            return None;
        }
        Some(Self {
            input: Arc::clone(input),
            keys,
            aggregates: aggregate.aggr_expr().to_vec(),
            max_groups,
            properties: Arc::clone(aggregate.properties()),
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }
}

impl DisplayAs for DictionaryPartialAggregateExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let keys: Vec<&str> = self.keys.iter().map(|k| k.name.as_str()).collect();
        let names: Vec<&str> = self.aggregates.iter().map(|a| a.name()).collect();
        write!(
            f,
            "DictionaryPartialAggregateExec: gby=[{}], aggr=[{}]",
            keys.join(", "),
            names.join(", ")
        )
    }
}

impl ExecutionPlan for DictionaryPartialAggregateExec {
    fn name(&self) -> &str {
        "DictionaryPartialAggregateExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DFResult<TreeNodeRecursion>,
    ) -> DFResult<TreeNodeRecursion> {
        for aggregate in &self.aggregates {
            for expr in aggregate.expressions() {
                if f(&expr)? == TreeNodeRecursion::Stop {
                    return Ok(TreeNodeRecursion::Stop);
                }
            }
        }
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return Err(DataFusionError::Internal(
                "DictionaryPartialAggregateExec has one child".into(),
            ));
        }
        Ok(Arc::new(Self {
            input: children.swap_remove(0),
            metrics: ExecutionPlanMetricsSet::new(),
            ..Self::clone(&self)
        }))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let schema = self.schema();
        let groups = Groups::new(
            self.keys.clone(),
            self.aggregates.clone(),
            Arc::clone(&schema),
        )?;
        let max_groups = self.max_groups;
        let metrics = BaselineMetrics::new(&self.metrics, partition);
        // Reads batches until `max_groups` groups (emit them and go on) or
        // the end of the input (emit the rest and stop).
        let output =
            futures_util::stream::unfold(Some((input, groups, metrics)), move |state| async move {
                let (mut input, mut groups, metrics) = state?;
                loop {
                    let batch = match input.next().await {
                        Some(Ok(batch)) => batch,
                        Some(Err(e)) => return Some((Err(e), None)),
                        None => {
                            let out = emit(&mut groups, &metrics);
                            return Some((out, None));
                        }
                    };
                    let timer = metrics.elapsed_compute().timer();
                    if let Err(e) = groups.update(&batch) {
                        return Some((Err(e), None));
                    }
                    timer.done();
                    if groups.len() >= max_groups {
                        let out = emit(&mut groups, &metrics);
                        return Some((out, Some((input, groups, metrics))));
                    }
                }
            });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, output)))
    }
}

fn emit(groups: &mut Groups, metrics: &BaselineMetrics) -> DFResult<RecordBatch> {
    let _timer = metrics.elapsed_compute().timer();
    let batch = groups.emit()?;
    metrics.record_output(batch.num_rows());
    Ok(batch)
}

/// A dictionary index not mapped to a value id yet.
const UNSEEN: u32 = u32::MAX;

/// The value ids of one dictionary group column.
#[derive(Default)]
struct DictionaryValues {
    /// Values by id (`None`: NULL).
    values: Vec<Option<Box<str>>>,
    by_value: FxHashMap<Box<str>, u32>,
    null_id: Option<u32>,
    /// The dictionary `id_of_index` is for, and the map ([`UNSEEN`]:
    /// index not seen yet).
    dictionary: Option<ArrayRef>,
    id_of_index: Vec<u32>,
}

impl DictionaryValues {
    fn id_of(&mut self, value: Option<&str>) -> u32 {
        match value {
            None => *self.null_id.get_or_insert_with(|| {
                self.values.push(None);
                (self.values.len() - 1) as u32
            }),
            Some(v) => {
                if let Some(&id) = self.by_value.get(v) {
                    return id;
                }
                let id = self.values.len() as u32;
                self.values.push(Some(v.into()));
                self.by_value.insert(v.into(), id);
                id
            }
        }
    }

    /// Hands `each` the value id of each row of `column`, in order.
    fn ids(&mut self, column: &DictionaryArray<Int32Type>, mut each: impl FnMut(u32)) {
        let dictionary = column.values();
        if !self
            .dictionary
            .as_ref()
            .is_some_and(|d| Arc::ptr_eq(d, dictionary))
        {
            self.dictionary = Some(Arc::clone(dictionary));
            self.id_of_index.clear();
            self.id_of_index.resize(dictionary.len(), UNSEEN);
        }
        let strings: &StringArray = dictionary.as_string();
        let indices = column.keys().values();
        for (row, &index) in indices.iter().enumerate() {
            let id = if column.is_null(row) {
                self.id_of(None)
            } else {
                let index = index as usize;
                match self.id_of_index[index] {
                    UNSEEN => {
                        let value = strings.is_valid(index).then(|| strings.value(index));
                        let id = self.id_of(value);
                        self.id_of_index[index] = id;
                        id
                    }
                    id => id,
                }
            };
            each(id);
        }
    }

    fn strings(&self, ids: impl Iterator<Item = u32>) -> StringArray {
        ids.map(|id| self.values[id as usize].as_deref()).collect()
    }

    fn clear(&mut self) {
        self.values.clear();
        self.by_value.clear();
        self.null_id = None;
        self.dictionary = None;
    }
}

/// A group's key with several columns: each column's code (value id, or
/// integer bits), then a word whose bit `i` says column `i` is NULL.
type Codes = [u64; MAX_KEYS + 1];

/// The state of one partition: groups seen and their accumulators.
struct Groups {
    keys: Vec<Key>,
    aggregates: Vec<Arc<AggregateFunctionExpr>>,
    accumulators: Vec<Box<dyn GroupsAccumulator>>,
    schema: SchemaRef,
    /// Per key column: the value ids of a dictionary column (`None` for
    /// an integer column).
    dictionaries: Vec<Option<DictionaryValues>>,
    /// With one key the groups are its value ids; with several, each
    /// group's codes and the map from codes to group.
    group_codes: Vec<Codes>,
    group_of_codes: FxHashMap<Codes, usize>,
    /// Two keys whose codes of a batch all fit in 32 bits, no NULLs: the
    /// group of the codes packed into one `u64`, hashed as one word. A
    /// group reached through both maps is two groups of the partial
    /// state, which the `Final` aggregate merges, as it does the groups
    /// emitted early.
    group_of_pair: FxHashMap<u64, usize>,
    /// Per batch: the codes of each key column, and each row's group.
    column_codes: Vec<Vec<u64>>,
    group_indices: Vec<usize>,
}

impl Groups {
    fn new(
        keys: Vec<Key>,
        aggregates: Vec<Arc<AggregateFunctionExpr>>,
        schema: SchemaRef,
    ) -> DFResult<Self> {
        let accumulators = aggregates
            .iter()
            .map(|a| a.create_groups_accumulator())
            .collect::<DFResult<_>>()?;
        let dictionaries = keys
            .iter()
            .map(|k| (k.kind == KeyKind::Dictionary).then(DictionaryValues::default))
            .collect();
        Ok(Self {
            column_codes: vec![Vec::new(); keys.len()],
            keys,
            aggregates,
            accumulators,
            schema,
            dictionaries,
            group_codes: Vec::new(),
            group_of_codes: FxHashMap::default(),
            group_of_pair: FxHashMap::default(),
            group_indices: Vec::new(),
        })
    }

    /// Whether the groups are the value ids of the one (dictionary) key.
    fn single_key(&self) -> bool {
        self.keys.len() == 1
    }

    fn len(&self) -> usize {
        match &self.dictionaries[..] {
            [Some(only)] => only.values.len(),
            _ => self.group_codes.len(),
        }
    }

    fn update(&mut self, batch: &RecordBatch) -> DFResult<()> {
        if self.single_key() {
            let column: &DictionaryArray<Int32Type> =
                batch.column(self.keys[0].index).as_dictionary();
            let only = self.dictionaries[0]
                .as_mut()
                .expect("a single key is a dictionary");
            let group_indices = &mut self.group_indices;
            group_indices.clear();
            group_indices.reserve(column.len());
            only.ids(column, |id| group_indices.push(id as usize));
        } else {
            self.update_codes(batch)?;
        }
        let total_groups = self.len();
        for (aggregate, accumulator) in self.aggregates.iter().zip(&mut self.accumulators) {
            let arguments = aggregate
                .expressions()
                .iter()
                .map(|e| e.evaluate(batch)?.into_array(batch.num_rows()))
                .collect::<DFResult<Vec<_>>>()?;
            accumulator.update_batch(&arguments, &self.group_indices, None, total_groups)?;
        }
        Ok(())
    }

    /// Several keys: each row's codes, then its group by hashing them.
    fn update_codes(&mut self, batch: &RecordBatch) -> DFResult<()> {
        let rows = batch.num_rows();
        let mut nulls: Vec<Option<NullBuffer>> = Vec::with_capacity(self.keys.len());
        for (position, key) in self.keys.iter().enumerate() {
            let column = batch.column(key.index);
            let codes = &mut self.column_codes[position];
            codes.clear();
            match key.kind {
                KeyKind::Dictionary => {
                    let values = self.dictionaries[position]
                        .as_mut()
                        .expect("a dictionary key has value ids");
                    values.ids(column.as_dictionary(), |id| codes.push(u64::from(id)));
                    // NULL is one of the value ids.
                    nulls.push(None);
                }
                KeyKind::Signed => {
                    let wide = arrow::compute::cast(column, &DataType::Int64)?;
                    let wide = wide.as_primitive::<Int64Type>();
                    codes.extend(wide.values().iter().map(|&v| v as u64));
                    nulls.push(wide.nulls().cloned());
                }
                KeyKind::Unsigned => {
                    let wide = arrow::compute::cast(column, &DataType::UInt64)?;
                    let wide = wide.as_primitive::<UInt64Type>();
                    codes.extend_from_slice(wide.values());
                    nulls.push(wide.nulls().cloned());
                }
            }
        }
        self.group_indices.clear();
        self.group_indices.reserve(rows);
        if let [first, second] = &self.column_codes[..]
            && nulls
                .iter()
                .all(|n| n.as_ref().is_none_or(|n| n.null_count() == 0))
            && first
                .iter()
                .chain(second)
                .all(|c| *c <= u64::from(u32::MAX))
        {
            // Rows of one group come in runs where the input is sorted by
            // the keys or by what they follow (a track's ops of one step):
            // a run reuses its first row's group without hashing.
            let mut last: Option<(u64, usize)> = None;
            for (&a, &b) in first.iter().zip(second) {
                let pair = a << 32 | b;
                let group = match last {
                    Some((last_pair, group)) if last_pair == pair => group,
                    _ => {
                        let next = self.group_codes.len();
                        let group = *self.group_of_pair.entry(pair).or_insert(next);
                        if group == next {
                            let mut codes: Codes = [0; MAX_KEYS + 1];
                            codes[0] = a;
                            codes[1] = b;
                            self.group_codes.push(codes);
                        }
                        last = Some((pair, group));
                        group
                    }
                };
                self.group_indices.push(group);
            }
            return Ok(());
        }
        for row in 0..rows {
            let mut codes: Codes = [0; MAX_KEYS + 1];
            for (position, column) in self.column_codes.iter().enumerate() {
                if nulls[position].as_ref().is_some_and(|n| n.is_null(row)) {
                    codes[MAX_KEYS] |= 1 << position;
                } else {
                    codes[position] = column[row];
                }
            }
            let next = self.group_codes.len();
            let group = *self.group_of_codes.entry(codes).or_insert(next);
            if group == next {
                self.group_codes.push(codes);
            }
            self.group_indices.push(group);
        }
        Ok(())
    }

    /// The group values of key column `position`, as its output type.
    fn key_array(&self, position: usize) -> DFResult<ArrayRef> {
        let output_type = self.schema.field(position).data_type();
        let codes = self.group_codes.iter();
        let is_null = |c: &Codes| c[MAX_KEYS] & (1 << position) != 0;
        let array: ArrayRef = match (&self.dictionaries[position], self.keys[position].kind) {
            (Some(only), _) if self.single_key() => {
                Arc::new(only.strings(0..only.values.len() as u32))
            }
            (Some(values), _) => Arc::new(values.strings(codes.map(|c| c[position] as u32))),
            (None, KeyKind::Unsigned) => Arc::new(
                codes
                    .map(|c| (!is_null(c)).then_some(c[position]))
                    .collect::<UInt64Array>(),
            ),
            (None, _) => Arc::new(
                codes
                    .map(|c| (!is_null(c)).then_some(c[position] as i64))
                    .collect::<Int64Array>(),
            ),
        };
        Ok(arrow::compute::cast(&array, output_type)?)
    }

    /// The partial state of every group so far, and a fresh start.
    fn emit(&mut self) -> DFResult<RecordBatch> {
        let mut columns: Vec<ArrayRef> = (0..self.keys.len())
            .map(|position| self.key_array(position))
            .collect::<DFResult<_>>()?;
        for accumulator in &mut self.accumulators {
            columns.extend(accumulator.state(EmitTo::All)?);
        }
        for values in self.dictionaries.iter_mut().flatten() {
            values.clear();
        }
        self.group_codes.clear();
        self.group_of_codes.clear();
        self.group_of_pair.clear();
        Ok(RecordBatch::try_new(Arc::clone(&self.schema), columns)?)
    }
}
