//! Partial aggregation grouped by one dictionary-encoded string column,
//! hashing each dictionary value once instead of every row.
//!
//! Every string column of the profile tables is a dictionary (`name`,
//! `kind`, `key`, …), and DataFusion 55 has no group store for
//! dictionaries: it converts each row to its row format and hashes it, so
//! grouping 47 M events by `name` took 2.1 s of a 2.5 s query
//! (benches/README.md, issue 12). Casting the key to `Utf8View` first
//! does not help: hashing a 70-byte name per row costs as much.
//!
//! [`DictionaryGroupBy`] replaces such a `Partial` [`AggregateExec`] with
//! [`DictionaryPartialAggregateExec`], which keeps, per batch, a map from
//! dictionary index to group, filled the first time an index is seen and
//! kept while the batches share their dictionary (Parquet batches of one
//! column chunk do). Rows then find their group with one array lookup; the
//! aggregates are DataFusion's own [`GroupsAccumulator`]s, and the output
//! is the replaced operator's: the group values (as the same dictionary
//! type) and each aggregate's partial state, merged by the unchanged
//! `Final` aggregate above. Past [`MAX_GROUPS`] groups the partial state
//! is emitted and started again, which a partial aggregate may do, so
//! memory stays bounded.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, DictionaryArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Int32Type, SchemaRef};
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

/// The physical rule: replaces each `Partial` aggregate that groups by one
/// `Dictionary(Int32, Utf8)` column, with aggregates that all have a
/// [`GroupsAccumulator`] and no `FILTER`, `DISTINCT` or `ORDER BY`, by a
/// [`DictionaryPartialAggregateExec`]. Anything else is left alone.
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

/// A `Partial` aggregate grouped by one dictionary string column; see the
/// module docs.
#[derive(Debug, Clone)]
pub struct DictionaryPartialAggregateExec {
    input: Arc<dyn ExecutionPlan>,
    /// The group column's index in the input.
    key_index: usize,
    key_name: String,
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
            && group_by.expr().len() == 1
            && aggregate.limit_options().is_none()
            && aggregate.filter_expr().iter().all(Option::is_none)
            && aggregate.properties().output_ordering().is_none()
            && aggregate.aggr_expr().iter().all(|a| {
                a.groups_accumulator_supported() && !a.is_distinct() && a.order_bys().is_empty()
            });
        if !exact {
            return None;
        }
        let (key_expr, key_name) = &group_by.expr()[0];
        let column = key_expr.downcast_ref::<Column>()?;
        let input = aggregate.input();
        let key_type = input.schema().field(column.index()).data_type().clone();
        let key_is_dictionary = matches!(&key_type, DataType::Dictionary(k, v)
            if **k == DataType::Int32 && **v == DataType::Utf8);
        // The group column comes out as the same type.
        if !key_is_dictionary || aggregate.schema().field(0).data_type() != &key_type {
            return None;
        }
        Some(Self {
            input: Arc::clone(input),
            key_index: column.index(),
            key_name: key_name.clone(),
            aggregates: aggregate.aggr_expr().to_vec(),
            max_groups,
            properties: Arc::clone(aggregate.properties()),
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }
}

impl DisplayAs for DictionaryPartialAggregateExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let names: Vec<&str> = self.aggregates.iter().map(|a| a.name()).collect();
        write!(
            f,
            "DictionaryPartialAggregateExec: gby=[{}], aggr=[{}]",
            self.key_name,
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
        let groups = Groups::new(self.aggregates.clone(), Arc::clone(&schema))?;
        let key_index = self.key_index;
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
                    if let Err(e) = groups.update(&batch, key_index) {
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

/// The state of one partition: groups seen and their accumulators.
struct Groups {
    aggregates: Vec<Arc<AggregateFunctionExpr>>,
    accumulators: Vec<Box<dyn GroupsAccumulator>>,
    schema: SchemaRef,
    /// Group values in group-index order (`None`: the NULL group).
    values: Vec<Option<Box<str>>>,
    by_value: HashMap<Box<str>, usize>,
    null_group: Option<usize>,
    /// The dictionary the index map is for, and the map (`usize::MAX`:
    /// index not seen yet).
    dictionary: Option<ArrayRef>,
    group_of_index: Vec<usize>,
    group_indices: Vec<usize>,
}

impl Groups {
    fn new(aggregates: Vec<Arc<AggregateFunctionExpr>>, schema: SchemaRef) -> DFResult<Self> {
        let accumulators = aggregates
            .iter()
            .map(|a| a.create_groups_accumulator())
            .collect::<DFResult<_>>()?;
        Ok(Self {
            aggregates,
            accumulators,
            schema,
            values: Vec::new(),
            by_value: HashMap::new(),
            null_group: None,
            dictionary: None,
            group_of_index: Vec::new(),
            group_indices: Vec::new(),
        })
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    fn group_of(&mut self, value: Option<&str>) -> usize {
        match value {
            None => *self.null_group.get_or_insert_with(|| {
                self.values.push(None);
                self.values.len() - 1
            }),
            Some(v) => {
                if let Some(&g) = self.by_value.get(v) {
                    return g;
                }
                let g = self.values.len();
                self.values.push(Some(v.into()));
                self.by_value.insert(v.into(), g);
                g
            }
        }
    }

    fn update(&mut self, batch: &RecordBatch, key_index: usize) -> DFResult<()> {
        let keys: &DictionaryArray<Int32Type> = batch.column(key_index).as_dictionary();
        let dictionary = keys.values();
        if !self
            .dictionary
            .as_ref()
            .is_some_and(|d| Arc::ptr_eq(d, dictionary))
        {
            self.dictionary = Some(Arc::clone(dictionary));
            self.group_of_index.clear();
            self.group_of_index.resize(dictionary.len(), usize::MAX);
        }
        let strings: &StringArray = dictionary.as_string();
        self.group_indices.clear();
        self.group_indices.reserve(keys.len());
        for row in 0..keys.len() {
            let group = if keys.is_null(row) {
                self.group_of(None)
            } else {
                let index = keys.keys().value(row) as usize;
                match self.group_of_index[index] {
                    usize::MAX => {
                        let value = strings.is_valid(index).then(|| strings.value(index));
                        let group = self.group_of(value);
                        self.group_of_index[index] = group;
                        group
                    }
                    group => group,
                }
            };
            self.group_indices.push(group);
        }
        let total_groups = self.values.len();
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

    /// The partial state of every group so far, and a fresh start.
    fn emit(&mut self) -> DFResult<RecordBatch> {
        let values: StringArray = self.values.iter().map(|v| v.as_deref()).collect();
        let mut columns: Vec<ArrayRef> = vec![arrow::compute::cast(
            &values,
            self.schema.field(0).data_type(),
        )?];
        for accumulator in &mut self.accumulators {
            columns.extend(accumulator.state(EmitTo::All)?);
        }
        self.values.clear();
        self.by_value.clear();
        self.null_group = None;
        self.dictionary = None;
        Ok(RecordBatch::try_new(Arc::clone(&self.schema), columns)?)
    }
}
