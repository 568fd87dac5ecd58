//! Synthetic Mosaic GPU profiler traces.
//!
//! No GPU is at hand to run a Pallas kernel with
//! `plgpu.CompilerParams(profile_space=…)`, so this writes what the
//! profiler's dump writes, byte for byte in layout: Python's `json.dump`
//! of `{"displayTimeUnit": "ns", "traceEvents": [...]}`, `B`/`E` events of
//! `name`, `ph`, `ts`, `pid`, `tid` in that key order, `pid` = 1 + SM id,
//! `tid` = 1 + warpgroup index in the grid (warpgroups per block × block
//! index + warpgroup in block), `ts` = (the warpgroup's start on the global
//! timer in ns + SM clock cycles since its first record) / 1000, and the
//! warpgroups' event lists ordered by their first `ts`.
//!
//! [`MosaicTrace::scopes`] describes every scope instance the text holds,
//! in integers, for tests to compare against without parsing the JSON.

use crate::plane::Rng;

/// Shape of a synthetic Mosaic GPU trace.
#[derive(Debug, Clone)]
pub struct MosaicSpec {
    /// Blocks (CTAs) of the grid.
    pub blocks: u32,
    /// Warpgroups per block.
    pub warpgroups_per_block: u32,
    /// SMs the blocks are spread over (block `b` runs on SM `b % sms`).
    pub sms: u32,
    /// Iterations of the kernel's main loop per warpgroup.
    pub iterations: u32,
    /// Seed of the cycle counts.
    pub seed: u64,
}

impl Default for MosaicSpec {
    fn default() -> Self {
        Self {
            blocks: 6,
            warpgroups_per_block: 2,
            sms: 4,
            iterations: 3,
            seed: 7,
        }
    }
}

/// One scope instance: what `kernel_scopes` must hold for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MosaicScope {
    /// SM id (`pid` - 1).
    pub sm_id: i64,
    /// Warpgroup index in the grid (`tid` - 1).
    pub warpgroup_id: i64,
    /// Region name.
    pub name: String,
    /// Start, in the file's counts (global timer ns + cycles).
    pub start: i64,
    /// End, in the same counts.
    pub end: i64,
    /// Nesting depth within the warpgroup (0: outermost).
    pub depth: u32,
}

/// A synthetic trace and its description.
#[derive(Debug, Clone)]
pub struct MosaicTrace {
    /// The JSON text.
    pub json: String,
    /// Every scope instance, in no particular order.
    pub scopes: Vec<MosaicScope>,
}

/// A Pallas matmul-like kernel: per warpgroup a `prologue`, then
/// `iterations` of `loop` holding `wait_tma` and `mma` (`mma` holding
/// `wgmma` when the warpgroup is a consumer, odd warpgroups), then
/// `epilogue`.
pub fn mosaic_gpu_trace(spec: &MosaicSpec) -> MosaicTrace {
    let mut rng = Rng::new(spec.seed);
    let mut lanes: Vec<(i64, Vec<String>)> = Vec::new();
    let mut scopes = Vec::new();
    for block in 0..spec.blocks {
        for wg in 0..spec.warpgroups_per_block {
            let sm_id = i64::from(block % spec.sms.max(1));
            let warpgroup_id = i64::from(spec.warpgroups_per_block * block + wg);
            // Global timer (ns) at the warpgroup's start; staggered blocks.
            let start_time = 1_000_000 + i64::from(block) * 1_357 + rng.range(0, 40);
            let mut lane = Lane {
                sm_id,
                warpgroup_id,
                start_time,
                clock: 0,
                stack: Vec::new(),
                events: Vec::new(),
                scopes: &mut scopes,
            };
            lane.scope("prologue", &mut rng, 200, 400, |_, _| {});
            for _ in 0..spec.iterations {
                lane.scope("loop", &mut rng, 5, 20, |lane, rng| {
                    lane.scope("wait_tma", rng, 50, 900, |_, _| {});
                    lane.scope("mma", rng, 10, 30, |lane, rng| {
                        if wg % 2 == 1 {
                            lane.scope("wgmma", rng, 300, 700, |_, _| {});
                        }
                    });
                });
            }
            lane.scope("epilogue", &mut rng, 100, 300, |_, _| {});
            lanes.push((start_time, lane.events));
        }
    }
    // The dump sorts the warpgroups' event lists by their first `ts`.
    lanes.sort_by_key(|(start, _)| *start);
    let events: Vec<String> = lanes.into_iter().flat_map(|(_, e)| e).collect();
    MosaicTrace {
        json: format!(
            r#"{{"displayTimeUnit": "ns", "traceEvents": [{}]}}"#,
            events.join(", ")
        ),
        scopes,
    }
}

/// The records of one warpgroup.
struct Lane<'a> {
    sm_id: i64,
    warpgroup_id: i64,
    start_time: i64,
    /// SM clock cycles since the first record.
    clock: i64,
    stack: Vec<(String, i64)>,
    events: Vec<String>,
    scopes: &'a mut Vec<MosaicScope>,
}

impl Lane<'_> {
    /// A region of `lo..hi` cycles of its own work, around `inner`.
    fn scope(
        &mut self,
        name: &str,
        rng: &mut Rng,
        lo: i64,
        hi: i64,
        inner: impl FnOnce(&mut Self, &mut Rng),
    ) {
        let start = self.start_time + self.clock;
        self.record(name, "B");
        self.stack.push((name.to_string(), start));
        self.clock += rng.range(lo, hi);
        inner(self, rng);
        self.clock += rng.range(1, 8);
        self.stack.pop();
        self.record(name, "E");
        self.scopes.push(MosaicScope {
            sm_id: self.sm_id,
            warpgroup_id: self.warpgroup_id,
            name: name.to_string(),
            start,
            end: self.start_time + self.clock,
            depth: self.stack.len() as u32,
        });
        // The profiler's own cost between records.
        self.clock += 12;
    }

    fn record(&mut self, name: &str, ph: &str) {
        // Python's `float(start_time + time) / 1e3`, printed as `repr`
        // (shortest round trip, like Rust's `{:?}` of an f64).
        let ts = (self.start_time + self.clock) as f64 / 1e3;
        self.events.push(format!(
            r#"{{"name": "{name}", "ph": "{ph}", "ts": {ts:?}, "pid": {}, "tid": {}}}"#,
            1 + self.sm_id,
            1 + self.warpgroup_id
        ));
    }
}
