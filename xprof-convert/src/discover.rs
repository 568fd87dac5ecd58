//! Finding the profile files an input path names: a file, a run folder
//! (`HOST.xplane.pb`, one trace per host) or a log folder
//! (`plugins/profile/<RUN>/`), and each file's run and host.
//!
//! Which files belong to a format, and which suffix a host name drops,
//! each reader says ([`owns_file_name`](crate::reader::ProfileReader::owns_file_name),
//! [`file_suffixes`](crate::reader::ProfileReader::file_suffixes)); this
//! module asks every reader of the registry.

use std::path::{Path, PathBuf};

use crate::error::{ConvertError, Result, io_err};
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

fn profile_files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let p = entry.map_err(io_err(dir))?.path();
        // Anything but a folder with a profile's name is a host: one that
        // cannot be read (a broken link, no permission) then fails the
        // conversion naming it, rather than the run quietly losing a host.
        if !p.is_dir() && is_profile_name(&p) {
            files.push(p);
        }
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
    Ok(files)
}

/// The profile files an input path names.
///
/// - a file: itself;
/// - a run folder holding `HOST.xplane.pb` files: each, one trace per host;
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
            why: "folder holds no profile (*.xplane.pb, *.trace.json[.gz], *.chrome_trace), no plugins/profile/<RUN>/ and no dataset".into(),
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
