//! `descendants(trace_id, event_id)`: the events nested in one event on its
//! track, its children (`distance` 1) and theirs, as rows of `events` plus
//! `distance`.

use std::sync::Arc;

use datafusion::catalog::{TableFunctionImpl, TableProvider};

use super::event_tree::{Direction, EventTreeFunction};

/// The table function, reading `events`.
pub(crate) fn function(events: Arc<dyn TableProvider>) -> Arc<dyn TableFunctionImpl> {
    Arc::new(EventTreeFunction {
        events,
        direction: Direction::Down,
    })
}
