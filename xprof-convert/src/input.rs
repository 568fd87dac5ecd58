//! Opening inputs: a private copy of each file, memory-mapped (`.gz`
//! inflated into it, never into memory), format detection, and finding
//! the profile files of a run or log folder.
//!
//! Why a copy: a mapped file that another process truncates makes every
//! read of the lost pages a `SIGBUS`, which kills the process (and the
//! service embedding this library). The copy, in the temporary folder
//! (`TMPDIR`), is ours alone: a file truncated or rewritten during the
//! copy gives a short or mixed copy, which the readers reject as malformed
//! input like any other. Copying costs disk I/O, not memory (the copy is
//! mapped, and its pages are dropped as conversion passes them).

use std::fs::File;
use std::io::{BufReader, Read};
use std::ops::Deref;
use std::path::{Path, PathBuf};

use crate::error::{ConvertError, Result};

/// The bytes of an opened input, mapped rather than read where possible.
#[derive(Debug)]
pub struct InputBytes {
    map: Option<memmap2::Mmap>,
    // The private copy that is mapped (unlinked: gone when closed).
    _tmp: Option<File>,
    /// The path the bytes came from.
    pub path: PathBuf,
    /// Whether the file was gzip-compressed.
    pub gzipped: bool,
}

impl Deref for InputBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ConvertError + '_ {
    move |source| ConvertError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn map_file(file: &File, path: &Path) -> Result<Option<memmap2::Mmap>> {
    let len = file.metadata().map_err(io_err(path))?.len();
    if len == 0 {
        return Ok(None);
    }
    // SAFETY: the map is read-only, and `file` is a private temporary
    // copy no other process knows of, so its length cannot change while
    // mapped (see the module doc).
    let map = unsafe { memmap2::Mmap::map(file) }.map_err(io_err(path))?;
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    Ok(Some(map))
}

impl InputBytes {
    /// Drops the pages of bytes `start..end` from this process's memory
    /// (they are re-read from the page cache if touched again), so that
    /// resident memory does not grow with the input. A no-op for empty
    /// inputs; only whole pages inside the range are dropped.
    pub fn release(&self, start: usize, end: usize) {
        const PAGE: usize = 4096;
        #[cfg(unix)]
        if let Some(map) = &self.map {
            let s = start.div_ceil(PAGE) * PAGE;
            let e = end.min(map.len()) / PAGE * PAGE;
            if e > s {
                // SAFETY: the map is a read-only, file-backed mapping: the
                // dropped pages read back as the file's bytes, so no slice
                // into the map observes a change.
                let _ = unsafe {
                    map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, s, e - s)
                };
            }
        }
        #[cfg(not(unix))]
        let _ = (start, end);
    }
}

/// The size of `path`'s bytes once inflated: the file size, or for a gzip
/// file the size its trailer records (ISIZE, modulo 2^32, of the last
/// member), never less than the compressed size. Read without inflating:
/// what opening the file will cost is known before it is opened.
pub fn inflated_len(path: &Path) -> Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut file = File::open(path).map_err(io_err(path))?;
    let len = file.metadata().map_err(io_err(path))?.len();
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic).map_err(io_err(path))?;
    if n < 2 || magic != [0x1f, 0x8b] || len < 18 {
        return Ok(len);
    }
    let mut isize = [0u8; 4];
    file.seek(SeekFrom::End(-4)).map_err(io_err(path))?;
    file.read_exact(&mut isize).map_err(io_err(path))?;
    Ok(u64::from(u32::from_le_bytes(isize)).max(len))
}

/// The first `n` bytes of `path` once inflated (for format detection
/// without opening the whole input).
pub fn read_head(path: &Path, n: usize) -> Result<Vec<u8>> {
    let mut file = File::open(path).map_err(io_err(path))?;
    let mut magic = [0u8; 2];
    let got = file.read(&mut magic).map_err(io_err(path))?;
    let file = File::open(path).map_err(io_err(path))?;
    let mut head = Vec::with_capacity(n);
    let r = if got == 2 && magic == [0x1f, 0x8b] {
        flate2::read::MultiGzDecoder::new(file)
            .take(n as u64)
            .read_to_end(&mut head)
    } else {
        file.take(n as u64).read_to_end(&mut head)
    };
    r.map_err(|e| ConvertError::Malformed {
        path: path.to_path_buf(),
        format: "gzip",
        offset: 0,
        what: e.to_string(),
    })?;
    Ok(head)
}

/// Opens `path`: copies it (inflating gzip, known by its magic bytes)
/// into a private temporary file and maps the copy.
pub fn open(path: &Path) -> Result<InputBytes> {
    let mut file = File::open(path).map_err(io_err(path))?;
    let mut magic = [0u8; 2];
    let n = file.read(&mut magic).map_err(io_err(path))?;
    let gzipped = n == 2 && magic == [0x1f, 0x8b];
    let file = File::open(path).map_err(io_err(path))?;
    let mut tmp = tempfile::tempfile().map_err(io_err(path))?;
    if gzipped {
        let consumed = std::rc::Rc::new(std::cell::Cell::new(0u64));
        let counted = Counted {
            inner: file,
            consumed: std::rc::Rc::clone(&consumed),
        };
        let mut gz = flate2::read::MultiGzDecoder::new(BufReader::with_capacity(1 << 20, counted));
        std::io::copy(&mut gz, &mut tmp).map_err(|e| ConvertError::Malformed {
            path: path.to_path_buf(),
            format: "gzip",
            // The compressed bytes read when inflating failed: the damage
            // is in the last buffer (1 MiB) read before this offset.
            offset: consumed.get(),
            what: e.to_string(),
        })?;
    } else {
        // `io::copy` between files uses copy_file_range on Linux.
        let mut file = file;
        std::io::copy(&mut file, &mut tmp).map_err(io_err(path))?;
    }
    let map = map_file(&tmp, path)?;
    Ok(InputBytes {
        map,
        _tmp: Some(tmp),
        path: path.to_path_buf(),
        gzipped,
    })
}

/// A reader counting the bytes read through it.
struct Counted<R> {
    inner: R,
    consumed: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.set(self.consumed.get() + n as u64);
        Ok(n)
    }
}

/// Whether a file name belongs to a format this build reads.
pub fn is_profile_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    crate::reader::READERS
        .iter()
        .any(|r| r.owns_file_name(&name))
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

/// Host name of a profile file: its name without the format's suffix
/// (`.xplane.pb[.gz]`, `.trace.json[.gz]`, `.chrome_trace`, ...).
pub fn host_of(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for suffix in [
        ".xplane.pb.gz",
        ".xplane.pb",
        ".pb.gz",
        ".pb",
        ".pt.trace.json.gz",
        ".pt.trace.json",
        ".trace.json.gz",
        ".trace.json",
        ".chrome_trace.gz",
        ".chrome_trace",
        ".hatchet.gz",
        ".hatchet",
        ".hatchet_msgpack.gz",
        ".hatchet_msgpack",
        ".json.gz",
        ".json",
    ] {
        if let Some(stem) = name.strip_suffix(suffix) {
            return stem.to_string();
        }
    }
    name
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
        .filter(|p| {
            crate::xspace::is_xspace_name(&p.file_name().unwrap_or_default().to_string_lossy())
        })
        .map(|p| host_of(p))
        .collect();
    files.retain(|p| {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        crate::xspace::is_xspace_name(&name) || !xspace_hosts.contains(&host_of(p))
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
    fn an_opened_input_survives_its_file_being_truncated_or_rewritten() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("a.xplane.pb");
        let content: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let opened = open(&path).unwrap();
        // Were the file itself mapped, reading past the cut would raise
        // SIGBUS and kill this test process.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(100)
            .unwrap();
        assert!(opened[..] == content[..]);
        std::fs::write(&path, b"rewritten").unwrap();
        assert!(opened[..] == content[..]);
    }

    #[test]
    fn the_inflated_size_of_a_gzip_file_comes_from_its_trailer() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let plain = d.path().join("a.xplane.pb");
        std::fs::write(&plain, vec![7u8; 1000]).unwrap();
        assert_eq!(inflated_len(&plain).unwrap(), 1000);
        let gz = d.path().join("a.xplane.pb.gz");
        let mut e = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::default(),
        );
        e.write_all(&vec![0u8; 1 << 20]).unwrap();
        e.finish().unwrap();
        assert!(std::fs::metadata(&gz).unwrap().len() < 10_000);
        assert_eq!(inflated_len(&gz).unwrap(), 1 << 20);
    }

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
    fn gzip_is_inflated_by_magic() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("h.xplane.pb.gz");
        let mut gz = flate2::write::GzEncoder::new(File::create(&p).unwrap(), Default::default());
        gz.write_all(b"\x0a\x00").unwrap();
        gz.finish().unwrap();
        let b = open(&p).unwrap();
        assert!(b.gzipped);
        assert_eq!(&*b, b"\x0a\x00");
        assert_eq!(host_of(&p), "h");
    }
}
