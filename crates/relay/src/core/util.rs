//! Small helpers: clocks, random secrets, hashing, JSON string quoting.

use base64::Engine as _;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

/// Now as RFC 3339 UTC with millisecond precision, e.g. `2026-11-30T04:09:00.178Z`.
pub fn now_rfc3339() -> String {
    let now = OffsetDateTime::now_utc();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        now.millisecond()
    )
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    OffsetDateTime::now_utc().unix_timestamp()
}

/// A fresh random secret: `prefix` + 32 random bytes, base64url without padding.
pub fn random_secret(prefix: &str) -> String {
    let bytes: [u8; 32] = rand::random();
    format!(
        "{prefix}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

/// Lower-case hex SHA-256 of `s`. Only these hashes of secrets are ever stored.
pub fn sha256_hex(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// `s` as a JSON string literal.
pub fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// The first `max` bytes of `s`, cut at a character boundary.
pub fn truncate_utf8(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Resolves once the watched flag is `true` (or its sender is gone).
pub async fn until_true(rx: &mut tokio::sync::watch::Receiver<bool>) {
    let _ = rx.wait_for(|v| *v).await;
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename, owner-only (0600).
pub fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    write_private_via(&tmp, path, bytes)
}

/// [`write_private`] through the temporary file `tmp` (made or truncated, synced, then renamed).
pub fn write_private_via(
    tmp: &std::path::Path,
    path: &std::path::Path,
    bytes: &[u8],
) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    std::fs::rename(tmp, path)
}

/// A file made afresh at `path` with `mode`: whatever is there is removed first (a stale
/// temporary file, or a symlink planted in its place), then the file is created exclusively.
pub fn create_fresh(path: &std::path::Path, mode: u32) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let _ = std::fs::remove_file(path);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
}

/// A session id usable as one subject token (the relay makes `cse_<hex>`; anything else is refused).
pub fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// This machine's host name (for the default contact and the test notification).
pub fn hostname() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| s.trim().to_owned())
        .find(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'))
        })
        .unwrap_or_else(|| "localhost".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_shape() {
        let s = now_rfc3339();
        assert_eq!(s.len(), 24, "{s}");
        assert!(s.ends_with('Z'));
        assert!(
            time::OffsetDateTime::parse(&s, &time::format_description::well_known::Rfc3339).is_ok()
        );
    }

    #[test]
    fn secrets_are_distinct_and_hashes_stable() {
        let a = random_secret("x_");
        let b = random_secret("x_");
        assert_ne!(a, b);
        assert!(a.starts_with("x_") && a.len() > 40);
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate_utf8("héllo", 2), "h");
        assert_eq!(truncate_utf8("héllo", 3), "hé");
        assert_eq!(truncate_utf8("abc", 10), "abc");
    }
}
