//! XProf's `target_info` mode: what the program was compiled for
//! (`llo_proto` field 7).

use super::messages::{LloBoundsProto, LloTargetArgumentsProto};

/// The compile target of one program.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetInfo {
    /// Replicas.
    pub replica_count: i64,
    /// HBM bytes reserved.
    pub reserved_hbm_usage_bytes: i64,
    /// Whether the payload has a topology (XProf prints the fields below
    /// only then).
    pub has_topology: bool,
    /// Chip variant.
    pub variant: i32,
    /// Platform type.
    pub platform_type: i32,
    /// Chip configuration.
    pub chip_config_name: String,
    /// Enhanced barrier.
    pub enhanced_barrier_enabled: bool,
    /// Chips per host, x/y/z.
    pub chips_per_host_bounds: Option<[i32; 3]>,
    /// Hosts, x/y/z.
    pub host_bounds: Option<[i32; 3]>,
}

fn bounds(b: &Option<LloBoundsProto>) -> Option<[i32; 3]> {
    b.as_ref().map(|b| [b.x, b.y, b.z])
}

/// The target of a payload that has field 7.
pub fn derive(t: &LloTargetArgumentsProto) -> TargetInfo {
    let topo = t.topology.clone().unwrap_or_default();
    TargetInfo {
        replica_count: t.replica_count,
        reserved_hbm_usage_bytes: t.reserved_hbm_usage_bytes,
        has_topology: t.topology.is_some(),
        variant: topo.variant,
        platform_type: topo.platform_type,
        chip_config_name: topo.chip_config_name.clone(),
        enhanced_barrier_enabled: topo.enhanced_barrier_enabled,
        chips_per_host_bounds: bounds(&topo.chips_per_host_bounds),
        host_bounds: bounds(&topo.host_bounds),
    }
}
