//! How a client reached the relay: the scheme and host it used. The relay needs them for the absolute
//! URLs it hands out (`stream_url`, `ws_url`, `console_url`) and for the login cookie's name.
//!
//! With TLS on, every request is HTTPS. With `--behind-proxy`, a reverse proxy on this machine
//! terminates TLS, and only then, and only from a loopback peer, are `X-Forwarded-Proto` and
//! `X-Forwarded-Host` believed. Anything else sees the request as it arrived.

use std::net::SocketAddr;

use axum::http::{HeaderMap, header};

use crate::core::config::Config;
use bridge_protocol::api::SessionCreated;

/// The scheme and host a client used, as the client sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct External {
    /// The client talks HTTPS (TLS here, or at a trusted proxy).
    pub https: bool,
    /// The host (and port) the client addressed, lower case: the forwarded host from a trusted
    /// proxy, else the Host header.
    pub host: String,
    /// `X-Forwarded-Host` from a trusted proxy, lower case; it passes the Host check only if listed.
    pub forwarded_host: Option<String>,
}

impl External {
    /// Decides from the configuration, the request's headers and the TCP peer (`None` when unknown,
    /// e.g. a router driven without `ConnectInfo`: then nothing forwarded is trusted).
    pub fn of(
        cfg: &Config,
        headers: &HeaderMap,
        authority: Option<&str>,
        peer: Option<SocketAddr>,
    ) -> External {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .or(authority)
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if cfg.tls {
            return External {
                https: true,
                host,
                forwarded_host: None,
            };
        }
        if trusts_forwarded(cfg.behind_proxy, peer) {
            let https = first_value(headers, "x-forwarded-proto")
                .is_some_and(|p| p.eq_ignore_ascii_case("https"));
            let forwarded_host =
                first_value(headers, "x-forwarded-host").map(|h| h.to_ascii_lowercase());
            return External {
                https,
                host: forwarded_host.clone().unwrap_or(host),
                forwarded_host,
            };
        }
        External {
            https: false,
            host,
            forwarded_host: None,
        }
    }

    pub fn scheme(&self) -> &'static str {
        if self.https { "https" } else { "http" }
    }

    /// `http(s)://host` + `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme(), self.host)
    }

    /// `ws(s)://host` + `path`.
    /// The answer of `POST /v1/code/sessions` for session `id` (`host`: the agents node that runs
    /// it, behind a gateway).
    pub fn session_created(&self, id: String, host: Option<String>) -> SessionCreated {
        let base = format!("/v1/code/sessions/{id}");
        SessionCreated {
            stream_url: self.url(&format!("{base}/events/stream")),
            send_url: self.url(&format!("{base}/events")),
            ws_url: self.ws_url(&format!("{base}/ws")),
            session_id: id,
            host,
        }
    }

    pub fn ws_url(&self, path: &str) -> String {
        let scheme = if self.https { "wss" } else { "ws" };
        format!("{scheme}://{}{path}", self.host)
    }

    /// The login cookie's name for this request (see [`crate::core::auth::cookie_name`]).
    pub fn cookie_name(&self) -> &'static str {
        crate::core::auth::cookie_name(self.https)
    }
}

/// `X-Forwarded-*` count only with `--behind-proxy` and from a loopback peer (the proxy runs on this
/// machine); an unknown peer is not trusted.
pub fn trusts_forwarded(behind_proxy: bool, peer: Option<SocketAddr>) -> bool {
    behind_proxy && peer.is_some_and(|p| p.ip().to_canonical().is_loopback())
}

/// The first comma-separated element of a header (the hop nearest the client), trimmed; `None` when
/// absent or empty.
fn first_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    fn config(flags: &[&str]) -> Config {
        let mut argv = vec!["bridge-relay", "--demo"];
        argv.extend_from_slice(flags);
        let a = crate::Args::try_parse_from(argv).unwrap();
        a.validate().unwrap();
        a.into_config("127.0.0.1:8787".parse().unwrap()).unwrap()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    const PROXIED: &[(&str, &str)] = &[
        ("host", "127.0.0.1:8787"),
        ("x-forwarded-proto", "https"),
        ("x-forwarded-host", "Box.Tail1234.ts.net"),
    ];

    #[test]
    fn forwarded_headers_count_only_behind_a_proxy_and_from_loopback() {
        let lo: SocketAddr = "127.0.0.1:50000".parse().unwrap();
        let lo6: SocketAddr = "[::1]:50000".parse().unwrap();
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:50000".parse().unwrap();
        let lan: SocketAddr = "192.168.1.23:50000".parse().unwrap();
        assert!(trusts_forwarded(true, Some(lo)));
        assert!(trusts_forwarded(true, Some(lo6)));
        assert!(trusts_forwarded(true, Some(mapped)));
        assert!(!trusts_forwarded(true, Some(lan)));
        assert!(!trusts_forwarded(true, None));
        assert!(!trusts_forwarded(false, Some(lo)));

        let proxy = config(&["--behind-proxy"]);
        let e = External::of(&proxy, &headers(PROXIED), None, Some(lo));
        assert!(e.https);
        assert_eq!(e.host, "box.tail1234.ts.net");
        assert_eq!(e.forwarded_host.as_deref(), Some("box.tail1234.ts.net"));
        assert_eq!(e.cookie_name(), "__Host-bridge_session");
        assert_eq!(
            e.ws_url("/v1/code/sessions/x/ws"),
            "wss://box.tail1234.ts.net/v1/code/sessions/x/ws"
        );
        // From the LAN, or with no known peer, or without --behind-proxy: as the request arrived.
        let direct = External {
            https: false,
            host: "127.0.0.1:8787".into(),
            forwarded_host: None,
        };
        assert_eq!(
            External::of(&proxy, &headers(PROXIED), None, Some(lan)),
            direct
        );
        assert_eq!(External::of(&proxy, &headers(PROXIED), None, None), direct);
        let plain = config(&[]);
        assert_eq!(
            External::of(&plain, &headers(PROXIED), None, Some(lo)),
            direct
        );
        assert_eq!(direct.cookie_name(), "bridge_session");
        assert_eq!(direct.url("/x"), "http://127.0.0.1:8787/x");
        // The first hop of a list; a plain-HTTP proxy stays http.
        let e = External::of(
            &proxy,
            &headers(&[("host", "h"), ("x-forwarded-proto", "http, https")]),
            None,
            Some(lo),
        );
        assert!(!e.https);
        assert_eq!(e.host, "h");
    }

    #[test]
    fn with_tls_every_request_is_https_and_forwarded_headers_are_ignored() {
        let tls = config(&["--tls-self-signed"]);
        let e = External::of(
            &tls,
            &headers(PROXIED),
            None,
            Some("127.0.0.1:1".parse().unwrap()),
        );
        assert!(e.https);
        assert_eq!(e.host, "127.0.0.1:8787");
        assert_eq!(e.forwarded_host, None);
        assert_eq!(e.url("/"), "https://127.0.0.1:8787/");
    }
}
