//! The execution plan: the small inputs read once, then each partition
//! of the base input made into the view's rows.

use std::fmt;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use futures_util::{StreamExt as _, TryStreamExt as _, stream};
use tokio::sync::OnceCell;

use super::columns::NeededParts;
use super::inputs::Input;
use super::lookups::Lookups;

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
    /// NULL`, [`EventsDbTable::supports_filters_pushdown`](super::EventsDbTable)).
    with_step_only: bool,
}

impl EventsDbExec {
    pub(super) fn new(
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
        let need = NeededParts::of(&self.projection, self.with_step_only);
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
