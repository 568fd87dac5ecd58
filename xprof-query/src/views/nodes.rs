//! Events numbered densely across traces ([`Nodes`]): the native views
//! (`event_steps`, `events_db`) index their per-event arrays by these
//! numbers instead of hashing `(trace_id, event_id)`.

use xprof_format::hash::FxHashMap;

/// Each trace's range of event ids, for numbering events without hashing.
pub(crate) const RANGES_SQL: &str = "SELECT trace_id, min(event_id), max(event_id), count(*) \
    FROM events GROUP BY trace_id";

/// An event: its trace and id.
pub(crate) type EventKey = (i32, i64);

/// A trace's events numbered densely: its ids run from `min` over `len`
/// values, numbered from `base`.
#[derive(Clone, Copy)]
pub(crate) struct IdRange {
    trace: i32,
    min: i64,
    len: u32,
    base: u32,
}

/// Node numbers of events. The converters number a trace's events from 0
/// without gaps, so a node is the trace's base plus the id's offset, with
/// no hashing; ids outside their trace's range (or traces whose ids are
/// sparse) are numbered through a map after the dense ones.
#[derive(Default, Clone)]
pub(crate) struct Nodes {
    /// Dense ranges in the order of their bases.
    ranges: Vec<IdRange>,
    /// Index into `ranges` by trace.
    by_trace: FxHashMap<i32, usize>,
    /// The last trace looked up and its range (rows come trace by trace).
    last: Option<IdRange>,
    dense: u32,
    /// Node numbers of the other events, from `dense` on.
    extra: FxHashMap<EventKey, u32>,
    extra_keys: Vec<EventKey>,
}

impl Nodes {
    /// Takes one trace's id range (`ids` events from `min` to `max`): dense
    /// when the range is at most twice the events (and 1,024).
    pub(crate) fn add_range(&mut self, trace: i32, min: i64, max: i64, ids: i64) {
        let Some(len) = max.checked_sub(min).and_then(|d| u32::try_from(d).ok()) else {
            return;
        };
        let len = len.saturating_add(1);
        let fits = u64::from(self.dense) + u64::from(len) < u64::from(u32::MAX / 2);
        if !fits || i64::from(len) > ids.saturating_mul(2).saturating_add(1024) {
            return;
        }
        self.by_trace.insert(trace, self.ranges.len());
        self.ranges.push(IdRange {
            trace,
            min,
            len,
            base: self.dense,
        });
        self.dense += len;
    }

    /// The node number of `key`, numbered when first seen.
    pub(crate) fn node(&mut self, key: EventKey) -> u32 {
        let range = match self.last {
            Some(r) if r.trace == key.0 => Some(r),
            _ => {
                let r = self.by_trace.get(&key.0).map(|&i| self.ranges[i]);
                if r.is_some() {
                    self.last = r;
                }
                r
            }
        };
        if let Some(r) = range {
            let offset = (key.1 as u64).wrapping_sub(r.min as u64);
            if offset < u64::from(r.len) {
                return r.base + offset as u32;
            }
        }
        let next = self.dense + self.extra_keys.len() as u32;
        *self.extra.entry(key).or_insert_with(|| {
            self.extra_keys.push(key);
            next
        })
    }

    /// The node number of `key` if it has one (a dense id, or one
    /// numbered by [`Nodes::node`]); numbers nothing.
    pub(crate) fn get(&self, key: EventKey) -> Option<u32> {
        if let Some(&at) = self.by_trace.get(&key.0) {
            let r = self.ranges[at];
            let offset = (key.1 as u64).wrapping_sub(r.min as u64);
            if offset < u64::from(r.len) {
                return Some(r.base + offset as u32);
            }
        }
        self.extra.get(&key).copied()
    }

    /// Nodes numbered (dense ones whether seen or not).
    pub(crate) fn count(&self) -> usize {
        self.dense as usize + self.extra_keys.len()
    }

    /// The event of node `node`.
    pub(crate) fn key(&self, node: u32) -> EventKey {
        if node >= self.dense {
            return self.extra_keys[(node - self.dense) as usize];
        }
        let at = self.ranges.partition_point(|r| r.base <= node) - 1;
        let r = self.ranges[at];
        (r.trace, r.min.wrapping_add(i64::from(node - r.base)))
    }

    pub(crate) fn bytes(&self) -> usize {
        self.extra.capacity() * (std::mem::size_of::<(EventKey, u32)>() + 1)
            + self.extra_keys.capacity() * std::mem::size_of::<EventKey>()
            + self.ranges.capacity() * std::mem::size_of::<IdRange>()
    }
}
