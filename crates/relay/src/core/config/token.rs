//! What the operator's controller token must be, and the login code's default lifetime.

/// One-time login codes expire after 10 minutes unless `--login-code-ttl-secs` says otherwise.
pub const LOGIN_CODE_DEFAULT_TTL_SECS: u64 = 600;
/// The shortest controller token accepted from `--token-file` or `BRIDGE_RELAY_TOKEN`.
pub const MIN_TOKEN_LEN: usize = 24;

/// Checks a controller token given by the operator: long enough, no whitespace inside.
pub fn check_token(token: &str, from: &str) -> Result<(), String> {
    if token.chars().count() < MIN_TOKEN_LEN {
        return Err(format!(
            "the controller token from {from} is {} characters long; use at least {MIN_TOKEN_LEN} \
             (e.g. `openssl rand -hex 24`)",
            token.chars().count()
        ));
    }
    if token.chars().any(char::is_whitespace) {
        return Err(format!(
            "the controller token from {from} contains whitespace"
        ));
    }
    Ok(())
}
