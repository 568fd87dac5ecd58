//! Functions profile queries use, one file each; [`register_all`] adds
//! them to a context (a host program may call it on its own).

mod ancestors;
mod busy_ps;
mod byte_length;
mod descendants;
mod event_tree;
mod from_hex;
mod lengths;
mod op_parent;
mod overlap_ps;
mod parse_kernel_details;
mod parse_tf_op;
mod quantile_cont;
mod read_profile;

pub use busy_ps::BusyPs;
pub use byte_length::ByteLength;
pub use from_hex::{FromHex, parse_hex};
pub use lengths::Length;
pub use op_parent::OpParent;
pub use overlap_ps::{OverlapPs, overlap};
pub use parse_kernel_details::{KernelDetails, ParseKernelDetails};
pub use parse_tf_op::{ParseTfOp, TfOp};
pub use quantile_cont::QuantileCont;
pub use read_profile::ReadProfile;

use std::sync::Arc;

use datafusion::catalog::TableProvider;
use datafusion::logical_expr::{AggregateUDF, ScalarUDF, WindowUDF};
use datafusion::prelude::SessionContext;

/// The SQL names of the functions [`register_all`] adds.
pub const NAMES: &[&str] = &[
    "busy_ps",
    "byte_length",
    "from_hex",
    "length",
    "octet_length",
    "op_parent",
    "overlap_ps",
    "parse_kernel_details",
    "parse_tf_op",
    "quantile_cont",
    "read_profile",
];

/// The SQL names of the table functions over the registered `events`
/// table that [`register_event_functions`] adds.
pub const EVENT_FUNCTION_NAMES: &[&str] = &["ancestors", "descendants"];

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
    ctx.register_udtf("read_profile", Arc::new(ReadProfile));
}

/// The scalar functions of [`register_all`]: what a state built elsewhere
/// (a cluster's scheduler and executors, which look functions up by name)
/// registers to run plans that call them.
pub fn scalar_functions() -> Vec<ScalarUDF> {
    vec![
        ScalarUDF::from(ByteLength::default()),
        ScalarUDF::from(FromHex::default()),
        ScalarUDF::from(Length::characters()),
        ScalarUDF::from(Length::octets()),
        ScalarUDF::from(OverlapPs::default()),
        ScalarUDF::from(ParseKernelDetails::default()),
        ScalarUDF::from(ParseTfOp::default()),
    ]
}

/// The aggregate functions of [`register_all`] (see [`scalar_functions`]).
pub fn aggregate_functions() -> Vec<AggregateUDF> {
    vec![
        AggregateUDF::from(BusyPs::default()),
        AggregateUDF::from(QuantileCont::default()),
    ]
}

/// The window functions of [`register_all`] (see [`scalar_functions`]).
pub fn window_functions() -> Vec<WindowUDF> {
    vec![WindowUDF::from(OpParent::default())]
}

/// Registers `ancestors(trace_id, event_id)` and `descendants(trace_id,
/// event_id)` on `ctx`, reading `events` (a profile's `events` table).
/// Registering profiles does this; calling it again binds the functions to
/// the new table.
pub fn register_event_functions(ctx: &SessionContext, events: Arc<dyn TableProvider>) {
    ctx.register_udtf("ancestors", ancestors::function(events.clone()));
    ctx.register_udtf("descendants", descendants::function(events));
}
