//! Who may talk to a cluster: the shared token ([`ClusterToken`]) every
//! call carries, the check every server runs on it, and the rule that a
//! process without a token listens on loopback only ([`check_bind`]).
//!
//! Ballista 55 has no authentication of its own, and its gRPC clients
//! (executor → scheduler, executor → executor, client → executor) take no
//! interceptor: the one thing every one of them lets a caller set is the
//! tonic `Endpoint`, through Ballista's endpoint override hooks. An
//! `Endpoint` can set one header, `User-Agent`; so each process of this
//! project sends the token there (`xprof-token/SECRET`, before tonic's own
//! `tonic/VERSION`), and each server it starts (the scheduler's gRPC
//! service, the executors' Arrow Flight service) reads it back with
//! [`TokenCheck`] before any call runs. The comparison takes the same time
//! wherever the first wrong byte is, and the token is never logged or
//! shown: [`ClusterToken`]'s `Debug` prints a placeholder.
//!
//! The token travels in plaintext, like the rest of the cluster's traffic:
//! docs/cluster.md (Security) says what that leaves open.

use std::fmt;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use ballista_core::extension::EndpointOverrideFn;
use tonic::transport::Endpoint;
use tonic::{Request, Status};

use crate::error::{ClusterError, Result};

/// The environment variable a token may come from (the token itself),
/// when no token file is given.
pub const TOKEN_ENV: &str = "XPROF_CLUSTER_TOKEN";

/// The longest token file read: a token is one line of tens of
/// characters.
const MAX_TOKEN_FILE_BYTES: u64 = 4096;

/// What the token is sent after, in the `User-Agent` header.
const USER_AGENT_PREFIX: &str = "xprof-token/";

/// The shortest token accepted: 16 characters of a random hex or base64
/// string (`openssl rand -hex 32` writes 64).
const MIN_TOKEN_CHARS: usize = 16;

/// What a caller without the right token is told (no more: not whether
/// it sent one, nor what was expected).
const REFUSED: &str = "xprof-sql cluster: this call carries no cluster token or a wrong one; \
     give the cluster's shared secret with --token-file FILE or XPROF_CLUSTER_TOKEN (docs/cluster.md, Security)";

/// The shared secret of a cluster: every process of it holds the same one
/// and sends it with every call; servers refuse calls without it.
///
/// Its `Debug` never shows the secret, and no error of this crate does.
#[derive(Clone)]
pub struct ClusterToken(Arc<str>);

impl fmt::Debug for ClusterToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClusterToken(<redacted>)")
    }
}

impl ClusterToken {
    /// A token of `secret`: at least 16 characters, printable ASCII
    /// without spaces (it travels in an HTTP header).
    pub fn new(secret: &str) -> Result<Self> {
        if secret.chars().count() < MIN_TOKEN_CHARS {
            return Err(ClusterError::Token(format!(
                "a cluster token needs at least {MIN_TOKEN_CHARS} characters (`openssl rand -hex 32` writes one)"
            )));
        }
        if !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ClusterError::Token(
                "a cluster token may hold printable ASCII characters only, without spaces".into(),
            ));
        }
        Ok(Self(secret.into()))
    }

    /// The token in the file at `path` (spaces and line ends around it
    /// are ignored).
    pub fn from_file(path: &Path) -> Result<Self> {
        use std::io::Read;
        let io = |source| ClusterError::Io {
            path: path.to_path_buf(),
            source,
        };
        // At most a few bytes more than the longest token: `/dev/zero`
        // read 2 GB before failing.
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .map_err(io)?
            .take(MAX_TOKEN_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() as u64 > MAX_TOKEN_FILE_BYTES {
            return Err(ClusterError::Token(format!(
                "{}: longer than {MAX_TOKEN_FILE_BYTES} bytes, not a token file",
                path.display()
            )));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| ClusterError::Token(format!("{}: not text", path.display())))?;
        Self::new(text.trim()).map_err(|e| match e {
            ClusterError::Token(reason) => {
                ClusterError::Token(format!("{}: {reason}", path.display()))
            }
            other => other,
        })
    }

    /// What is wrong with how `path` (a token file) is shared: a warning
    /// when users other than its owner may read it (group or others have
    /// any permission), `None` otherwise or when it cannot be looked at.
    pub fn file_permission_warning(path: &Path) -> Option<String> {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).ok()?.permissions().mode();
        (mode & 0o077 != 0).then(|| {
            format!(
                "{}: the cluster token file may be read by other users (mode {:o}); \
                 chmod 600 it",
                path.display(),
                mode & 0o777
            )
        })
    }

    /// The token of the environment variable [`TOKEN_ENV`], if set and
    /// not empty.
    pub fn from_env() -> Result<Option<Self>> {
        match std::env::var(TOKEN_ENV) {
            Ok(v) if !v.trim().is_empty() => Self::new(v.trim()).map(Some).map_err(|e| match e {
                ClusterError::Token(reason) => {
                    ClusterError::Token(format!("{TOKEN_ENV}: {reason}"))
                }
                other => other,
            }),
            Ok(_) | Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(ClusterError::Token(format!("{TOKEN_ENV}: not valid text")))
            }
        }
    }

    /// The token of `token_file` if given, else of [`TOKEN_ENV`], else
    /// none: what the `xprof-sql cluster` commands and `--cluster` use.
    pub fn resolve(token_file: Option<&Path>) -> Result<Option<Self>> {
        match token_file {
            Some(path) => Self::from_file(path).map(Some),
            None => Self::from_env(),
        }
    }

    /// A new random token (32 bytes of the system's random source, in
    /// hex).
    pub fn generate() -> Result<Self> {
        use std::io::Read;
        let random = Path::new("/dev/urandom");
        let mut bytes = [0u8; 32];
        std::fs::File::open(random)
            .and_then(|mut f| f.read_exact(&mut bytes))
            .map_err(|source| ClusterError::Io {
                path: random.to_path_buf(),
                source,
            })?;
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Self::new(&hex)
    }

    /// Writes the token to `path`, readable and writable by its owner
    /// only (mode 600, set as the file is created), replacing what was
    /// there.
    pub fn write_private(&self, path: &Path) -> Result<()> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let io = |source| ClusterError::Io {
            path: path.to_path_buf(),
            source,
        };
        // A file left by an earlier run may have other permissions:
        // replaced, never reused.
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .map_err(io)?;
        writeln!(file, "{}", self.0).map_err(io)
    }

    /// The token for talking to the scheduler at `host:port`: that of
    /// `token_file` or [`TOKEN_ENV`] ([`resolve`](Self::resolve)), else,
    /// for a scheduler on this machine's loopback, the one it generated
    /// ([`local_token_path`]), else none.
    pub fn for_scheduler(host: &str, port: u16, token_file: Option<&Path>) -> Result<Option<Self>> {
        if let Some(token) = Self::resolve(token_file)? {
            return Ok(Some(token));
        }
        let loopback = host == "localhost"
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        match local_token_path(port) {
            Some(path) if loopback && path.is_file() => Self::from_file(&path).map(Some),
            _ => Ok(None),
        }
    }

    /// Whether `candidate` is this token, in time independent of where
    /// they first differ.
    pub(crate) fn matches(&self, candidate: &[u8]) -> bool {
        constant_time_eq(self.0.as_bytes(), candidate)
    }

    /// The `User-Agent` value that carries it.
    fn user_agent(&self) -> String {
        format!("{USER_AGENT_PREFIX}{}", self.0)
    }
}

/// Whether `a` and `b` are equal, looking at every byte whatever the
/// first difference (only their lengths may tell apart early).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// Where a scheduler on this machine's loopback at `port` keeps the
/// token it generated when given none, for the executors and clients of
/// the same user on this machine: `$XDG_RUNTIME_DIR/xprof-sql/` or
/// `~/.cache/xprof-sql/cluster/`, a folder only its owner may enter
/// (created so; one that others may enter is not used). `None` when
/// there is no such folder.
pub fn local_token_path(port: u16) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let folder = match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) if !d.is_empty() => Path::new(&d).join("xprof-sql"),
        _ => Path::new(&std::env::var_os("HOME")?).join(".cache/xprof-sql/cluster"),
    };
    if !folder.is_dir() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&folder)
            .ok()?;
    }
    let mode = std::fs::symlink_metadata(&folder)
        .ok()?
        .permissions()
        .mode();
    (mode & 0o077 == 0).then(|| folder.join(format!("scheduler-{port}.token")))
}

/// Refuses to listen on `addr` without a token unless it is a loopback
/// address (`127.0.0.0/8`, `::1`): anyone who can reach a port of a
/// cluster can run plans on it. `what` names the service in the error.
pub fn check_bind(what: &str, addr: SocketAddr, token: Option<&ClusterToken>) -> Result<()> {
    if token.is_none() && !addr.ip().is_loopback() {
        return Err(ClusterError::Insecure {
            what: what.to_string(),
            addr,
        });
    }
    Ok(())
}

/// Sets the token on every gRPC connection a Ballista client opens (the
/// `User-Agent` header), for Ballista's endpoint override hooks.
pub(crate) fn token_endpoint(token: &ClusterToken) -> EndpointOverrideFn {
    let user_agent = token.user_agent();
    Arc::new(move |endpoint: Endpoint| Ok(endpoint.user_agent(user_agent.clone())?))
}

/// An endpoint to `url` that carries `token`, if any.
pub(crate) fn endpoint(
    url: String,
    token: Option<&ClusterToken>,
) -> std::result::Result<Endpoint, tonic::transport::Error> {
    let endpoint = Endpoint::from_shared(url)?;
    match token {
        Some(t) => endpoint.user_agent(t.user_agent()),
        None => Ok(endpoint),
    }
}

/// The server side: refuses every call whose `User-Agent` does not carry
/// the token (with a token; without one, on loopback, every call passes).
/// It also hands the scheduler the caller's address the way axum would
/// (`ConnectInfo`): the scheduler reads it when an executor registers
/// without naming its host.
#[derive(Clone)]
pub(crate) struct TokenCheck(Option<ClusterToken>);

impl TokenCheck {
    pub(crate) fn new(token: Option<ClusterToken>) -> Self {
        Self(token)
    }
}

impl tonic::service::Interceptor for TokenCheck {
    fn call(&mut self, mut request: Request<()>) -> std::result::Result<Request<()>, Status> {
        if let Some(token) = &self.0 {
            let presented = request
                .metadata()
                .get("user-agent")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| {
                    v.split(' ')
                        .find_map(|word| word.strip_prefix(USER_AGENT_PREFIX))
                });
            if !presented.is_some_and(|t| token.matches(t.as_bytes())) {
                return Err(Status::unauthenticated(REFUSED));
            }
        }
        if request
            .extensions()
            .get::<axum::extract::ConnectInfo<SocketAddr>>()
            .is_none()
            && let Some(addr) = request.remote_addr()
        {
            request
                .extensions_mut()
                .insert(axum::extract::ConnectInfo(addr));
        }
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use tonic::service::Interceptor as _;

    use super::*;

    const SECRET: &str = "0123456789abcdef0123";

    fn request(user_agent: Option<&str>) -> Request<()> {
        let mut r = Request::new(());
        if let Some(ua) = user_agent {
            r.metadata_mut().insert("user-agent", ua.parse().unwrap());
        }
        r
    }

    #[test]
    fn the_check_lets_the_token_through_and_nothing_else() {
        let token = ClusterToken::new(SECRET).unwrap();
        let mut check = TokenCheck::new(Some(token.clone()));
        let ua = format!("{} tonic/0.14.9", token.user_agent());
        assert!(check.call(request(Some(&ua))).is_ok());
        for bad in [
            None,
            Some("tonic/0.14.9"),
            Some("xprof-token/0123456789abcdef0124 tonic/0.14.9"),
            Some("xprof-token/0123456789abcdef012 tonic/0.14.9"),
            Some("xprof-token/ tonic/0.14.9"),
        ] {
            let e = check.call(request(bad)).unwrap_err();
            assert_eq!(e.code(), tonic::Code::Unauthenticated, "{bad:?}");
            assert!(!e.message().contains(SECRET));
        }
        // Without a token (loopback), every call passes.
        assert!(TokenCheck::new(None).call(request(None)).is_ok());
    }

    #[test]
    fn a_token_file_is_bounded_and_one_others_may_read_is_named() {
        use std::os::unix::fs::PermissionsExt;
        // `/dev/zero` never ends: refused after 4 KiB, not 2 GB.
        let e = ClusterToken::from_file(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("longer than 4096 bytes"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, SECRET).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let w = ClusterToken::file_permission_warning(&file).unwrap();
        assert!(w.contains("may be read by other users (mode 644)"), "{w}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(ClusterToken::file_permission_warning(&file), None);
        assert!(
            ClusterToken::from_file(&file)
                .unwrap()
                .matches(SECRET.as_bytes())
        );
    }

    #[test]
    fn tokens_are_checked_and_never_shown() {
        assert!(ClusterToken::new("short").is_err());
        assert!(ClusterToken::new("0123456789abcdef 0123").is_err());
        let token = ClusterToken::new(SECRET).unwrap();
        assert!(!format!("{token:?}").contains(SECRET));
        assert!(token.matches(SECRET.as_bytes()));
        assert!(!token.matches(b"0123456789abcdef0124"));
        assert!(!token.matches(b""));

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, format!("{SECRET}\n")).unwrap();
        assert!(
            ClusterToken::from_file(&file)
                .unwrap()
                .matches(SECRET.as_bytes())
        );
        std::fs::write(&file, "short\n").unwrap();
        let e = ClusterToken::from_file(&file).unwrap_err().to_string();
        assert!(e.contains("16 characters") && !e.contains("short"), "{e}");
    }

    #[test]
    fn without_a_token_only_loopback_is_served() {
        let token = ClusterToken::new(SECRET).unwrap();
        let open: SocketAddr = "0.0.0.0:50050".parse().unwrap();
        let e = check_bind("the scheduler", open, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("0.0.0.0:50050") && e.contains("--token-file") && e.contains("127.0.0.1"),
            "{e}"
        );
        assert!(check_bind("the scheduler", open, Some(&token)).is_ok());
        assert!(check_bind("the scheduler", "127.0.0.1:0".parse().unwrap(), None).is_ok());
        assert!(check_bind("the scheduler", "[::1]:0".parse().unwrap(), None).is_ok());
        assert!(check_bind("an executor", "10.1.2.3:50051".parse().unwrap(), None).is_err());
    }
}
