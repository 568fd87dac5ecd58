//! Expected files are not stale: tests/fixtures/expected_sources.tsv names
//! the fixture each expected file was made from, with the fixture's size
//! and FNV-1a 64 hash when the file was made. A fixture changed since (and
//! its expected files not made again, nor the list) fails here, as does an
//! expected file the list does not name.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::fixture;

/// FNV-1a, 64 bits (as tests/fixtures/expected_sources.py computes it).
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The expected files on disk, relative to tests/fixtures, as the script
/// lists them.
fn expected_files(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let dir = entry.unwrap().path();
        let expected = dir.join("expected");
        let (folder, keep): (_, fn(&str) -> bool) = if expected.is_dir() {
            (expected, |_| true)
        } else if dir.file_name().is_some_and(|n| n == "events_db") {
            (dir.clone(), |n| !n.ends_with(".py") && !n.ends_with(".sql"))
        } else {
            continue;
        };
        for file in std::fs::read_dir(&folder).unwrap() {
            let path = file.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_file()
                && keep(&name)
                && !["NOTES.md", "events_db_schema.txt"].contains(&name.as_str())
            {
                out.insert(
                    path.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    out
}

#[test]
fn every_expected_file_names_its_fixture_unchanged() {
    let root = fixture("");
    let list = std::fs::read_to_string(fixture("expected_sources.tsv")).unwrap();
    let mut listed = BTreeSet::new();
    for line in list.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split('\t').collect();
        let [expected, source, size, hash] = fields[..] else {
            panic!("expected_sources.tsv: not 4 fields: {line}");
        };
        assert!(
            root.join(expected).is_file(),
            "{expected} is listed but gone"
        );
        let bytes = std::fs::read(root.join(source)).unwrap();
        assert_eq!(
            (bytes.len().to_string(), format!("{:016x}", fnv1a64(&bytes))),
            (size.to_string(), hash.to_string()),
            "{source} changed since {expected} was made from it: make the expected file \
             again, then run tests/fixtures/expected_sources.py"
        );
        listed.insert(expected.to_string());
    }
    let on_disk = expected_files(&root);
    let unlisted: Vec<&String> = on_disk.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "expected files with no fixture recorded (run tests/fixtures/expected_sources.py): {unlisted:?}"
    );
    assert!(listed.len() >= 70, "{}", listed.len());
}
