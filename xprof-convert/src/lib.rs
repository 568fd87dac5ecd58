//! `xprof-convert` turns profile files into the normalized tables of
//! [`xprof_format`], as Arrow batches handed to a [`sink::TableSink`].
//!
//! The flow is reader → assembler → sink → tables:
//!
//! - [`reader`]: the [`ProfileReader`] trait; one
//!   module per format under [`readers`] ([`xspace`], [`chrome`] with
//!   [`mosaic_gpu`], [`proton_tree`], [`llo_dump`]) decodes its bytes, with
//!   the [`codec`]s, and describes the trace to
//! - [`assembler`]: the format-neutral [`TraceAssembler`]
//!   that allocates ids, nests events, resolves containment and flows and
//!   builds every table's rows in its declared order, handing batches to
//! - [`sink`]: memory, Parquet, or a counter.
//!
//! [`registry`] lists the readers and picks one for a file by its name or
//! content; [`input`] opens files (memory-mapped, `.gz` inflated to a
//! temporary file); [`discover`] finds the files of run and log folders;
//! [`many`] converts many files in parallel. [`conversion`] holds what a
//! conversion takes and gives (options, source, summary), and [`names`]
//! the one vocabulary of device and line names.
//!
//! Layers, each importing only those below it: [`error`], [`names`],
//! [`conversion`], [`input`], [`codec`], [`sink`] → [`assembler`] →
//! [`reader`] → [`readers`] → [`registry`] → [`discover`] → [`many`].
//!
//! Converters never print and never panic on bad input: errors name the
//! file, the format and the byte offset. The generators of synthetic
//! profiles for tests and benchmarks are in the dev-only `xprof-testdata`
//! crate, not here.

#![warn(missing_docs)]

pub mod assembler;
pub mod codec;
pub mod conversion;
pub mod discover;
pub mod error;
pub mod input;
pub mod many;
pub mod names;
pub mod reader;
pub mod readers;
pub mod registry;
pub mod sink;

// The paths callers used before the readers, the codecs and the
// conversion of many files had their own folders and names.
pub use codec::{json, msgpack};
pub use readers::chrome::{self, mosaic_gpu};
pub use readers::xspace::{self, llo_proto};
pub use readers::{llo_dump, proton_tree};

pub use assembler::TraceAssembler;
pub use discover::ProfileFile;
pub use error::ConvertError;
pub use reader::{ConvertOptions, ProfileReader, Summary, TraceSource};
