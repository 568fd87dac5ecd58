//! The normalized tables (schema version [`SCHEMA_VERSION`]) as data.
//!
//! Every table is declared once, column by column with its meaning, by
//! `table!` (`schema/declare.rs`) in the file of its domain: `core.rs`
//! (traces, devices, tracks, events, their stats, counters and flows),
//! `hlo.rs`, `llo.rs` (decoded `llo_proto` payloads), `llo_dump.rs` (the
//! LLO compiler's dump folder) and `proton.rs` (untimed call trees). A declaration gives
//! both the table's [`TableDef`] (its Arrow schema, `docs/schema.md` and
//! `xprof-sql schema` are generated from it, so they cannot drift apart)
//! and its typed row struct, which converters push into a
//! [`RowBuffer`](crate::small_table_rows::RowBuffer). The list in
//! [`Table`] names every table once.
//!
//! Adding a column is one line in its table's declaration, the reader
//! that fills it, `docs/schema.md` regenerated (`xprof-sql schema
//! --markdown`) and, when it breaks readers of old files,
//! [`SCHEMA_VERSION`].
//!
//! ```
//! use xprof_format::schema::{StatMetadataRow, Table};
//! use xprof_format::small_table_rows::RowBuffer;
//! let mut rows = RowBuffer::new();
//! rows.push(&StatMetadataRow { trace_id: 0, device_id: 1, stat_metadata_id: 7, name: "flops", description: None });
//! assert_eq!(rows.finish().unwrap().schema(), Table::StatMetadata.schema());
//! ```

#[macro_use]
mod declare;
mod core;
mod hlo;
mod llo;
mod llo_dump;
mod proton;

use std::sync::{Arc, OnceLock};

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

/// Version of the table layout. Bumped on any incompatible change of a
/// table, column name, type or meaning; stored in every Parquet file's
/// key-value metadata under [`SCHEMA_VERSION_KEY`].
///
/// 2: events are numbered in `(track_id, ts_ps)` order and every table is
/// written in its declared order (version 1 files could break the order
/// they declared, so they are refused rather than trusted).
///
/// 4: `program_id` is unsigned (`BIGINT UNSIGNED`) in `events`, `hlo_ops`
/// and `hlo_instructions`, as XLA writes it (ids above 2^63 read as
/// negative numbers before), and the `llo_*` tables decoded from
/// `llo_proto` payloads are added.
///
/// 5: `llo_dump_bundles` keeps every bundle of a compiler dump: `address`
/// and `ops` are nullable (an address past 64 bits, a bundle that cannot
/// be read), and `line`, `regions_empty` and `unread_text` are added.
///
/// 6: the rest of XProf's static LLO analysis as tables:
/// `llo_register_live_ranges`, `llo_register_pressure`, `llo_bdi_stalls`,
/// `llo_bundle_sources` and `llo_target_info`.
///
/// 7: in a Chrome trace, a GPU process is named by its device (`GPU 0`),
/// its `process_name` kept in the new `devices.process_name`; PyTorch's
/// `gpu_user_annotation` events are on `gpu_annotations` tracks of their
/// own, no longer on the stream's track among its kernels.
pub const SCHEMA_VERSION: i32 = 7;

/// Parquet key-value metadata key holding [`SCHEMA_VERSION`].
pub const SCHEMA_VERSION_KEY: &str = "xprof_sql.schema_version";

/// Parquet key-value metadata key holding the table name.
pub const TABLE_KEY: &str = "xprof_sql.table";

/// Version of the converters, stored in `traces.converter_version`.
pub const CONVERTER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Logical type of a column; maps to one Arrow type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// `Int32`.
    Int32,
    /// `Int64`.
    Int64,
    /// `UInt64`.
    UInt64,
    /// `Float64`.
    Float64,
    /// `Boolean`.
    Boolean,
    /// `Utf8`.
    Utf8,
    /// `Dictionary(Int32, Utf8)`: repeated names.
    DictUtf8,
    /// `Binary`.
    Binary,
    /// `List(Utf8)`.
    ListUtf8,
    /// `List(Int64)`.
    ListInt64,
}

impl ColumnType {
    /// The Arrow type of this column type.
    pub fn data_type(self) -> DataType {
        match self {
            ColumnType::Int32 => DataType::Int32,
            ColumnType::Int64 => DataType::Int64,
            ColumnType::UInt64 => DataType::UInt64,
            ColumnType::Float64 => DataType::Float64,
            ColumnType::Boolean => DataType::Boolean,
            ColumnType::Utf8 => DataType::Utf8,
            ColumnType::DictUtf8 => {
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
            }
            ColumnType::Binary => DataType::Binary,
            ColumnType::ListUtf8 => {
                DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
            }
            ColumnType::ListInt64 => {
                DataType::List(Arc::new(Field::new("item", DataType::Int64, true)))
            }
        }
    }

    /// The SQL-ish name shown in docs.
    pub fn sql_name(self) -> &'static str {
        match self {
            ColumnType::Int32 => "INT",
            ColumnType::Int64 => "BIGINT",
            ColumnType::UInt64 => "BIGINT UNSIGNED",
            ColumnType::Float64 => "DOUBLE",
            ColumnType::Boolean => "BOOLEAN",
            ColumnType::Utf8 => "VARCHAR",
            ColumnType::DictUtf8 => "VARCHAR (dictionary)",
            ColumnType::Binary => "BYTEA",
            ColumnType::ListUtf8 => "VARCHAR[]",
            ColumnType::ListInt64 => "BIGINT[]",
        }
    }
}

/// One column of a table.
#[derive(Debug, Clone, Copy)]
pub struct ColumnDef {
    /// Column name, part of the public SQL contract.
    pub name: &'static str,
    /// Logical type.
    pub ty: ColumnType,
    /// Whether the column may hold NULL.
    pub nullable: bool,
    /// What the column holds, with its unit.
    pub doc: &'static str,
}

/// One table of the normalized model.
#[derive(Debug)]
pub struct TableDef {
    /// Table name, part of the public SQL contract.
    pub name: &'static str,
    /// What one row is.
    pub doc: &'static str,
    /// Columns in order; `trace_id` is always first.
    pub columns: &'static [ColumnDef],
    /// Columns the rows are sorted by inside each Parquet file.
    pub sort_by: &'static [&'static str],
}

impl TableDef {
    /// The Arrow schema of the table, with the schema version and table
    /// name in its metadata.
    pub fn schema(&self) -> SchemaRef {
        let fields: Vec<Field> = self
            .columns
            .iter()
            .map(|c| Field::new(c.name, c.ty.data_type(), c.nullable))
            .collect();
        let metadata = [
            (SCHEMA_VERSION_KEY.to_string(), SCHEMA_VERSION.to_string()),
            (TABLE_KEY.to_string(), self.name.to_string()),
        ]
        .into_iter()
        .collect();
        Arc::new(Schema::new_with_metadata(fields, metadata))
    }

    /// Index of a column by name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// Declares [`Table`], [`Table::ALL`] and [`Table::def`] from one list.
macro_rules! table_list {
    ($count:literal; $($(#[doc = $doc:literal])* $variant:ident => $def:path,)*) => {
        /// Identifies a table; `Table::ALL` lists them in documentation order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Table {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Table {
            /// Every table, in documentation order.
            pub const ALL: [Table; $count] = [$(Table::$variant,)*];

            /// The table's description.
            pub fn def(self) -> &'static TableDef {
                match self {
                    $(Table::$variant => &$def,)*
                }
            }
        }
    };
}

table_list! { 30;
    /// One row per converted input.
    Traces => core::TRACES,
    /// One row per plane (device or source).
    Devices => core::DEVICES,
    /// Plane stats.
    DeviceArgs => core::DEVICE_ARGS,
    /// One row per line (timeline).
    Tracks => core::TRACKS,
    /// One row per event (interval).
    Events => core::EVENTS,
    /// Every stat carried by an event itself.
    EventArgs => core::EVENT_ARGS,
    /// Event metadata (names shared by events).
    EventMetadata => core::EVENT_METADATA,
    /// Stats carried by event metadata.
    MetadataArgs => core::METADATA_ARGS,
    /// Stat metadata (stat names).
    StatMetadata => core::STAT_METADATA,
    /// Counter samples.
    Counters => core::COUNTERS,
    /// Flows between events.
    Flows => core::FLOWS,
    /// The static HLO op table.
    HloOps => hlo::HLO_OPS,
    /// Instructions of the HLO modules in `/host:metadata`.
    HloInstructions => hlo::HLO_INSTRUCTIONS,
    /// Decoded `llo_proto` payloads (LLO programs).
    LloPrograms => llo::LLO_PROGRAMS,
    /// Region trees of LLO programs.
    LloRegions => llo::LLO_REGIONS,
    /// Static per-bundle slot use of each unit.
    LloBundleUnits => llo::LLO_BUNDLE_UNITS,
    /// Instructions of LLO programs.
    LloProgramInstructions => llo::LLO_PROGRAM_INSTRUCTIONS,
    /// Buffer allocations of LLO programs.
    LloAllocations => llo::LLO_ALLOCATIONS,
    /// Register live ranges of LLO programs.
    LloRegisterLiveRanges => llo::LLO_REGISTER_LIVE_RANGES,
    /// Live registers per bundle of LLO programs.
    LloRegisterPressure => llo::LLO_REGISTER_PRESSURE,
    /// Stall codes in LLO instruction comments.
    LloBdiStalls => llo::LLO_BDI_STALLS,
    /// Source lines of each bundle of LLO programs.
    LloBundleSources => llo::LLO_BUNDLE_SOURCES,
    /// Compile targets of LLO programs.
    LloTargetInfo => llo::LLO_TARGET_INFO,
    /// Bundles of an LLO compiler dump.
    LloDumpBundles => llo_dump::LLO_DUMP_BUNDLES,
    /// Ops of an LLO compiler dump.
    LloDumpOps => llo_dump::LLO_DUMP_OPS,
    /// Per-bundle unit use of an LLO compiler dump.
    LloDumpBundleUnits => llo_dump::LLO_DUMP_BUNDLE_UNITS,
    /// Schedule analysis of an LLO compiler dump.
    LloDumpSchedule => llo_dump::LLO_DUMP_SCHEDULE,
    /// Allocations of an LLO compiler dump.
    LloDumpAllocations => llo_dump::LLO_DUMP_ALLOCATIONS,
    /// Nodes of an untimed call tree (Proton's tree profile).
    ProfileNodes => proton::PROFILE_NODES,
    /// Metrics of those nodes not promoted to columns.
    NodeMetrics => proton::NODE_METRICS,
}

impl Table {
    /// SQL name of the table.
    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// Arrow schema (cached).
    pub fn schema(self) -> SchemaRef {
        static CACHE: OnceLock<Vec<SchemaRef>> = OnceLock::new();
        let all = CACHE.get_or_init(|| Table::ALL.iter().map(|t| t.def().schema()).collect());
        all[Table::ALL.iter().position(|t| *t == self).expect("listed")].clone()
    }

    /// Looks a table up by its SQL name.
    pub fn from_name(name: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.name() == name)
    }
}

pub use self::core::*;
pub use hlo::*;
pub use llo::*;
pub use llo_dump::*;
pub use proton::*;
