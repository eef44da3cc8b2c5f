//! Which push endpoints the relay may send to (the SSRF guard). A subscription's endpoint comes from a
//! browser, so the relay only ever POSTs to:
//!
//! * an `https` URL on port 443, without userinfo, whose host is a known push service: FCM
//!   (`fcm.googleapis.com`), Mozilla autopush (`*.push.services.mozilla.com`), Apple Web Push
//!   (`*.push.apple.com`) or Windows WNS (`*.notify.windows.com`), matched exactly or by dot-suffix;
//! * or a URL under a prefix given with `--push-endpoint-allow` (same scheme, host and port, and the
//!   path below the prefix's).
//!
//! Everything else is refused when the subscription is registered, and checked again before each send.

use reqwest::Url;

/// Longest accepted endpoint URL.
pub const MAX_ENDPOINT_LEN: usize = 2048;

/// Known push service hosts: exact names, and suffixes that must follow at least one label.
const EXACT_HOSTS: &[&str] = &["fcm.googleapis.com"];
const HOST_SUFFIXES: &[&str] = &[
    ".push.services.mozilla.com",
    ".push.apple.com",
    ".notify.windows.com",
];

/// An allowed endpoint prefix (`--push-endpoint-allow`), parsed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedPrefix {
    raw: String,
    url: Url,
}

impl AllowedPrefix {
    /// Parses a prefix: an absolute `http`/`https` URL with a host and no userinfo.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let url = Url::parse(raw).map_err(|e| format!("--push-endpoint-allow {raw:?}: {e}"))?;
        if !matches!(url.scheme(), "http" | "https")
            || url.host_str().is_none()
            || !url.username().is_empty()
            || url.password().is_some()
        {
            return Err(format!(
                "--push-endpoint-allow {raw:?}: expected an http(s) URL with a host and no userinfo, e.g. http://127.0.0.1:9000/"
            ));
        }
        Ok(Self {
            raw: raw.to_owned(),
            url,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.raw
    }

    fn admits(&self, raw: &str, url: &Url) -> bool {
        raw.starts_with(&self.raw)
            && url.scheme() == self.url.scheme()
            && url.host_str() == self.url.host_str()
            && url.port_or_known_default() == self.url.port_or_known_default()
            && url.path().starts_with(self.url.path())
    }
}

fn known_push_host(host: &str) -> bool {
    EXACT_HOSTS.contains(&host)
        || HOST_SUFFIXES
            .iter()
            .any(|s| host.len() > s.len() && host.ends_with(s))
}

/// Checks a subscription endpoint; returns the URL to send to, or why it is refused.
pub fn check(raw: &str, allowed: &[AllowedPrefix]) -> Result<Url, String> {
    if raw.len() > MAX_ENDPOINT_LEN {
        return Err(format!("endpoint is longer than {MAX_ENDPOINT_LEN} bytes"));
    }
    let url = Url::parse(raw).map_err(|e| format!("endpoint is not a URL: {e}"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err("endpoint must not carry userinfo (user@host)".into());
    }
    if allowed.iter().any(|p| p.admits(raw, &url)) {
        return Ok(url);
    }
    let refused = || {
        format!(
            "endpoint {:?} is not a known push service: expected https on port 443 at fcm.googleapis.com, \
             *.push.services.mozilla.com, *.push.apple.com or *.notify.windows.com (other endpoints need \
             the relay flag --push-endpoint-allow PREFIX)",
            url.origin().ascii_serialization()
        )
    };
    if url.scheme() != "https" || url.port().is_some() {
        return Err(refused());
    }
    // IP literals never end with a push service's name.
    match url.host_str() {
        Some(host) if known_push_host(host) => Ok(url),
        _ => Err(refused()),
    }
}

/// The endpoint's origin (`scheme://host[:port]`): the VAPID `aud`, and what the list shows.
pub fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Whether the endpoint is on this machine (sent without any configured proxy).
pub fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || bare
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(p: &str) -> Vec<AllowedPrefix> {
        vec![AllowedPrefix::parse(p).unwrap()]
    }

    #[test]
    fn known_push_services_pass() {
        for ok in [
            "https://fcm.googleapis.com/fcm/send/abc:def",
            "https://updates.push.services.mozilla.com/wpush/v2/gAAA",
            "https://web.push.apple.com/QGx",
            "https://wns2-par02p.notify.windows.com/w/?token=x",
            "https://fcm.googleapis.com:443/fcm/send/x",
            "HTTPS://FCM.GOOGLEAPIS.COM/fcm/send/x",
        ] {
            let url = check(ok, &[]).unwrap_or_else(|e| panic!("{ok}: {e}"));
            assert_eq!(url.scheme(), "https");
        }
        assert_eq!(
            origin(&check("https://fcm.googleapis.com:443/x", &[]).unwrap()),
            "https://fcm.googleapis.com"
        );
    }

    #[test]
    fn everything_else_is_refused() {
        for bad in [
            "http://169.254.169.254/",
            "http://169.254.169.254/latest/meta-data/",
            "https://evil.example/",
            "https://fcm.googleapis.com.evil.example/",
            "https://user@fcm.googleapis.com/",
            "https://user:pw@fcm.googleapis.com/",
            "file:///etc/passwd",
            "http://fcm.googleapis.com/fcm/send/x",
            "https://fcm.googleapis.com:8443/x",
            "https://push.apple.com/",
            "https://.push.apple.com/",
            "https://evilpush.apple.com/",
            "https://notify.windows.com.evil/",
            "https://127.0.0.1/",
            "https://[::1]/",
            "not a url",
            "",
            "data:text/plain,hi",
            "http://127.0.0.1:9/",
        ] {
            assert!(check(bad, &[]).is_err(), "{bad} must be refused");
        }
        let long = format!(
            "https://fcm.googleapis.com/{}",
            "a".repeat(MAX_ENDPOINT_LEN)
        );
        assert!(check(&long, &[]).is_err());
    }

    #[test]
    fn allowed_prefixes_pin_scheme_host_port_and_path() {
        let a = allow("http://127.0.0.1:9000/push/");
        check("http://127.0.0.1:9000/push/device-1", &a).unwrap();
        for bad in [
            "http://127.0.0.1:9000/other",
            "http://127.0.0.1:90000/push/x",
            "http://127.0.0.1:9001/push/x",
            "https://127.0.0.1:9000/push/x",
            "http://user@127.0.0.1:9000/push/x",
            "http://127.0.0.2:9000/push/x",
        ] {
            assert!(check(bad, &a).is_err(), "{bad} must be refused");
        }
        // A prefix without a trailing slash cannot be stretched into another host or port.
        let a = allow("http://127.0.0.1:90");
        for bad in [
            "http://127.0.0.1:9000/x",
            "http://127.0.0.1:90.evil.example/x",
            "http://127.0.0.1:90@evil.example/x",
        ] {
            assert!(check(bad, &a).is_err(), "{bad} must be refused");
        }
        check("http://127.0.0.1:90/x", &a).unwrap();
        assert!(AllowedPrefix::parse("ftp://x/").is_err());
        assert!(AllowedPrefix::parse("http://u@x/").is_err());
        assert!(AllowedPrefix::parse("127.0.0.1:9000").is_err());
    }

    #[test]
    fn loopback_detection() {
        assert!(is_loopback(&Url::parse("http://127.0.0.1:1/").unwrap()));
        assert!(is_loopback(&Url::parse("http://localhost:1/").unwrap()));
        assert!(is_loopback(&Url::parse("http://[::1]:1/").unwrap()));
        assert!(!is_loopback(
            &Url::parse("https://fcm.googleapis.com/").unwrap()
        ));
    }
}
