//! `xprof-convert` turns profile files into the normalized tables of
//! [`xprof_format`], as Arrow batches handed to a [`sink::TableSink`].
//!
//! One module per input format ([`xspace`]); [`input`] opens files
//! (memory-mapped, `.gz` inflated to a temporary file), detects formats and
//! finds the files of run and log folders; [`synthetic`] writes
//! device-shaped XSpace files (GPU, TPU) for tests and benchmarks where no
//! real capture is at hand.
//!
//! Converters never print and never panic on bad input: errors name the
//! file, the format and the byte offset.

#![warn(missing_docs)]

pub mod batch;
pub mod error;
pub mod input;
mod nest;
mod pb;
pub mod sink;
pub mod synthetic;
pub mod xspace;

pub use error::ConvertError;
pub use input::{Format, ProfileFile};
