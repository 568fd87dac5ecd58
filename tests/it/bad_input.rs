//! Bad input gets a clear error naming the file, the format and the byte
//! offset; never a panic, never a partial Parquet file.

use crate::common;

use common::*;
use prost::Message;
use xprof_sql::convert::discover::ProfileFile;
use xprof_sql::convert::many::{convert_file, convert_to_dataset};
use xprof_sql::convert::reader::ConvertOptions;
use xprof_sql::convert::sink::MemorySink;
use xprof_sql::convert::xspace;
use xprof_sql::format::dataset::WriteOptions;
use xprof_testdata::*;

fn convert_err(bytes: &[u8]) -> Option<String> {
    let mut sink = MemorySink::default();
    xspace::convert(bytes, &source(0), &ConvertOptions::default(), &mut sink)
        .err()
        .map(|e| e.to_string())
}

/// The byte offsets where the top-level fields of the protobuf `bytes`
/// end (an XSpace's planes, errors, warnings, hostnames).
fn top_level_field_ends(bytes: &[u8]) -> Vec<usize> {
    fn varint(bytes: &[u8], at: &mut usize) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *bytes.get(*at)?;
            *at += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Some(value);
            }
        }
        None
    }
    let (mut ends, mut at) = (Vec::new(), 0);
    while at < bytes.len() {
        let Some(tag) = varint(bytes, &mut at) else {
            break;
        };
        match tag & 7 {
            0 => {
                varint(bytes, &mut at);
            }
            2 => match varint(bytes, &mut at) {
                Some(len) => at += len as usize,
                None => break,
            },
            _ => break,
        }
        ends.push(at.min(bytes.len()));
    }
    ends
}

/// The (name, duration) of every event a conversion gave, counted.
fn event_keys(sink: &MemorySink) -> std::collections::BTreeMap<(String, i64), usize> {
    let mut keys = std::collections::BTreeMap::new();
    for b in sink
        .tables
        .get(&xprof_sql::format::Table::Events)
        .into_iter()
        .flatten()
    {
        for (name, dur) in strings(b, "name").into_iter().zip(i64s(b, "dur_ps")) {
            *keys.entry((name, dur.unwrap())).or_default() += 1;
        }
    }
    keys
}

#[test]
fn every_truncation_of_a_real_file_errors_or_converts_without_panic() {
    let bytes = std::fs::read(cpu_fixture("jax_cpu_nested_4steps")).unwrap();
    let full = event_keys(&convert_bytes(&bytes, &Default::default()).0);
    let (mut errors, mut converted) = (0, 0);
    // Every prefix length would take long in a debug build; a stride
    // covering all field boundaries of the first KB and then sparser.
    // And the end of every top-level field (each whole plane): cuts there
    // convert. (A cut at 0 is an empty file, an error since issue 60.)
    let cuts: Vec<usize> = (0..1024)
        .chain((1024..bytes.len()).step_by(997))
        .chain(top_level_field_ends(&bytes))
        .collect();
    for cut in cuts {
        let mut sink = MemorySink::default();
        match xspace::convert(
            &bytes[..cut],
            &source(0),
            &ConvertOptions::default(),
            &mut sink,
        ) {
            Err(e) => {
                let msg = e.to_string();
                errors += 1;
                assert!(
                    msg.contains("test.xplane.pb") && msg.contains("invalid XSpace at byte"),
                    "{msg}"
                );
            }
            Ok(_) => {
                // A cut between whole planes: what converted is exactly the
                // events of those planes (prost reads the same prefix), and
                // every one of them is an event of the whole file.
                converted += 1;
                let prefix = xprof_testdata::xspace_proto::XSpace::decode(&bytes[..cut])
                    .expect("prost reads a prefix that converted");
                let in_prefix: usize = prefix
                    .planes
                    .iter()
                    .flat_map(|p| &p.lines)
                    .map(|l| l.events.len())
                    .sum();
                assert_eq!(
                    sink.rows(xprof_sql::format::Table::Events),
                    in_prefix,
                    "cut {cut}"
                );
                for (key, n) in event_keys(&sink) {
                    assert!(
                        full.get(&key).is_some_and(|m| *m >= n),
                        "cut {cut}: {key:?}"
                    );
                }
            }
        }
    }
    assert!(errors > 100, "truncations are detected ({errors})");
    assert!(converted >= 1, "no cut fell between planes");
}

#[test]
fn corrupted_bytes_never_panic() {
    let base = tpu_space(&TpuSpec::default()).encode_to_vec();
    let mut rng = Rng::new(3);
    for _ in 0..300 {
        let mut b = base.clone();
        for _ in 0..4 {
            let i = rng.range(0, b.len() as i64) as usize;
            b[i] = rng.range(0, 256) as u8;
        }
        let _ = convert_err(&b);
    }
}

#[test]
fn wrong_format_is_named() {
    let d = tempfile::tempdir().unwrap();
    // JSON, but neither a Chrome trace nor a Proton tree.
    let p = d.path().join("trace.json");
    std::fs::write(&p, b"{\"events\": []}").unwrap();
    let f = ProfileFile {
        path: p,
        run: None,
        host: "h".into(),
    };
    let e = convert_file(
        &f,
        0,
        &ConvertOptions::default(),
        &mut MemorySink::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("trace.json"), "{e}");
    let p = d.path().join("x.bin");
    std::fs::write(&p, b"\xff\xfe garbage").unwrap();
    let f = ProfileFile {
        path: p,
        run: None,
        host: "h".into(),
    };
    let e = convert_file(
        &f,
        0,
        &ConvertOptions::default(),
        &mut MemorySink::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("first byte 0xff"), "{e}");
}

#[test]
fn a_failed_conversion_leaves_no_parquet_file() {
    let d = tempfile::tempdir().unwrap();
    let good = d.path().join("good.xplane.pb");
    std::fs::copy(cpu_fixture("jax_cpu_nested_4steps"), &good).unwrap();
    let bad = d.path().join("bad.xplane.pb");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() - 3]).unwrap();
    let file = |path: &std::path::Path, host: &str| ProfileFile {
        path: path.to_path_buf(),
        run: None,
        host: host.into(),
    };
    let convert = |files: &[ProfileFile], out: &std::path::Path| {
        convert_to_dataset(
            files,
            out,
            &ConvertOptions::default(),
            &WriteOptions::default(),
            1,
            None,
        )
    };
    // The good file converts first (one thread, in order) and its part is
    // finished before the bad one fails: the failure removes it, and the
    // folder this call created.
    let out = d.path().join("out");
    let e = convert(&[file(&good, "good"), file(&bad, "bad")], &out).unwrap_err();
    assert!(e.to_string().contains("bad.xplane.pb"), "{e}");
    assert!(!out.exists(), "left behind: {:?}", walk(&out));

    // Into an existing dataset: what was there stays, the batch leaves
    // nothing.
    let existing = d.path().join("existing");
    let first = convert(&[file(&good, "first")], &existing).unwrap();
    let before = walk(&existing);
    assert_eq!(before.len(), first[0].written.len());
    convert(&[file(&good, "good"), file(&bad, "bad")], &existing).unwrap_err();
    let mut after = walk(&existing);
    let mut before = before;
    after.sort();
    before.sort();
    assert_eq!(after, before);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn empty_and_plane_less_files_convert() {
    // Zero bytes are no profile (issue 60): an error naming the file.
    let e = convert_err(&[]).unwrap();
    assert!(
        e.contains("invalid XSpace at byte 0: the file is empty"),
        "{e}"
    );
    let space = xprof_testdata::xspace_proto::XSpace {
        errors: vec!["lost events".into()],
        ..Default::default()
    };
    assert!(convert_err(&space.encode_to_vec()).is_none());
}

/// A small file of many planes must not take memory per plane beyond its
/// rows: each device's last, short batch kept a whole batch's capacity
/// (15 MB of events columns), so 1,000 one-event planes (40 KB) held
/// 10 GB of heap. Found by `examples/fuzz_readers.rs --reader
/// xspace-semantic`.
#[test]
fn many_small_planes_take_memory_by_their_rows() {
    use xprof_testdata::xspace_proto::{XPlane, XSpace};
    let planes: Vec<XPlane> = (0..1000)
        .map(|i| {
            let name = if i % 2 == 0 {
                "/host:CPU".into()
            } else {
                format!("/device:GPU:{i}")
            };
            one_event_plane(i, name)
        })
        .collect();
    let bytes = XSpace {
        planes,
        ..Default::default()
    }
    .encode_to_vec();
    assert!(bytes.len() < 64 << 10);
    let mut sink = MemorySink::default();
    xspace::convert(&bytes, &source(0), &ConvertOptions::default(), &mut sink).unwrap();
    assert_eq!(sink.rows(xprof_sql::format::Table::Events), 1000);
    let held: usize = sink
        .tables
        .values()
        .flatten()
        .map(|b| b.get_array_memory_size())
        .sum();
    // 10.4 GB at first; 178,907,460 bytes while each device's short batch
    // kept its builders' capacity; 16,799,143 (2026-12-02) since the memory
    // sink copies such batches into buffers of their size (sink::compact):
    // 17 KB per one-event plane, the per-batch overhead of the tables a
    // plane has rows in; 452,471 (2026-12-03, planes from
    // `one_event_plane`) since the assembler holds small devices' rows
    // until they make a batch and the memory sink joins short batches
    // (1,354,399 with the sink's joining alone, planes without event
    // metadata); 457,795 (2026-12-07) with the column
    // `devices.process_name` (NULL here: 4 bytes of offsets a plane). The
    // size is deterministic: any growth fails here.
    assert!(held <= 457_795, "{held} bytes held");
}
