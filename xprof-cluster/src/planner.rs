//! Planning on the client: the query planner of a cluster session.
//!
//! Ballista's own client sends a logical plan, and its scheduler optimizes
//! and plans it again. For this project's deeper views (joins of CTEs,
//! windows, unions over tables with declared sort orders) the scheduler's
//! physical planning under Ballista's settings took minutes where this
//! process plans the same query in milliseconds. So a cluster session
//! plans here, with DataFusion's planner and physical rules, and sends the
//! physical plan (`crate::job`, Ballista's job submission with cancellation):
//! the scheduler only cuts it into stages at its exchanges and hands the
//! tasks to executors.
//!
//! What stays here: `EXPLAIN` (the plan that would be sent, under a
//! [`ClusterExec`] node), plans that read no table of the warehouse
//! (`information_schema`, `VALUES`, in-memory tables: nothing for an
//! executor to read), and recursive queries (`WITH RECURSIVE`, which the
//! `event_steps` and `events_db` views use): Ballista has no way to run
//! their loop, so this process runs them, reading the warehouse at the
//! same path. So does a query with a window function `IGNORE NULLS`
//! (`last_value(x) IGNORE NULLS OVER …`): datafusion-proto 55 loses the
//! option when it encodes the plan, and the executors would answer
//! without it.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::execution::context::QueryPlanner;
use datafusion::logical_expr::{LogicalPlan, PlanType, StringifiedPlan};
use datafusion::physical_expr::{
    Distribution, EquivalenceProperties, LexOrdering, OrderingRequirements, PhysicalExpr,
};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::explain::ExplainExec;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream, displayable, replace_children_if_necessary,
};
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner as _};
use datafusion::prelude::SessionConfig;
use futures_util::{StreamExt as _, TryStreamExt as _};

/// Plans every query in this process and runs those that read files on
/// the scheduler at `scheduler_url` (`http://HOST:PORT`).
#[derive(Debug)]
pub(crate) struct ClientPlanner {
    scheduler_url: String,
}

impl ClientPlanner {
    pub(crate) fn new(scheduler_url: String) -> Self {
        Self { scheduler_url }
    }

    /// The physical plan of `plan`, planned here, and run on the cluster
    /// when it reads any file.
    async fn plan(
        &self,
        plan: &LogicalPlan,
        session: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let local = DefaultPhysicalPlanner::default()
            .create_physical_plan(plan, session)
            .await?;
        // Nothing for executors to read, or a recursive query (`WITH
        // RECURSIVE`, the `event_steps` walk, or the `events_db` pass),
        // which Ballista cannot run (the loop lives in one
        // process, and datafusion-proto 55 has no encoding for it): here.
        // A window function with `IGNORE NULLS`, whose option
        // datafusion-proto 55 loses when it encodes the plan (the executors
        // would answer without it): here too.
        if !any_node(local.as_ref(), &reads_files)
            || any_node(local.as_ref(), &is_recursive)
            || ignores_nulls_in_a_window(plan)?
        {
            return Ok(local);
        }
        let local = yield_after_joins(sort_above_joins(local)?)?;
        Ok(Arc::new(ClusterExec::new(
            self.scheduler_url.clone(),
            local,
            session.session_id().to_string(),
            session.config().clone(),
        )))
    }
}

#[async_trait::async_trait]
impl QueryPlanner for ClientPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match logical_plan {
            LogicalPlan::Explain(explain) => {
                // What `EXPLAIN` shows is the plan that would be sent.
                let plan = self.plan(&explain.plan, session).await?;
                let mut plans = explain.stringified_plans.clone();
                plans.push(StringifiedPlan::new(
                    PlanType::FinalPhysicalPlan,
                    displayable(plan.as_ref())
                        .set_show_schema(explain.verbose)
                        .indent(explain.verbose)
                        .to_string(),
                ));
                Ok(Arc::new(ExplainExec::new(
                    Arc::clone(explain.schema.inner()),
                    plans,
                    explain.verbose,
                )))
            }
            LogicalPlan::Analyze(_) => Err(DataFusionError::NotImplemented(
                "EXPLAIN ANALYZE on a cluster: the metrics stay on the executors; use EXPLAIN, or run it without --cluster".into(),
            )),
            _ => self.plan(logical_plan, session).await,
        }
    }
}

/// Whether `node` reads files (a Parquet scan).
fn reads_files(node: &dyn ExecutionPlan) -> bool {
    node.downcast_ref::<datafusion::datasource::source::DataSourceExec>()
        .is_some_and(|source| {
            source
                .data_source()
                .downcast_ref::<datafusion::datasource::physical_plan::FileScanConfig>()
                .is_some()
        })
}

/// Whether `node` is the loop of a recursive query, or a native view's
/// provider run in one process: the walk that computes `event_steps`, or
/// the pass that computes `events_db` (their input queries run inside them).
fn is_recursive(node: &dyn ExecutionPlan) -> bool {
    node.is::<datafusion::physical_plan::recursive_query::RecursiveQueryExec>()
        || xprof_query::views::is_native_view_plan(node)
}

/// Whether `plan` (its subqueries included) has a window function with
/// `IGNORE NULLS`.
fn ignores_nulls_in_a_window(plan: &LogicalPlan) -> Result<bool> {
    use datafusion::common::tree_node::TreeNode as _;
    use datafusion::logical_expr::{Expr, expr::NullTreatment};
    let mut found = false;
    plan.apply_with_subqueries(|node| {
        node.apply_expressions(|expr| {
            expr.apply(|e| {
                if let Expr::WindowFunction(window) = e
                    && window.params.null_treatment == Some(NullTreatment::IgnoreNulls)
                {
                    found = true;
                    return Ok(TreeNodeRecursion::Stop);
                }
                Ok(TreeNodeRecursion::Continue)
            })
        })
    })?;
    Ok(found)
}

/// `plan` with every order its operators need sorted above the joins
/// whose inputs it came through.
///
/// DataFusion's rules satisfy an order wherever the plan has it: an
/// `ORDER BY` over a join becomes a sort of the join's probe side (a hash
/// join keeps its probe side's order), and the merge above the join
/// (`SortPreservingMergeExec`) merges the join's sorted partitions. Ballista
/// re-plans hash joins after that, without looking at orders: its
/// scheduler turns a `CollectLeft` join it will not broadcast into a
/// partitioned one, shuffling both sides by the join key (the probe side's
/// sorted partitions are then read one after the other into each hash
/// partition), promotes a small partitioned join to a broadcast one with
/// its sides swapped, and swaps a join's sides again when it resolves a
/// stage (`JoinSelection`, on the sizes of the shuffled inputs). The merge
/// above then merges partitions that are no longer sorted: on two
/// executors over two runs, `ORDER BY hlo_op, occurrences` over
/// `hlo_stats` came back as the two runs' sorted rows, one run after the
/// other (issue 59, item 8).
///
/// Joins re-planned that way also lose the partitioning an operator above
/// needed: a window `PARTITION BY trace_id` over a join the scheduler
/// shuffled by `(trace_id, program_id)` numbered each program's rows on
/// their own (`op_profile`'s `node_order` at a broadcast threshold of 0,
/// issue 59 §8); a grouped aggregate would split its groups the same way.
/// So an operator that needs its input partitioned by some keys, and has
/// that partitioning only through a join below, gets its input shuffled
/// again by those keys (and then sorted, if it needs an order).
///
/// So before the plan is sent, each operator with a required input order
/// (a merge, a window, a sort-merge join, a sorted aggregate) whose input
/// takes its order from below a join gets a sort of its own input, above
/// the join and after any exchange Ballista may add there; and so does the
/// answer itself when its order comes from below a join. A plan whose
/// orders come from sorts above its joins, or from the sorted Parquet
/// files, is sent as planned.
fn sort_above_joins(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    use datafusion::common::tree_node::{Transformed, TreeNode as _};
    let plan = plan
        .transform_up(|node| {
            let children = node.children();
            let required = node.required_input_ordering();
            let mut changed = false;
            let mut new_children = Vec::with_capacity(children.len());
            let distributions = node.input_distribution_requirements().into_per_child();
            let is_join = is_join(node.as_ref());
            for ((child, required), distribution) in
                children.into_iter().zip(required).zip(distributions)
            {
                let mut child = Arc::clone(child);
                // A partitioning by keys that the child has only through a
                // join below it: shuffled again by those keys here (and
                // sorted again after, below, if an order is required).
                let mut reshuffled = false;
                // (DataFusion 55's operators may still name it by its
                // old name.)
                #[allow(deprecated)]
                let keys = match distribution {
                    Distribution::KeyPartitioned(keys) | Distribution::HashPartitioned(keys) => {
                        Some(keys)
                    }
                    _ => None,
                };
                if let Some(keys) = keys
                    && !is_join
                    && partitioned_through_a_join(&child)
                {
                    let partitions = child.properties().output_partitioning().partition_count();
                    child = Arc::new(RepartitionExec::try_new(
                        child,
                        Partitioning::Hash(keys, partitions),
                    )?);
                    changed = true;
                    reshuffled = true;
                }
                new_children.push(match required {
                    Some(OrderingRequirements::Hard(orders))
                        if reshuffled || ordered_through_a_join(&child) =>
                    {
                        changed = true;
                        let order = LexOrdering::from(orders[0].clone());
                        sorted(order, child)
                    }
                    _ => child,
                });
            }
            Ok(if changed {
                Transformed::yes(replace_children_if_necessary(node, new_children)?)
            } else {
                Transformed::no(node)
            })
        })?
        .data;
    // The answer's own order (an `ORDER BY` of one partition has no merge
    // above it to require it).
    match plan.properties().output_ordering() {
        Some(order) if ordered_through_a_join(&plan) => Ok(sorted(order.clone(), plan)),
        _ => Ok(plan),
    }
}

/// `plan` with each join's output made cooperative ([`CooperativeExec`]):
/// every batch it yields spends the task's Tokio budget, so the task
/// returns to the executor's runtime every 128 batches.
///
/// DataFusion makes a plan's leaves cooperative (the scans), but a join
/// that multiplies rows in memory (a cross join, a nested-loop join)
/// produces batches for as long as it likes after its inputs are read,
/// and an aggregate above it consumes them in one poll. Such a task never
/// yields: a cancelled job's task (`crate::cancel`) went on to its end.
fn yield_after_joins(plan: Arc<dyn ExecutionPlan>) -> Result<Arc<dyn ExecutionPlan>> {
    use datafusion::common::tree_node::{Transformed, TreeNode as _};
    use datafusion::physical_plan::coop::CooperativeExec;
    Ok(plan
        .transform_up(|node| {
            Ok(if is_join(node.as_ref()) {
                Transformed::yes(Arc::new(CooperativeExec::new(node)) as Arc<dyn ExecutionPlan>)
            } else {
                Transformed::no(node)
            })
        })?
        .data)
}

/// `input` sorted by `order`, each of its partitions.
fn sorted(order: LexOrdering, input: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
    let partitions = input.properties().output_partitioning().partition_count();
    Arc::new(SortExec::new(order, input).with_preserve_partitioning(partitions > 1))
}

/// Whether `node` is a join (of any kind Ballista may re-plan).
fn is_join(node: &dyn ExecutionPlan) -> bool {
    use datafusion::physical_plan::joins::{
        CrossJoinExec, HashJoinExec, NestedLoopJoinExec, SortMergeJoinExec,
    };
    node.is::<HashJoinExec>()
        || node.is::<CrossJoinExec>()
        || node.is::<NestedLoopJoinExec>()
        || node.is::<SortMergeJoinExec>()
}

/// Whether the partitioning of `plan`'s rows may come from a join: a join
/// reached from `plan` through operators of one input that keep its
/// partitions, before any repartition or merge.
fn partitioned_through_a_join(plan: &Arc<dyn ExecutionPlan>) -> bool {
    use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
    use datafusion::physical_plan::sorts::sort_preserving_merge::SortPreservingMergeExec;
    if is_join(plan.as_ref()) {
        return true;
    }
    if plan.is::<RepartitionExec>()
        || plan.is::<CoalescePartitionsExec>()
        || plan.is::<SortPreservingMergeExec>()
    {
        return false;
    }
    match plan.children().as_slice() {
        [child] => {
            child.properties().output_partitioning().partition_count()
                == plan.properties().output_partitioning().partition_count()
                && partitioned_through_a_join(child)
        }
        _ => false,
    }
}

/// Whether the order of `plan`'s rows may come from below a join: a join
/// reached from `plan` through operators that keep their input's order,
/// before any sort.
fn ordered_through_a_join(plan: &Arc<dyn ExecutionPlan>) -> bool {
    use datafusion::physical_plan::joins::{CrossJoinExec, HashJoinExec, NestedLoopJoinExec};
    if plan.is::<SortExec>() {
        return false;
    }
    if plan.is::<HashJoinExec>() || plan.is::<CrossJoinExec>() || plan.is::<NestedLoopJoinExec>() {
        return true;
    }
    plan.children()
        .into_iter()
        .zip(plan.maintains_input_order())
        .any(|(child, keeps)| keeps && ordered_through_a_join(child))
}

/// Whether `found` holds for `plan` or any node below it.
fn any_node(plan: &dyn ExecutionPlan, found: &dyn Fn(&dyn ExecutionPlan) -> bool) -> bool {
    found(plan)
        || plan
            .children()
            .into_iter()
            .any(|c| any_node(c.as_ref(), found))
}

/// A physical plan planned on the client and run on a Ballista cluster:
/// one output partition, the batches of the plan's last stage.
#[derive(Debug)]
pub struct ClusterExec {
    scheduler_url: String,
    plan: Arc<dyn ExecutionPlan>,
    session_id: String,
    config: SessionConfig,
    properties: Arc<PlanProperties>,
}

impl ClusterExec {
    fn new(
        scheduler_url: String,
        plan: Arc<dyn ExecutionPlan>,
        session_id: String,
        config: SessionConfig,
    ) -> Self {
        let schema = plan.schema();
        let properties = PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Self {
            scheduler_url,
            plan,
            session_id,
            config,
            properties: Arc::new(properties),
        }
    }
}

impl DisplayAs for ClusterExec {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "ClusterExec: scheduler={}", self.scheduler_url)
    }
}

impl ExecutionPlan for ClusterExec {
    fn name(&self) -> &str {
        "ClusterExec"
    }
    fn apply_expressions(
        &self,
        _: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }
    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }
    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        // Shown by EXPLAIN, not run here: `execute` sends it.
        vec![&self.plan]
    }
    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let [plan] = <[_; 1]>::try_from(children)
            .map_err(|_| DataFusionError::Internal("ClusterExec has one child".into()))?;
        Ok(Arc::new(Self::new(
            self.scheduler_url.clone(),
            plan,
            self.session_id.clone(),
            self.config.clone(),
        )))
    }
    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!(
                "ClusterExec has one partition, not {partition}"
            )));
        }
        let schema: SchemaRef = self.plan.schema();
        let (url, plan, session_id, config) = (
            self.scheduler_url.clone(),
            Arc::clone(&self.plan),
            self.session_id.clone(),
            self.config.clone(),
        );
        // Submitted when first polled; cancelled on the scheduler if the
        // stream is dropped before the job ended (`crate::job`).
        let batches = futures_util::stream::once(crate::job::run(url, plan, session_id, config))
            .try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            schema,
            batches.boxed(),
        )))
    }
}
