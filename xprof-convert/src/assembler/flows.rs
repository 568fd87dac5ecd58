//! Flow and correlation-id endpoints, kept until the end of the trace and
//! paired into `flows` rows (32 bytes an endpoint).

use xprof_format::schema::FlowRow;
use xprof_format::small_table_rows::RowBuffer;

/// One endpoint of a flow.
#[derive(Debug, Clone, Copy)]
struct FlowPoint {
    flow_id: u64,
    ts_ps: i64,
    event_id: i64,
    context: u8,
}

/// One event with a correlation id.
#[derive(Debug, Clone, Copy)]
struct CorrPoint {
    correlation_id: i64,
    on_device: bool,
    ts_ps: i64,
    event_id: i64,
}

/// Endpoints seen so far.
#[derive(Debug, Default)]
pub(super) struct FlowPairs {
    flows: Vec<FlowPoint>,
    corr: Vec<CorrPoint>,
}

impl FlowPairs {
    pub fn flow(&mut self, flow_id: u64, context: u8, ts_ps: i64, event_id: i64) {
        self.flows.push(FlowPoint {
            flow_id,
            ts_ps,
            event_id,
            context,
        });
    }

    pub fn correlation(&mut self, correlation_id: i64, on_device: bool, ts_ps: i64, event_id: i64) {
        self.corr.push(CorrPoint {
            correlation_id,
            on_device,
            ts_ps,
            event_id,
        });
    }

    /// The `flows` rows, in the table's order (kind, flow_id):
    /// `correlation_id` rows, then `flow` rows.
    ///
    /// Returns the warning of correlation ids shared by several host
    /// events (launches), if any: the views pair launches and kernels by
    /// id, so such ids give a launch per kernel of the id, not one.
    pub fn write(mut self, trace_id: i32, out: &mut RowBuffer) -> Option<String> {
        let mut row = |flow_id: i64, kind, context_type, src, dst| {
            out.push(&FlowRow {
                trace_id,
                flow_id,
                kind,
                context_type,
                src_event_id: src,
                dst_event_id: dst,
            })
        };
        // Correlation ids: each device event is linked from the first host
        // event with the same id.
        self.corr
            .sort_unstable_by_key(|c| (c.correlation_id, c.on_device, c.ts_ps, c.event_id));
        let mut shared = SharedIds::default();
        for group in self
            .corr
            .chunk_by(|a, b| a.correlation_id == b.correlation_id)
        {
            shared.count(group);
            let host = group.iter().find(|c| !c.on_device).map(|c| c.event_id);
            let mut devices = group.iter().filter(|c| c.on_device).peekable();
            if devices.peek().is_none() {
                row(group[0].correlation_id, "correlation_id", None, host, None);
            }
            for d in devices {
                row(
                    d.correlation_id,
                    "correlation_id",
                    None,
                    host,
                    Some(d.event_id),
                );
            }
        }
        // Flows: endpoints of one id in time order, linked one to the next.
        // Sorted as the `flow_id` column (i64) holds them.
        self.flows
            .sort_unstable_by_key(|p| (p.flow_id as i64, p.ts_ps, p.event_id));
        for group in self.flows.chunk_by(|a, b| a.flow_id == b.flow_id) {
            let ctx = Some(group[0].context as i32);
            let id = group[0].flow_id as i64;
            if group.len() == 1 {
                row(id, "flow", ctx, Some(group[0].event_id), None);
            }
            for pair in group.windows(2) {
                row(
                    id,
                    "flow",
                    ctx,
                    Some(pair[0].event_id),
                    Some(pair[1].event_id),
                );
            }
        }
        shared.warning()
    }
}

/// Correlation ids that more than one host event (launch) carries.
#[derive(Default)]
struct SharedIds {
    /// Ids shared.
    ids: usize,
    /// Host events carrying a shared id.
    launches: usize,
    /// The id shared by the most launches, and how many.
    most: Option<(i64, usize)>,
}

impl SharedIds {
    /// Counts one id's events (`group`, all of one id).
    fn count(&mut self, group: &[CorrPoint]) {
        let launches = group.iter().filter(|c| !c.on_device).count();
        if launches < 2 {
            return;
        }
        self.ids += 1;
        self.launches += launches;
        if self.most.is_none_or(|(_, n)| launches > n) {
            self.most = Some((group[0].correlation_id, launches));
        }
    }

    /// The converter warning, when an id was shared.
    fn warning(&self) -> Option<String> {
        let (id, n) = self.most?;
        Some(format!(
            "{} correlation id{} {} shared by several launches ({} launches in all; \
             id {id} by {n}): flows link each kernel to the first launch of its id, \
             and kernel_launch_stats and queue_length pair every launch with every \
             kernel of its id, as HTA does, so their counts are not one per kernel",
            self.ids,
            if self.ids == 1 { "" } else { "s" },
            if self.ids == 1 { "is" } else { "are" },
            self.launches
        ))
    }
}
