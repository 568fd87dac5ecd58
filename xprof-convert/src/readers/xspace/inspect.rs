//! A quick look at an XSpace without converting it: planes, lines and
//! event counts (like XProf's `list_xplane_lines`), and the stat names in
//! use (a walk over every stat, without decoding values).

use super::meta::{PlaneMeta, decode_stat, for_each_stat};
use super::scan::{event_header, malformed, scan_plane, scan_space};
use crate::reader::{LineInfo, PlaneInfo};
use xprof_format::Interner;
use xprof_format::hash::FxHashSet;

/// Planes and lines of an XSpace.
pub fn inspect(bytes: &[u8], path: &std::path::Path) -> crate::error::Result<Vec<PlaneInfo>> {
    let err = |e| malformed(path, e);
    let space = scan_space(bytes).map_err(err)?;
    let mut out = Vec::new();
    for span in space.planes {
        let p = scan_plane(span, None).map_err(err)?;
        let mut interner = Interner::new();
        let meta = PlaneMeta::load(
            &p.stat_metadata,
            &p.event_metadata,
            &mut interner,
            &mut Vec::new(),
        )
        .map_err(err)?;
        // Stat names are the stat metadata that stats use as keys; the
        // others are strings that `ref_value` stats point to.
        let mut keys: FxHashSet<u64> = FxHashSet::default();
        for st in &p.stats {
            keys.insert(decode_stat(*st).map_err(err)?.metadata_id);
        }
        for m in meta.events.values() {
            for st in &m.stats {
                keys.insert(decode_stat(*st).map_err(err)?.metadata_id);
            }
        }
        for l in &p.lines {
            for_each_stat(l.span, 4, |ev| {
                for_each_stat(event_header(ev)?.body, 4, |st| {
                    keys.insert(decode_stat(st)?.metadata_id);
                    Ok(())
                })
            })
            .map_err(err)?;
        }
        out.push(PlaneInfo {
            id: p.id,
            name: p.name.to_string(),
            lines: p
                .lines
                .iter()
                .map(|l| LineInfo {
                    id: l.id,
                    name: l.name.to_string(),
                    display_name: l.display_name.to_string(),
                    event_count: l.event_count as u64,
                })
                .collect(),
            total_events: p.event_count,
            event_metadata: p.event_metadata.len(),
            stat_names: meta
                .stat_order
                .iter()
                .filter(|id| keys.contains(id))
                .map(|id| meta.stats[id].name.to_string())
                .collect(),
            plane_stats: p.stats.len(),
        });
    }
    Ok(out)
}
