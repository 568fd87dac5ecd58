//! `xprof-format` owns the normalized model of xprof-sql: the Arrow schema
//! of every table, its documentation and its typed row ([`schema`], one
//! declaration per table), the batch builders
//! converters write rows into ([`builders`]), the Parquet dataset layout
//! ([`dataset`]) and its file writer ([`table_file`], with
//! [`dict_column`] for dictionary strings and [`value_rows`] for the rows
//! per value it keeps in a footer), and the typed rows converters
//! fill: [`event_rows`] for the high-volume `events` and `event_args`,
//! [`small_table_rows`] (the buffer of a table's rows) for every other
//! table.
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
pub mod event_rows;
pub mod hash;
pub mod schema;
pub mod small_table_rows;
pub mod table_file;
pub mod value;
pub mod value_rows;

pub use builders::{DictBuilder, Interner, Sym, TableBuilder};
pub use error::FormatError;
pub use event_rows::{EventArgsBuilder, EventRow, EventsBuilder};
pub use schema::{SCHEMA_VERSION, Table};
pub use value::StatValue;
