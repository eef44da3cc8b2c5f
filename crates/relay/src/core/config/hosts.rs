//! Host names and origins: the Host values accepted by default, the names a certificate covers, the
//! console URL the banner prints, and which origins may embed the console.

use std::net::SocketAddr;

/// Host header values accepted by default: the bound address, `localhost:PORT`, and loopback aliases
/// when bound to an unspecified address.
pub fn default_allowed_hosts(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![format!("localhost:{port}")];
    if addr.ip().is_unspecified() {
        hosts.push(format!("127.0.0.1:{port}"));
        hosts.push(format!("[::1]:{port}"));
    } else {
        hosts.push(addr.to_string());
    }
    hosts
}

/// A Host header naming a loopback address without a port, as a reverse proxy on this machine sends
/// it (Trunk's does), is accepted when the relay listens on loopback (or everywhere): an IP literal
/// or `localhost` cannot be rebound by DNS, so it keeps the rebinding protection. It never counts
/// for the Origin check: a page on another local port is a different origin.
pub fn is_bare_loopback_host(host: &str, addr: SocketAddr) -> bool {
    (addr.ip().is_loopback() || addr.ip().is_unspecified())
        && matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

/// The names a TLS certificate for `addr` must cover: `extra` (as given, lower case) followed by
/// `localhost`, `127.0.0.1` and the bound IP when it is not unspecified; no duplicates.
pub fn tls_names(extra: &[String], addr: SocketAddr) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let defaults = ["localhost".to_owned(), "127.0.0.1".to_owned()];
    let bound = (!addr.ip().is_unspecified()).then(|| addr.ip().to_string());
    for n in extra
        .iter()
        .map(|n| normalize_tls_name(n))
        .chain(defaults)
        .chain(bound)
    {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// `NAME` or `[v6]` → lower case, brackets removed.
pub(super) fn normalize_tls_name(n: &str) -> String {
    let n = n.trim().to_ascii_lowercase();
    n.strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .map(str::to_owned)
        .unwrap_or(n)
}

/// `name:port` as a Host header carries it (IPv6 in brackets).
pub fn host_with_port(name: &str, port: u16) -> String {
    if name.parse::<std::net::Ipv6Addr>().is_ok() {
        format!("[{name}]:{port}")
    } else {
        format!("{name}:{port}")
    }
}

/// Where people open the console (`scheme://host[:port]`, no trailing slash): with TLS the first
/// `--tls-name` that is a DNS name, else the first IP one, else the bound IP (`127.0.0.1` when bound to
/// every address); behind a proxy `https://` and the first `--allowed-host`, the public name; else
/// `http://` and the bound address.
pub fn public_url(
    tls: bool,
    user_tls_names: &[String],
    behind_proxy: bool,
    user_allowed_hosts: &[String],
    addr: SocketAddr,
) -> String {
    if tls {
        let names: Vec<String> = user_tls_names
            .iter()
            .map(|n| normalize_tls_name(n))
            .collect();
        let is_ip = |n: &&String| n.parse::<std::net::IpAddr>().is_ok();
        let bound = (!addr.ip().is_unspecified()).then(|| addr.ip().to_string());
        let name = names
            .iter()
            .find(|n| !is_ip(n))
            .or_else(|| names.iter().find(is_ip))
            .cloned()
            .or(bound)
            .unwrap_or_else(|| "127.0.0.1".to_owned());
        let host = if addr.port() == 443 {
            host_without_port(&name)
        } else {
            host_with_port(&name, addr.port())
        };
        return format!("https://{host}");
    }
    if behind_proxy && let Some(h) = user_allowed_hosts.first() {
        return format!("https://{}", h.trim().to_ascii_lowercase());
    }
    format!("http://{addr}")
}

/// `name` as a Host header carries it without a port (IPv6 in brackets).
pub(super) fn host_without_port(name: &str) -> String {
    if name.parse::<std::net::Ipv6Addr>().is_ok() {
        format!("[{name}]")
    } else {
        name.to_owned()
    }
}

pub(super) fn normalize_origin(o: &str) -> String {
    o.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// Whether `o` (normalized) is `http(s)://host[:port]` and nothing else: it goes verbatim into a
/// `Content-Security-Policy` header, so no spaces, quotes, semicolons, paths or wildcards.
pub fn is_embed_origin(o: &str) -> bool {
    let Some(rest) = o
        .strip_prefix("https://")
        .or_else(|| o.strip_prefix("http://"))
    else {
        return false;
    };
    !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
}
