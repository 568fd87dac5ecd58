//! Functions profile queries use, one file each; [`register_all`] adds
//! them to a context (a host program may call it on its own).
//!
//! A new function is a new file here, its line in `FUNCTIONS` (the one
//! list that registration, [`NAMES`] and the cluster's lists read), and a
//! golden query using it in tests/sql/. A scalar function giving one
//! `BIGINT` per row is declared with `int64_function!` (below): its file
//! holds only its signature and how it computes the values.

/// Declares a scalar function giving one `BIGINT` per row: the struct
/// `$ty` with its [`Signature`](datafusion::logical_expr::Signature), its
/// `Default`, and its `ScalarUDFImpl` named `$name`, whose rows are
/// `$eval(&argument_arrays, number_of_rows)` (a
/// `Result<Int64Array>`).
macro_rules! int64_function {
    (
        $(#[$attr:meta])*
        $ty:ident,
        name: $name:literal,
        signature: $signature:expr,
        eval: $eval:path $(,)?
    ) => {
        $(#[$attr])*
        #[derive(Debug, PartialEq, Eq, Hash)]
        pub struct $ty {
            signature: ::datafusion::logical_expr::Signature,
        }

        impl Default for $ty {
            fn default() -> Self {
                Self {
                    signature: $signature,
                }
            }
        }

        impl ::datafusion::logical_expr::ScalarUDFImpl for $ty {
            fn name(&self) -> &str {
                $name
            }

            fn signature(&self) -> &::datafusion::logical_expr::Signature {
                &self.signature
            }

            fn return_type(
                &self,
                _args: &[::arrow::datatypes::DataType],
            ) -> ::datafusion::common::Result<::arrow::datatypes::DataType> {
                Ok(::arrow::datatypes::DataType::Int64)
            }

            fn invoke_with_args(
                &self,
                args: ::datafusion::logical_expr::ScalarFunctionArgs,
            ) -> ::datafusion::common::Result<::datafusion::logical_expr::ColumnarValue> {
                let arrays =
                    ::datafusion::logical_expr::ColumnarValue::values_to_arrays(&args.args)?;
                let out: ::arrow::array::Int64Array = $eval(&arrays, args.number_rows)?;
                Ok(::datafusion::logical_expr::ColumnarValue::Array(
                    ::std::sync::Arc::new(out),
                ))
            }
        }
    };
}

mod ancestors;
mod busy_ps;
mod byte_length;
mod descendants;
mod event_tree;
pub(crate) mod format_g;
mod from_hex;
mod lengths;
mod op_parent;
mod overlap_ps;
mod parse_kernel_details;
pub(crate) mod parse_tf_op;
mod quantile_cont;
mod read_profile;

pub use busy_ps::BusyPs;
pub use byte_length::ByteLength;
pub use format_g::{FormatG, format_g};
pub use from_hex::{FromHex, parse_hex};
pub use lengths::Length;
pub use op_parent::OpParent;
pub use overlap_ps::{OverlapPs, overlap};
pub use parse_kernel_details::{KernelDetails, ParseKernelDetails};
pub use parse_tf_op::{ParseTfOp, TfOp};
pub use quantile_cont::QuantileCont;
pub use read_profile::ReadProfile;

use std::sync::Arc;

use datafusion::catalog::{TableFunctionImpl, TableProvider};
use datafusion::logical_expr::{AggregateUDF, ScalarUDF, WindowUDF};
use datafusion::prelude::SessionContext;

/// What a function of [`FUNCTIONS`] is, and how it is made.
#[derive(Clone, Copy)]
enum Function {
    Scalar(fn() -> ScalarUDF),
    Aggregate(fn() -> AggregateUDF),
    Window(fn() -> WindowUDF),
    Table(fn() -> Arc<dyn TableFunctionImpl>),
}

/// Every function [`register_all`] adds, by SQL name, in name order.
/// A scalar, aggregate or window function registers under its own name,
/// which a test checks is the one listed here.
const FUNCTIONS: &[(&str, Function)] = &[
    (
        "busy_ps",
        Function::Aggregate(|| AggregateUDF::from(BusyPs::default())),
    ),
    (
        "byte_length",
        Function::Scalar(|| ScalarUDF::from(ByteLength::default())),
    ),
    (
        "format_g",
        Function::Scalar(|| ScalarUDF::from(FormatG::default())),
    ),
    (
        "from_hex",
        Function::Scalar(|| ScalarUDF::from(FromHex::default())),
    ),
    (
        "length",
        Function::Scalar(|| ScalarUDF::from(Length::characters())),
    ),
    (
        "octet_length",
        Function::Scalar(|| ScalarUDF::from(Length::octets())),
    ),
    (
        "op_parent",
        Function::Window(|| WindowUDF::from(OpParent::default())),
    ),
    (
        "overlap_ps",
        Function::Scalar(|| ScalarUDF::from(OverlapPs::default())),
    ),
    (
        "parse_kernel_details",
        Function::Scalar(|| ScalarUDF::from(ParseKernelDetails::default())),
    ),
    (
        "parse_tf_op",
        Function::Scalar(|| ScalarUDF::from(ParseTfOp::default())),
    ),
    (
        "quantile_cont",
        Function::Aggregate(|| AggregateUDF::from(QuantileCont::default())),
    ),
    ("read_profile", Function::Table(|| Arc::new(ReadProfile))),
];

/// Makes a table function reading a profile's `events` table.
type EventFunction = fn(Arc<dyn TableProvider>) -> Arc<dyn TableFunctionImpl>;

/// The table functions of [`register_event_functions`], by SQL name.
const EVENT_FUNCTIONS: &[(&str, EventFunction)] = &[
    ("ancestors", ancestors::function),
    ("descendants", descendants::function),
];

/// The names of a list of functions.
const fn names<T: Copy, const N: usize>(list: &[(&'static str, T)]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = list[i].0;
        i += 1;
    }
    out
}

/// The SQL names of the functions [`register_all`] adds.
pub const NAMES: &[&str] = &names::<Function, { FUNCTIONS.len() }>(FUNCTIONS);

/// The SQL names of the table functions over the registered `events`
/// table that [`register_event_functions`] adds.
pub const EVENT_FUNCTION_NAMES: &[&str] =
    &names::<EventFunction, { EVENT_FUNCTIONS.len() }>(EVENT_FUNCTIONS);

/// Registers every function of this module on `ctx`.
pub fn register_all(ctx: &SessionContext) {
    for f in scalar_functions() {
        ctx.register_udf(f);
    }
    for f in aggregate_functions() {
        ctx.register_udaf(f);
    }
    for f in window_functions() {
        ctx.register_udwf(f);
    }
    for (name, f) in FUNCTIONS {
        if let Function::Table(make) = f {
            ctx.register_udtf(name, make());
        }
    }
}

/// The scalar functions of [`register_all`]: what a state built elsewhere
/// (a cluster's scheduler and executors, which look functions up by name)
/// registers to run plans that call them.
pub fn scalar_functions() -> Vec<ScalarUDF> {
    FUNCTIONS
        .iter()
        .filter_map(|(_, f)| match f {
            Function::Scalar(make) => Some(make()),
            _ => None,
        })
        .collect()
}

/// The aggregate functions of [`register_all`] (see [`scalar_functions`]).
pub fn aggregate_functions() -> Vec<AggregateUDF> {
    FUNCTIONS
        .iter()
        .filter_map(|(_, f)| match f {
            Function::Aggregate(make) => Some(make()),
            _ => None,
        })
        .collect()
}

/// The window functions of [`register_all`] (see [`scalar_functions`]).
pub fn window_functions() -> Vec<WindowUDF> {
    FUNCTIONS
        .iter()
        .filter_map(|(_, f)| match f {
            Function::Window(make) => Some(make()),
            _ => None,
        })
        .collect()
}

/// Registers `ancestors(trace_id, event_id)` and `descendants(trace_id,
/// event_id)` on `ctx`, reading `events` (a profile's `events` table).
/// Registering profiles does this; calling it again binds the functions to
/// the new table.
pub fn register_event_functions(ctx: &SessionContext, events: Arc<dyn TableProvider>) {
    for (name, make) in EVENT_FUNCTIONS {
        ctx.register_udtf(name, make(events.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_registers_under_its_listed_name() {
        for (name, f) in FUNCTIONS {
            let own = match f {
                Function::Scalar(make) => make().name().to_string(),
                Function::Aggregate(make) => make().name().to_string(),
                Function::Window(make) => make().name().to_string(),
                Function::Table(_) => name.to_string(),
            };
            assert_eq!(&own, name);
        }
        assert!(NAMES.windows(2).all(|w| w[0] < w[1]), "{NAMES:?}");
        assert_eq!(NAMES.len(), FUNCTIONS.len());
        assert_eq!(EVENT_FUNCTION_NAMES, ["ancestors", "descendants"]);
    }
}
