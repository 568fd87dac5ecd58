//! `xprof-format` owns the normalized model of xprof-sql: the Arrow schema
//! of every table and its documentation ([`schema`]), the batch builders
//! converters write rows into ([`builders`]), the Parquet dataset layout
//! ([`dataset`]) and its file writer ([`table_file`], with
//! [`dict_column`] for dictionary strings), and the XSpace wire types
//! ([`wire`]).
//!
//! It knows nothing of SQL: converters produce [`arrow::record_batch::RecordBatch`]es
//! through it, and `xprof-query` registers them with DataFusion.
//!
//! ```
//! use xprof_format::schema::Table;
//! let events = Table::Events.schema();
//! assert_eq!(events.field(0).name(), "trace_id");
//! assert!(events.field_with_name("self_ps").is_ok());
//! ```

#![warn(missing_docs)]

pub mod builders;
pub mod dataset;
pub mod dict_column;
pub mod docs;
pub mod error;
pub mod hash;
pub mod rows;
pub mod schema;
pub mod table_file;
pub mod table_rows;
pub mod value;
pub mod wire;

pub use builders::{DictBuilder, Interner, Sym, TableBuilder};
pub use error::FormatError;
pub use rows::{EventArgsBuilder, EventRow, EventsBuilder};
pub use schema::{SCHEMA_VERSION, Table};
pub use value::StatValue;
