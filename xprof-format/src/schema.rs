//! The normalized tables (schema version [`SCHEMA_VERSION`]) as data.
//!
//! Every table is described once here, column by column, with its meaning.
//! The Arrow schemas, `docs/schema.md` and `xprof-sql schema` are all
//! generated from these descriptions, so they cannot drift apart.

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

/// Identifies a table; `Table::ALL` lists them in documentation order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Table {
    /// One row per converted input.
    Traces,
    /// One row per plane (device or source).
    Devices,
    /// Plane stats.
    DeviceArgs,
    /// One row per line (timeline).
    Tracks,
    /// One row per event (interval).
    Events,
    /// Every stat carried by an event itself.
    EventArgs,
    /// Event metadata (names shared by events).
    EventMetadata,
    /// Stats carried by event metadata.
    MetadataArgs,
    /// Stat metadata (stat names).
    StatMetadata,
    /// Counter samples.
    Counters,
    /// Flows between events.
    Flows,
    /// The static HLO op table.
    HloOps,
    /// Instructions of the HLO modules in `/host:metadata`.
    HloInstructions,
    /// Decoded `llo_proto` payloads (LLO programs).
    LloPrograms,
    /// Region trees of LLO programs.
    LloRegions,
    /// Static per-bundle slot use of each unit.
    LloBundleUnits,
    /// Instructions of LLO programs.
    LloProgramInstructions,
    /// Buffer allocations of LLO programs.
    LloAllocations,
    /// Register live ranges of LLO programs.
    LloRegisterLiveRanges,
    /// Live registers per bundle of LLO programs.
    LloRegisterPressure,
    /// Stall codes in LLO instruction comments.
    LloBdiStalls,
    /// Source lines of each bundle of LLO programs.
    LloBundleSources,
    /// Compile targets of LLO programs.
    LloTargetInfo,
    /// Bundles of an LLO compiler dump.
    LloDumpBundles,
    /// Ops of an LLO compiler dump.
    LloDumpOps,
    /// Per-bundle unit use of an LLO compiler dump.
    LloDumpBundleUnits,
    /// Schedule analysis of an LLO compiler dump.
    LloDumpSchedule,
    /// Allocations of an LLO compiler dump.
    LloDumpAllocations,
    /// Nodes of an untimed call tree (Proton's tree profile).
    ProfileNodes,
    /// Metrics of those nodes not promoted to columns.
    NodeMetrics,
}

impl Table {
    /// Every table, in documentation order.
    pub const ALL: [Table; 30] = [
        Table::Traces,
        Table::Devices,
        Table::DeviceArgs,
        Table::Tracks,
        Table::Events,
        Table::EventArgs,
        Table::EventMetadata,
        Table::MetadataArgs,
        Table::StatMetadata,
        Table::Counters,
        Table::Flows,
        Table::HloOps,
        Table::HloInstructions,
        Table::LloPrograms,
        Table::LloRegions,
        Table::LloBundleUnits,
        Table::LloProgramInstructions,
        Table::LloAllocations,
        Table::LloRegisterLiveRanges,
        Table::LloRegisterPressure,
        Table::LloBdiStalls,
        Table::LloBundleSources,
        Table::LloTargetInfo,
        Table::LloDumpBundles,
        Table::LloDumpOps,
        Table::LloDumpBundleUnits,
        Table::LloDumpSchedule,
        Table::LloDumpAllocations,
        Table::ProfileNodes,
        Table::NodeMetrics,
    ];

    /// The table's description.
    pub fn def(self) -> &'static TableDef {
        match self {
            Table::Traces => &TRACES,
            Table::Devices => &DEVICES,
            Table::DeviceArgs => &DEVICE_ARGS,
            Table::Tracks => &TRACKS,
            Table::Events => &EVENTS,
            Table::EventArgs => &EVENT_ARGS,
            Table::EventMetadata => &EVENT_METADATA,
            Table::MetadataArgs => &METADATA_ARGS,
            Table::StatMetadata => &STAT_METADATA,
            Table::Counters => &COUNTERS,
            Table::Flows => &FLOWS,
            Table::HloOps => &HLO_OPS,
            Table::HloInstructions => &HLO_INSTRUCTIONS,
            Table::LloPrograms => &LLO_PROGRAMS,
            Table::LloRegions => &LLO_REGIONS,
            Table::LloBundleUnits => &LLO_BUNDLE_UNITS,
            Table::LloProgramInstructions => &LLO_PROGRAM_INSTRUCTIONS,
            Table::LloAllocations => &LLO_ALLOCATIONS,
            Table::LloRegisterLiveRanges => &LLO_REGISTER_LIVE_RANGES,
            Table::LloRegisterPressure => &LLO_REGISTER_PRESSURE,
            Table::LloBdiStalls => &LLO_BDI_STALLS,
            Table::LloBundleSources => &LLO_BUNDLE_SOURCES,
            Table::LloTargetInfo => &LLO_TARGET_INFO,
            Table::LloDumpBundles => &LLO_DUMP_BUNDLES,
            Table::LloDumpOps => &LLO_DUMP_OPS,
            Table::LloDumpBundleUnits => &LLO_DUMP_BUNDLE_UNITS,
            Table::LloDumpSchedule => &LLO_DUMP_SCHEDULE,
            Table::LloDumpAllocations => &LLO_DUMP_ALLOCATIONS,
            Table::ProfileNodes => &PROFILE_NODES,
            Table::NodeMetrics => &NODE_METRICS,
        }
    }

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

const fn col(name: &'static str, ty: ColumnType, nullable: bool, doc: &'static str) -> ColumnDef {
    ColumnDef {
        name,
        ty,
        nullable,
        doc,
    }
}

use ColumnType::*;

const TRACE_ID: ColumnDef = col(
    "trace_id",
    Int32,
    false,
    "Id of the converted input (one file or one host of a run); unique in a dataset.",
);
const DEVICE_ID: ColumnDef = col(
    "device_id",
    Int32,
    false,
    "Device (plane) the row belongs to; joins `devices`.",
);

/// Typed value columns shared by every `*_args` table. Exactly one of the
/// value columns is set, as named by `value_type`.
macro_rules! value_columns {
    () => {
        [
            col(
                "value_type",
                DictUtf8,
                false,
                "Which value the stat had on the wire: `int`, `uint`, `double`, `str`, `bytes`, `ref` (a `ref_value`, resolved to its string in `str_value`), `compressed_str` (inflated into `str_value`), or `none`.",
            ),
            col("int_value", Int64, true, "`int64_value`."),
            col("uint_value", UInt64, true, "`uint64_value`, or the raw id of a `ref_value`."),
            col("double_value", Float64, true, "`double_value`."),
            col(
                "str_value",
                Utf8,
                true,
                "`str_value`, the resolved string of a `ref_value`, or the inflated `compressed_str_value`.",
            ),
            col("bytes_value", Binary, true, "`bytes_value`, kept as is."),
        ]
    };
}

const VALUE_COLUMNS: [ColumnDef; 6] = value_columns!();

const fn concat<const A: usize, const B: usize, const C: usize>(
    a: [ColumnDef; A],
    b: [ColumnDef; B],
) -> [ColumnDef; C] {
    assert!(A + B == C);
    let mut out = [a[0]; C];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    let mut j = 0;
    while j < B {
        out[A + j] = b[j];
        j += 1;
    }
    out
}

/// `traces`.
pub static TRACES: TableDef = TableDef {
    name: "traces",
    doc: "One row per converted input: one profile file (an XSpace file is one host of a run; a Chrome trace is one process tree).",
    sort_by: &["trace_id"],
    columns: &[
        TRACE_ID,
        col(
            "source_format",
            Utf8,
            false,
            "Input format, the name of the reader that converted it (`xprof_sql::convert::registry::READERS`): `xspace`, `chrome_trace` (Chrome Trace Event JSON: PyTorch Kineto, JAX `*.trace.json.gz`, Proton's kernel timeline and intra-kernel traces), `mosaic_gpu` (Mosaic GPU profiler traces), `proton_tree` (Proton tree profiles, JSON or MessagePack) or `llo_dump` (one file of the TPU LLO compiler's dump folder; `start_unix_ns` is its file name's time stamp).",
        ),
        col(
            "source_path",
            Utf8,
            false,
            "Path of the input file as given.",
        ),
        col(
            "run",
            Utf8,
            true,
            "Run name: the run folder of a log or run directory.",
        ),
        col(
            "host",
            Utf8,
            false,
            "Host name: the file stem (`HOST.xplane.pb`, `HOST.trace.json.gz`, `HOST.pt.trace.json`, `HOST.chrome_trace`, `HOST.json`).",
        ),
        col(
            "start_unix_ns",
            Int64,
            true,
            "Wall clock (ns since the Unix epoch) of `ts_ps = 0`: `Task Environment.profile_start_time`.",
        ),
        col(
            "stop_unix_ns",
            Int64,
            true,
            "`Task Environment.profile_stop_time`, ns since the Unix epoch.",
        ),
        col(
            "duration_ps",
            Int64,
            false,
            "End of the last event, ps from the trace start.",
        ),
        col(
            "schema_version",
            Int32,
            false,
            "Schema version of the tables (`xprof_format::SCHEMA_VERSION`).",
        ),
        col(
            "converter_version",
            Utf8,
            false,
            "Version of xprof-sql that converted the input.",
        ),
        col("hostnames", ListUtf8, false, "`XSpace.hostnames`."),
        col(
            "errors",
            ListUtf8,
            false,
            "`XSpace.errors`: errors recorded by the profiler in the file.",
        ),
        col(
            "warnings",
            ListUtf8,
            false,
            "`XSpace.warnings`: warnings recorded by the profiler in the file.",
        ),
        col(
            "converter_warnings",
            ListUtf8,
            false,
            "What the converter noticed and kept anyway (unknown metadata ids, events out of order, ...).",
        ),
    ],
};

/// `devices`.
pub static DEVICES: TableDef = TableDef {
    name: "devices",
    doc: "One row per XPlane: a device (`/device:TPU:0`, `/device:GPU:0`) or a source (`/host:CPU`, `/host:metadata`, `Task Environment`). In a Chrome trace: one row per process (`pid`), named by its `process_name` (a GPU by its device, `GPU <n>`, the process name in `process_name`), after a first `Trace Metadata` row holding the file's top-level keys.",
    sort_by: &["device_id"],
    columns: &[
        TRACE_ID,
        col(
            "device_id",
            Int32,
            false,
            "Id of the plane in this trace (its position in the file).",
        ),
        col("plane_id", Int64, false, "`XPlane.id` as written."),
        col("name", Utf8, false, "`XPlane.name`, e.g. `/device:TPU:0`."),
        col(
            "kind",
            Utf8,
            false,
            "`host` (`/host:CPU`), `host_other` (other `/host:` planes), `gpu`, `tpu`, `sparse_core`, `custom`, `metadata` (`/host:metadata`), `task_environment`, or `other`.",
        ),
        col(
            "ordinal",
            Int32,
            true,
            "Device number from the name (`/device:TPU:3` is 3).",
        ),
        col(
            "type",
            Utf8,
            true,
            "Plane stat `device_type_string`, e.g. `TPU v6 Lite`.",
        ),
        col("vendor", Utf8, true, "Plane stat `device_vendor`."),
        col(
            "peak_tflops",
            Float64,
            true,
            "Plane stat `peak_teraflops_per_second`.",
        ),
        col(
            "peak_hbm_gbps",
            Float64,
            true,
            "Plane stat `peak_hbm_bw_gigabytes_per_second`.",
        ),
        col(
            "clock_rate",
            Float64,
            true,
            "Plane stat `clock_rate`, in the unit the profiler wrote.",
        ),
        col("core_count", Int64, true, "Plane stat `core_count`."),
        col(
            "line_count",
            Int32,
            false,
            "Number of distinct lines (tracks) on the plane.",
        ),
        col(
            "event_count",
            Int64,
            false,
            "Number of events on the plane.",
        ),
        col(
            "stat_count",
            Int32,
            false,
            "Number of plane stats (rows in `device_args`).",
        ),
        col(
            "process_name",
            Utf8,
            true,
            "In a Chrome trace: the process's `process_name` as written (`python3`, a trainer's name), also where the device is named otherwise (a GPU process is named by its device, `GPU 0`); NULL elsewhere.",
        ),
    ],
};

/// `device_args`.
pub static DEVICE_ARGS: TableDef = TableDef {
    name: "device_args",
    doc: "Every stat of every plane (`XPlane.stats`), e.g. `Task Environment.profile_start_time` or `/host:metadata`'s `Hlo Proto`.",
    sort_by: &["device_id"],
    columns: &concat::<3, 6, 9>(
        [
            TRACE_ID,
            DEVICE_ID,
            col(
                "key",
                Utf8,
                false,
                "Stat name from the plane's stat metadata.",
            ),
        ],
        VALUE_COLUMNS,
    ),
};

/// `tracks`.
pub static TRACKS: TableDef = TableDef {
    name: "tracks",
    doc: "One row per XLine (timeline): a host thread, a GPU stream, or a derived line such as `Steps`, `XLA Modules`, `XLA Ops`. Lines with the same id on a plane are one track.",
    sort_by: &["device_id", "track_id"],
    columns: &[
        TRACE_ID,
        col(
            "track_id",
            Int32,
            false,
            "Id of the track in this trace, numbered device by device; on a device, container tracks (`Steps`, `XLA Modules`, `XLA Ops`/`PALLAS`) come first, then the others in input order.",
        ),
        DEVICE_ID,
        col(
            "line_id",
            Int64,
            false,
            "`XLine.id` as written; in a Chrome trace the `tid` when it is an integer, else the track's position on its process (negative for async and counter tracks).",
        ),
        col(
            "display_id",
            Int64,
            false,
            "`XLine.display_id`, or `line_id` when unset.",
        ),
        col(
            "name",
            Utf8,
            false,
            "`XLine.name`; in a Chrome trace the `thread_name`, else the `tid`, or the event name of an async or counter track.",
        ),
        col(
            "display_name",
            Utf8,
            false,
            "`XLine.display_name`, or `name` when empty.",
        ),
        col(
            "kind",
            Utf8,
            false,
            "`thread` (host threads), `stream` (GPU streams: kernels, copies, sets), `gpu_annotations` (a Chrome trace's `gpu_user_annotation` events of one GPU stream, PyTorch's `ProfilerStep#N` and `record_function` ranges over its kernels, and `cuda_profiler_range` events: named `<stream> annotations`, not device work), `gpu_syncs` (the `cuda_sync` events of one GPU stream, `Stream Sync`, `Context Sync`, `Stream Wait Event`: named `<stream> syncs`, waits, not device work), `async` (a Chrome trace's async events of one name in one process), `steps`, `xla_modules`, `xla_ops`, `async_xla_ops`, `traceme`, `framework_ops`, `framework_name_scope`, `source` (`Source code`/`Source Lines`), `counters` (`_counters_`, `TC Stats`, `SC Stats`, `CMN Stats`), `launch_stats`, `sparse_core_steps`, `sparse_core_modules`, `sparse_core_ops`, `host_offload_ops`, `pallas` (the `PALLAS` kernel line), `llo_ops`, `pallas_primitives`, `llo_instructions`, `llo_unit` (a `<UNIT> Instructions` lane), `llo_utilization`, `llo_region_markers` (the TPU `Tensor Core` line of a kernel-profiling capture: zero-length LLO region-entry markers `bundle.<id>`), or `other`.",
        ),
        col(
            "unit",
            Utf8,
            true,
            "Functional unit of an LLO lane, from its line name (`VALU Instructions` is `VALU`; `SALU`, `VALU`, `EUP`, `XLU`, `VLD`, `VST`, `MXU`, `MXU<n>`); NULL otherwise.",
        ),
        col(
            "timestamp_ns",
            Int64,
            false,
            "`XLine.timestamp_ns` as written (line start).",
        ),
        col(
            "duration_ps",
            Int64,
            false,
            "`XLine.duration_ps` as written.",
        ),
        col(
            "event_count",
            Int64,
            false,
            "Number of events on the track.",
        ),
    ],
};

/// `events`.
pub static EVENTS: TableDef = TableDef {
    name: "events",
    doc: "One row per XEvent (interval). Times are ps from the trace start. Well-known stats are promoted to typed columns, resolved from the event's own stats or, failing that, its metadata's. The device is reached through the track (`JOIN tracks USING (trace_id, track_id)`): event-level tables carry no `device_id`, so that `events JOIN tracks USING (trace_id, track_id) JOIN devices USING (trace_id, device_id)` is unambiguous SQL. Track ids are numbered device by device, so the sort order (track_id, ts_ps) is also (device, track, ts).",
    sort_by: &["track_id", "ts_ps"],
    columns: &[
        TRACE_ID,
        col(
            "event_id",
            Int64,
            false,
            "Id of the event in this trace. Events are numbered in output order, `(track_id, ts_ps)`, so sorting by `event_id` is sorting by track and time, and `event_args` (sorted by `event_id`) follows `events`.",
        ),
        col(
            "track_id",
            Int32,
            false,
            "Track (line) of the event; joins `tracks`, which gives the `device_id`.",
        ),
        col(
            "metadata_id",
            Int64,
            false,
            "`XEvent.metadata_id`; joins `event_metadata` and `metadata_args`.",
        ),
        col(
            "name",
            DictUtf8,
            false,
            "Event metadata `name` (on XLA op lines it can be the full HLO text).",
        ),
        col(
            "display_name",
            DictUtf8,
            false,
            "Event metadata `display_name`, or `name` when empty (the short op name on XLA op lines).",
        ),
        col(
            "ts_ps",
            Int64,
            false,
            "Start, ps from the trace start: `line.timestamp_ns * 1000 + offset_ps`, less the trace origin when the file is not normalized.",
        ),
        col(
            "dur_ps",
            Int64,
            false,
            "`XEvent.duration_ps` (for an aggregated event: the sum over its occurrences).",
        ),
        col(
            "self_ps",
            Int64,
            false,
            "Duration less the durations of the direct children on the same track.",
        ),
        col(
            "depth",
            Int32,
            false,
            "Nesting depth on the track: 0 for top-level events.",
        ),
        col(
            "parent_id",
            Int64,
            true,
            "`event_id` of the enclosing event on the same track.",
        ),
        col(
            "occurrences",
            Int64,
            false,
            "1, or `XEvent.num_occurrences` for an aggregated event (a count below 1 counts as 1).",
        ),
        col(
            "device_offset_ps",
            Int64,
            true,
            "Stat `device_offset_ps`, as written (not shifted).",
        ),
        col(
            "device_duration_ps",
            Int64,
            true,
            "Stat `device_duration_ps`. XProf's op statistics use it in place of `dur_ps` when present; the analyses use `coalesce(device_duration_ps, dur_ps)`.",
        ),
        col("hlo_op", DictUtf8, true, "Stat `hlo_op`."),
        col("hlo_module", DictUtf8, true, "Stat `hlo_module`."),
        col(
            "program_id",
            UInt64,
            true,
            "Stat `program_id` (unsigned, as XLA writes it).",
        ),
        col(
            "tf_op",
            DictUtf8,
            true,
            "Stat `tf_op` (framework op, e.g. `jit(f)/dot_general`).",
        ),
        col("hlo_category", DictUtf8, true, "Stat `hlo_category`."),
        col("flops", Int64, true, "Stat `flops`."),
        col("bytes_accessed", Int64, true, "Stat `bytes_accessed`."),
        col(
            "correlation_id",
            Int64,
            true,
            "Stat `correlation_id` (host launch to device kernel).",
        ),
        col("group_id", Int64, true, "Stat `group_id` (step grouping)."),
        col("step_num", Int64, true, "Stat `step_num`."),
        col(
            "step_event_id",
            Int64,
            true,
            "On device planes: the `Steps` event of the same plane containing this event.",
        ),
        col(
            "module_event_id",
            Int64,
            true,
            "On device planes: the `XLA Modules` event of the same plane containing this event.",
        ),
        col(
            "kernel_event_id",
            Int64,
            true,
            "On accelerators, for events inside kernels (LLO instruction lanes, `LLO Ops`, `Pallas Primitives`, `Source code`/`Source Lines`, `XLA TraceMe` stages and scopes, `Tensor Core` region markers, `_counters_` samples): the `XLA Ops`/`PALLAS` event of the same device containing this one; NULL elsewhere.",
        ),
        col(
            "stat_count",
            Int32,
            false,
            "Number of the event's own stats (rows in `event_args`).",
        ),
    ],
};

/// `event_args`.
pub static EVENT_ARGS: TableDef = TableDef {
    name: "event_args",
    doc: "Every stat carried by an event itself (`XEvent.stats`). Stats shared through the event's metadata are in `metadata_args`; the view `event_stats` merges both as XProf does (the event's own stat wins).",
    sort_by: &["event_id"],
    columns: &concat::<3, 6, 9>(
        [
            TRACE_ID,
            col("event_id", Int64, false, "Event the stat belongs to."),
            col("key", DictUtf8, false, "Stat name."),
        ],
        VALUE_COLUMNS,
    ),
};

/// `event_metadata`.
pub static EVENT_METADATA: TableDef = TableDef {
    name: "event_metadata",
    doc: "One row per `XEventMetadata` of a plane.",
    sort_by: &["device_id", "metadata_id"],
    columns: &[
        TRACE_ID,
        DEVICE_ID,
        col(
            "metadata_id",
            Int64,
            false,
            "`XEventMetadata.id` (the map key).",
        ),
        col("name", Utf8, false, "`XEventMetadata.name`."),
        col(
            "display_name",
            Utf8,
            true,
            "`XEventMetadata.display_name`; NULL when empty.",
        ),
        col(
            "metadata",
            Binary,
            true,
            "`XEventMetadata.metadata` bytes; NULL when empty.",
        ),
        col("child_ids", ListInt64, false, "`XEventMetadata.child_id`."),
        col(
            "stat_count",
            Int32,
            false,
            "Number of metadata stats (rows in `metadata_args`).",
        ),
    ],
};

/// `metadata_args`.
pub static METADATA_ARGS: TableDef = TableDef {
    name: "metadata_args",
    doc: "Every stat of every event metadata (`XEventMetadata.stats`): stats shared by all events with that metadata, such as the cost model of an HLO op.",
    sort_by: &["device_id", "metadata_id"],
    columns: &concat::<4, 6, 10>(
        [
            TRACE_ID,
            DEVICE_ID,
            col(
                "metadata_id",
                Int64,
                false,
                "Event metadata the stat belongs to.",
            ),
            col("key", DictUtf8, false, "Stat name."),
        ],
        VALUE_COLUMNS,
    ),
};

/// `stat_metadata`.
pub static STAT_METADATA: TableDef = TableDef {
    name: "stat_metadata",
    doc: "One row per `XStatMetadata` of a plane: stat names, and the strings that `ref_value` stats point to.",
    sort_by: &["device_id", "stat_metadata_id"],
    columns: &[
        TRACE_ID,
        DEVICE_ID,
        col(
            "stat_metadata_id",
            Int64,
            false,
            "`XStatMetadata.id` (the map key).",
        ),
        col("name", Utf8, false, "`XStatMetadata.name`."),
        col(
            "description",
            Utf8,
            true,
            "`XStatMetadata.description`; NULL when empty.",
        ),
    ],
};

/// `counters`.
pub static COUNTERS: TableDef = TableDef {
    name: "counters",
    doc: "Counter samples: every event with a `counter_value` stat, and every numeric stat of events on counter lines (`_counters_`, TPU `TC Stats`/`SC Stats`/`CMN Stats`, `LLO Utilization`). The events stay in `events` too.",
    sort_by: &["track_id", "ts_ps"],
    columns: &[
        TRACE_ID,
        col(
            "track_id",
            Int32,
            false,
            "Track of the sample; joins `tracks`, which gives the `device_id`.",
        ),
        col("event_id", Int64, false, "Event the sample was read from."),
        col(
            "name",
            DictUtf8,
            false,
            "Counter name: the event name for `counter_value`, else `event name/stat name`.",
        ),
        col(
            "ts_ps",
            Int64,
            false,
            "Sample time, ps from the trace start.",
        ),
        col("value", Float64, false, "Sample value."),
    ],
};

/// `flows`.
pub static FLOWS: TableDef = TableDef {
    name: "flows",
    doc: "Links between events: XSpace `flow` stats (decoded) and host-to-device `correlation_id` pairs. A side that is absent from the trace is NULL.",
    sort_by: &["kind", "flow_id"],
    columns: &[
        TRACE_ID,
        col(
            "flow_id",
            Int64,
            false,
            "Flow id (bits 2-57 of the `flow` stat), the correlation id, or in a Chrome trace the number of the flow's (`cat`, `id`) pair in the file.",
        ),
        col(
            "kind",
            Utf8,
            false,
            "`flow` (XSpace `flow` stat) or `correlation_id`.",
        ),
        col(
            "context_type",
            Int32,
            true,
            "For `flow`: the context type (bits 58-63 of the `flow` stat).",
        ),
        col(
            "src_event_id",
            Int64,
            true,
            "Event where the flow starts (`flow` direction out, or the host event of a correlation id).",
        ),
        col(
            "dst_event_id",
            Int64,
            true,
            "Event where the flow ends (`flow` direction in, or the device event of a correlation id).",
        ),
    ],
};

/// `hlo_ops`.
pub static HLO_OPS: TableDef = TableDef {
    name: "hlo_ops",
    doc: "The static HLO op table: event metadata of device planes used on `XLA Ops`/`Async XLA Ops` lines, and any event metadata carrying cost-model stats (`hlo_category`, `flops`, `bytes_accessed`).",
    sort_by: &["device_id", "metadata_id"],
    columns: &[
        TRACE_ID,
        DEVICE_ID,
        col(
            "metadata_id",
            Int64,
            false,
            "Event metadata id; joins `events.metadata_id`.",
        ),
        col(
            "program_id",
            UInt64,
            true,
            "Stat `program_id` (unsigned, as XLA writes it).",
        ),
        col("hlo_module", Utf8, true, "Stat `hlo_module`."),
        col(
            "hlo_op",
            Utf8,
            false,
            "Op name: stat `hlo_op`, else the metadata display name, else its name.",
        ),
        col("category", Utf8, true, "Stat `hlo_category`."),
        col(
            "expression",
            Utf8,
            false,
            "The metadata name (on XLA op lines, the full HLO text).",
        ),
        col("shape", Utf8, true, "Stat `shape_with_layout`."),
        col("flops", Int64, true, "Stat `flops`."),
        col("model_flops", Int64, true, "Stat `model_flops`."),
        col("bytes_accessed", Int64, true, "Stat `bytes_accessed`."),
        col("tf_op", Utf8, true, "Stat `tf_op`."),
        col("source", Utf8, true, "Stat `source`."),
    ],
};

/// `hlo_instructions`.
pub static HLO_INSTRUCTIONS: TableDef = TableDef {
    name: "hlo_instructions",
    doc: "Every instruction of every HLO module stored in `/host:metadata` (the `Hlo Proto` stat of its event metadata, decoded; the bytes stay in `metadata_args`). A device op joins its instruction on `(trace_id, program_id, name)` = the op's `program_id` and `hlo_op`. Category, expression, framework op and source are derived from the instruction as XProf derives them.",
    sort_by: &["device_id", "metadata_id"],
    columns: &[
        TRACE_ID,
        DEVICE_ID,
        col(
            "metadata_id",
            Int64,
            false,
            "Event metadata of `/host:metadata` whose `Hlo Proto` stat holds the module; joins `metadata_args`.",
        ),
        col(
            "program_id",
            UInt64,
            true,
            "Stat `program_id` of that metadata (unsigned), else `HloModuleProto.id`.",
        ),
        col("hlo_module", Utf8, false, "`HloModuleProto.name`."),
        col(
            "computation",
            Utf8,
            false,
            "Name of the computation holding the instruction.",
        ),
        col(
            "computation_role",
            DictUtf8,
            false,
            "`entry` (the module's entry computation), `fused` (the body of a `fusion` instruction), or `called` (any other computation: reductions, loop bodies, ...).",
        ),
        col("instruction_id", Int64, false, "`HloInstructionProto.id`."),
        col(
            "name",
            Utf8,
            false,
            "Instruction name; what `hlo_op` stats name.",
        ),
        col(
            "opcode",
            DictUtf8,
            false,
            "HLO opcode (`fusion`, `custom-call`, `dot`, ...).",
        ),
        col(
            "category",
            DictUtf8,
            false,
            "XLA's category of the instruction (`HloInstruction::ToCategory`): `data formatting`, `non-fusion elementwise`, or the opcode.",
        ),
        col(
            "expression",
            Utf8,
            false,
            "The instruction as HLO text, printed as XProf prints it (operand shapes, no metadata or backend config), cut at 1000 bytes.",
        ),
        col(
            "shape",
            Utf8,
            false,
            "Result shape with layout, e.g. `f32[1024]{0}`.",
        ),
        col(
            "operands",
            ListUtf8,
            false,
            "Operand instruction names, in order.",
        ),
        col(
            "called_computations",
            ListUtf8,
            false,
            "Names of the computations the instruction calls (fused body, reducer, loop body, ...).",
        ),
        col(
            "fusion_kind",
            Utf8,
            true,
            "`kLoop`, `kInput`, `kOutput` or `kCustom` for fusions.",
        ),
        col(
            "custom_call_target",
            Utf8,
            true,
            "Target of a `custom-call`.",
        ),
        col(
            "op_type",
            Utf8,
            true,
            "`OpMetadata.op_type`; NULL when empty.",
        ),
        col(
            "op_name",
            Utf8,
            true,
            "`OpMetadata.op_name`; NULL when empty.",
        ),
        col(
            "tf_op",
            Utf8,
            false,
            "Framework op as XProf names it: `op_name:op_type`; empty when the instruction has neither.",
        ),
        col(
            "deduplicated_name",
            Utf8,
            true,
            "`OpMetadata.deduplicated_name`; NULL when empty.",
        ),
        col(
            "source",
            Utf8,
            true,
            "`file:line` of the instruction: `OpMetadata.source_file`/`source_line`, else the innermost frame of its stack.",
        ),
        col(
            "source_stack",
            Utf8,
            true,
            "The instruction's Python stack from the module's stack frame index, innermost first, one `file:line:column` per line.",
        ),
    ],
};

/// Columns that start every `llo_*` table decoded from `llo_proto`: where
/// the payload was, and its HLO op.
const LLO_KEY: [ColumnDef; 4] = [
    TRACE_ID,
    DEVICE_ID,
    col(
        "metadata_id",
        Int64,
        false,
        "Event metadata of `/host:metadata` whose `llo_proto` stat holds the program; joins `llo_programs`, `event_metadata` and `metadata_args`.",
    ),
    col(
        "hlo_op",
        Utf8,
        false,
        "The program's HLO op (`llo_proto` field 1, `hlo_instruction_name`): the `display_name` of its `XLA Ops` events.",
    ),
];

/// `llo_programs`.
pub static LLO_PROGRAMS: TableDef = TableDef {
    name: "llo_programs",
    doc: "One row per `llo_proto` payload of a TPU kernel-profiling capture (an event metadata of `/host:metadata` named `<module>(<module id>)::<HLO op>`): the compiled LLO program of one HLO op, decoded (static: the compiler's schedule, not a measurement). A payload that does not decode is a row with `decode_status` saying why, and its bytes stay in `metadata_args`.",
    sort_by: &["device_id", "metadata_id"],
    columns: &concat::<4, 10, 14>(
        LLO_KEY,
        [
            col(
                "program",
                Utf8,
                false,
                "The event metadata name, `<module>(<module id>)::<HLO op>`.",
            ),
            col(
                "hlo_module",
                Utf8,
                true,
                "The HLO module (`llo_proto` field 10), e.g. `jit_matmul_optimized`.",
            ),
            col(
                "module_id",
                Int64,
                true,
                "`HloModuleProto.id` (field 11), the `(35)` of the name; NULL when the payload did not decode.",
            ),
            col("bytes", Int64, false, "Size of the payload."),
            col(
                "bundles",
                Int64,
                true,
                "Bundles (schedule slots) of the program: the length of its static utilization arrays, XProf's `total_bundles`.",
            ),
            col("regions", Int64, true, "Regions in `llo_regions`."),
            col(
                "instructions",
                Int64,
                true,
                "Instructions in `llo_program_instructions`, XProf's `total_instructions` of `get_llo_dump_analysis --mode=opcodes`.",
            ),
            col(
                "analysis_instructions",
                Int64,
                true,
                "Instructions XProf's `get_llo_analysis` counts for the program (`total_instructions` there): it walks a loop's pre-header, body and exit and a predicated region's body and fall-through only.",
            ),
            col(
                "allocations",
                Int64,
                true,
                "Buffer allocations in `llo_allocations`.",
            ),
            col(
                "decode_status",
                Utf8,
                false,
                "`ok`, or why the payload did not decode (with the byte offset).",
            ),
        ],
    ),
};

/// `llo_regions`.
pub static LLO_REGIONS: TableDef = TableDef {
    name: "llo_regions",
    doc: "The region tree of each LLO program (static), as XProf's `get_llo_dump_analysis --mode=region_tree` shows it: one row per node, in program order. A loop or predicated region is a node of its own (`kind` `loop`/`predicated_region`, no region id) whose children are its parts (`pre_header`, `body`, `check_branch_region`, ...).",
    sort_by: &["device_id", "metadata_id"],
    columns: &concat::<4, 16, 20>(
        LLO_KEY,
        [
            col(
                "node",
                Int64,
                false,
                "Position of the node in program order (0 is the root); `parent_node` refers to it.",
            ),
            col(
                "parent_node",
                Int64,
                true,
                "`node` of the enclosing node; NULL for the root.",
            ),
            col("depth", Int32, false, "Depth in the tree (0 for the root)."),
            col(
                "region_id",
                Int64,
                true,
                "The LLO region id (`ordinal`): the id of the `Tensor Core` markers (`llo_region_entries.region_id`), the `_counters_` regions and the compiler's `$regionN`; NULL on loop and predicated-region nodes.",
            ),
            col(
                "parent_region_id",
                Int64,
                true,
                "`region_id` of the nearest enclosing region.",
            ),
            col(
                "name",
                Utf8,
                false,
                "XProf's node name: the region's own name, else `top` (root), `sub_region`, `loop`, `predicated_region`, or the part it is (`pre_header`, `header`, `header_branch`, `body`, `footer`, `footer_branch`, `exit`, `check_region`, `check_branch_region`, `predicated_region`, `fallthru_region`).",
            ),
            col(
                "kind",
                Utf8,
                false,
                "XProf's node kind: `region` (the root and the parts of loops and predicated regions), `sub_region`, `loop`, `predicated_region`.",
            ),
            col(
                "start_bundle",
                Int64,
                true,
                "First bundle (XProf's `start_bundleno`); NULL when the region is not placed (written as -1).",
            ),
            col(
                "limit_bundle",
                Int64,
                true,
                "Bundle past the last (`limit_bundleno`); NULL when not placed.",
            ),
            col(
                "instructions",
                Int64,
                false,
                "Instructions directly in the region (XProf's `num_instructions`, not counting nested regions).",
            ),
            col(
                "trip_count",
                Int64,
                true,
                "On a `loop` node: its trips, from the loop's index space ((limit - start) / step).",
            ),
            col(
                "region_path",
                Utf8,
                false,
                "The node's path as XProf's `bundle_util` names the innermost region of a bundle (`region/region/loop/region`, ...).",
            ),
            col(
                "named_scope",
                Utf8,
                true,
                "The named scopes (outermost first, joined by `/`) that most of the region's own instructions carry, from the program's provenance (`llo_program_instructions`); NULL when none carries one.",
            ),
            col("primitive", Utf8, true, "Likewise, the JAX primitive."),
            col("source_file", Utf8, true, "Likewise, the source file."),
            col("source_line", Int64, true, "Likewise, the source line."),
        ],
    ),
};

/// `llo_bundle_units`.
pub static LLO_BUNDLE_UNITS: TableDef = TableDef {
    name: "llo_bundle_units",
    doc: "Static slot use of each functional unit in each bundle of an LLO program (`llo_proto` field 6; XProf's `bundle_util` rows, one row per bundle and unit here): what the compiler scheduled, not a measurement. Spills and fills are units with no capacity.",
    sort_by: &["device_id", "metadata_id"],
    columns: &concat::<4, 6, 10>(
        LLO_KEY,
        [
            col("bundle", Int64, false, "Bundle (schedule slot) number."),
            col(
                "unit",
                Utf8,
                false,
                "Unit in this project's vocabulary: `MXU`, `XLU`, `VALU`, `EUP`, `VLD`, `VST`, `SALU`, `SPILL`, `FILL` (the same names as `tracks.unit` and `unit_counters.unit`).",
            ),
            col(
                "xprof_unit",
                Utf8,
                false,
                "The unit as XProf's `bundle_util` names it: `mxu`, `xlu`, `vector_alu`, `vector_eup`, `vector_load`, `vector_store`, `scalar_alu`, `spill`, `fill`.",
            ),
            col(
                "used",
                Int64,
                false,
                "Slots of the unit used in the bundle.",
            ),
            col(
                "capacity",
                Int64,
                true,
                "Slots of the unit per bundle; NULL for spills and fills.",
            ),
            col(
                "region_id",
                Int64,
                true,
                "The region holding the bundle (`llo_regions.region_id`): of the placed regions whose range holds it, the last in program order (the innermost where regions nest), as XProf's `region_path` picks it.",
            ),
        ],
    ),
};

/// `llo_program_instructions`.
pub static LLO_PROGRAM_INSTRUCTIONS: TableDef = TableDef {
    name: "llo_program_instructions",
    doc: "Every instruction of every LLO program (static), with its opcode as XProf prints it, its category and execution unit, its bundle, its region, and where it came from (JAX primitive, named scopes, source line) when the program carries provenance.",
    sort_by: &["device_id", "metadata_id"],
    columns: &concat::<4, 15, 19>(
        LLO_KEY,
        [
            col(
                "instruction_id",
                Int64,
                false,
                "Instruction id (the SSA number of the compiler's dumps, XProf's `ordinal`).",
            ),
            col(
                "opcode",
                Utf8,
                false,
                "Opcode as XProf names it (`OPCODE_VECTOR_LOAD`, ...; `OPCODE_UNKNOWN_<n>` for a value XProf 2.24.2 does not know).",
            ),
            col(
                "opcode_value",
                Int32,
                false,
                "The opcode's number as written.",
            ),
            col(
                "category",
                Utf8,
                false,
                "Category as XProf's `--mode=opcodes` prints it (`load_store`, `matrix`, `vector`, `scalar`, `dma`, `control`, ...).",
            ),
            col(
                "unit",
                Utf8,
                false,
                "Execution unit as XProf's `get_llo_analysis` counts it (`MXU`, `VALU`, `SALU`, `LOAD_STORE`, `DMA`, `XLU`, `SYNC`, `OTHER`, ...).",
            ),
            col(
                "bundle",
                Int64,
                true,
                "Bundle (schedule slot); NULL for an unscheduled instruction.",
            ),
            col(
                "region_id",
                Int64,
                true,
                "The region whose members hold the instruction.",
            ),
            col(
                "mxu",
                Int32,
                true,
                "MXU index on MXU-related ops (`llo_proto` instruction field 11, inferred).",
            ),
            col(
                "register_type",
                Utf8,
                true,
                "Class of the result register (`PREG`, `SREG`, `VMREG`, `VREG`, ...); NULL for none.",
            ),
            col(
                "pseudo_kind",
                Utf8,
                true,
                "Pseudo-instruction kind (`SPILL_TO_MEMORY`, `FILL_FROM_MEMORY`, `COPY_REGISTER`, ...); NULL for a real instruction.",
            ),
            col(
                "comment",
                Utf8,
                true,
                "The instruction's comment (`materialized constant`, `TraceMeStart(acc) [`, `BoundsCheck ...`).",
            ),
            col(
                "primitive",
                Utf8,
                true,
                "JAX primitive it lowers (`dot_general`, `dma_start`, ...), from the provenance table.",
            ),
            col(
                "named_scope",
                Utf8,
                true,
                "Named scopes, outermost first, joined by `/` (`ep_run_kernel/acc`).",
            ),
            col(
                "source_file",
                Utf8,
                true,
                "Source file of the innermost frame (XProf's source map).",
            ),
            col("source_line", Int64, true, "Its line."),
        ],
    ),
};

/// `llo_allocations`.
pub static LLO_ALLOCATIONS: TableDef = TableDef {
    name: "llo_allocations",
    doc: "Buffer allocations of each LLO program (its constant pool's allocation entries, XProf's `--mode=spills` allocations): VMEM, SMEM and sync-flag buffers with their size and flags (static).",
    sort_by: &["device_id", "metadata_id"],
    columns: &concat::<4, 8, 12>(
        LLO_KEY,
        [
            col(
                "ordinal",
                Int64,
                false,
                "Allocation number (`#allocationN` of the compiler's dumps).",
            ),
            col("size_bytes", Int64, false, "Size in bytes."),
            col(
                "memory_space",
                Utf8,
                false,
                "`vmem`, `smem` or `sflag` for spaces 2, 3 and 4 (inferred from the dumps), else `space_<n>`.",
            ),
            col("space", Int32, false, "The memory space number as written."),
            col("is_spill", Boolean, false, "A spill slot."),
            col(
                "is_scoped",
                Boolean,
                false,
                "Scoped to the kernel (else at a fixed address).",
            ),
            col("is_virtual", Boolean, false, "Virtual."),
            col("is_remote", Boolean, false, "Remote."),
        ],
    ),
};

/// `llo_register_live_ranges`.
pub static LLO_REGISTER_LIVE_RANGES: TableDef = TableDef {
    name: "llo_register_live_ranges",
    doc: "One row per register live range of each LLO program (static), as XProf's `get_llo_dump_analysis --mode=register_pressure` builds them: an instruction that defines a register (register type set, register not negative) opens a range at its bundle (0 when unscheduled), which ends at the latest bundle of an instruction using it as an operand, never before it starts. XProf's `total_live_ranges` is the row count.",
    sort_by: &["device_id", "metadata_id"],
    columns: &concat::<4, 5, 9>(
        LLO_KEY,
        [
            col(
                "instruction_id",
                Int64,
                false,
                "The defining instruction (`llo_program_instructions.instruction_id`); of instructions with the same id, the last in program order.",
            ),
            col(
                "register_type",
                Utf8,
                false,
                "`PREG`, `SREG`, `VMREG`, `VREG`, `RPREG`, `DREG` or `CBREG`.",
            ),
            col("register", Int32, false, "Register number."),
            col(
                "start_bundle",
                Int64,
                false,
                "First bundle the register is live in.",
            ),
            col(
                "end_bundle",
                Int64,
                false,
                "Last bundle it is live in (inclusive): the latest bundle of its users, or `start_bundle`.",
            ),
        ],
    ),
};

/// `llo_register_pressure`.
pub static LLO_REGISTER_PRESSURE: TableDef = TableDef {
    name: "llo_register_pressure",
    doc: "Live registers of each type in each bundle of an LLO program (static): the `llo_register_live_ranges` covering the bundle, one row per bundle and register type that has any. XProf's `peak_by_register_type` is `max(live)` by type, and its `hottest_bundles` the 15 bundles of highest `sum(live)` (ties to the lower bundle).",
    sort_by: &["device_id", "metadata_id"],
    columns: &concat::<4, 4, 8>(
        LLO_KEY,
        [
            col("bundle", Int64, false, "Bundle."),
            col(
                "register_type",
                Utf8,
                false,
                "Register type, as in `llo_register_live_ranges`.",
            ),
            col(
                "live",
                Int64,
                false,
                "Live ranges of that type covering the bundle (at least 1).",
            ),
            col(
                "region_id",
                Int64,
                true,
                "The region holding the bundle, as `llo_bundle_units.region_id`; NULL for a bundle past the program's.",
            ),
        ],
    ),
};

/// `llo_bdi_stalls`.
pub static LLO_BDI_STALLS: TableDef = TableDef {
    name: "llo_bdi_stalls",
    doc: "Stall codes the compiler wrote in LLO instruction comments (static), as XProf's `get_llo_dump_analysis --mode=bdi_stalls` reads them: after the first `bdi:` of the comment, up to a space, each comma-separated part's text before `:`, kept when it is `A`, `B`, `F`, `H`, `O` or `R`, once per instruction. One row per code of each annotated instruction; XProf's `code_histogram` is `count(*)` by code and `total_annotated_instructions` the distinct instructions.",
    sort_by: &["device_id", "metadata_id"],
    columns: &concat::<4, 6, 10>(
        LLO_KEY,
        [
            col("instruction_id", Int64, false, "The annotated instruction."),
            col(
                "bundle",
                Int64,
                true,
                "Its bundle; NULL when unscheduled (XProf prints 0).",
            ),
            col(
                "code",
                Utf8,
                false,
                "The stall code: `A`, `B`, `F`, `H`, `O` or `R`.",
            ),
            col(
                "position",
                Int32,
                false,
                "The code's place among the instruction's codes, from 1 (XProf's `codes` order).",
            ),
            col("comment", Utf8, false, "The whole comment."),
            col(
                "region_id",
                Int64,
                true,
                "The region whose members hold the instruction.",
            ),
        ],
    ),
};

/// `llo_bundle_sources`.
pub static LLO_BUNDLE_SOURCES: TableDef = TableDef {
    name: "llo_bundle_sources",
    doc: "The source lines of the instructions scheduled in each bundle of an LLO program (static): XProf's `get_llo_dump_analysis --mode=source_for_bundle --bundle=N` for every bundle at once. One row per bundle and source; a bundle whose instructions carry no provenance has none.",
    sort_by: &["device_id", "metadata_id"],
    columns: &concat::<4, 6, 10>(
        LLO_KEY,
        [
            col("bundle", Int64, false, "Bundle."),
            col(
                "source",
                Utf8,
                false,
                "`file:line` as XProf prints it (`file` alone when the line is written as 0): the last frame of the instruction's source-map entry.",
            ),
            col("source_file", Utf8, false, "The file."),
            col(
                "source_line",
                Int64,
                true,
                "The line; NULL when written as 0.",
            ),
            col(
                "instructions",
                Int64,
                false,
                "Instructions of the bundle with this source.",
            ),
            col(
                "region_id",
                Int64,
                true,
                "The region holding the bundle, as `llo_bundle_units.region_id`.",
            ),
        ],
    ),
};

/// `llo_target_info`.
pub static LLO_TARGET_INFO: TableDef = TableDef {
    name: "llo_target_info",
    doc: "The target each LLO program was compiled for (`llo_proto` field 7; XProf's `get_llo_dump_analysis --mode=target_info` key fields): one row per program that carries it. The topology columns are NULL when the payload has no topology (XProf then prints only the replica count and reserved HBM).",
    sort_by: &["device_id", "metadata_id"],
    columns: &concat::<4, 13, 17>(
        LLO_KEY,
        [
            col("replica_count", Int64, false, "Replicas (`replica_count`)."),
            col(
                "reserved_hbm_usage_bytes",
                Int64,
                false,
                "HBM bytes reserved (`reserved_hbm_usage_bytes`).",
            ),
            col(
                "chip_config_name",
                Utf8,
                true,
                "Chip configuration (`megachip_tccontrol` on a real v6e capture).",
            ),
            col("platform_type", Int32, true, "Platform type, as written."),
            col(
                "variant",
                Int32,
                true,
                "Chip variant, as written (XProf does not print it).",
            ),
            col(
                "enhanced_barrier_enabled",
                Boolean,
                true,
                "Enhanced barrier.",
            ),
            col(
                "chips_per_host_x",
                Int32,
                true,
                "Chips per host along x (`chips_per_host_bounds`).",
            ),
            col("chips_per_host_y", Int32, true, "Along y."),
            col("chips_per_host_z", Int32, true, "Along z."),
            col("host_x", Int32, true, "Hosts along x (`host_bounds`)."),
            col("host_y", Int32, true, "Along y."),
            col("host_z", Int32, true, "Along z."),
            col(
                "bounds",
                Utf8,
                true,
                "XProf's text of both bounds, `chips x=2, y=2, z=1; hosts x=1, y=1, z=1` (each part only when present).",
            ),
        ],
    ),
};

const DUMP_OP: ColumnDef = col(
    "hlo_op",
    Utf8,
    false,
    "The HLO op the dump is of, from its file name `<ns>-<HLO op>-<pass>-<dump>.txt`; joins `llo_programs.hlo_op` and `llo_region_entries.hlo_op`.",
);

/// `llo_dump_bundles`.
pub static LLO_DUMP_BUNDLES: TableDef = TableDef {
    name: "llo_dump_bundles",
    doc: "One row per bundle of an LLO compiler dump's final bundles (`…-final_bundles.txt` of `--xla_jf_dump_to`; static). The dump is of an uninstrumented compile, so addresses are not a capture's marker addresses: `region_id` links the two.",
    sort_by: &["address"],
    columns: &[
        TRACE_ID,
        DUMP_OP,
        col(
            "address",
            Int64,
            true,
            "Bundle address (0, then `0x…` in the dump); NULL when the written address does not fit in 64 bits (the bundle is then unread: see `unread_text`).",
        ),
        col(
            "line",
            Int64,
            false,
            "The file line (1-based) where the bundle starts: the file's order, kept where the addresses are not in order (rows are sorted by address, with a converter warning).",
        ),
        col(
            "tag",
            Utf8,
            true,
            "Control-target tag as written (`LB` loop body, `PF` predicated fallthrough, `LH`, `LE`, `PB`, `CT`); NULL for none.",
        ),
        col(
            "in_loop",
            Boolean,
            false,
            "The bundle carries the `>` mark (inside the loop: inferred).",
        ),
        col(
            "ops",
            Int64,
            true,
            "Ops in the bundle (0 for an empty `{}` bundle); NULL for a bundle that could not be read (`unread_text`).",
        ),
        col(
            "region_id",
            Int64,
            true,
            "The innermost LLO region open at the bundle, from the `Start region N`/`End region N` comments: the `region_id` of `llo_regions` and `llo_region_entries`.",
        ),
        col(
            "regions_started",
            ListInt64,
            false,
            "Regions whose `Start region N` comment is on the bundle, in the comment's order.",
        ),
        col(
            "regions_ended",
            ListInt64,
            false,
            "Regions whose `End region N` comment is on the bundle, in the comment's order.",
        ),
        col(
            "regions_empty",
            ListInt64,
            false,
            "Regions whose `Start/End empty region N` comment is on the bundle: regions the compiler kept with no bundle of their own (they open no region at the bundle).",
        ),
        col(
            "is_entry",
            Boolean,
            false,
            "The bundle's comment says `entry bundle`.",
        ),
        col(
            "is_exit",
            Boolean,
            false,
            "The bundle's comment says `exit bundle`.",
        ),
        col(
            "comment",
            Utf8,
            true,
            "The trailing comment as written (region events joined by ` :: `).",
        ),
        col(
            "unread_text",
            Utf8,
            true,
            "The bundle's text as written when it could not be read (a converter warning names its file, line and byte offset); NULL otherwise.",
        ),
    ],
};

/// `llo_dump_ops`.
pub static LLO_DUMP_OPS: TableDef = TableDef {
    name: "llo_dump_ops",
    doc: "One row per op of each bundle of an LLO compiler dump's final bundles (static).",
    sort_by: &["address", "position"],
    columns: &[
        TRACE_ID,
        DUMP_OP,
        col(
            "address",
            Int64,
            false,
            "Bundle address; joins `llo_dump_bundles`.",
        ),
        col(
            "position",
            Int32,
            false,
            "Place of the op in its bundle (0 first).",
        ),
        col(
            "opcode",
            Utf8,
            false,
            "The op's mnemonic (`vmatmul.mubr.f32.gmra.mxu0`, `vld`, `dma.hbm_to_vmem`, `sadd.s32`, ...).",
        ),
        col(
            "unit",
            Utf8,
            false,
            "The unit whose slot the op takes, in the vocabulary of `tracks.unit` and `llo_bundle_units` (`MXU`, `XLU`, `VPOP`, `VALU`, `VLD`, `VST`, `SALU`; `PSEUDO` for `inlined_call_operand`, `sphi`, `int_to_ptr`; `OTHER` for a mnemonic no rule knows), decided from the mnemonic so that each op counts where the compiler's per-bundle utilization dump counts it (cross-lane `*.xlane.*` and `*.xluN` ops are `XLU`, `vpop.*` `VPOP`; docs/analyses.md lists the rules); `llo_dump_unit_check` compares it with that dump bundle by bundle. MXU ops do not add up to the dump's MXU column, which counts the MXUs modelled busy.",
        ),
        col(
            "unit_as_written",
            Utf8,
            false,
            "The unit as the op names it: the `mxuN` suffix of MXU ops, else the mnemonic's first part (`vld`, `dma`, `sadd`).",
        ),
        col(
            "result",
            Utf8,
            true,
            "The result register or value (`%v88_v5`); NULL for an op without one.",
        ),
        col("text", Utf8, false, "The op as written."),
    ],
};

/// `llo_dump_bundle_units`.
pub static LLO_DUMP_BUNDLE_UNITS: TableDef = TableDef {
    name: "llo_dump_bundle_units",
    doc: "Static slot use per bundle and unit from an LLO compiler dump's `…-final_hlo-static-per-bundle-utilization.txt` (row i of the dump is bundle address i).",
    sort_by: &["address"],
    columns: &[
        TRACE_ID,
        DUMP_OP,
        col("address", Int64, false, "Bundle address."),
        col(
            "unit",
            Utf8,
            false,
            "Unit in this project's vocabulary (`VLOAD` is `VLD`, `VSTORE` `VST`, `VLOAD:FILL` `FILL`, `VSTORE:SPILL` `SPILL`; `MXU`, `XLU`, `VALU`, `VPOP`, `EUP`, `SALU` as written).",
        ),
        col("unit_as_written", Utf8, false, "The dump's column name."),
        col(
            "used",
            Int64,
            false,
            "Slots used (for `MXU`, the MXUs the compiler models busy).",
        ),
        col(
            "capacity",
            Int64,
            false,
            "The unit's capacity from the dump's `CAPACITY` line.",
        ),
    ],
};

/// `llo_dump_schedule`.
pub static LLO_DUMP_SCHEDULE: TableDef = TableDef {
    name: "llo_dump_schedule",
    doc: "The lines of an LLO compiler dump's `…-schedule-analysis_final_bundles.txt`: bundle totals, and scheduled bundles per HLO instruction and per opcode (static).",
    sort_by: &["line"],
    columns: &[
        TRACE_ID,
        DUMP_OP,
        col("line", Int64, false, "Line of the file (1 first)."),
        col(
            "kind",
            Utf8,
            false,
            "`total`, `empty`, `non_empty` (bundle counts), `instruction` (one HLO instruction) or `opcode` (an `[opcode]` summary).",
        ),
        col(
            "name",
            Utf8,
            true,
            "The HLO instruction text (`instruction`) or the opcode (`opcode`).",
        ),
        col("bundles", Float64, false, "Scheduled bundles."),
        col(
            "pct",
            Float64,
            true,
            "Share of the scheduled bundles, percent, as written.",
        ),
        col(
            "instances",
            Int64,
            true,
            "Instances of the opcode (`opcode` rows).",
        ),
    ],
};

/// `llo_dump_allocations`.
pub static LLO_DUMP_ALLOCATIONS: TableDef = TableDef {
    name: "llo_dump_allocations",
    doc: "Buffer allocations of an LLO compiler dump's `…-original.txt` (the LLO before scheduling): `#allocationN [shape = …, space=…, size = …, scoped|fixed_abs, tag = …]` (static).",
    sort_by: &["line"],
    columns: &[
        TRACE_ID,
        DUMP_OP,
        col("line", Int64, false, "Line of the file (1 first)."),
        col("name", Utf8, false, "`#allocationN`."),
        col("shape", Utf8, true, "XLA shape as written."),
        col(
            "memory_space",
            Utf8,
            false,
            "`vmem`, `smem`, `sflag`, ... as written.",
        ),
        col("size_bytes", Int64, false, "Size in bytes."),
        col(
            "offset_bytes",
            Int64,
            true,
            "Offset (`offset = …`), when written.",
        ),
        col("is_scoped", Boolean, false, "`scoped` (else `fixed_abs`)."),
        col("tag", Utf8, true, "The allocation's tag."),
    ],
};

/// `profile_nodes`.
pub static PROFILE_NODES: TableDef = TableDef {
    name: "profile_nodes",
    doc: "Every node of an untimed call tree: Proton's tree profile (hatchet JSON), kernels and scopes with aggregate metrics and no timestamps. The root (`ROOT`) is node 0; nodes are numbered depth first, so a node's subtree is the nodes from it to the next one at its depth or above. Metrics other than those promoted here are in `node_metrics`.",
    sort_by: &["node_id"],
    columns: &[
        TRACE_ID,
        col(
            "node_id",
            Int64,
            false,
            "Id of the node in this trace: its position in a depth-first walk from the root (0).",
        ),
        col(
            "parent_id",
            Int64,
            true,
            "`node_id` of the parent; NULL for the root.",
        ),
        col("depth", Int32, false, "Depth: 0 for the root."),
        col(
            "name",
            Utf8,
            false,
            "`frame.name`: a kernel, a scope, or a Python frame (`file.py:function@line`).",
        ),
        col(
            "path",
            ListUtf8,
            false,
            "Names from the root's child down to this node (the root's is empty).",
        ),
        col(
            "frame_type",
            Utf8,
            true,
            "`frame.type` (`function`, ...); NULL when absent.",
        ),
        col(
            "time_ps",
            Int64,
            true,
            "Metric `time (ns)` (inclusive), in ps.",
        ),
        col("count", Int64, true, "Metric `count`: kernel launches."),
        col(
            "device_id",
            Utf8,
            true,
            "Metric `device_id` as written (a string): the device of a kernel; joins the `devices` row whose `ordinal` it names.",
        ),
        col(
            "device_type",
            Utf8,
            true,
            "Metric `device_type`: `CUDA` or `HIP`.",
        ),
        col("flops", Float64, true, "Metric `flops`."),
        col("flops8", Float64, true, "Metric `flops8`."),
        col("flops16", Float64, true, "Metric `flops16`."),
        col("flops32", Float64, true, "Metric `flops32`."),
        col("flops64", Float64, true, "Metric `flops64`."),
        col("bytes", Float64, true, "Metric `bytes`."),
        col(
            "metric_count",
            Int32,
            false,
            "Number of the node's metrics in `node_metrics`.",
        ),
    ],
};

/// `node_metrics`.
pub static NODE_METRICS: TableDef = TableDef {
    name: "node_metrics",
    doc: "Every metric of a `profile_nodes` node not promoted to a column there: PC-sampling stall reasons, `cycles`, `normalized_cycles`, user metrics, and every exclusive (` (exc)`) or property (` (pty)`) metric, typed.",
    sort_by: &["node_id"],
    columns: &concat::<4, 6, 10>(
        [
            TRACE_ID,
            col(
                "node_id",
                Int64,
                false,
                "Node the metric belongs to; joins `profile_nodes`.",
            ),
            col(
                "metric",
                Utf8,
                false,
                "Metric name, without its ` (exc)` or ` (pty)` suffix.",
            ),
            col(
                "kind",
                DictUtf8,
                false,
                "`inclusive` (a plain name), `exclusive` (` (exc)`) or `property` (` (pty)`).",
            ),
        ],
        VALUE_COLUMNS,
    ),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_starts_with_trace_id_and_has_unique_columns() {
        for t in Table::ALL {
            let def = t.def();
            assert_eq!(def.columns[0].name, "trace_id", "{}", def.name);
            let mut names: Vec<_> = def.columns.iter().map(|c| c.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(
                names.len(),
                def.columns.len(),
                "duplicate column in {}",
                def.name
            );
            for s in def.sort_by {
                assert!(
                    def.column_index(s).is_some(),
                    "{}: sort column {s}",
                    def.name
                );
            }
            assert_eq!(Table::from_name(def.name), Some(t));
        }
    }

    #[test]
    fn schema_carries_version_metadata() {
        let s = Table::Events.schema();
        assert_eq!(s.metadata()[SCHEMA_VERSION_KEY], SCHEMA_VERSION.to_string());
        assert_eq!(s.metadata()[TABLE_KEY], "events");
        assert_eq!(
            s.field_with_name("ts_ps").unwrap().data_type(),
            &DataType::Int64
        );
    }
}
