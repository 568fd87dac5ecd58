//! The one vocabulary of device and line names that decides what a
//! device or a track is: its `devices.kind`, its `tracks.kind` and
//! `tracks.unit`, and the role its events play in containment (a step, a
//! module, a kernel, or an event inside one).
//!
//! Names are XProf's (`shared/formats/xplane-names.txt`,
//! `shared/formats/tpu-llo.md`); other formats map their own devices and
//! threads onto these kinds (a Chrome-trace process is a `host` or a
//! `gpu` device, a thread a `thread` or `stream` track).

/// The `/host:metadata` event-metadata stat holding a program's
/// `xla.HloProto` bytes (decoded into `hlo_instructions`).
pub const HLO_PROTO_STAT: &str = "Hlo Proto";

/// The `/host:metadata` event-metadata stat holding a program's compiled
/// LLO (`xla.xprof.LloModuleProto` bytes, decoded into the `llo_*` tables)
/// in a TPU kernel-profiling capture.
pub const LLO_PROTO_STAT: &str = "llo_proto";

/// Kind of a device (an XPlane, a process), from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DeviceKind {
    /// `/host:CPU`: host threads.
    Host,
    /// Another `/host:` plane (`/host:CUPTI`, ...).
    HostOther,
    /// `/device:GPU:N`.
    Gpu,
    /// `/device:TPU:N` (a TensorCore).
    Tpu,
    /// `/device:TPU:N SparseCore M`.
    SparseCore,
    /// `/device:CUSTOM:...`.
    Custom,
    /// `/host:metadata`.
    Metadata,
    /// `Task Environment`.
    TaskEnvironment,
    /// Anything else.
    Other,
}

impl DeviceKind {
    /// The kind of an XSpace plane, and the device number in its name.
    pub fn of_plane(name: &str) -> (DeviceKind, Option<i32>) {
        let num = |s: &str| {
            s.split(|c: char| !c.is_ascii_digit())
                .next()
                .and_then(|d| d.parse().ok())
        };
        if name == "/host:CPU" {
            (DeviceKind::Host, None)
        } else if name == "/host:metadata" {
            (DeviceKind::Metadata, None)
        } else if name == "Task Environment" {
            (DeviceKind::TaskEnvironment, None)
        } else if let Some(rest) = name.strip_prefix("/device:GPU:") {
            (DeviceKind::Gpu, num(rest))
        } else if let Some(rest) = name.strip_prefix("/device:TPU:") {
            if rest.contains("SparseCore") {
                (DeviceKind::SparseCore, num(rest))
            } else {
                (DeviceKind::Tpu, num(rest))
            }
        } else if name.starts_with("/device:CUSTOM:") {
            (DeviceKind::Custom, None)
        } else if name.starts_with("/host:") {
            (DeviceKind::HostOther, None)
        } else {
            (DeviceKind::Other, None)
        }
    }

    /// The `devices.kind` value.
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Host => "host",
            DeviceKind::HostOther => "host_other",
            DeviceKind::Gpu => "gpu",
            DeviceKind::Tpu => "tpu",
            DeviceKind::SparseCore => "sparse_core",
            DeviceKind::Custom => "custom",
            DeviceKind::Metadata => "metadata",
            DeviceKind::TaskEnvironment => "task_environment",
            DeviceKind::Other => "other",
        }
    }

    /// Whether the device is an accelerator (its ops get containing steps
    /// and modules).
    pub fn is_accelerator(self) -> bool {
        matches!(
            self,
            DeviceKind::Gpu | DeviceKind::Tpu | DeviceKind::SparseCore | DeviceKind::Custom
        )
    }
}

/// What a track's events are to the containment columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    /// Steps (`Steps`, `Sparse Core Steps`): contain modules and ops.
    Steps,
    /// Program runs (`XLA Modules`, `Sparse Core Modules`): contain ops.
    Modules,
    /// Kernels that can hold instruction lanes (`XLA Ops`, `PALLAS`).
    Kernels,
    /// Other op lines (`Async XLA Ops`, `Sparse Core Ops`).
    Ops,
    /// Events inside a kernel: LLO instruction lanes, `LLO Ops`,
    /// `Pallas Primitives` (get `kernel_event_id`).
    InKernel,
    /// Anything else.
    Other,
}

impl Role {
    /// Whether events of this role are recorded as containers of others
    /// (steps, modules, kernels).
    pub fn contains_others(self) -> bool {
        matches!(self, Role::Steps | Role::Modules | Role::Kernels)
    }
}

/// Kind of a track, from its line name and its device's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineKind {
    /// The `tracks.kind` value.
    pub kind: &'static str,
    /// Role in containment (only on accelerators; `Other` elsewhere).
    pub role: Role,
}

/// Functional units of LLO instruction lanes (`<UNIT> Instructions`):
/// these, and `MXU<n>` for any n.
const LLO_UNITS: [&str; 7] = ["SALU", "VALU", "EUP", "XLU", "VLD", "VST", "MXU"];

fn is_llo_unit(u: &str) -> bool {
    LLO_UNITS.contains(&u)
        || u.strip_prefix("MXU")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

impl LineKind {
    /// The kind of line `name` on a device of kind `device`.
    pub fn of(name: &str, device: DeviceKind) -> LineKind {
        let plain = |kind| LineKind {
            kind,
            role: Role::Other,
        };
        let acc = device.is_accelerator();
        let with_role = |kind, role| LineKind {
            kind,
            role: if acc { role } else { Role::Other },
        };
        match name {
            "Steps" => with_role("steps", Role::Steps),
            "XLA Modules" => with_role("xla_modules", Role::Modules),
            "XLA Ops" => with_role("xla_ops", Role::Kernels),
            "PALLAS" => with_role("pallas", Role::Kernels),
            "Async XLA Ops" => with_role("async_xla_ops", Role::Ops),
            "Sparse Core Steps" => with_role("sparse_core_steps", Role::Steps),
            "Sparse Core Modules" => with_role("sparse_core_modules", Role::Modules),
            "Sparse Core Ops" => with_role("sparse_core_ops", Role::Ops),
            "LLO Ops" => with_role("llo_ops", Role::InKernel),
            "Pallas Primitives" => with_role("pallas_primitives", Role::InKernel),
            "LLO Instructions" => with_role("llo_instructions", Role::InKernel),
            "LLO Utilization" => plain("llo_utilization"),
            // Mosaic pipeline stages and named scopes: inside kernels on
            // accelerators (they get `kernel_event_id`).
            "XLA TraceMe" => with_role("traceme", Role::InKernel),
            // Zero-length LLO region-entry markers (`bundle.<id>`) of a
            // kernel-profiling capture (libtpu's custom-call region trace).
            "Tensor Core" if device == DeviceKind::Tpu => {
                with_role("llo_region_markers", Role::InKernel)
            }
            "Framework Ops" => plain("framework_ops"),
            "Framework Name Scope" => plain("framework_name_scope"),
            // Source-line regions of a kernel's LLO (contained in it).
            "Source code" | "Source Lines" => with_role("source", Role::InKernel),
            // On TPUs the samples sit inside kernels (the static per-region
            // utilization of a kernel-profiling capture, or hardware
            // counters): they get `kernel_event_id` there.
            "_counters_" => with_role("counters", Role::InKernel),
            "Launch Stats" => plain("launch_stats"),
            "Host Offload Ops" => plain("host_offload_ops"),
            _ => {
                // TPU hardware-counter lines (XProf's counter sampling).
                if ["TC Stats", "SC Stats", "CMN Stats"]
                    .iter()
                    .any(|c| name.contains(c))
                {
                    return plain("counters");
                }
                if let Some(u) = name.strip_suffix(" Instructions")
                    && is_llo_unit(u)
                {
                    return with_role("llo_unit", Role::InKernel);
                }
                if device == DeviceKind::Gpu && name.starts_with("Stream") {
                    plain("stream")
                } else if matches!(device, DeviceKind::Host | DeviceKind::HostOther) {
                    plain("thread")
                } else {
                    plain("other")
                }
            }
        }
    }

    /// Whether the line's event metadata are HLO ops (`hlo_ops` lists them):
    /// `XLA Ops`, `Async XLA Ops`, `Sparse Core Ops` on accelerators.
    pub fn lists_hlo_ops(&self) -> bool {
        matches!(self.kind, "xla_ops" | "async_xla_ops" | "sparse_core_ops")
    }

    /// Whether every numeric stat of the line's events is a counter sample
    /// (`_counters_`, `TC Stats`, `SC Stats`, `CMN Stats`, and the
    /// per-unit series of `LLO Utilization`).
    pub fn is_counters(&self) -> bool {
        matches!(self.kind, "counters" | "llo_utilization")
    }

    /// The `tracks.unit` of an LLO lane as its line names it
    /// (`MXU2 Instructions` is `MXU2`); `None` for other lines.
    pub fn unit_of(name: &str) -> Option<&str> {
        name.strip_suffix(" Instructions")
            .filter(|u| is_llo_unit(u))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_names_decide_kind_unit_and_role() {
        let k = LineKind::of("XLA Ops", DeviceKind::Tpu);
        assert_eq!((k.kind, k.role), ("xla_ops", Role::Kernels));
        let k = LineKind::of("VALU Instructions", DeviceKind::Tpu);
        assert_eq!((k.kind, k.role), ("llo_unit", Role::InKernel));
        assert_eq!(LineKind::unit_of("VALU Instructions"), Some("VALU"));
        assert_eq!(LineKind::unit_of("MXU3 Instructions"), Some("MXU3"));
        assert_eq!(LineKind::unit_of("XLA Ops"), None);
        // Not a unit: stays `other`.
        assert_eq!(
            LineKind::of("Foo Instructions", DeviceKind::Tpu).kind,
            "other"
        );
        // Roles only on accelerators.
        assert_eq!(LineKind::of("Steps", DeviceKind::Host).role, Role::Other);
        assert_eq!(LineKind::of("Stream #1", DeviceKind::Gpu).kind, "stream");
        assert_eq!(LineKind::of("main", DeviceKind::Host).kind, "thread");
        assert!(LineKind::of("TC Stats 0", DeviceKind::Tpu).is_counters());
        let k = LineKind::of("Tensor Core", DeviceKind::Tpu);
        assert_eq!((k.kind, k.role), ("llo_region_markers", Role::InKernel));
        assert_eq!(LineKind::of("Tensor Core", DeviceKind::Gpu).kind, "other");
        let k = LineKind::of("XLA TraceMe", DeviceKind::Tpu);
        assert_eq!((k.kind, k.role), ("traceme", Role::InKernel));
        let k = LineKind::of("_counters_", DeviceKind::Tpu);
        assert_eq!((k.kind, k.role), ("counters", Role::InKernel));
        assert_eq!(
            LineKind::of("_counters_", DeviceKind::Host).role,
            Role::Other
        );
        assert!(LineKind::of("LLO Utilization", DeviceKind::Tpu).is_counters());
        assert_eq!(
            LineKind::of("Source code", DeviceKind::Tpu).role,
            Role::InKernel
        );
        assert_eq!(DeviceKind::of_plane("/device:TPU:3").1, Some(3));
        assert_eq!(
            DeviceKind::of_plane("/device:TPU:0 SparseCore 1").0,
            DeviceKind::SparseCore
        );
    }
}
