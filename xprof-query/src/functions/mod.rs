//! Functions profile queries use, one file each; [`register_all`] adds
//! them to a context (a host program may call it on its own).

mod busy_ps;

pub use busy_ps::BusyPs;

use datafusion::logical_expr::AggregateUDF;
use datafusion::prelude::SessionContext;

/// Registers every function of this module on `ctx`.
pub fn register_all(ctx: &SessionContext) {
    ctx.register_udaf(AggregateUDF::from(BusyPs::default()));
}
