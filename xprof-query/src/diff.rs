//! Run-to-run diffs: table functions comparing two sides of the opened
//! profiles, every key of an analysis view, not a top 10.
//!
//! `diff_hlo_stats('baseline', 'candidate')` (and `diff_device_busy`,
//! `diff_kernel_stats`, `diff_step_stats`, `diff_unit_utilization`) takes two sides, each a
//! run name (`traces.run`), a trace id, or trace ids separated by commas
//! (`'0,1'`), and returns one row per key found on either side: the
//! measures of side `a` and `b` (NULL where the key is on one side only,
//! `only_in` says which), `diff` = b − a and `ratio` = b / a of the main
//! measure, and the key's rank by that measure on each side. A trace
//! matching both arguments is on side a.
//!
//! Every diff is generated from a [`DiffDef`] (the view it reads, its key
//! columns, its measures), so all of them compare the same way. The SQL
//! is planned once per registration with the sides as parameters (`$1`,
//! `$2`) and each call binds them, so the table functions plan without
//! running anything.

use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{ParamValues, ScalarValue};
use datafusion::datasource::ViewTable;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::prelude::SessionContext;

use crate::error::Result;
use crate::plan::plan_in_schema;

/// A measure of a diff: its column name and the aggregate over the view's
/// rows of one side (the view's rows are `x`).
#[derive(Debug, Clone, Copy)]
pub struct Measure {
    /// Column name (`a_NAME`, `b_NAME` in the result).
    pub name: &'static str,
    /// Aggregate expression over the view's rows `x` of one side and key.
    pub aggregate: &'static str,
}

/// One diff table function.
#[derive(Debug, Clone, Copy)]
pub struct DiffDef {
    /// Table function name, part of the public SQL contract.
    pub name: &'static str,
    /// What it compares.
    pub doc: &'static str,
    /// The view (or table) it reads; it has a `trace_id` column.
    pub source: &'static str,
    /// Key columns of the view: a row per key found on either side.
    pub keys: &'static [&'static str],
    /// The measures; the first is the main one (`diff`, `ratio`, ranks).
    pub measures: &'static [Measure],
}

const fn m(name: &'static str, aggregate: &'static str) -> Measure {
    Measure { name, aggregate }
}

/// Every diff, in documentation order.
pub const DIFFS: &[DiffDef] = &[
    DiffDef {
        name: "diff_device_busy",
        doc: "Per device (name and kind) of `device_busy`, summed over each side's traces: busy time (the union of op intervals: XProf's `total_device_duration_us` on a one-GPU trace), span, op time and ops; the busy-time difference (b − a), ratio and ranks.",
        source: "device_busy",
        keys: &["device_name", "device_kind"],
        measures: &[
            m("busy_us", "sum(x.busy_ps) / 1e6"),
            m("span_us", "sum(x.span_ps) / 1e6"),
            m("op_time_us", "sum(x.op_time_ps) / 1e6"),
            m("ops", "sum(x.ops)"),
        ],
    },
    DiffDef {
        name: "diff_hlo_stats",
        doc: "Per HLO op (name and category) of `hlo_stats`, summed over each side's traces and programs: self time, total time and occurrences on each side, the self-time difference (b − a), ratio and ranks.",
        source: "hlo_stats",
        keys: &["hlo_op", "category"],
        measures: &[
            m("self_time_us", "sum(x.total_self_time_us)"),
            m("total_time_us", "sum(x.total_time_us)"),
            m("occurrences", "sum(x.occurrences)"),
        ],
    },
    DiffDef {
        name: "diff_kernel_stats",
        doc: "Per GPU kernel name of `kernel_stats`, summed over launch shapes and each side's traces: total duration and occurrences on each side, the difference (b − a), ratio and ranks (XProf's `diff_sessions` keys its kernel rows the same way).",
        source: "kernel_stats",
        keys: &["kernel_name"],
        measures: &[
            m("total_duration_us", "sum(x.total_duration_us)"),
            m("occurrences", "sum(x.occurrences)"),
        ],
    },
    DiffDef {
        name: "diff_step_stats",
        doc: "Per step number of `step_stats`: the step's duration averaged over each side's devices, busy and idle time, op count; the duration difference (b − a), ratio and ranks (rank 1: the longest step).",
        source: "step_stats",
        keys: &["step_num"],
        measures: &[
            m("step_time_us", "avg(x.dur_ps) / 1e6"),
            m("busy_us", "avg(x.busy_ps) / 1e6"),
            m("idle_us", "avg(x.idle_ps) / 1e6"),
            m("ops", "sum(x.ops)"),
        ],
    },
    DiffDef {
        name: "diff_unit_utilization",
        doc: "Per LLO kernel and functional unit of `unit_utilization`: the unit's busy fraction averaged over each side's kernel executions, busy time and instructions; the busy-fraction difference (b − a), ratio and ranks.",
        source: "unit_utilization",
        keys: &["kernel", "unit"],
        measures: &[
            m("busy_fraction", "avg(x.busy_fraction)"),
            m("busy_us", "sum(x.busy_ps) / 1e6"),
            m("instructions", "sum(x.instructions)"),
        ],
    },
];

/// The traces of each side: `$1` is side a, `$2` side b.
pub const SIDES_SQL: &str = "SELECT t.trace_id,
       CASE WHEN t.run = $1 OR array_has(string_to_array($1, ','), arrow_cast(t.trace_id, 'Utf8')) THEN 'a'
            WHEN t.run = $2 OR array_has(string_to_array($2, ','), arrow_cast(t.trace_id, 'Utf8')) THEN 'b'
       END AS side
FROM traces t";

impl DiffDef {
    /// The `SELECT` of this diff, with the sides as `$1` and `$2`.
    pub fn sql(&self) -> String {
        let keys = self.keys.join(", ");
        let x_keys: Vec<String> = self.keys.iter().map(|k| format!("x.{k}")).collect();
        let measures: Vec<String> = self
            .measures
            .iter()
            .map(|m| format!("{} AS {}", m.aggregate, m.name))
            .collect();
        let main = self.measures[0].name;
        let key_out: Vec<String> = self
            .keys
            .iter()
            .map(|k| format!("coalesce(a.{k}, b.{k}) AS {k}"))
            .collect();
        let mut sides_out = Vec::new();
        for m in self.measures {
            sides_out.push(format!("a.{0} AS a_{0}, b.{0} AS b_{0}", m.name));
        }
        let join: Vec<String> = self
            .keys
            .iter()
            .map(|k| format!("(a.{k} IS NOT DISTINCT FROM b.{k})"))
            .collect();
        format!(
            "-- {doc}
WITH sides AS (
{sides}
),
per_side AS (
  SELECT s.side, {x_keys}, {measures}
  FROM {source} x
  JOIN sides s ON s.trace_id = x.trace_id
  WHERE s.side IS NOT NULL
  GROUP BY s.side, {x_keys}
),
ranked AS (
  SELECT *, row_number() OVER (PARTITION BY side ORDER BY {main} DESC NULLS LAST, {keys}) AS rank
  FROM per_side
),
a AS (SELECT * FROM ranked WHERE side = 'a'),
b AS (SELECT * FROM ranked WHERE side = 'b')
SELECT {key_out},
       {sides_out},
       coalesce(b.{main}, 0) - coalesce(a.{main}, 0) AS diff,
       b.{main} / nullif(a.{main}, 0) AS ratio,
       a.rank AS a_rank, b.rank AS b_rank,
       CASE WHEN a.side IS NULL THEN 'b' WHEN b.side IS NULL THEN 'a' END AS only_in
FROM a FULL JOIN b ON {join}",
            doc = self.doc,
            sides = SIDES_SQL,
            x_keys = x_keys.join(", "),
            measures = measures.join(", "),
            source = self.source,
            key_out = key_out.join(", "),
            sides_out = sides_out.join(",\n       "),
            join = join.join(" AND "),
        )
    }
}

/// A diff table function: its plan with the sides as parameters.
#[derive(Debug)]
struct DiffFunction {
    name: &'static str,
    plan: LogicalPlan,
}

/// A side argument as text: a string as it is, an integer trace id.
fn side_arg(name: &str, expr: &Expr) -> datafusion::error::Result<String> {
    let value = match expr {
        Expr::Literal(v, _) => v,
        other => {
            return Err(DataFusionError::Plan(format!(
                "{name}: a side is a run name, a trace id or trace ids '0,1' written as a literal, not {other}"
            )));
        }
    };
    match value {
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)) => Ok(s.clone()),
        ScalarValue::Int8(Some(_))
        | ScalarValue::Int16(Some(_))
        | ScalarValue::Int32(Some(_))
        | ScalarValue::Int64(Some(_))
        | ScalarValue::UInt8(Some(_))
        | ScalarValue::UInt16(Some(_))
        | ScalarValue::UInt32(Some(_))
        | ScalarValue::UInt64(Some(_)) => Ok(value.to_string()),
        other => Err(DataFusionError::Plan(format!(
            "{name}: a side is a run name, a trace id or trace ids '0,1', not {other:?}"
        ))),
    }
}

impl TableFunctionImpl for DiffFunction {
    fn call_with_args(
        &self,
        args: TableFunctionArgs,
    ) -> datafusion::error::Result<Arc<dyn TableProvider>> {
        let exprs = args.exprs();
        if exprs.len() != 2 {
            return Err(DataFusionError::Plan(format!(
                "{}(a, b) takes two sides (run names, trace ids or '0,1'), not {} arguments",
                self.name,
                exprs.len()
            )));
        }
        let a = side_arg(self.name, &exprs[0])?;
        let b = side_arg(self.name, &exprs[1])?;
        let plan = self.plan.clone().with_param_values(ParamValues::List(vec![
            ScalarValue::Utf8(Some(a)).into(),
            ScalarValue::Utf8(Some(b)).into(),
        ]))?;
        Ok(Arc::new(ViewTable::new(plan, None)))
    }
}

/// Registers every diff table function of [`DIFFS`] on `ctx`, reading the
/// views and tables of `schema` as they are registered now (registering
/// the tables again registers the functions again).
pub async fn register_diff_functions(ctx: &SessionContext, schema: &str) -> Result<()> {
    for d in DIFFS {
        let plan = plan_in_schema(&ctx.state(), schema, &d.sql()).await?;
        ctx.register_udtf(d.name, Arc::new(DiffFunction { name: d.name, plan }));
    }
    Ok(())
}
