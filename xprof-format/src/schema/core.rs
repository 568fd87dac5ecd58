//! The tables every reader fills: the converted inputs (`traces`), their
//! planes (`devices`, `device_args`), timelines (`tracks`), events and
//! their stats (`events`, `event_args`, `event_metadata`, `metadata_args`,
//! `stat_metadata`), counter samples (`counters`) and flows (`flows`).

use crate::{StatValue, Sym};

table! {
    /// One row per converted input: one profile file (an XSpace file is one host of a run; a Chrome
    /// trace is one process tree).
    Traces: TRACES = "traces", sorted by ["trace_id"],
    TraceRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        /// Input format, the name of the reader that converted it
        /// (`xprof_sql::convert::registry::READERS`): `xspace`, `chrome_trace` (Chrome Trace Event
        /// JSON: PyTorch Kineto, JAX `*.trace.json.gz`, Proton's kernel timeline and intra-kernel
        /// traces), `mosaic_gpu` (Mosaic GPU profiler traces), `proton_tree` (Proton tree profiles,
        /// JSON or MessagePack) or `llo_dump` (one file of the TPU LLO compiler's dump folder;
        /// `start_unix_ns` is its file name's time stamp).
        source_format: &'a str = (Utf8),
        /// Path of the input file as given.
        source_path: &'a str = (Utf8),
        /// Run name: the run folder of a log or run directory.
        run: Option<&'a str> = (Utf8 null),
        /// Host name: the file stem (`HOST.xplane.pb`, `HOST.trace.json.gz`, `HOST.pt.trace.json`,
        /// `HOST.chrome_trace`, `HOST.json`).
        host: &'a str = (Utf8),
        /// Wall clock (ns since the Unix epoch) of `ts_ps = 0`: `Task
        /// Environment.profile_start_time`.
        start_unix_ns: Option<i64> = (Int64 null),
        /// `Task Environment.profile_stop_time`, ns since the Unix epoch.
        stop_unix_ns: Option<i64> = (Int64 null),
        /// End of the last event, ps from the trace start.
        duration_ps: i64 = (Int64),
        /// Schema version of the tables (`xprof_format::SCHEMA_VERSION`).
        schema_version: i32 = (Int32),
        /// Version of xprof-sql that converted the input.
        converter_version: &'a str = (Utf8),
        /// `XSpace.hostnames`.
        hostnames: &'a [String] = (ListUtf8),
        /// `XSpace.errors`: errors recorded by the profiler in the file.
        errors: &'a [String] = (ListUtf8),
        /// `XSpace.warnings`: warnings recorded by the profiler in the file.
        warnings: &'a [String] = (ListUtf8),
        /// What the converter noticed and kept anyway (unknown metadata ids, events out of order,
        /// ...).
        converter_warnings: &'a [String] = (ListUtf8),
    }
}

table! {
    /// One row per XPlane: a device (`/device:TPU:0`, `/device:GPU:0`) or a source (`/host:CPU`,
    /// `/host:metadata`, `Task Environment`). In a Chrome trace: one row per process (`pid`), named
    /// by its `process_name` (a GPU by its device, `GPU <n>`, the process name in `process_name`),
    /// after a first `Trace Metadata` row holding the file's top-level keys.
    Devices: DEVICES = "devices", sorted by ["device_id"],
    DeviceRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        /// Id of the plane in this trace (its position in the file).
        device_id: i32 = (Int32),
        /// `XPlane.id` as written.
        plane_id: i64 = (Int64),
        /// `XPlane.name`, e.g. `/device:TPU:0`.
        name: &'a str = (Utf8),
        /// `host` (`/host:CPU`), `host_other` (other `/host:` planes), `gpu`, `tpu`, `sparse_core`,
        /// `custom`, `metadata` (`/host:metadata`), `task_environment`, or `other`.
        kind: &'a str = (Utf8),
        /// Device number from the name (`/device:TPU:3` is 3).
        ordinal: Option<i32> = (Int32 null),
        /// Plane stat `device_type_string`, e.g. `TPU v6 Lite`.
        r#type: Option<&'a str> = (Utf8 null),
        /// Plane stat `device_vendor`.
        vendor: Option<&'a str> = (Utf8 null),
        /// Plane stat `peak_teraflops_per_second`.
        peak_tflops: Option<f64> = (Float64 null),
        /// Plane stat `peak_hbm_bw_gigabytes_per_second`.
        peak_hbm_gbps: Option<f64> = (Float64 null),
        /// Plane stat `clock_rate`, in the unit the profiler wrote.
        clock_rate: Option<f64> = (Float64 null),
        /// Plane stat `core_count`.
        core_count: Option<i64> = (Int64 null),
        /// Number of distinct lines (tracks) on the plane.
        line_count: i32 = (Int32),
        /// Number of events on the plane.
        event_count: i64 = (Int64),
        /// Number of plane stats (rows in `device_args`).
        stat_count: i32 = (Int32),
        /// In a Chrome trace: the process's `process_name` as written (`python3`, a trainer's
        /// name), also where the device is named otherwise (a GPU process is named by its device,
        /// `GPU 0`); NULL elsewhere.
        process_name: Option<&'a str> = (Utf8 null),
    }
}

table! {
    /// Every stat of every plane (`XPlane.stats`), e.g. `Task Environment.profile_start_time` or
    /// `/host:metadata`'s `Hlo Proto`.
    DeviceArgs: DEVICE_ARGS = "device_args", sorted by ["device_id"],
    DeviceArgRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        /// Stat name from the plane's stat metadata.
        key: &'a str = (Utf8),
        value: StatValue<'a> = (values),
    }
}

table! {
    /// One row per XLine (timeline): a host thread, a GPU stream, or a derived line such as
    /// `Steps`, `XLA Modules`, `XLA Ops`. Lines with the same id on a plane are one track.
    Tracks: TRACKS = "tracks", sorted by ["device_id", "track_id"],
    TrackRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        /// Id of the track in this trace, numbered device by device; on a device, container tracks
        /// (`Steps`, `XLA Modules`, `XLA Ops`/`PALLAS`) come first, then the others in input order.
        track_id: i32 = (Int32),
        device_id: i32 = (= DEVICE_ID),
        /// `XLine.id` as written; in a Chrome trace the `tid` when it is an integer, else the
        /// track's position on its process (negative for async and counter tracks).
        line_id: i64 = (Int64),
        /// `XLine.display_id`, or `line_id` when unset.
        display_id: i64 = (Int64),
        /// `XLine.name`; in a Chrome trace the `thread_name`, else the `tid`, or the event name of
        /// an async or counter track.
        name: &'a str = (Utf8),
        /// `XLine.display_name`, or `name` when empty.
        display_name: &'a str = (Utf8),
        /// `thread` (host threads), `stream` (GPU streams: kernels, copies, sets),
        /// `gpu_annotations` (a Chrome trace's `gpu_user_annotation` events of one GPU stream,
        /// PyTorch's `ProfilerStep#N` and `record_function` ranges over its kernels, and
        /// `cuda_profiler_range` events: named `<stream> annotations`, not device work),
        /// `gpu_syncs` (the `cuda_sync` events of one GPU stream, `Stream Sync`, `Context Sync`,
        /// `Stream Wait Event`: named `<stream> syncs`, waits, not device work), `async` (a Chrome
        /// trace's async events of one name in one process), `steps`, `xla_modules`, `xla_ops`,
        /// `async_xla_ops`, `traceme`, `framework_ops`, `framework_name_scope`, `source` (`Source
        /// code`/`Source Lines`), `counters` (`_counters_`, `TC Stats`, `SC Stats`, `CMN Stats`),
        /// `launch_stats`, `sparse_core_steps`, `sparse_core_modules`, `sparse_core_ops`,
        /// `host_offload_ops`, `pallas` (the `PALLAS` kernel line), `llo_ops`, `pallas_primitives`,
        /// `llo_instructions`, `llo_unit` (a `<UNIT> Instructions` lane), `llo_utilization`,
        /// `llo_region_markers` (the TPU `Tensor Core` line of a kernel-profiling capture:
        /// zero-length LLO region-entry markers `bundle.<id>`), or `other`.
        kind: &'a str = (Utf8),
        /// Functional unit of an LLO lane, from its line name (`VALU Instructions` is `VALU`;
        /// `SALU`, `VALU`, `EUP`, `XLU`, `VLD`, `VST`, `MXU`, `MXU<n>`); NULL otherwise.
        unit: Option<&'a str> = (Utf8 null),
        /// `XLine.timestamp_ns` as written (line start).
        timestamp_ns: i64 = (Int64),
        /// `XLine.duration_ps` as written.
        duration_ps: i64 = (Int64),
        /// Number of events on the track.
        event_count: i64 = (Int64),
    }
}

table_columns! {
    /// One row per XEvent (interval). Times are ps from the trace start. Well-known stats are
    /// promoted to typed columns, resolved from the event's own stats or, failing that, its
    /// metadata's. The device is reached through the track (`JOIN tracks USING (trace_id,
    /// track_id)`): event-level tables carry no `device_id`, so that `events JOIN tracks USING
    /// (trace_id, track_id) JOIN devices USING (trace_id, device_id)` is unambiguous SQL. Track ids
    /// are numbered device by device, so the sort order (track_id, ts_ps) is also (device, track,
    /// ts).
    Events: EVENTS = "events", sorted by ["track_id", "ts_ps"],
    {
        trace_id = (= TRACE_ID),
        /// Id of the event in this trace. Events are numbered in output order, `(track_id, ts_ps)`,
        /// so sorting by `event_id` is sorting by track and time, and `event_args` (sorted by
        /// `event_id`) follows `events`.
        event_id = (Int64),
        /// Track (line) of the event; joins `tracks`, which gives the `device_id`.
        track_id = (Int32),
        /// `XEvent.metadata_id`; joins `event_metadata` and `metadata_args`.
        metadata_id = (Int64),
        /// Event metadata `name` (on XLA op lines it can be the full HLO text).
        name = (DictUtf8),
        /// Event metadata `display_name`, or `name` when empty (the short op name on XLA op lines).
        display_name = (DictUtf8),
        /// Start, ps from the trace start: `line.timestamp_ns * 1000 + offset_ps`, less the trace
        /// origin when the file is not normalized.
        ts_ps = (Int64),
        /// `XEvent.duration_ps` (for an aggregated event: the sum over its occurrences).
        dur_ps = (Int64),
        /// Duration less the durations of the direct children on the same track.
        self_ps = (Int64),
        /// Nesting depth on the track: 0 for top-level events.
        depth = (Int32),
        /// `event_id` of the enclosing event on the same track.
        parent_id = (Int64 null),
        /// 1, or `XEvent.num_occurrences` for an aggregated event (a count below 1 counts as 1).
        occurrences = (Int64),
        /// Stat `device_offset_ps`, as written (not shifted).
        device_offset_ps = (Int64 null),
        /// Stat `device_duration_ps`. XProf's op statistics use it in place of `dur_ps` when
        /// present; the analyses use `coalesce(device_duration_ps, dur_ps)`.
        device_duration_ps = (Int64 null),
        /// Stat `hlo_op`.
        hlo_op = (DictUtf8 null),
        /// Stat `hlo_module`.
        hlo_module = (DictUtf8 null),
        /// Stat `program_id` (unsigned, as XLA writes it).
        program_id = (UInt64 null),
        /// Stat `tf_op` (framework op, e.g. `jit(f)/dot_general`).
        tf_op = (DictUtf8 null),
        /// Stat `hlo_category`.
        hlo_category = (DictUtf8 null),
        /// Stat `flops`.
        flops = (Int64 null),
        /// Stat `bytes_accessed`.
        bytes_accessed = (Int64 null),
        /// Stat `correlation_id` (host launch to device kernel).
        correlation_id = (Int64 null),
        /// Stat `group_id` (step grouping).
        group_id = (Int64 null),
        /// Stat `step_num`.
        step_num = (Int64 null),
        /// On device planes: the `Steps` event of the same plane containing this event.
        step_event_id = (Int64 null),
        /// On device planes: the `XLA Modules` event of the same plane containing this event.
        module_event_id = (Int64 null),
        /// On accelerators, for events inside kernels (LLO instruction lanes, `LLO Ops`, `Pallas
        /// Primitives`, `Source code`/`Source Lines`, `XLA TraceMe` stages and scopes, `Tensor
        /// Core` region markers, `_counters_` samples): the `XLA Ops`/`PALLAS` event of the same
        /// device containing this one; NULL elsewhere.
        kernel_event_id = (Int64 null),
        /// Number of the event's own stats (rows in `event_args`).
        stat_count = (Int32),
    }
}

table_columns! {
    /// Every stat carried by an event itself (`XEvent.stats`). Stats shared through the event's
    /// metadata are in `metadata_args`; the view `event_stats` merges both as XProf does (the
    /// event's own stat wins).
    EventArgs: EVENT_ARGS = "event_args", sorted by ["event_id"],
    {
        trace_id = (= TRACE_ID),
        /// Event the stat belongs to.
        event_id = (Int64),
        /// Stat name.
        key = (DictUtf8),
        value = (values),
    }
}

table! {
    /// One row per `XEventMetadata` of a plane.
    EventMetadata: EVENT_METADATA = "event_metadata", sorted by ["device_id", "metadata_id"],
    EventMetadataRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        /// `XEventMetadata.id` (the map key).
        metadata_id: i64 = (Int64),
        /// `XEventMetadata.name`.
        name: &'a str = (Utf8),
        /// `XEventMetadata.display_name`; NULL when empty.
        display_name: Option<&'a str> = (Utf8 null),
        /// `XEventMetadata.metadata` bytes; NULL when empty.
        metadata: Option<&'a [u8]> = (Binary null),
        /// `XEventMetadata.child_id`.
        child_ids: &'a [i64] = (ListInt64),
        /// Number of metadata stats (rows in `metadata_args`).
        stat_count: i32 = (Int32),
    }
}

table! {
    /// Every stat of every event metadata (`XEventMetadata.stats`): stats shared by all events with
    /// that metadata, such as the cost model of an HLO op.
    MetadataArgs: METADATA_ARGS = "metadata_args", sorted by ["device_id", "metadata_id"],
    MetadataArgRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        /// Event metadata the stat belongs to.
        metadata_id: i64 = (Int64),
        /// Stat name.
        key: &'a str = (DictUtf8),
        value: StatValue<'a> = (values),
    }
}

table! {
    /// One row per `XStatMetadata` of a plane: stat names, and the strings that `ref_value` stats
    /// point to.
    StatMetadata: STAT_METADATA = "stat_metadata", sorted by ["device_id", "stat_metadata_id"],
    StatMetadataRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        device_id: i32 = (= DEVICE_ID),
        /// `XStatMetadata.id` (the map key).
        stat_metadata_id: i64 = (Int64),
        /// `XStatMetadata.name`.
        name: &'a str = (Utf8),
        /// `XStatMetadata.description`; NULL when empty.
        description: Option<&'a str> = (Utf8 null),
    }
}

table! {
    /// Counter samples: every event with a `counter_value` stat, and every numeric stat of events
    /// on counter lines (`_counters_`, TPU `TC Stats`/`SC Stats`/`CMN Stats`, `LLO Utilization`).
    /// The events stay in `events` too.
    Counters: COUNTERS = "counters", sorted by ["track_id", "ts_ps"],
    CounterRow {
        trace_id: i32 = (= TRACE_ID),
        /// Track of the sample; joins `tracks`, which gives the `device_id`.
        track_id: i32 = (Int32),
        /// Event the sample was read from.
        event_id: i64 = (Int64),
        /// Counter name: the event name for `counter_value`, else `event name/stat name`.
        name: Sym = (DictUtf8),
        /// Sample time, ps from the trace start.
        ts_ps: i64 = (Int64),
        /// Sample value.
        value: f64 = (Float64),
    }
}

table! {
    /// Links between events: XSpace `flow` stats (decoded) and host-to-device `correlation_id`
    /// pairs. A side that is absent from the trace is NULL.
    Flows: FLOWS = "flows", sorted by ["kind", "flow_id"],
    FlowRow<'a> {
        trace_id: i32 = (= TRACE_ID),
        /// Flow id (bits 2-57 of the `flow` stat), the correlation id, or in a Chrome trace the
        /// number of the flow's (`cat`, `id`) pair in the file.
        flow_id: i64 = (Int64),
        /// `flow` (XSpace `flow` stat) or `correlation_id`.
        kind: &'a str = (Utf8),
        /// For `flow`: the context type (bits 58-63 of the `flow` stat).
        context_type: Option<i32> = (Int32 null),
        /// Event where the flow starts (`flow` direction out, or the host event of a correlation
        /// id).
        src_event_id: Option<i64> = (Int64 null),
        /// Event where the flow ends (`flow` direction in, or the device event of a correlation
        /// id).
        dst_event_id: Option<i64> = (Int64 null),
    }
}
