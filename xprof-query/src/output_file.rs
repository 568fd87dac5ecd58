//! Writing an output file (`query -o`, `export -o`, `report -o`,
//! `check --junit`) so that nothing is lost or replaced by surprise.
//!
//! [`OutputFile::create`] looks at what the path names first:
//! - nothing, or a regular file: the output is written under a temporary
//!   name beside it (`.NAME.partial`) and renamed over it once whole
//!   ([`OutputFile::commit`]); a failure midway leaves no partial file
//!   and the old file as it was;
//! - a character device or a FIFO (`/dev/stdout`, `/dev/null`, a named
//!   pipe): written as a stream, in place. It is never replaced by a
//!   regular file, which run as root would remove a device node;
//! - a symbolic link: refused, naming where it points, since renaming over
//!   it would replace the link, not the file it points to;
//! - a folder, a socket or a block device: refused.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{QueryError, Result};

/// An output file being written: see the module doc.
#[derive(Debug)]
pub struct OutputFile {
    path: PathBuf,
    /// The temporary file renamed over `path` on commit; `None` when
    /// `path` is written in place (a device or a FIFO).
    partial: Option<PathBuf>,
    file: Option<File>,
}

impl OutputFile {
    /// Opens `path` for an output, as the module doc says.
    pub fn create(path: &Path) -> Result<OutputFile> {
        let refuse = |why: String| QueryError::Output {
            path: path.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, why),
        };
        let io_error = |source| QueryError::Output {
            path: path.to_path_buf(),
            source,
        };
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(e)),
            Ok(meta) => {
                use std::os::unix::fs::FileTypeExt;
                let kind = meta.file_type();
                if kind.is_symlink() {
                    let target = std::fs::read_link(path).map_err(io_error)?;
                    return Err(refuse(format!(
                        "is a symbolic link to {}: give that path to write there \
                         (the output would replace the link)",
                        target.display()
                    )));
                }
                if kind.is_char_device() || kind.is_fifo() {
                    let file = std::fs::OpenOptions::new()
                        .write(true)
                        .open(path)
                        .map_err(io_error)?;
                    return Ok(OutputFile {
                        path: path.to_path_buf(),
                        partial: None,
                        file: Some(file),
                    });
                }
                if kind.is_dir() {
                    return Err(refuse("is a folder: give a file name".into()));
                }
                if !kind.is_file() {
                    return Err(refuse(
                        "is neither a regular file nor a character device or FIFO: \
                         not written"
                            .into(),
                    ));
                }
            }
        }
        let partial = partial_name(path);
        let file = File::create(&partial).map_err(|source| QueryError::Output {
            path: partial.clone(),
            source,
        })?;
        Ok(OutputFile {
            path: path.to_path_buf(),
            partial: Some(partial),
            file: Some(file),
        })
    }

    /// The path the output goes to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the output is written in place (a device or a FIFO) rather
    /// than renamed over the path when whole.
    pub fn in_place(&self) -> bool {
        self.partial.is_none()
    }

    /// Finishes the output: flushed, and a regular file synced and renamed
    /// over the path.
    pub fn commit(mut self) -> Result<()> {
        let file = self.file.take().expect("taken only here");
        let io_error = |source| QueryError::Output {
            path: self.path.clone(),
            source,
        };
        match self.partial.take() {
            None => {
                let mut file = file;
                file.flush().map_err(io_error)?;
            }
            Some(partial) => {
                let kept = file
                    .sync_all()
                    .and_then(|()| std::fs::rename(&partial, &self.path));
                if let Err(e) = kept {
                    let _ = std::fs::remove_file(&partial);
                    return Err(io_error(e));
                }
            }
        }
        Ok(())
    }
}

/// Its write errors name the output (`/dev/full: No space left on
/// device`), wherever they surface.
impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let path = &self.path;
        self.file
            .as_mut()
            .expect("open until commit")
            .write(buf)
            .map_err(|e| naming(path, e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let path = &self.path;
        self.file
            .as_mut()
            .expect("open until commit")
            .flush()
            .map_err(|e| naming(path, e))
    }
}

/// `e` with `path` before its words.
fn naming(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

impl Drop for OutputFile {
    /// An output dropped before [`OutputFile::commit`] leaves no partial
    /// file.
    fn drop(&mut self) {
        if let Some(partial) = self.partial.take() {
            self.file.take();
            let _ = std::fs::remove_file(partial);
        }
    }
}

/// The temporary name an output to `path` is written under: `.NAME.partial`
/// beside it.
pub fn partial_name(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.partial"))
}

/// Writes `bytes` to `path` as an [`OutputFile`].
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut out = OutputFile::create(path)?;
    // The file itself: its errors are named once, here.
    let file = out.file.as_mut().expect("open until commit");
    file.write_all(bytes).map_err(|source| QueryError::Output {
        path: path.to_path_buf(),
        source,
    })?;
    out.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_replaced_whole_and_a_dropped_output_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        std::fs::write(&path, "old").unwrap();
        let mut out = OutputFile::create(&path).unwrap();
        out.write_all(b"half").unwrap();
        drop(out);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_output(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    }

    #[test]
    fn a_device_is_written_in_place_never_replaced() {
        let out = OutputFile::create(Path::new("/dev/null")).unwrap();
        assert!(out.in_place());
        out.commit().unwrap();
        let meta = std::fs::symlink_metadata("/dev/null").unwrap();
        use std::os::unix::fs::FileTypeExt;
        assert!(meta.file_type().is_char_device());
        // A full device is an error naming it, not a file put in its place.
        let e = write_output(Path::new("/dev/full"), &[0; 1 << 16]).unwrap_err();
        assert!(e.to_string().starts_with("/dev/full: "), "{e}");
    }

    #[test]
    fn a_symlink_and_a_folder_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.html");
        std::fs::write(&target, "kept").unwrap();
        let link = dir.path().join("link.html");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = write_output(&link, b"x").unwrap_err().to_string();
        assert!(e.contains("is a symbolic link to"), "{e}");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
        let e = write_output(dir.path(), b"x").unwrap_err().to_string();
        assert!(e.contains("is a folder"), "{e}");
    }
}
