//! Run-to-run diffs: table functions comparing two sides of the opened
//! profiles, every key of an analysis view, not a top 10.
//!
//! `diff_hlo_stats('baseline', 'candidate')` (and `diff_device_busy`,
//! `diff_kernel_stats`, `diff_step_stats`, `diff_unit_utilization`,
//! `diff_kineto_ops`) takes two sides, each a
//! run name (`traces.run`), a trace id, or trace ids separated by commas
//! (`'0,1'`), and returns one row per key found on either side: the
//! measures of side `a` and `b` (NULL where the key is on one side only,
//! `only_in` says which), `diff` = b − a and `ratio` = b / a of the main
//! measure, and the key's rank by that measure on each side. A trace
//! matching both arguments is on side a.
//!
//! Every diff is generated from a [`DiffDef`] (the view it reads, its key
//! columns, its measures), so all of them compare the same way. The SQL
//! is planned with the sides as parameters (`$1`, `$2`) when a statement
//! first calls the function after a registration, and each call binds
//! them, so the table functions plan without running anything and a
//! session that calls none plans none.

use std::sync::Arc;

use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{ParamValues, ScalarValue};
use datafusion::datasource::ViewTable;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{Expr, LogicalPlan};
use datafusion::prelude::SessionContext;

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
    /// The view (or table, or a parenthesized `SELECT` over one) it reads;
    /// it has a `trace_id` column.
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
    DiffDef {
        name: "diff_llo_kernels",
        doc: "Per compiled TPU kernel (HLO op) of `llo_kernels`, two compiles compared (dump folders with dump folders, captures with captures): bundles, empty bundles, static occupancy per unit, spill and fill slots, VMEM and SMEM bytes, peak registers by type, and for captures executions and mean time per execution; the bundle difference (b − a), ratio and ranks; `only_in` lists a kernel compiled on one side only.",
        source: "llo_kernels",
        // A dump's compile and a capture's program of one op (an
        // uninstrumented and an instrumented compile), or one op name in
        // two modules, are not one kernel.
        keys: &["hlo_op", "source", "hlo_module"],
        measures: &[
            m("bundles", "max(x.bundles)"),
            m("empty_bundles", "max(x.empty_bundles)"),
            m("mxu_pct", "max(x.mxu_pct)"),
            m("valu_pct", "max(x.valu_pct)"),
            m("vld_pct", "max(x.vld_pct)"),
            m("vst_pct", "max(x.vst_pct)"),
            m("salu_pct", "max(x.salu_pct)"),
            m("xlu_pct", "max(x.xlu_pct)"),
            m("eup_pct", "max(x.eup_pct)"),
            m("spill_slots", "max(x.spill_slots)"),
            m("fill_slots", "max(x.fill_slots)"),
            m("vmem_bytes", "max(x.vmem_bytes)"),
            m("smem_bytes", "max(x.smem_bytes)"),
            m("peak_vregs", "max(x.peak_vregs)"),
            m("peak_sregs", "max(x.peak_sregs)"),
            m("peak_pregs", "max(x.peak_pregs)"),
            m("executions", "sum(x.executions)"),
            m(
                "mean_us",
                "sum(x.mean_us * x.executions) / sum(x.executions)",
            ),
        ],
    },
    DiffDef {
        name: "diff_llo_regions",
        doc: "Per TPU kernel and LLO region of `llo_region_profile` (kernel-profiling captures): measured time of the region's entries summed over each side's traces, mean time per entry, share of the kernel's marked time, entries, and the static occupancy of the same bundles the time was measured over (the region's own segment: MXU, VALU, VLD, VST, SALU); the time difference (b − a), ratio and ranks.",
        source: "llo_region_profile",
        keys: &["hlo_op", "region_id", "name"],
        measures: &[
            m("measured_us", "sum(x.measured_ps) / 1e6"),
            m(
                "mean_us",
                "CAST(sum(x.measured_ps) AS DOUBLE) / sum(x.entries) / 1e6",
            ),
            m("measured_pct", "avg(x.measured_pct)"),
            m("entries", "sum(x.entries)"),
            m(
                "self_bundles",
                "max(x.self_limit_bundle - x.self_start_bundle)",
            ),
            m("self_mxu_pct", "max(x.self_mxu_pct)"),
            m("self_valu_pct", "max(x.self_valu_pct)"),
            m("self_vld_pct", "max(x.self_vld_pct)"),
            m("self_vst_pct", "max(x.self_vst_pct)"),
            m("self_salu_pct", "max(x.self_salu_pct)"),
        ],
    },
    DiffDef {
        name: "diff_kineto_ops",
        doc: "Per op or kernel name of `kineto_ops` (PyTorch Kineto traces) in each trace's first profiler step (HTA's `TraceDiff.compare_traces` default), summed over each side's traces: total duration and occurrences on each side, the duration difference (b − a), ratio and ranks; `only_in` gives HTA's added ('b') and deleted ('a') ops.",
        source: "(SELECT * FROM kineto_ops WHERE iteration = first_iteration)",
        keys: &["name"],
        measures: &[
            m("total_duration_us", "sum(x.dur_ps) / 1e6"),
            m("occurrences", "count(*)"),
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
       CAST(b.{main} AS DOUBLE) / nullif(a.{main}, 0) AS ratio,
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
    /// The schema holding the views and tables it reads.
    schema: String,
    /// Its SQL, `$1` and `$2` the sides ([`DiffDef::sql`]).
    sql: String,
    /// Its plan, made at the first call.
    plan: std::sync::OnceLock<LogicalPlan>,
}

impl DiffFunction {
    /// The plan, made now with the calling statement's state if no call
    /// made it before. Planning reads only catalogs in memory (the views
    /// it names are planned the same way), so it runs to completion here,
    /// inside the planning of the calling statement.
    fn plan(
        &self,
        session: &dyn datafusion::catalog::Session,
    ) -> datafusion::error::Result<&LogicalPlan> {
        if let Some(plan) = self.plan.get() {
            return Ok(plan);
        }
        let state = crate::plan::session_state(session, self.name)?;
        let plan = futures_executor::block_on(plan_in_schema(state, &self.schema, &self.sql))
            .map_err(|e| e.context(format!("planning {}", self.name)))?;
        Ok(self.plan.get_or_init(|| plan))
    }
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
        let plan = self
            .plan(args.session())?
            .clone()
            .with_param_values(ParamValues::List(vec![
                ScalarValue::Utf8(Some(a)).into(),
                ScalarValue::Utf8(Some(b)).into(),
            ]))?;
        Ok(Arc::new(ViewTable::new(plan, None)))
    }
}

/// Registers every diff table function of [`DIFFS`] on `ctx`, reading the
/// views and tables of `schema` as they are registered when a statement
/// first calls each (registering the tables again registers the functions
/// again).
pub fn register_diff_functions(ctx: &SessionContext, schema: &str) {
    for d in DIFFS {
        ctx.register_udtf(
            d.name,
            Arc::new(DiffFunction {
                name: d.name,
                schema: schema.to_string(),
                sql: d.sql(),
                plan: std::sync::OnceLock::new(),
            }),
        );
    }
}

// Verdicts: one line per diff saying what changed between the sides, as
// `xprof-sql diff` prints above each diff's top rows. Only SQL text and
// formatting, so every front end (the CLI, the Python package) runs the
// same queries and gives the same verdicts.

/// `s` as a SQL string literal: in single quotes, quotes inside doubled.
pub fn sql_string_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl DiffDef {
    /// This diff called on sides `a` and `b` (each a run name, a trace id
    /// or trace ids `0,1`), e.g. `diff_hlo_stats('base', 'new')`.
    pub fn call(&self, a: &str, b: &str) -> String {
        format!(
            "{}({}, {})",
            self.name,
            sql_string_literal(a),
            sql_string_literal(b)
        )
    }

    /// The query summarizing this diff on sides `a` and `b` in one row,
    /// which [`Verdict::from_batches`] reads: the keys (Int64), the keys
    /// on side a and on side b, the main measure's total on each side and
    /// its median on each side (Float64, NULL where a side has no rows).
    pub fn verdict_sql(&self, a: &str, b: &str) -> String {
        let call = self.call(a, b);
        let main = self.measures[0].name;
        format!(
            "SELECT arrow_cast(count(*), 'Int64'), arrow_cast(count(a_rank), 'Int64'), arrow_cast(count(b_rank), 'Int64'), \
             arrow_cast(sum(a_{main}), 'Float64'), arrow_cast(sum(b_{main}), 'Float64'), \
             arrow_cast(quantile_cont(a_{main}, 0.5), 'Float64'), arrow_cast(quantile_cont(b_{main}, 0.5), 'Float64') \
             FROM {call}"
        )
    }

    /// The query of this diff's rows on sides `a` and `b`, the largest
    /// increase (`diff`, b − a) first, then by key; at most `top` rows
    /// (0: all).
    pub fn top_rows_sql(&self, a: &str, b: &str, top: usize) -> String {
        let limit = if top == 0 {
            String::new()
        } else {
            format!(" LIMIT {top}")
        };
        format!(
            "SELECT * FROM {} ORDER BY diff DESC NULLS LAST, {}{limit}",
            self.call(a, b),
            self.keys.join(", ")
        )
    }
}

/// The query of [`kernel_lines`]: `diff_llo_kernels` on sides `a` and
/// `b`, the kernel with the largest bundle increase first.
pub fn kernel_lines_sql(a: &str, b: &str) -> String {
    format!(
        "SELECT hlo_op, arrow_cast(a_bundles, 'Int64'), arrow_cast(b_bundles, 'Int64'), \
         arrow_cast(a_empty_bundles, 'Int64'), arrow_cast(b_empty_bundles, 'Int64'), \
         arrow_cast(a_spill_slots, 'Int64'), arrow_cast(b_spill_slots, 'Int64'), \
         arrow_cast(a_fill_slots, 'Int64'), arrow_cast(b_fill_slots, 'Int64'), \
         arrow_cast(a_mxu_pct, 'Float64'), arrow_cast(b_mxu_pct, 'Float64'), \
         arrow_cast(a_mean_us, 'Float64'), arrow_cast(b_mean_us, 'Float64'), only_in, source, \
         hlo_module FROM {} ORDER BY diff DESC NULLS LAST, hlo_op, source, hlo_module",
        DIFFS
            .iter()
            .find(|d| d.name == "diff_llo_kernels")
            .expect("diff_llo_kernels is a diff")
            .call(a, b)
    )
}

/// One verdict line per compiled kernel from the rows of
/// [`kernel_lines_sql`]: bundles, empty bundles, spill and fill slots,
/// MXU occupancy and (captures) mean time on each side, e.g.
/// `pallas_matmul.1: bundles 210 -> 231 (+10.0%); empty 23 -> 23; spill
/// slots 0 -> 4 (new); fill slots 0 -> 0; MXU 61.7% -> 56.1%`, or
/// `new_kernel.1: only in b (231 bundles)`.
pub fn kernel_lines(batches: &[arrow::record_batch::RecordBatch]) -> Vec<String> {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Float64Type, Int64Type};
    let mut lines = Vec::new();
    for batch in batches {
        if batch.num_columns() < 16 {
            continue;
        }
        let text = |c: usize, row: usize| {
            let col =
                arrow::compute::cast(batch.column(c), &arrow::datatypes::DataType::Utf8).ok()?;
            let col = col.as_string::<i32>();
            (!col.is_null(row)).then(|| col.value(row).to_string())
        };
        let int = |c: usize, row: usize| {
            let col = batch.column(c).as_primitive_opt::<Int64Type>()?;
            (!col.is_null(row)).then(|| col.value(row))
        };
        let float = |c: usize, row: usize| {
            let col = batch.column(c).as_primitive_opt::<Float64Type>()?;
            (!col.is_null(row)).then(|| col.value(row))
        };
        for row in 0..batch.num_rows() {
            // The op, and where it was compiled when that is not a dump.
            let mut kernel = text(0, row).unwrap_or_default();
            if text(14, row).as_deref() == Some("capture") {
                match text(15, row) {
                    Some(module) => kernel.push_str(&format!(" ({module}, capture)")),
                    None => kernel.push_str(" (capture)"),
                }
            }
            if let Some(side) = text(13, row) {
                let bundles = int(if side == "a" { 1 } else { 2 }, row);
                let bundles = bundles.map_or(String::new(), |n| format!(" ({n} bundles)"));
                lines.push(format!("{kernel}: only in {side}{bundles}"));
                continue;
            }
            let ints = |what: &str, c: usize| {
                let (a, b) = (int(c, row), int(c + 1, row));
                let show = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
                let change = match (a, b) {
                    (Some(0), Some(b)) if b > 0 => " (new)".to_string(),
                    (Some(a), Some(b)) if a != 0 && a != b => {
                        format!(" ({:+.1}%)", 100.0 * (b - a) as f64 / a as f64)
                    }
                    _ => String::new(),
                };
                format!("{what} {} -> {}{change}", show(a), show(b))
            };
            let mut parts = vec![
                ints("bundles", 1),
                ints("empty", 3),
                ints("spill slots", 5),
                ints("fill slots", 7),
            ];
            let (mxu_a, mxu_b) = (float(9, row), float(10, row));
            if mxu_a.is_some() || mxu_b.is_some() {
                let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1}%"));
                parts.push(format!("MXU {} -> {}", show(mxu_a), show(mxu_b)));
            }
            let (mean_a, mean_b) = (float(11, row), float(12, row));
            if mean_a.is_some() || mean_b.is_some() {
                let show = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
                let change = match (mean_a, mean_b) {
                    (Some(a), Some(b)) if a != 0.0 => format!(" ({:+.1}%)", 100.0 * (b - a) / a),
                    _ => String::new(),
                };
                parts.push(format!(
                    "mean {} -> {} us{change}",
                    show(mean_a),
                    show(mean_b)
                ));
            }
            lines.push(format!("{kernel}: {}", parts.join("; ")));
        }
    }
    lines
}

/// One diff summarized on its two sides: the row of
/// [`DiffDef::verdict_sql`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// Keys found on either side.
    pub keys: i64,
    /// Keys found on side a.
    pub in_a: i64,
    /// Keys found on side b.
    pub in_b: i64,
    /// The main measure summed over side a's keys (`None`: no key).
    pub total_a: Option<f64>,
    /// The main measure summed over side b's keys.
    pub total_b: Option<f64>,
    /// The main measure's median over side a's keys.
    pub median_a: Option<f64>,
    /// The main measure's median over side b's keys.
    pub median_b: Option<f64>,
}

impl Verdict {
    /// The summary in the first row of `batches` (the result of
    /// [`DiffDef::verdict_sql`]); `None` when no batch has a row or the
    /// columns are not of that query.
    pub fn from_batches(batches: &[arrow::record_batch::RecordBatch]) -> Option<Self> {
        use arrow::array::{Array, AsArray};
        use arrow::datatypes::{Float64Type, Int64Type};
        let row = batches.iter().find(|b| b.num_rows() > 0)?;
        if row.num_columns() < 7 {
            return None;
        }
        let int = |c: usize| Some(row.column(c).as_primitive_opt::<Int64Type>()?.value(0));
        let float = |c: usize| {
            let col = row.column(c).as_primitive_opt::<Float64Type>()?;
            Some((!col.is_null(0)).then(|| col.value(0)))
        };
        Some(Self {
            keys: int(0)?,
            in_a: int(1)?,
            in_b: int(2)?,
            total_a: float(3)?,
            total_b: float(4)?,
            median_a: float(5)?,
            median_b: float(6)?,
        })
    }

    /// The verdict line of diff `def`: steps are compared by their typical
    /// (median) duration, the others by the main measure's total, e.g.
    /// `diff_hlo_stats: total self_time_us a 10.000, b 12.000 (+20.0%);
    /// 5 keys, 1 only in a, 0 only in b`.
    pub fn line(&self, def: &DiffDef) -> String {
        let fmt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        if def.name == "diff_step_stats" {
            return format!(
                "{}: step time p50 a {} us, b {} us; {} steps in a, {} in b",
                def.name,
                fmt(self.median_a),
                fmt(self.median_b),
                self.in_a,
                self.in_b
            );
        }
        let main = def.measures[0].name;
        let change = match (self.total_a, self.total_b) {
            (Some(x), Some(y)) if x != 0.0 => format!(" ({:+.1}%)", 100.0 * (y - x) / x),
            _ => String::new(),
        };
        format!(
            "{}: total {main} a {}, b {}{change}; {} keys, {} only in a, {} only in b",
            def.name,
            fmt(self.total_a),
            fmt(self.total_b),
            self.keys,
            self.keys - self.in_b,
            self.keys - self.in_a
        )
    }
}

#[cfg(test)]
mod verdict_tests {
    use crate::diff::{DIFFS, DiffDef, Verdict};

    fn def(name: &str) -> &'static DiffDef {
        DIFFS.iter().find(|d| d.name == name).expect("a diff")
    }

    #[test]
    fn calls_quote_the_sides() {
        let d = def("diff_kernel_stats");
        assert_eq!(d.call("it's", "1,2"), "diff_kernel_stats('it''s', '1,2')");
        assert_eq!(
            d.top_rows_sql("a", "b", 3),
            "SELECT * FROM diff_kernel_stats('a', 'b') ORDER BY diff DESC NULLS LAST, kernel_name LIMIT 3"
        );
        assert!(!d.top_rows_sql("a", "b", 0).contains("LIMIT"));
    }

    #[test]
    fn verdict_lines_give_totals_or_step_medians() {
        let v = Verdict {
            keys: 5,
            in_a: 4,
            in_b: 3,
            total_a: Some(10.0),
            total_b: Some(12.0),
            median_a: Some(1.5),
            median_b: None,
        };
        assert_eq!(
            v.line(def("diff_hlo_stats")),
            "diff_hlo_stats: total self_time_us a 10.000, b 12.000 (+20.0%); 5 keys, 2 only in a, 1 only in b"
        );
        assert_eq!(
            v.line(def("diff_step_stats")),
            "diff_step_stats: step time p50 a 1.500 us, b - us; 4 steps in a, 3 in b"
        );
    }
}
