//! The token a server's clients carry: `authorization: Bearer TOKEN` on
//! every call, or HTTP basic auth with the token as the password (any
//! user name), which Flight's handshake answers with the bearer form.
//! A server off loopback must have one ([`require_token_off_loopback`]);
//! on loopback it is optional.

use base64::Engine as _;

/// A server's shared secret.
#[derive(Clone)]
pub struct ServeToken(String);

impl std::fmt::Debug for ServeToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServeToken(..)")
    }
}

impl ServeToken {
    /// A token; empty ones and ones with characters a header cannot carry
    /// are refused.
    pub fn new(secret: &str) -> Result<Self, String> {
        let secret = secret.trim();
        if secret.is_empty() {
            return Err("the token is empty".into());
        }
        if !secret.chars().all(|c| c.is_ascii_graphic()) {
            return Err("the token must be printable ASCII without spaces".into());
        }
        Ok(Self(secret.to_string()))
    }

    /// The token read from `file` (its first line).
    pub fn from_file(file: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        Self::new(text.lines().next().unwrap_or("")).map_err(|e| format!("{}: {e}", file.display()))
    }

    /// The value of an `authorization` header that carries this token.
    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }

    /// Whether an `authorization` header value carries this token, as
    /// `Bearer TOKEN` or as basic auth with it as the password.
    pub fn accepts(&self, authorization: &str) -> bool {
        let given = match authorization.strip_prefix("Bearer ") {
            Some(token) => token.trim().as_bytes().to_vec(),
            None => match basic_password(authorization) {
                Some(password) => password,
                None => return false,
            },
        };
        constant_time_eq::constant_time_eq(self.0.as_bytes(), &given)
    }
}

/// The password of a basic-auth `authorization` value (`Basic
/// base64(user:password)`, padded or not).
pub fn basic_password(authorization: &str) -> Option<Vec<u8>> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let encoded = authorization.strip_prefix("Basic ")?;
    let decoded = LENIENT.decode(encoded.trim()).ok()?;
    let colon = decoded.iter().position(|&b| b == b':')?;
    Some(decoded[colon + 1..].to_vec())
}

/// Refuses an address other than loopback without a token.
pub fn require_token_off_loopback(
    bind: std::net::SocketAddr,
    token: Option<&ServeToken>,
) -> Result<(), String> {
    if token.is_none() && !bind.ip().is_loopback() {
        return Err(format!(
            "--bind {bind} is not a loopback address: give a token (--token-file FILE or \
             XPROF_SQL_TOKEN) that every client must send (docs/serve.md, Security)"
        ));
    }
    Ok(())
}

/// A tonic interceptor: with a token, every call must carry it; the
/// refusal says how.
pub fn check_call(
    token: Option<&ServeToken>,
    request: &tonic::Request<()>,
) -> Result<(), tonic::Status> {
    let Some(token) = token else {
        return Ok(());
    };
    let given = request
        .metadata()
        .get("authorization")
        .and_then(|v| v.to_str().ok());
    match given {
        Some(value) if token.accepts(value) => Ok(()),
        Some(_) => Err(tonic::Status::unauthenticated(
            "wrong token: send the server's token as `authorization: Bearer TOKEN`, or as the \
             password of basic auth",
        )),
        None => Err(tonic::Status::unauthenticated(
            "this server needs a token: send `authorization: Bearer TOKEN`, or the token as \
             the password of basic auth",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_and_basic_carry_the_token_and_nothing_else_does() {
        let token = ServeToken::new("s3cret").unwrap();
        assert!(token.accepts("Bearer s3cret"));
        assert!(!token.accepts("Bearer s3cre"));
        assert!(!token.accepts("Bearer s3cretx"));
        let basic = |s: &str| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(s)
            )
        };
        assert!(token.accepts(&basic("anyone:s3cret")));
        assert!(!token.accepts(&basic("s3cret:wrong")));
        assert!(!token.accepts(&basic("s3cret")));
        assert!(!token.accepts("Basic !!!"));
        assert!(!token.accepts("s3cret"));
        assert!(ServeToken::new(" ").is_err());
        assert!(ServeToken::new("a b").is_err());
    }

    #[test]
    fn only_loopback_goes_without_a_token() {
        let token = ServeToken::new("t").unwrap();
        assert!(require_token_off_loopback("127.0.0.1:0".parse().unwrap(), None).is_ok());
        assert!(require_token_off_loopback("[::1]:0".parse().unwrap(), None).is_ok());
        assert!(require_token_off_loopback("0.0.0.0:0".parse().unwrap(), None).is_err());
        assert!(require_token_off_loopback("0.0.0.0:0".parse().unwrap(), Some(&token)).is_ok());
    }
}
