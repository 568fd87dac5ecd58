//! `xprof-query` is the SQL layer of xprof-sql: a [`ProfileSession`] opens
//! profiles (files, run folders, log folders, Parquet datasets) and
//! registers the normalized tables and the canned analyses ([`views`]) on
//! an Apache DataFusion `SessionContext`, its own or the caller's, under a
//! schema of their own (`xprof`), so a host's tables are never replaced.
//! [`factory`] adds `CREATE EXTERNAL TABLE … STORED AS XSPACE` and
//! [`SessionContextExt::register_profile`]. [`read_only`] checks SQL for
//! sessions that run SQL they did not write ([`SessionOptions::read_only`]).
//! [`dictionary_aggregate`] groups by the tables' dictionary strings
//! without hashing every row; the recursive `event_steps` view is
//! computed by a walk in memory and XProf's Events DB in one pass over the
//! events ([`views`]). [`export`] writes a selection of events as
//! a timeline (Chrome JSON, Perfetto protobuf). [`check`] runs a rules
//! file of SQL checks over a session, with verdicts and a JUnit report.
//!
//! It is the only crate that depends on DataFusion; converters know
//! nothing of SQL.
//!
//! # The way in
//!
//! [`ProfileSession::builder`] makes a session (its own context, or a
//! host's with [`SessionBuilder::context`]), [`ProfileSession::open`]
//! opens profiles, and [`ProfileSession::collect`] (or
//! [`ProfileSession::execute`] for a stream) answers SQL under the
//! session's limits. A host that keeps its own `SessionContext` gives it
//! this project's rules and table formats with [`prepare_context`], or
//! opens a profile into it under a schema of its own with
//! [`SessionContextExt::register_profile`].
//!
//! # Layout
//!
//! The files import one another in one direction, from the top down:
//! `session.rs`, `context.rs` (a host's context) and [`factory`] (the
//! ways in) open `inputs.rs` (what was
//! opened, where each table's rows are) and register it through
//! `catalog.rs` (a profile's tables, functions, views and diffs on a
//! context, in a `profile_schema.rs` schema that plans a view when a
//! statement first names it), which reads `tables.rs` (the providers, with `key_rows.rs`
//! estimating `event_args` scans kept to a few keys), [`functions`],
//! [`views`] (`views/*.sql`, `event_steps.rs` and `events_db/`) and [`diff`]. Below them
//! are `physical/` (the physical rules and plans: [`dictionary_aggregate`],
//! [`single_trace_join`], the statement time limit) and `plan.rs` (planning
//! helpers). [`export`] reads a session's tables into a timeline file;
//! [`check`] runs rules through a session.

#![warn(missing_docs)]

mod catalog;
#[cfg(feature = "check")]
pub mod check;
mod context;
pub mod diff;
pub mod error;
#[cfg(feature = "export")]
pub mod export;
pub mod factory;
pub mod functions;
mod inputs;
mod key_rows;
pub mod output_file;
mod physical;
mod plan;
mod profile_schema;
pub mod read_only;
pub mod session;
pub mod statement_size;
mod suggest;
mod tables;
pub mod views;

pub use context::{SessionContextExt, prepare_context};
pub use error::{QueryError, Result};
pub use factory::ProfileTableFactory;
pub use inputs::{DEFAULT_IN_MEMORY_LIMIT, OpenOptions, Opened};
pub use physical::{dictionary_aggregate, single_trace_join};
pub use profile_schema::ProfileSchema;
pub use session::{
    EVENTS_DB_SCHEMA, ProfileSession, SessionBuilder, SessionOptions, bind_params, default_config,
};
pub use tables::{DEFAULT_SCHEMA, StringColumns};
pub use xprof_convert;
pub use xprof_format;
