//! A fuzzing driver for the input readers, on stable Rust (cargo-fuzz
//! needs nightly). It mutates a seed corpus (the committed fixtures) and
//! feeds each input to a reader, for a bounded time:
//!
//! - a panic is caught, counted, and its input saved to `--crashes`;
//! - a hang (one input running past `--hang-secs`) saves the input and
//!   stops the run;
//! - memory is bounded: the allocator refuses any single allocation over
//!   `--max-alloc-mib` (the process then aborts, naming the input's
//!   iteration, which `--replay N` writes out) and the peak resident
//!   memory of the run is reported.
//!
//! It is a mutation fuzzer, not a coverage-guided one; as coarse feedback
//! an input whose outcome (its error's kind and place, or the shape of a
//! successful conversion) is new joins the corpus. Runs are reproducible
//! from `--seed`.
//!
//! ```text
//! cargo run --release --example fuzz_readers -- --reader xspace --seconds 600
//! ```
//! Readers: `xspace` (decode and convert to tables, HLO protos included),
//! `inspect` (the plane/line summary), `gzip` (a `.gz` input opened and
//! converted), and `xspace-semantic`: well-formed XSpace messages whose
//! contents are hostile (missing and cyclic metadata references, extreme
//! times and durations, stats of the wrong type, planes and lines renamed
//! to the device and line names that drive the analyses, random `Hlo
//! Proto` bytes), which byte edits rarely reach because most of them break
//! the wire format first; `chrome` (Chrome Trace Event JSON, seeded with
//! the JSON fixtures, byte edits plus JSON tokens spliced in);
//! `proton-tree` (Proton's tree profile, JSON and MessagePack, seeded with
//! `tests/fixtures/gpu/proton_tree.hatchet*`, byte edits); `llo-proto`
//! (the `llo_proto` decoder, seeded with the synthetic capture's payloads,
//! byte edits); `llo-dump` (the LLO compiler dump reader, seeded with the
//! synthetic dump folder's files, each edit read as every dump kind).
//! docs/reliability.md records the runs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use xprof_sql::convert::discover::ProfileFile;
use xprof_sql::convert::reader::{ConvertOptions, TraceSource};
use xprof_sql::convert::sink::MemorySink;
use xprof_sql::convert::xspace;
use xprof_testdata::Rng;

/// Refuses single allocations above a limit, so a length read from
/// hostile input cannot take the machine's memory.
struct BoundedAlloc;

static MAX_ALLOC: AtomicUsize = AtomicUsize::new(usize::MAX);
/// The iteration being run, named when an allocation is refused.
static ITERATION: AtomicU64 = AtomicU64::new(0);

/// Bytes allocated now, and the most since `PEAK` was last reset: the
/// memory one input takes is the peak during its run less what was
/// allocated when it started (the corpus lives outside it).
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for BoundedAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MAX_ALLOC.load(Ordering::Relaxed) {
            refused(layout.size());
            return std::ptr::null_mut();
        }
        grew(layout.size());
        // SAFETY: forwarded unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > MAX_ALLOC.load(Ordering::Relaxed) {
            refused(new_size);
            return std::ptr::null_mut();
        }
        // SAFETY: forwarded unchanged.
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new_size);
        }
        moved
    }
}

/// Says which iteration asked for too much, without allocating.
fn refused(size: usize) {
    let mut line = [0u8; 96];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        let n = bytes.len().min(line.len() - at);
        line[at..at + n].copy_from_slice(&bytes[..n]);
        at += n;
    };
    put(b"fuzz: allocation of ");
    put(decimal(size as u64).as_slice());
    put(b" bytes refused at iteration ");
    put(decimal(ITERATION.load(Ordering::Relaxed)).as_slice());
    put(b"\n");
    // SAFETY: writes a stack buffer to stderr.
    unsafe { libc::write(2, line.as_ptr().cast(), at) };
}

/// `n` in decimal, in a fixed buffer (no allocation).
fn decimal(mut n: u64) -> DecimalDigits {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    DecimalDigits { digits, start }
}

struct DecimalDigits {
    digits: [u8; 20],
    start: usize,
}

impl DecimalDigits {
    fn as_slice(&self) -> &[u8] {
        &self.digits[self.start..]
    }
}

#[global_allocator]
static ALLOC: BoundedAlloc = BoundedAlloc;

#[derive(Clone, Copy, PartialEq)]
enum Reader {
    XSpace,
    Inspect,
    Gzip,
    XSpaceSemantic,
    Chrome,
    ProtonTree,
    LloProto,
    LloDump,
    RankFolder,
}

impl Reader {
    fn name(self) -> &'static str {
        match self {
            Reader::XSpace => "xspace",
            Reader::Inspect => "inspect",
            Reader::Gzip => "gzip",
            Reader::XSpaceSemantic => "xspace-semantic",
            Reader::Chrome => "chrome",
            Reader::ProtonTree => "proton-tree",
            Reader::LloProto => "llo-proto",
            Reader::LloDump => "llo-dump",
            Reader::RankFolder => "rank-folder",
        }
    }
}

struct Args {
    reader: Reader,
    seconds: f64,
    seed: u64,
    crashes: PathBuf,
    hang_secs: u64,
    max_alloc_mib: usize,
    replay: Option<u64>,
    seeds: Vec<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut args = Args {
        reader: Reader::XSpace,
        seconds: 60.0,
        seed: 1,
        crashes: PathBuf::from("fuzz-crashes"),
        hang_secs: 10,
        max_alloc_mib: 1024,
        replay: None,
        seeds: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--reader" => {
                args.reader = match value()?.as_str() {
                    "xspace" => Reader::XSpace,
                    "inspect" => Reader::Inspect,
                    "gzip" => Reader::Gzip,
                    "xspace-semantic" => Reader::XSpaceSemantic,
                    "chrome" => Reader::Chrome,
                    "proton-tree" => Reader::ProtonTree,
                    "llo-proto" => Reader::LloProto,
                    "llo-dump" => Reader::LloDump,
                    "rank-folder" => Reader::RankFolder,
                    other => {
                        return Err(format!(
                            "--reader {other}: xspace, inspect, gzip, xspace-semantic, chrome, \
                             proton-tree, llo-proto, llo-dump or rank-folder"
                        ));
                    }
                }
            }
            "--seconds" => args.seconds = value()?.parse().map_err(|e| format!("{e}"))?,
            "--seed" => args.seed = value()?.parse().map_err(|e| format!("{e}"))?,
            "--crashes" => args.crashes = value()?.into(),
            "--hang-secs" => args.hang_secs = value()?.parse().map_err(|e| format!("{e}"))?,
            "--max-alloc-mib" => {
                args.max_alloc_mib = value()?.parse().map_err(|e| format!("{e}"))?
            }
            "--replay" => args.replay = Some(value()?.parse().map_err(|e| format!("{e}"))?),
            "--seed-file" => args.seeds.push(value()?.into()),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if args.seeds.is_empty() && args.reader == Reader::ProtonTree {
        for name in ["proton_tree.hatchet", "proton_tree.hatchet_msgpack"] {
            args.seeds.push(root.join("tests/fixtures/gpu").join(name));
        }
    }
    if args.seeds.is_empty() && args.reader == Reader::LloProto {
        args.seeds
            .push(root.join("tests/fixtures/tpu/synthetic_capture.xplane.pb"));
    }
    if args.seeds.is_empty() && args.reader == Reader::LloDump {
        let dir = root.join("tests/fixtures/tpu/synthetic_dump");
        let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        found.sort();
        args.seeds.extend(found);
    }
    if args.seeds.is_empty() && matches!(args.reader, Reader::Chrome | Reader::RankFolder) {
        let mut found: Vec<PathBuf> = std::fs::read_dir(root.join("tests/fixtures/gpu"))
            .map_err(|e| format!("tests/fixtures/gpu: {e}"))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.to_string_lossy();
                name.ends_with(".json") || name.ends_with(".chrome_trace")
            })
            .collect();
        found.sort();
        args.seeds.extend(found);
    }
    if args.seeds.is_empty() {
        for dir in [
            "tests/fixtures/xspace",
            "tests/fixtures/gpu",
            "tests/fixtures/tpu",
        ] {
            let mut found: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
                .map_err(|e| format!("{dir}: {e}"))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.to_string_lossy().ends_with(".xplane.pb"))
                .collect();
            found.sort();
            args.seeds.extend(found);
        }
    }
    Ok(args)
}

/// JSON pieces the Chrome-trace reader treats specially, spliced in by
/// [`mutate_json`] (byte edits alone rarely make well-formed JSON).
const JSON_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "\\",
    "\\u",
    "\\ud83d",
    "null",
    "true",
    "-",
    "1e308",
    "-0.0000001",
    "99999999999999999999999",
    "\"ph\":\"B\"",
    "\"ph\":\"E\"",
    "\"ph\":\"b\"",
    "\"ph\":\"e\"",
    "\"ph\":\"C\"",
    "\"ph\":\"s\"",
    "\"ph\":\"f\"",
    "\"ph\":\"M\"",
    "\"ph\":\"X\"",
    "\"ts\":",
    "\"dur\":-5",
    "\"pid\":\"x\"",
    "\"tid\":[]",
    "\"args\":{\"a\":[[[[",
    "\"id\":",
    "\"bp\":\"e\"",
    "\"name\":\"process_name\"",
    "\"traceEvents\":",
];

/// A JSON-aware edit: a corpus entry with byte edits and tokens spliced in.
fn mutate_json(corpus: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut bytes = mutate(corpus, rng);
    for _ in 0..rng.range(0, 4) {
        let at = rng.range(0, bytes.len() as i64 + 1) as usize;
        let token = JSON_TOKENS[rng.range(0, JSON_TOKENS.len() as i64) as usize];
        bytes.splice(at..at, token.bytes());
    }
    bytes
}

/// One mutated input: 1 to 8 edits of a corpus entry.
fn mutate(corpus: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let pick = |rng: &mut Rng| rng.range(0, corpus.len() as i64) as usize;
    let mut bytes = corpus[pick(rng)].clone();
    for _ in 0..rng.range(1, 9) {
        let len = bytes.len() as i64;
        let at = rng.range(0, len.max(1)) as usize;
        match rng.range(0, 9) {
            0 if len > 0 => bytes[at] ^= 1 << rng.range(0, 8),
            1 if len > 0 => bytes[at] = [0x00, 0x01, 0x7f, 0x80, 0xff][rng.range(0, 5) as usize],
            2 if len > 0 => {
                let end = (at + rng.range(1, 65) as usize).min(bytes.len());
                bytes.drain(at..end);
            }
            3 => {
                let n = rng.range(1, 17);
                let fill: Vec<u8> = (0..n).map(|_| rng.range(0, 256) as u8).collect();
                bytes.splice(at..at, fill);
            }
            4 if len > 0 => {
                let end = (at + rng.range(1, 257) as usize).min(bytes.len());
                let chunk = bytes[at..end].to_vec();
                let to = rng.range(0, len) as usize;
                bytes.splice(to..to, chunk);
            }
            5 => bytes.truncate(at),
            6 => {
                // A huge varint where a length or count may be read.
                let big = [0xff, 0xff, 0xff, 0xff, 0x0f];
                let end = (at + big.len()).min(bytes.len());
                bytes.splice(at..end, big);
            }
            7 => {
                let other = &corpus[pick(rng)];
                let from = rng.range(0, other.len().max(1) as i64) as usize;
                bytes.truncate(at);
                bytes.extend_from_slice(&other[from.min(other.len())..]);
            }
            _ if len > 0 => bytes[at] = rng.range(0, 256) as u8,
            _ => bytes.push(rng.range(0, 256) as u8),
        }
    }
    bytes
}

/// Names that decide what a plane or line is, and the stats the
/// converter and the views interpret.
const PLANE_NAMES: &[&str] = &[
    "/host:CPU",
    "/host:metadata",
    "/device:GPU:0",
    "/device:TPU:0",
    "/device:TPU:0 SparseCore 1",
    "/device:CUSTOM:x",
    "Task Environment",
];
const LINE_NAMES: &[&str] = &[
    "XLA Ops",
    "XLA Modules",
    "Steps",
    "Framework Ops",
    "Sparse Core Ops",
    "VALU Instructions",
    "MXU0 Instructions",
    "Stream #1(Memcpy)",
    "main",
];
const STAT_NAMES: &[&str] = &[
    "hlo_op",
    "hlo_module",
    "program_id",
    "tf_op",
    "hlo_category",
    "flops",
    "bytes_accessed",
    "correlation_id",
    "group_id",
    "step_num",
    "device_offset_ps",
    "device_duration_ps",
    "flow",
    "counter_value",
    "self_duration_ps",
    "Hlo Proto",
    "kernel_details",
];

/// A well-formed XSpace whose contents are hostile: 1 to 8 edits of the
/// decoded message of a corpus entry, encoded again.
fn mutate_semantic(corpus: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    use prost::Message;
    use xprof_testdata::xspace_proto::{XSpace, x_event, x_stat};
    let seed = &corpus[rng.range(0, corpus.len() as i64) as usize];
    let Ok(mut space) = XSpace::decode(seed.as_slice()) else {
        return mutate(corpus, rng);
    };
    if space.planes.is_empty() {
        return mutate(corpus, rng);
    }
    let extreme = |rng: &mut Rng| -> i64 {
        [0, -1, 1, i64::MAX, i64::MIN, i64::MAX / 2, 1 << 40][rng.range(0, 7) as usize]
    };
    for _ in 0..rng.range(1, 9) {
        let p = rng.range(0, space.planes.len() as i64) as usize;
        let plane = &mut space.planes[p];
        let any_id = |rng: &mut Rng| rng.range(-2, 64);
        match rng.range(0, 12) {
            0 => plane.name = PLANE_NAMES[rng.range(0, PLANE_NAMES.len() as i64) as usize].into(),
            1 if !plane.lines.is_empty() => {
                let l = rng.range(0, plane.lines.len() as i64) as usize;
                plane.lines[l].name =
                    LINE_NAMES[rng.range(0, LINE_NAMES.len() as i64) as usize].into();
            }
            2 if !plane.lines.is_empty() => {
                let l = rng.range(0, plane.lines.len() as i64) as usize;
                plane.lines[l].timestamp_ns = extreme(rng);
            }
            3 if !plane.lines.is_empty() => {
                // Two lines with one id.
                let (a, b) = (
                    rng.range(0, plane.lines.len() as i64) as usize,
                    rng.range(0, plane.lines.len() as i64) as usize,
                );
                plane.lines[a].id = plane.lines[b].id;
            }
            4..=7 => {
                let Some(line) = (!plane.lines.is_empty())
                    .then(|| rng.range(0, plane.lines.len() as i64) as usize)
                    .map(|l| &mut plane.lines[l])
                else {
                    continue;
                };
                if line.events.is_empty() {
                    continue;
                }
                let e = rng.range(0, line.events.len() as i64) as usize;
                let event = &mut line.events[e];
                match rng.range(0, 5) {
                    0 => event.metadata_id = any_id(rng),
                    1 => event.duration_ps = extreme(rng),
                    2 => event.data = Some(x_event::Data::OffsetPs(extreme(rng))),
                    3 => event.data = Some(x_event::Data::NumOccurrences(extreme(rng))),
                    _ if !event.stats.is_empty() => {
                        let s = rng.range(0, event.stats.len() as i64) as usize;
                        let stat = &mut event.stats[s];
                        match rng.range(0, 6) {
                            0 => stat.metadata_id = any_id(rng) as u64,
                            1 => stat.value = Some(x_stat::Value::RefValue(any_id(rng) as u64)),
                            2 => stat.value = Some(x_stat::Value::Int64Value(extreme(rng))),
                            3 => stat.value = Some(x_stat::Value::DoubleValue(f64::NAN)),
                            4 => {
                                let n = rng.range(0, 64) as usize;
                                let bytes = (0..n).map(|_| rng.range(0, 256) as u8).collect();
                                stat.value = Some(x_stat::Value::BytesValue(bytes));
                            }
                            _ => {
                                stat.value =
                                    Some(x_stat::Value::StrValue("\u{0}\u{fffd}é|;\n".into()))
                            }
                        }
                    }
                    _ => {}
                }
            }
            8 if !plane.event_metadata.is_empty() => {
                // A metadata entry that is its own child, or another's.
                let ids: Vec<i64> = plane.event_metadata.keys().copied().collect();
                let a = ids[rng.range(0, ids.len() as i64) as usize];
                let b = ids[rng.range(0, ids.len() as i64) as usize];
                if let Some(m) = plane.event_metadata.get_mut(&a) {
                    m.child_id.push(b);
                    m.child_id.push(a);
                }
            }
            9 if !plane.stat_metadata.is_empty() => {
                let ids: Vec<i64> = plane.stat_metadata.keys().copied().collect();
                let id = ids[rng.range(0, ids.len() as i64) as usize];
                if let Some(m) = plane.stat_metadata.get_mut(&id) {
                    m.name = STAT_NAMES[rng.range(0, STAT_NAMES.len() as i64) as usize].into();
                }
            }
            10 if !plane.event_metadata.is_empty() => {
                // Metadata stats of any kind, e.g. random HLO proto bytes.
                let ids: Vec<i64> = plane.event_metadata.keys().copied().collect();
                let id = ids[rng.range(0, ids.len() as i64) as usize];
                let stat_id = any_id(rng) as u64;
                let n = rng.range(0, 512) as usize;
                let bytes = (0..n).map(|_| rng.range(0, 256) as u8).collect();
                if let Some(m) = plane.event_metadata.get_mut(&id) {
                    m.stats.push(xprof_testdata::xspace_proto::XStat {
                        metadata_id: stat_id,
                        value: Some(x_stat::Value::BytesValue(bytes)),
                    });
                }
            }
            _ if space.planes.len() < 32 => {
                // A plane copied: ids and names repeated across planes.
                let copy = space.planes[p].clone();
                space.planes.push(copy);
            }
            _ => {}
        }
    }
    space.encode_to_vec()
}

fn source() -> TraceSource {
    TraceSource {
        trace_id: 0,
        path: "fuzz.xplane.pb".into(),
        run: None,
        host: "fuzz".into(),
    }
}

/// Runs the reader; the outcome's signature (an error's first words with
/// digits dropped, or a conversion's shape).
fn run_reader(reader: Reader, bytes: &[u8], scratch: &Path) -> String {
    let options = ConvertOptions::default();
    let shape = |r: Result<String, xprof_sql::convert::ConvertError>| match r {
        Ok(shape) => shape,
        Err(e) => {
            let msg: String = e
                .to_string()
                .chars()
                .filter(|c| !c.is_ascii_digit())
                .take(60)
                .collect();
            format!("error {msg}")
        }
    };
    match reader {
        Reader::XSpace | Reader::XSpaceSemantic => {
            let mut sink = MemorySink::default();
            shape(
                xspace::convert(bytes, &source(), &options, &mut sink)
                    .map(|s| format!("ok planes={} warnings={}", s.planes, s.warnings.len())),
            )
        }
        Reader::Inspect => shape(
            xspace::inspect(bytes, Path::new("fuzz.xplane.pb"))
                .map(|planes| format!("ok planes={}", planes.len())),
        ),
        Reader::Chrome | Reader::ProtonTree => {
            // The tree reader tells JSON from MessagePack by content.
            let name = if reader == Reader::Chrome {
                "fuzz.trace.json"
            } else {
                "fuzz.hatchet"
            };
            let path = scratch.join(name);
            std::fs::write(&path, bytes).expect("scratch folder is writable");
            let file = ProfileFile {
                path,
                run: None,
                host: "fuzz".into(),
            };
            let mut sink = MemorySink::default();
            shape(
                xprof_sql::convert::many::convert_file(&file, 0, &options, &mut sink)
                    .map(|s| format!("ok planes={} warnings={}", s.planes, s.warnings.len())),
            )
        }
        Reader::LloProto => shape(
            xprof_sql::convert::llo_proto::decode(bytes)
                .map(|p| format!("ok regions={}", p.regions.len()))
                .map_err(|e| xprof_sql::convert::ConvertError::Sink(e.to_string())),
        ),
        Reader::LloDump => {
            // The same bytes read as each kind of dump, with every line
            // end a dump may reach us with: as written, LF as CR (old Mac)
            // and LF as CRLF.
            let mut out = Vec::new();
            let as_cr: Vec<u8> = bytes
                .iter()
                .map(|&b| if b == b'\n' { b'\r' } else { b })
                .collect();
            let as_crlf: Vec<u8> = bytes
                .iter()
                .flat_map(|&b| {
                    if b == b'\n' {
                        vec![b'\r', b'\n']
                    } else {
                        vec![b]
                    }
                })
                .collect();
            for (dump, text) in [
                "04-original",
                "121-final_hlo-static-per-bundle-utilization",
                "123-schedule-analysis_final_bundles",
                "124-final_bundles",
            ]
            .into_iter()
            .flat_map(|d| [(d, bytes), (d, &as_cr[..]), (d, &as_crlf[..])])
            {
                let path = scratch.join(format!("1783579888000000000-k.1-{dump}.txt"));
                std::fs::write(&path, text).expect("scratch folder is writable");
                let file = ProfileFile {
                    path,
                    run: None,
                    host: "fuzz".into(),
                };
                let mut sink = MemorySink::default();
                out.push(shape(
                    xprof_sql::convert::many::convert_file(&file, 0, &options, &mut sink)
                        .map(|s| format!("ok warnings={}", s.warnings.len())),
                ));
            }
            out.join("; ")
        }
        Reader::RankFolder => {
            // The bytes as rank 1 of a folder beside a good rank 0: found,
            // skipped with a reason, or converted, file by file, as
            // `query RANKS/` does.
            let run = scratch.join("ranks");
            let _ = std::fs::remove_dir_all(&run);
            std::fs::create_dir(&run).expect("scratch folder is writable");
            std::fs::write(
                run.join("rank-0.json"),
                br#"{"distributedInfo":{"rank":0},"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"stream":7}}]}"#,
            )
            .expect("scratch folder is writable");
            std::fs::write(run.join("rank-1.json"), bytes).expect("scratch folder is writable");
            let skipped = xprof_sql::convert::discover::skipped_files(&run).len();
            let files = match xprof_sql::convert::discover::discover(&run, None) {
                Ok(files) => files,
                Err(e) => return shape(Err(e)),
            };
            let mut out = vec![format!("skipped={skipped} files={}", files.len())];
            for file in &files {
                let mut sink = MemorySink::default();
                out.push(shape(
                    xprof_sql::convert::many::convert_file(file, 0, &options, &mut sink)
                        .map(|s| format!("ok warnings={}", s.warnings.len())),
                ));
            }
            out.join("; ")
        }
        Reader::Gzip => {
            let path = scratch.join("fuzz.xplane.pb.gz");
            std::fs::write(&path, bytes).expect("scratch folder is writable");
            let file = ProfileFile {
                path,
                run: None,
                host: "fuzz".into(),
            };
            let mut sink = MemorySink::default();
            shape(
                xprof_sql::convert::many::convert_file(&file, 0, &options, &mut sink)
                    .map(|s| format!("ok planes={}", s.planes)),
            )
        }
    }
}

/// For the gzip reader the seeds are the fixtures compressed, and edits
/// hit the compressed stream.
fn seed_bytes(reader: Reader, raw: Vec<u8>) -> Vec<u8> {
    if reader == Reader::LloProto {
        return largest_llo_proto(&raw).unwrap_or(raw);
    }
    if reader != Reader::Gzip {
        return raw;
    }
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&raw).expect("in memory");
    gz.finish().expect("in memory")
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

fn main() -> std::process::ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("fuzz_readers: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let mut corpus: Vec<Vec<u8>> = Vec::new();
    for p in &args.seeds {
        match std::fs::read(p) {
            Ok(b) => corpus.push(seed_bytes(args.reader, b)),
            Err(e) => {
                eprintln!("fuzz_readers: {}: {e}", p.display());
                return std::process::ExitCode::FAILURE;
            }
        }
    }
    let seeds = corpus.len();
    let scratch = tempfile::tempdir().expect("a temporary folder");
    std::fs::create_dir_all(&args.crashes).expect("crash folder");
    // Panics are caught and counted; their messages would flood stderr.
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng::new(args.seed);
    // A watchdog: an input running past --hang-secs is saved, and the run
    // stops (a hang cannot be interrupted from inside).
    let started_ms = std::sync::Arc::new(AtomicU64::new(u64::MAX));
    let current: std::sync::Arc<std::sync::Mutex<Vec<u8>>> = Default::default();
    let t0 = Instant::now();
    {
        let (started_ms, current) = (started_ms.clone(), current.clone());
        let (hang, crashes) = (args.hang_secs * 1000, args.crashes.clone());
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(200));
                let at = started_ms.load(Ordering::Relaxed);
                let now = t0.elapsed().as_millis() as u64;
                if at != u64::MAX && now.saturating_sub(at) > hang {
                    let path =
                        crashes.join(format!("hang-{}.bin", ITERATION.load(Ordering::Relaxed)));
                    let bytes = current.lock().map(|b| b.clone()).unwrap_or_default();
                    let _ = std::fs::write(&path, bytes);
                    eprintln!(
                        "fuzz: hang past {hang} ms; input saved to {}",
                        path.display()
                    );
                    std::process::exit(2);
                }
            }
        });
    }
    MAX_ALLOC.store(args.max_alloc_mib << 20, Ordering::Relaxed);
    let (mut execs, mut panics) = (0u64, 0u64);
    let mut signatures: HashSet<String> = HashSet::new();
    let mut slowest = Duration::ZERO;
    // The most memory one input took, and that input's size.
    let mut most_memory = (0usize, 0usize);
    // Replaying runs the same iterations (the corpus grows with their
    // outcomes) and writes out input N instead of running it.
    while args.replay.is_some() || t0.elapsed().as_secs_f64() < args.seconds {
        let input = match args.reader {
            Reader::XSpaceSemantic => mutate_semantic(&corpus, &mut rng),
            Reader::Chrome | Reader::RankFolder => mutate_json(&corpus, &mut rng),
            _ => mutate(&corpus, &mut rng),
        };
        if args.replay == Some(execs) {
            let path = args
                .crashes
                .join(format!("replay-{}-{execs}.bin", args.seed));
            std::fs::write(&path, &input).expect("writable");
            eprintln!("wrote {} ({} bytes)", path.display(), input.len());
            return std::process::ExitCode::SUCCESS;
        }
        ITERATION.store(execs, Ordering::Relaxed);
        *current.lock().expect("no panic holds it") = input.clone();
        let began = Instant::now();
        started_ms.store(t0.elapsed().as_millis() as u64, Ordering::Relaxed);
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let outcome = std::panic::catch_unwind(|| run_reader(args.reader, &input, scratch.path()));
        started_ms.store(u64::MAX, Ordering::Relaxed);
        slowest = slowest.max(began.elapsed());
        let took = PEAK.load(Ordering::Relaxed).saturating_sub(before);
        if took > most_memory.0 {
            most_memory = (took, input.len());
            // Kept for a look: the input that took the most memory.
            let _ = std::fs::write(args.crashes.join("most-memory.bin"), &input);
        }
        execs += 1;
        match outcome {
            Ok(signature) => {
                if signatures.insert(signature) && corpus.len() < 2000 {
                    corpus.push(input);
                }
            }
            Err(_) => {
                panics += 1;
                let path = args
                    .crashes
                    .join(format!("panic-{}-{}.bin", args.seed, execs - 1));
                let _ = std::fs::write(&path, &input);
                eprintln!("fuzz: panic; input saved to {}", path.display());
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "reader={} seconds={secs:.0} execs={execs} execs_per_s={:.0} panics={panics} hangs=0 \
         slowest_ms={} most_memory_per_input_mib={:.1} (input of {} KiB) outcomes={} \
         corpus={} (seeds {seeds}) peak_rss_mib={:.0} max_alloc_mib={}",
        args.reader.name(),
        execs as f64 / secs,
        slowest.as_millis(),
        most_memory.0 as f64 / 1048576.0,
        most_memory.1 / 1024,
        signatures.len(),
        corpus.len(),
        peak_rss_mib(),
        args.max_alloc_mib
    );
    if panics > 0 {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}

/// The largest `llo_proto` payload of an XSpace file (the llo-proto
/// reader's seeds are payloads, not files).
fn largest_llo_proto(file: &[u8]) -> Option<Vec<u8>> {
    use prost::Message;
    use xprof_testdata::xspace_proto::{XSpace, x_stat};
    let space = XSpace::decode(file).ok()?;
    space
        .planes
        .iter()
        .flat_map(|p| {
            p.event_metadata.values().flat_map(move |m| {
                m.stats.iter().filter_map(move |st| {
                    let named = p
                        .stat_metadata
                        .get(&(st.metadata_id as i64))
                        .is_some_and(|s| s.name == "llo_proto");
                    match &st.value {
                        Some(x_stat::Value::BytesValue(b)) if named => Some(b.clone()),
                        _ => None,
                    }
                })
            })
        })
        .max_by_key(|b| b.len())
}
