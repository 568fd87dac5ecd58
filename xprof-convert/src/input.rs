//! Opening inputs: a private copy of each file, memory-mapped (`.gz`
//! inflated into it, never into memory), and reading a file's first bytes
//! or inflated size without opening it. Finding the files of a run or log
//! folder is [`discover`](crate::discover)'s.
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

use crate::error::{ConvertError, Result, io_err};

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
    }
}
