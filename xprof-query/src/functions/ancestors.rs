//! `ancestors(trace_id, event_id)`: the events enclosing one event on its
//! track, from its parent (`distance` 1) up to the top level, as rows of
//! `events` plus `distance`.

use std::sync::Arc;

use datafusion::catalog::{TableFunctionImpl, TableProvider};

use super::event_tree::{Direction, EventTreeFunction};

/// The table function, reading `events`.
pub(crate) fn function(events: Arc<dyn TableProvider>) -> Arc<dyn TableFunctionImpl> {
    Arc::new(EventTreeFunction {
        events,
        direction: Direction::Up,
    })
}
