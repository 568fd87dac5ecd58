//! Functions profile queries use, one file each; [`register_all`] adds
//! them to a context (a host program may call it on its own).

mod busy_ps;
mod overlap_ps;
mod parse_kernel_details;
mod parse_tf_op;

pub use busy_ps::BusyPs;
pub use overlap_ps::{OverlapPs, overlap};
pub use parse_kernel_details::{KernelDetails, ParseKernelDetails};
pub use parse_tf_op::{ParseTfOp, TfOp};

use datafusion::logical_expr::{AggregateUDF, ScalarUDF};
use datafusion::prelude::SessionContext;

/// The SQL names of the functions [`register_all`] adds.
pub const NAMES: &[&str] = &[
    "busy_ps",
    "overlap_ps",
    "parse_kernel_details",
    "parse_tf_op",
];

/// Registers every function of this module on `ctx`.
pub fn register_all(ctx: &SessionContext) {
    ctx.register_udaf(AggregateUDF::from(BusyPs::default()));
    ctx.register_udf(ScalarUDF::from(OverlapPs::default()));
    ctx.register_udf(ScalarUDF::from(ParseKernelDetails::default()));
    ctx.register_udf(ScalarUDF::from(ParseTfOp::default()));
}
