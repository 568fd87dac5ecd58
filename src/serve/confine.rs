//! The paths a server's clients may open: the inputs it was started with
//! and, where one is a folder, every file below it. A path is resolved
//! (links, `..`) before it is judged, so neither leads out.

use std::path::{Path, PathBuf};

use crate::serve::ServeError;

/// The resolved inputs a server was given ([`AllowedPaths::check`]).
#[derive(Debug, Clone)]
pub struct AllowedPaths {
    roots: Vec<PathBuf>,
}

impl AllowedPaths {
    /// The paths of `inputs` resolved; each must exist.
    pub fn new(inputs: &[PathBuf]) -> Result<Self, ServeError> {
        let roots = inputs
            .iter()
            .map(|p| resolve(p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { roots })
    }

    /// The resolved inputs.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// `path` resolved, when it is one of the inputs or below a folder
    /// among them; else [`ServeError::Confined`].
    pub fn check(&self, path: &Path) -> Result<PathBuf, ServeError> {
        // A path that cannot be resolved is judged by its text: outside
        // the inputs it is refused as any other, so that a client cannot
        // tell which paths exist elsewhere.
        let resolved = match resolve(path) {
            Ok(resolved) => resolved,
            Err(missing) if self.inside(&lexical(path)) => return Err(missing),
            Err(_) => return Err(self.confined(path)),
        };
        if self.inside(&resolved) {
            Ok(resolved)
        } else {
            Err(self.confined(path))
        }
    }

    fn inside(&self, resolved: &Path) -> bool {
        self.roots
            .iter()
            .any(|root| resolved == *root || (root.is_dir() && resolved.starts_with(root)))
    }

    fn confined(&self, path: &Path) -> ServeError {
        ServeError::Confined {
            path: path.to_path_buf(),
            allowed: self
                .roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// `path` made absolute with `.` and `..` taken away by their text alone.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `path` with every link and `..` resolved.
fn resolve(path: &Path) -> Result<PathBuf, ServeError> {
    std::fs::canonicalize(path).map_err(|source| ServeError::Path {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_below_a_folder_input_are_allowed_and_nothing_outside() {
        let dir = tempfile::tempdir().unwrap();
        let inside = dir.path().join("runs");
        std::fs::create_dir_all(inside.join("r1")).unwrap();
        std::fs::write(inside.join("r1/a.xplane.pb"), b"x").unwrap();
        std::fs::write(dir.path().join("secret.pb"), b"x").unwrap();
        let single = dir.path().join("single.json");
        std::fs::write(&single, b"{}").unwrap();
        let allowed = AllowedPaths::new(&[inside.clone(), single.clone()]).unwrap();
        assert!(allowed.check(&inside.join("r1/a.xplane.pb")).is_ok());
        assert!(allowed.check(&inside).is_ok());
        assert!(allowed.check(&single).is_ok());
        // `..` out of the folder, and a file beside the single input.
        let escaped = allowed.check(&inside.join("r1/../../secret.pb"));
        assert!(
            matches!(escaped, Err(ServeError::Confined { .. })),
            "{escaped:?}"
        );
        assert!(matches!(
            allowed.check(&dir.path().join("secret.pb")),
            Err(ServeError::Confined { .. })
        ));
        // A link inside that points outside is judged by its target.
        std::os::unix::fs::symlink(dir.path().join("secret.pb"), inside.join("link.pb")).unwrap();
        assert!(matches!(
            allowed.check(&inside.join("link.pb")),
            Err(ServeError::Confined { .. })
        ));
        // A missing path outside says no more than an existing one; inside
        // a folder input it is "not found".
        assert!(matches!(
            allowed.check(&dir.path().join("nothing/here.pb")),
            Err(ServeError::Confined { .. })
        ));
        assert!(matches!(
            allowed.check(&inside.join("r1/missing.pb")),
            Err(ServeError::Path { .. })
        ));
        // A single file input is not a folder: nothing is "below" it.
        assert!(matches!(
            allowed.check(&dir.path().join("single.json/../secret.pb")),
            Err(ServeError::Confined { .. })
        ));
    }
}
