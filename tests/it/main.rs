//! The integration tests, as one test binary.
//!
//! Each module was a binary of its own once; every one of them linked
//! DataFusion, so the README's test command spent most of its time linking
//! the same library ~17 times. One binary links it once. Run one module
//! with `cargo test --release --test it MODULE::` (e.g. `cli::`), one test
//! by a part of its name.

mod common;

mod analyses;
mod async_overlap;
mod bad_input;
mod check;
mod cli;
#[cfg(feature = "cluster")]
mod cluster;
#[cfg(feature = "cluster")]
mod cluster_limits;
#[cfg(feature = "cluster")]
mod cluster_security;
mod corpus;
mod dictionary_aggregate;
mod diff;
mod embed;
mod event_steps;
mod events_db;
mod expected_sources;
mod export;
mod functions;
mod golden_sql;
mod hostile;
mod hta;
mod json_formats;
mod key_rows;
mod limits;
mod llo;
mod llo_capture;
mod llo_dump;
mod llo_kernels;
mod llo_static;
mod oracles;
mod real_numbers;
mod report;
mod safe_mode;
mod shell_pty;
mod single_trace_join;
mod sort_order;
mod two_traces;
mod warehouse;
mod xspace_derived;
mod xspace_fidelity;
mod xspace_hlo;
