//! `xprof-query` is the SQL layer of xprof-sql: a [`ProfileSession`] opens
//! profiles (files, run folders, log folders, Parquet datasets) and
//! registers the normalized tables and the canned analyses ([`views`]) on
//! an Apache DataFusion `SessionContext`, its own or the caller's, under a
//! schema of their own (`xprof`), so a host's tables are never replaced.
//! [`factory`] adds `CREATE EXTERNAL TABLE … STORED AS XSPACE` and
//! [`SessionContextExt::register_profile`]. [`read_only`] checks SQL for
//! sessions that run SQL they did not write ([`SessionOptions::read_only`]).
//! [`dictionary_aggregate`] groups by the tables' dictionary strings
//! without hashing every row; [`event_steps`] computes the recursive
//! `event_steps` view by a walk in memory. [`export`] writes a selection of events as
//! a timeline (Chrome JSON, Perfetto protobuf).
//!
//! It is the only crate that depends on DataFusion; converters know
//! nothing of SQL.

#![warn(missing_docs)]

mod deadline;
pub mod dictionary_aggregate;
pub mod diff;
pub mod error;
pub mod event_steps;
pub mod export;
pub mod factory;
pub mod functions;
pub mod read_only;
pub mod session;
pub mod single_trace_join;
pub mod tables;
pub mod views;

pub use error::{QueryError, Result};
pub use factory::{ProfileTableFactory, SessionContextExt, register_table_factories};
pub use session::{
    DEFAULT_IN_MEMORY_LIMIT, EVENTS_DB_SCHEMA, OpenOptions, Opened, ProfileSession, SessionOptions,
    default_config,
};
pub use tables::{DEFAULT_SCHEMA, ProfileTables, StringColumns};
pub use xprof_convert;
pub use xprof_format;
