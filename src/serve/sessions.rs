//! The sessions a server answers from: the one it was started with
//! (its inputs opened once, before it listens) and named ones a client
//! opens beside it, over paths the server may read ([`AllowedPaths`]),
//! up to [`SessionLimits::max_named`]. Every session runs read-only under
//! the server's statement time limit, and all of them share one memory
//! pool, so the server's limit holds whatever clients open.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::query::{OpenOptions, ProfileSession, SessionOptions};
use crate::serve::ServeError;
use crate::serve::confine::AllowedPaths;

/// What clients may open beside the served inputs.
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    /// Named sessions open at once.
    pub max_named: usize,
    /// Paths one named session opens.
    pub max_inputs: usize,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_named: 8,
            max_inputs: 64,
        }
    }
}

/// A named session: its inputs and the session over them.
#[derive(Debug)]
pub struct NamedSession {
    /// The resolved paths it opened.
    pub inputs: Vec<PathBuf>,
    /// The session.
    pub session: Arc<ProfileSession>,
}

/// The served session and the named ones.
#[derive(Debug)]
pub struct Sessions {
    served: Arc<ProfileSession>,
    options: SessionOptions,
    allowed: AllowedPaths,
    limits: SessionLimits,
    named: tokio::sync::Mutex<Named>,
}

/// The named sessions open, and the names of those being opened (each
/// counts against the limit from the moment it is asked for, so that
/// clients opening at once cannot pass it together).
#[derive(Debug, Default)]
struct Named {
    open: BTreeMap<String, Arc<NamedSession>>,
    opening: std::collections::BTreeSet<String>,
}

impl Sessions {
    /// Sessions around `served` (opened under `options`, which must be
    /// read-only), whose clients may open what `allowed` holds.
    pub fn new(
        served: ProfileSession,
        options: SessionOptions,
        allowed: AllowedPaths,
        limits: SessionLimits,
    ) -> Result<Self, ServeError> {
        if !options.read_only {
            return Err(ServeError::BadRequest(
                "a server's sessions must be read-only".into(),
            ));
        }
        Ok(Self {
            served: Arc::new(served),
            options,
            allowed,
            limits,
            named: tokio::sync::Mutex::default(),
        })
    }

    /// The paths clients may open.
    pub fn allowed(&self) -> &AllowedPaths {
        &self.allowed
    }

    /// The session named `name`; `None` (or an empty name): the served one.
    pub async fn get(&self, name: Option<&str>) -> Result<Arc<ProfileSession>, ServeError> {
        match name.filter(|n| !n.is_empty()) {
            None => Ok(self.served.clone()),
            Some(name) => {
                let named = self.named.lock().await;
                match named.open.get(name) {
                    Some(s) => Ok(s.session.clone()),
                    None => Err(no_session(name, &named.open)),
                }
            }
        }
    }

    /// Opens `paths` (each readable here) as the session `name`, in a
    /// context of its own sharing the served one's memory pool; the
    /// conversion of raw inputs runs off the async threads, bounded by the
    /// statement time limit. Returns the session.
    pub async fn open(
        &self,
        name: &str,
        paths: &[PathBuf],
    ) -> Result<Arc<NamedSession>, ServeError> {
        check_name(name)?;
        if paths.is_empty() {
            return Err(ServeError::BadRequest(
                "give at least one path to open".into(),
            ));
        }
        if paths.len() > self.limits.max_inputs {
            return Err(ServeError::Limit(format!(
                "{} paths asked for; a session opens at most {}",
                paths.len(),
                self.limits.max_inputs
            )));
        }
        let resolved = paths
            .iter()
            .map(|p| self.allowed.check(p))
            .collect::<Result<Vec<_>, _>>()?;
        {
            let mut named = self.named.lock().await;
            room(name, &named, self.limits.max_named)?;
            named.opening.insert(name.to_string());
        }
        let opened = self.convert(resolved).await;
        let mut named = self.named.lock().await;
        named.opening.remove(name);
        let opened = Arc::new(opened?);
        named.open.insert(name.to_string(), opened.clone());
        Ok(opened)
    }

    /// The session `name` over `resolved`, converted off the async threads.
    async fn convert(&self, resolved: Vec<PathBuf>) -> Result<NamedSession, ServeError> {
        let served = self.served.context();
        let ctx = datafusion::prelude::SessionContext::new_with_config_rt(
            served.copied_config(),
            served.runtime_env(),
        );
        crate::query::prepare_context(&ctx);
        let options = SessionOptions {
            memory_limit_bytes: None,
            threads: None,
            ..self.options.clone()
        };
        let mut session = ProfileSession::builder()
            .context(ctx)
            .options(options)
            .build()?;
        let to_open = resolved.clone();
        let runtime = tokio::runtime::Handle::current();
        let session = tokio::task::spawn_blocking(move || {
            runtime
                .block_on(session.open(&to_open, &OpenOptions::default()))
                .map(|()| session)
        })
        .await
        .map_err(|e| ServeError::BadRequest(format!("opening stopped: {e}")))??;
        Ok(NamedSession {
            inputs: resolved,
            session: Arc::new(session),
        })
    }

    /// Closes the session `name`; queries running on it finish first.
    pub async fn close(&self, name: &str) -> Result<(), ServeError> {
        let mut named = self.named.lock().await;
        match named.open.remove(name) {
            Some(_) => Ok(()),
            None => Err(no_session(name, &named.open)),
        }
    }

    /// The named sessions and their inputs.
    pub async fn list(&self) -> Vec<(String, Vec<PathBuf>)> {
        self.named
            .lock()
            .await
            .open
            .iter()
            .map(|(name, s)| (name.clone(), s.inputs.clone()))
            .collect()
    }
}

/// `name` is free and there is room for one more session.
fn room(name: &str, named: &Named, max_named: usize) -> Result<(), ServeError> {
    if named.open.contains_key(name) || named.opening.contains(name) {
        return Err(ServeError::Exists(name.to_string()));
    }
    let taken = named.open.len() + named.opening.len();
    if taken >= max_named {
        return Err(ServeError::Limit(format!(
            "{taken} sessions are open or opening, the most this server keeps; close one first"
        )));
    }
    Ok(())
}

fn no_session(name: &str, named: &BTreeMap<String, Arc<NamedSession>>) -> ServeError {
    let open: Vec<&str> = named.keys().map(String::as_str).collect();
    ServeError::NoSession {
        name: name.to_string(),
        open: if open.is_empty() {
            "none".into()
        } else {
            open.join(", ")
        },
    }
}

/// Session names: 1 to 64 letters, digits, `_` and `-`.
fn check_name(name: &str) -> Result<(), ServeError> {
    let fine = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if fine {
        Ok(())
    } else {
        Err(ServeError::BadRequest(format!(
            "session name {name:?}: use 1 to 64 letters, digits, '_' or '-'"
        )))
    }
}
