//! `xprof-convert` turns profile files into the normalized tables of
//! [`xprof_format`], as Arrow batches handed to a [`sink::TableSink`].
//!
//! The flow is reader → assembler → sink → tables:
//!
//! - [`reader`]: the [`ProfileReader`](reader::ProfileReader) trait and the
//!   registry of formats; one module per format ([`xspace`], [`chrome`],
//!   [`mosaic_gpu`], [`proton_tree`]) decodes its bytes and describes the
//!   trace to
//! - [`assembler`]: the format-neutral [`TraceAssembler`](assembler::TraceAssembler)
//!   that allocates ids, nests events, resolves containment and flows and
//!   builds every table's rows in its declared order, handing batches to
//! - [`sink`]: memory, Parquet, or a counter.
//!
//! [`names`] is the one vocabulary of device and line names; [`input`]
//! opens files (memory-mapped, `.gz` inflated to a temporary file) and
//! finds the files of run and log folders; [`batch`] converts many files
//! in parallel; [`synthetic`] writes device-shaped XSpace files (GPU, TPU)
//! for tests and benchmarks where no real capture is at hand.
//!
//! Converters never print and never panic on bad input: errors name the
//! file, the format and the byte offset.

#![warn(missing_docs)]

pub mod assembler;
pub mod chrome;
pub mod error;
pub mod input;
pub mod json;
pub mod llo_dump;
pub mod llo_proto;
pub mod many;
pub mod mosaic_gpu;
pub mod msgpack;
pub mod names;
mod nest;
mod pb;
pub mod proton_tree;
pub mod reader;
pub mod sink;
pub mod synthetic;
pub mod xspace;

/// [`many`] at the path callers used before it was named for what it does.
pub use many as batch;

pub use assembler::TraceAssembler;
pub use error::ConvertError;
pub use input::ProfileFile;
pub use reader::{ConvertOptions, ProfileReader, Summary, TraceSource};
