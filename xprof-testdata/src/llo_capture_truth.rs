//! What the capture generator ([`crate::llo_capture`]) takes and writes:
//! its constants, [`CaptureSpec`], and [`CaptureTruth`], the description
//! of everything written that tests compute their expected values from
//! and the `llo_proto` payloads ([`crate::llo_proto`]) are built from.

/// The device tick (ps): every `device_offset_ps` is a multiple of it.
pub const TICK_PS: i64 = 1250;
/// How far events of one line that share a tick are pushed apart (ps).
pub const JITTER_PS: i64 = 78;
/// `instrumentation_id` = this + the LLO region id.
pub const REGION_MARKER_BASE: u64 = 1 << 27;
/// The program id of the kernel's module (above `i64::MAX`, as on the
/// real capture).
pub const PROGRAM_ID: u64 = 17_342_868_964_687_645_945;
/// The module id (`HloModuleProto.id`) in the `llo_proto` entry names.
pub const MODULE_ID: i64 = 35;
/// The module.
pub const MODULE: &str = "jit_pallas_matmul";
/// The kernel's HLO op.
pub const HLO_OP: &str = "pallas_matmul.1";
/// Absolute bundle address of the kernel's first bundle.
pub const BASE_ADDRESS: i64 = 0x1ee;

/// Shape of a synthetic capture.
#[derive(Debug, Clone)]
pub struct CaptureSpec {
    /// Kernel executions.
    pub executions: usize,
    /// Loop trips per execution (the Pallas grid).
    pub trips: usize,
}

impl Default for CaptureSpec {
    fn default() -> Self {
        Self {
            executions: 3,
            trips: 4,
        }
    }
}

/// A functional unit of the static utilization arrays (`llo_proto`
/// field 6): its `_counters_` name, the stat its samples carry, its
/// capacity (slots per bundle; `None` for the spill and fill series) and
/// the used slots per schedule slot.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticUnit {
    /// `_counters_` event name (`MXU`, `Vector ALU`, ...).
    pub counter: &'static str,
    /// Stat name of its samples (`% util`, `spills`, `fills`).
    pub stat: &'static str,
    /// Unit name in this project's vocabulary (`MXU`, `VALU`, ...).
    pub unit: &'static str,
    /// Sub-field of `llo_proto` field 6.
    pub field: u32,
    /// Capacity per bundle.
    pub capacity: Option<u32>,
    /// Used slots, one per schedule slot.
    pub used: Vec<u8>,
}

/// A region of the program (`llo_proto` Region), as placed on the schedule.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgramRegion {
    /// LLO region id.
    pub id: u32,
    /// The enclosing region's id.
    pub parent: Option<u32>,
    /// Role, as the compiler's dump names it (`loop_body`, `pred_region`, ...).
    pub role: &'static str,
    /// First schedule slot, `None` when not placed.
    pub start: Option<u32>,
    /// Slot past the last, `None` when not placed.
    pub end: Option<u32>,
    /// Whether its region-entry marker got a schedule slot (fires at run
    /// time).
    pub marker: bool,
}

impl ProgramRegion {
    /// Static occupancy of `unit` over the region's slots, in percent:
    /// `100 * sum(used) / (capacity * slots)` (§6).
    pub fn occupancy_pct(&self, unit: &StaticUnit) -> Option<f64> {
        let (start, end, cap) = (self.start?, self.end?, unit.capacity?);
        let used: u64 = unit.used[start as usize..end as usize]
            .iter()
            .map(|u| *u as u64)
            .sum();
        Some(100.0 * used as f64 / (cap as f64 * (end - start) as f64))
    }
}

/// One kernel execution as written.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureKernel {
    /// `XLA Ops` event start (ps; the line timestamp is 0).
    pub offset_ps: i64,
    /// Its duration.
    pub duration_ps: i64,
}

/// One region-entry marker as written.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureMarker {
    /// Kernel execution (index into [`CaptureTruth::kernels`]).
    pub execution: usize,
    /// LLO region id.
    pub region_id: u32,
    /// `offset_ps` (the tick plus the jitter).
    pub offset_ps: i64,
    /// `device_offset_ps` (the tick).
    pub device_offset_ps: i64,
    /// The absolute bundle address in `long_name`.
    pub address: i64,
}

/// One `XLA TraceMe` event as written.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureScope {
    /// Kernel execution.
    pub execution: usize,
    /// Stage or scope name.
    pub name: &'static str,
    /// Trace site (event metadata id).
    pub metadata_id: i64,
    /// Start (ps).
    pub offset_ps: i64,
    /// Duration (ps).
    pub duration_ps: i64,
    /// Index of the enclosing scope in [`CaptureTruth::scopes`].
    pub parent: Option<usize>,
}

/// One `_counters_` sample as written.
#[derive(Debug, Clone, PartialEq)]
pub struct CaptureSample {
    /// Kernel execution.
    pub execution: usize,
    /// Counter (event) name.
    pub counter: &'static str,
    /// Stat name.
    pub stat: &'static str,
    /// Start (ps).
    pub offset_ps: i64,
    /// Duration as written (the absolute end for the anomaly).
    pub duration_ps: i64,
    /// Value.
    pub value: f64,
    /// Region whose static value it carries (the next marker's), `None`
    /// after the last marker.
    pub region_id: Option<u32>,
    /// Its duration is the op's absolute end offset (§6's anomaly).
    pub absolute_end: bool,
}

/// Everything the generator wrote.
#[derive(Debug, Clone, Default)]
pub struct CaptureTruth {
    /// The kernel's regions.
    pub regions: Vec<ProgramRegion>,
    /// Schedule slots of the kernel (R0's end).
    pub slots: u32,
    /// The static utilization arrays.
    pub units: Vec<StaticUnit>,
    /// Kernel executions.
    pub kernels: Vec<CaptureKernel>,
    /// Region-entry markers, in time order.
    pub markers: Vec<CaptureMarker>,
    /// TraceMe stages and scopes, in time order.
    pub scopes: Vec<CaptureScope>,
    /// Counter samples, in time order.
    pub samples: Vec<CaptureSample>,
    /// `llo_proto` payloads: (event metadata name, bytes).
    pub llo_protos: Vec<(String, Vec<u8>)>,
}

impl CaptureTruth {
    /// The region with id `id`.
    pub fn region(&self, id: u32) -> &ProgramRegion {
        self.regions
            .iter()
            .find(|r| r.id == id)
            .unwrap_or_else(|| panic!("region {id}"))
    }
}
