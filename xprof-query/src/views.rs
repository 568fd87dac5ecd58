//! The canned analyses: SQL views a user can read and copy.
//!
//! Each view is one `.sql` file in `src/views/`, written against the
//! unqualified table names; [`VIEWS`] lists them and [`register_views`]
//! creates them in the schema holding the tables.

/// A view: its name, what it answers, and its SQL.
#[derive(Debug, Clone, Copy)]
pub struct ViewDef {
    /// View name, part of the public SQL contract.
    pub name: &'static str,
    /// What the view answers.
    pub doc: &'static str,
    /// The `SELECT` defining it.
    pub sql: &'static str,
}

/// Every view, in documentation order.
pub const VIEWS: &[ViewDef] = &[ViewDef {
    name: "event_stats",
    doc: "Every stat of every event: its own (`origin = 'event'`) and those of its metadata it does not override (`origin = 'metadata'`).",
    sql: include_str!("views/event_stats.sql"),
}];

pub use crate::tables::register_views;
