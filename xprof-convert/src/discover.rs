//! Finding the profile files an input path names: a file, a run folder
//! (`HOST.xplane.pb`, one trace per host), a folder of per-rank Chrome
//! traces (HTA's layout: `rank-N.json.gz`, one trace per rank) or a log
//! folder (`plugins/profile/<RUN>/`), and each file's run and host.
//!
//! Which files belong to a format, and which suffix a host name drops,
//! each reader says ([`owns_file_name`](crate::reader::ProfileReader::owns_file_name),
//! [`file_suffixes`](crate::reader::ProfileReader::file_suffixes)); this
//! module asks every reader of the registry.

use std::path::{Path, PathBuf};

use crate::error::{ConvertError, Result, io_err};
use crate::input::read_head;
use crate::reader::ProfileReader;
use crate::readers::chrome::ChromeTraceReader;
use crate::readers::xspace::is_xspace_name;
use crate::registry::READERS;

/// Whether a file name belongs to a format this build reads.
pub fn is_profile_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    READERS.iter().any(|r| r.owns_file_name(&name))
}

/// One profile file found in a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileFile {
    /// The file.
    pub path: PathBuf,
    /// Run name (the run folder), when the file is part of a run.
    pub run: Option<String>,
    /// Host name from the file stem.
    pub host: String,
}

/// Host name of a profile file: its name without the longest of the
/// readers' [`file_suffixes`](crate::reader::ProfileReader::file_suffixes)
/// it ends with (`.xplane.pb[.gz]`, `.trace.json[.gz]`, `.chrome_trace`,
/// ...), or the whole name when none.
pub fn host_of(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(host) = READERS.iter().find_map(|r| r.host_name(&name)) {
        return host;
    }
    let suffix = READERS
        .iter()
        .flat_map(|r| r.file_suffixes())
        .filter(|s| name.ends_with(**s))
        .max_by_key(|s| s.len());
    match suffix {
        Some(s) => name[..name.len() - s.len()].to_string(),
        None => name,
    }
}

/// The files read into the trace of `path`: itself, then the other files
/// of its trace where the format makes a trace of several files
/// ([`companions`](crate::reader::ProfileReader::companions)).
pub fn trace_files(path: &Path) -> Vec<PathBuf> {
    let mut files = vec![path.to_path_buf()];
    files.extend(READERS.iter().flat_map(|r| r.companions(path)));
    files
}

/// Whether a `*.json` or `*.json.gz` file (a name no reader owns) holds a
/// Chrome trace by its first bytes: HTA's per-rank files and Kineto's
/// plain `*.json` traces. A file that cannot be read is taken, so that the
/// conversion fails naming it rather than the run quietly losing a rank.
fn is_json_chrome_trace(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if !(name.ends_with(".json") || name.ends_with(".json.gz")) {
        return false;
    }
    match read_head(path, crate::registry::SNIFF_BYTES) {
        Ok(head) => ChromeTraceReader.sniff(path, &head),
        Err(_) => true,
    }
}

/// The `*.json[.gz]` files of the rank folder `dir` that are not read as
/// traces (each with why): an empty file, or JSON that is not a Chrome
/// trace (a config beside the ranks). Empty where `dir` is not a folder of
/// per-rank traces (a run folder with profiles named as such leaves its
/// other JSON files alone). The conversion skips them; the CLI warns of
/// each, so that no rank is lost in silence.
pub fn skipped_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut json_files = Vec::new();
    for entry in entries.flatten() {
        let p = entry.path();
        if p.is_dir() {
            continue;
        }
        if is_profile_name(&p) {
            return Vec::new();
        }
        let name = p
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if (name.ends_with(".json") || name.ends_with(".json.gz")) && !is_json_chrome_trace(&p) {
            json_files.push(p);
        }
    }
    json_files.sort();
    json_files
        .into_iter()
        .map(|p| {
            let empty = read_head(&p, 1).is_ok_and(|h| h.is_empty());
            let why = if empty {
                "the file is empty".to_string()
            } else {
                "not a Chrome trace (no top-level traceEvents, no \"ph\" near its start)"
                    .to_string()
            };
            (p, why)
        })
        .collect()
}

fn profile_files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut json_files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let p = entry.map_err(io_err(dir))?.path();
        // Anything but a folder with a profile's name is a host: one that
        // cannot be read (a broken link, no permission) then fails the
        // conversion naming it, rather than the run quietly losing a host.
        if p.is_dir() {
            continue;
        }
        if is_profile_name(&p) {
            files.push(p);
        } else {
            json_files.push(p);
        }
    }
    // A folder with no file of a profile's name may be a run of per-rank
    // Chrome traces named `*.json[.gz]` (HTA's layout): each that reads as
    // a Chrome trace is a trace. Where profiles are named as such, other
    // JSON files (configs, metadata) are left alone.
    if files.is_empty() {
        files = json_files
            .into_iter()
            .filter(|p| is_json_chrome_trace(p))
            .collect();
    }
    files.sort();
    // JAX writes `HOST.trace.json.gz` beside `HOST.xplane.pb`: the same
    // events, converted with fewer stats. The XSpace file is the host.
    let xspace_hosts: std::collections::HashSet<String> = files
        .iter()
        .filter(|p| is_xspace_name(&p.file_name().unwrap_or_default().to_string_lossy()))
        .map(|p| host_of(p))
        .collect();
    files.retain(|p| {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        is_xspace_name(&name) || !xspace_hosts.contains(&host_of(p))
    });
    retain_one_file_per_trace(&mut files, |p| p);
    Ok(files)
}

/// Keeps one file per trace of several files in `files` (`path` gives
/// each one's file): such a trace (an LLO dump's files of one compile) is
/// read once, from its first file, which reads the others with it, so a
/// file of it found again (named beside its folder, or one by one) is
/// dropped. A file that is a trace on its own may be given twice (a
/// profile compared with itself). Paths are compared canonicalized
/// (`jf/a.txt` and `./jf/a.txt` are one file).
pub fn retain_one_file_per_trace<T>(files: &mut Vec<T>, path: impl Fn(&T) -> &Path) {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut read = std::collections::HashSet::new();
    files.retain(|f| {
        let p = path(f);
        let own = canonical(p);
        if read.contains(&own) {
            return false;
        }
        let companions = trace_files(p);
        if companions.len() > 1 {
            read.insert(own);
            read.extend(companions.iter().skip(1).map(|c| canonical(c)));
        }
        true
    });
}

/// What a path that is neither a file nor a folder is, in words.
fn special_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_char_device() {
        "character device"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_fifo() {
        "FIFO"
    } else if kind.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// The profile files an input path names.
///
/// - a file: itself;
/// - a run folder holding `HOST.xplane.pb` files: each, one trace per host;
/// - a folder of Chrome traces named `*.json[.gz]` only (HTA's per-rank
///   layout, `rank-N.json.gz`): each, one trace per file;
/// - a log folder (with `plugins/profile/<RUN>/`, or that folder itself):
///   the run named `run`, else the latest run (by name, which XProf makes
///   a timestamp).
pub fn discover(path: &Path, run: Option<&str>) -> Result<Vec<ProfileFile>> {
    if path.is_file() {
        let run_name = path
            .parent()
            .filter(|p| {
                p.parent()
                    .and_then(|pp| pp.file_name())
                    .is_some_and(|n| n == "profile")
            })
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned());
        return Ok(vec![ProfileFile {
            path: path.to_path_buf(),
            run: run_name,
            host: host_of(path),
        }]);
    }
    if !path.is_dir() {
        // Something is there, but neither a file nor a folder (a device
        // such as /dev/null, a FIFO, a socket): say what, not "missing".
        if let Ok(meta) = std::fs::metadata(path) {
            return Err(ConvertError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "is neither a profile file nor a folder (a {}); give a file or a folder",
                        special_kind(&meta.file_type())
                    ),
                ),
            });
        }
        return Err(ConvertError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or folder"),
        });
    }
    let files = profile_files_in(path)?;
    if !files.is_empty() {
        let run_name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        return Ok(files
            .into_iter()
            .map(|p| ProfileFile {
                host: host_of(&p),
                path: p,
                run: run_name.clone(),
            })
            .collect());
    }
    let runs_dir = [path.join("plugins").join("profile"), path.to_path_buf()]
        .into_iter()
        .find(|d| d.is_dir() && has_run_folders(d));
    let Some(runs_dir) = runs_dir else {
        return Err(ConvertError::UnknownFormat {
            path: path.to_path_buf(),
            why: "folder holds no profile (*.xplane.pb, *.trace.json[.gz], *.chrome_trace, a Chrome trace as *.json[.gz]), no plugins/profile/<RUN>/ and no dataset".into(),
        });
    };
    let mut runs: Vec<String> = std::fs::read_dir(&runs_dir)
        .map_err(io_err(&runs_dir))?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir() && profile_files_in(&e.path()).is_ok_and(|f| !f.is_empty()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    runs.sort();
    let chosen = match run {
        Some(r) => runs
            .iter()
            .find(|x| x.as_str() == r)
            .cloned()
            .ok_or_else(|| ConvertError::UnknownFormat {
                path: path.to_path_buf(),
                why: format!("no run {r:?}; runs: {}", runs.join(", ")),
            })?,
        None => runs.last().cloned().expect("has_run_folders"),
    };
    let run_dir = runs_dir.join(&chosen);
    Ok(profile_files_in(&run_dir)?
        .into_iter()
        .map(|p| ProfileFile {
            host: host_of(&p),
            path: p,
            run: Some(chosen.clone()),
        })
        .collect())
}

fn has_run_folders(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|rd| {
        rd.filter_map(|e| e.ok())
            .any(|e| e.path().is_dir() && profile_files_in(&e.path()).is_ok_and(|f| !f.is_empty()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_folder_picks_the_latest_run_unless_told() {
        let d = tempfile::tempdir().unwrap();
        for run in ["2026_01_01_00_00_00", "2026_02_01_00_00_00"] {
            let r = d.path().join("plugins/profile").join(run);
            std::fs::create_dir_all(&r).unwrap();
            std::fs::write(r.join("hostA.xplane.pb"), b"").unwrap();
            std::fs::write(r.join("hostB.xplane.pb"), b"").unwrap();
        }
        let latest = discover(d.path(), None).unwrap();
        assert_eq!(latest.len(), 2);
        assert_eq!(latest[0].run.as_deref(), Some("2026_02_01_00_00_00"));
        assert_eq!(latest[1].host, "hostB");
        let first = discover(d.path(), Some("2026_01_01_00_00_00")).unwrap();
        assert_eq!(first[0].run.as_deref(), Some("2026_01_01_00_00_00"));
        assert!(discover(d.path(), Some("nope")).is_err());
    }

    #[test]
    fn a_folder_of_json_chrome_traces_is_a_run_of_ranks() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join("sampled_2rank");
        std::fs::create_dir_all(&run).unwrap();
        let trace = br#"{"distributedInfo": {"rank": 1}, "traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": 2, "pid": 0, "tid": 7}]}"#;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(trace).unwrap();
        std::fs::write(run.join("rank-0.json.gz"), gz.finish().unwrap()).unwrap();
        std::fs::write(run.join("rank-1.json"), trace).unwrap();
        // JSON that is not a trace, and a file of no JSON name, stay out.
        std::fs::write(run.join("config.json"), br#"{"lr": 0.1}"#).unwrap();
        std::fs::write(run.join("notes.txt"), b"{\"ph\": 1}").unwrap();
        let found = discover(&run, None).unwrap();
        let hosts: Vec<&str> = found.iter().map(|f| f.host.as_str()).collect();
        assert_eq!(hosts, ["rank-0", "rank-1"]);
        assert!(
            found
                .iter()
                .all(|f| f.run.as_deref() == Some("sampled_2rank"))
        );
        // Where a file has a profile's name, other JSON files are not sniffed.
        std::fs::write(run.join("host.trace.json"), trace).unwrap();
        let found = discover(&run, None).unwrap();
        let hosts: Vec<&str> = found.iter().map(|f| f.host.as_str()).collect();
        assert_eq!(hosts, ["host"]);
        // Still, a log folder whose run holds only JSON traces finds it.
        let logs = d.path().join("logs/plugins/profile/r1");
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(logs.join("rank-3.json"), trace).unwrap();
        let found = discover(&d.path().join("logs"), None).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].run.as_deref(), Some("r1"));
    }

    #[test]
    fn a_host_is_its_file_name_without_the_format_suffix() {
        assert_eq!(host_of(Path::new("/d/h.xplane.pb.gz")), "h");
        assert_eq!(host_of(Path::new("h.xplane.pb")), "h");
        assert_eq!(host_of(Path::new("h.pb")), "h");
        assert_eq!(host_of(Path::new("h.pt.trace.json.gz")), "h");
        assert_eq!(host_of(Path::new("h.trace.json")), "h");
        assert_eq!(host_of(Path::new("h.json")), "h");
        assert_eq!(host_of(Path::new("h.chrome_trace")), "h");
        assert_eq!(host_of(Path::new("h.hatchet_msgpack.gz")), "h");
        assert_eq!(host_of(Path::new("h.hatchet")), "h");
        assert_eq!(
            host_of(Path::new("matmul_kernel-1764000000123456789-trace.json")),
            "matmul_kernel-1764000000123456789-trace"
        );
        assert_eq!(
            host_of(Path::new(
                "1783579888000000000-fusion.1-0001-schedule-analysis.txt"
            )),
            "1783579888000000000-fusion.1-0001-schedule-analysis.txt"
        );
    }
}
