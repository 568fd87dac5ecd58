//! Inputs opened once and asked many questions: `xprof-sql serve` (Arrow
//! Flight SQL, for ADBC, JDBC and ODBC drivers, DBeaver and Grafana),
//! `xprof-sql mcp` (Model Context Protocol, for agents) and the pieces
//! both share.
//!
//! - [`sessions`]: the session the server was started with and the named
//!   sessions clients open beside it, every query read-only and under the
//!   server's time and memory limits;
//! - [`confine`]: the paths a client may open (those the server was given,
//!   and below them);
//! - [`flight_sql`]: the Flight SQL service over [`sessions::Sessions`];
//! - [`mcp`]: the Model Context Protocol server (`xprof-sql mcp`) over
//!   the same sessions, for agents;
//! - [`auth`]: the token every call carries off loopback;
//! - [`catalog`]: tables, views and their column docs as Flight SQL's
//!   catalog calls list them.
//!
//! docs/serve.md says how a tool connects.

pub mod auth;
pub mod catalog;
pub mod confine;
mod error;
pub mod flight_sql;
pub mod mcp;
pub mod sessions;

pub use error::ServeError;
