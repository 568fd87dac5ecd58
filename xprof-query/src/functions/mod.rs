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
    ctx.register_udaf(AggregateUDF::from(BusyPs::default()));
    ctx.register_udf(ScalarUDF::from(ByteLength::default()));
    ctx.register_udf(ScalarUDF::from(FromHex::default()));
    ctx.register_udf(ScalarUDF::from(Length::characters()));
    ctx.register_udf(ScalarUDF::from(Length::octets()));
    ctx.register_udf(ScalarUDF::from(OverlapPs::default()));
    ctx.register_udwf(WindowUDF::from(OpParent::default()));
    ctx.register_udf(ScalarUDF::from(ParseKernelDetails::default()));
    ctx.register_udf(ScalarUDF::from(ParseTfOp::default()));
    ctx.register_udaf(AggregateUDF::from(QuantileCont::default()));
    ctx.register_udtf("read_profile", Arc::new(ReadProfile));
}

/// Registers `ancestors(trace_id, event_id)` and `descendants(trace_id,
/// event_id)` on `ctx`, reading `events` (a profile's `events` table).
/// Registering profiles does this; calling it again binds the functions to
/// the new table.
pub fn register_event_functions(ctx: &SessionContext, events: Arc<dyn TableProvider>) {
    ctx.register_udtf("ancestors", ancestors::function(events.clone()));
    ctx.register_udtf("descendants", descendants::function(events));
}
