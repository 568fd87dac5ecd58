//! What this crate adds below the logical plan: the physical optimizer
//! rules sessions install ([`dictionary_aggregate`] groups by dictionary
//! strings without hashing every row, [`single_trace_join`] keys joins of
//! one trace without `trace_id`) with the plans they put in, and the
//! stream that ends a statement past its time limit (`deadline`).
//!
//! A new physical rule or execution plan goes here, one file each, and is
//! installed where sessions build their state (`session::new_context`).

pub(crate) mod deadline;
pub mod dictionary_aggregate;
pub mod single_trace_join;
