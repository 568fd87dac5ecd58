//! Nesting of intervals on one track: depth, parent and self time.
//!
//! Events must arrive sorted by start, longer first on a tie. An event is
//! the child of the innermost open event that contains it entirely; an
//! event that only partly overlaps an open one closes it (such input is
//! kept, not rejected).

/// An event still open on the stack.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Open<T: Copy> {
    /// End, exclusive.
    pub end: i64,
    /// Duration.
    pub dur: i64,
    /// Sum of the durations of the direct children so far.
    pub child_ps: i64,
    /// Position of the event in its line (wire order).
    pub index: u32,
    /// Caller's data (e.g. where the row of the event is).
    pub data: T,
}

impl<T: Copy> Open<T> {
    /// Duration less the direct children's (never negative).
    pub fn self_ps(&self) -> i64 {
        self.dur.saturating_sub(self.child_ps).max(0)
    }
}

/// The stack of open events of one track.
#[derive(Debug)]
pub(crate) struct Nester<T: Copy> {
    stack: Vec<Open<T>>,
}

impl<T: Copy> Default for Nester<T> {
    fn default() -> Self {
        Self { stack: Vec::new() }
    }
}

impl<T: Copy> Nester<T> {
    /// Opens an event; closes (through `close`) every open event that ends
    /// before it starts or does not contain it. Returns its depth and its
    /// parent.
    #[inline]
    pub fn push(
        &mut self,
        ts: i64,
        dur: i64,
        index: u32,
        data: T,
        mut close: impl FnMut(&Open<T>),
    ) -> (u32, Option<Open<T>>) {
        let end = ts.saturating_add(dur.max(0));
        while let Some(top) = self.stack.last() {
            if top.end <= ts || end > top.end {
                let top = self.stack.pop().expect("non-empty");
                close(&top);
            } else {
                break;
            }
        }
        let parent = self.stack.last_mut().map(|p| {
            p.child_ps = p.child_ps.saturating_add(dur.max(0));
            *p
        });
        let depth = self.stack.len() as u32;
        self.stack.push(Open {
            end,
            dur: dur.max(0),
            child_ps: 0,
            index,
            data,
        });
        (depth, parent)
    }

    /// Closes every open event.
    pub fn finish(&mut self, mut close: impl FnMut(&Open<T>)) {
        while let Some(top) = self.stack.pop() {
            close(&top);
        }
    }

    /// The open events, outermost first.
    pub fn open(&self) -> &[Open<T>] {
        &self.stack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (ts, dur) -> (depth, parent index, self)
    fn nest(events: &[(i64, i64)]) -> Vec<(u32, Option<u32>, i64)> {
        let mut out = vec![(0, None, 0); events.len()];
        let mut n = Nester::<()>::default();
        let mut selfs = vec![0; events.len()];
        for (i, (ts, dur)) in events.iter().enumerate() {
            let (d, p) = n.push(*ts, *dur, i as u32, (), |o| {
                selfs[o.index as usize] = o.self_ps()
            });
            out[i] = (d, p.map(|p| p.index), 0);
        }
        n.finish(|o| selfs[o.index as usize] = o.self_ps());
        for (o, s) in out.iter_mut().zip(selfs) {
            o.2 = s;
        }
        out
    }

    #[test]
    fn stacks_and_self_time() {
        // a [0,100) contains b [10,40) which contains c [20,30); d [50,60) in a.
        let r = nest(&[(0, 100), (10, 30), (20, 10), (50, 10), (200, 5)]);
        assert_eq!(r[0], (0, None, 60));
        assert_eq!(r[1], (1, Some(0), 20));
        assert_eq!(r[2], (2, Some(1), 10));
        assert_eq!(r[3], (1, Some(0), 10));
        assert_eq!(r[4], (0, None, 5));
    }

    #[test]
    fn partial_overlap_closes_the_open_event() {
        let r = nest(&[(0, 10), (5, 10)]);
        assert_eq!(r[1], (0, None, 10));
        assert_eq!(r[0].2, 10);
    }

    #[test]
    fn adjacent_events_are_siblings() {
        let r = nest(&[(0, 10), (10, 10)]);
        assert_eq!(r[1], (0, None, 10));
    }
}
