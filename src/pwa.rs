//! The console as an installed app: the service worker (`/sw.js`: registration, "new version"
//! updates), Web Push on this device (permission, subscription), notifications shown by the page
//! itself where push cannot work, and the small records kept in the browser (this device's
//! subscription id for the service worker, a composer draft across an update reload).
//!
//! The decisions are pure functions over plain structs, tested natively: whether push can work
//! here and why not ([`push_support`]), a readable device name ([`device_label`]), which sessions
//! newly wait for an answer ([`newly_waiting`]). The browser glue (`browser`, `worker`, `push`) is
//! used only through [`crate::store::Store`]; components never call it.

mod browser;
mod push;
mod worker;

pub use browser::*;
pub use push::*;
pub use worker::*;

use serde::{Deserialize, Serialize};

use bridge_protocol::api::SessionSummary;

/// The service worker's script URL (scope `/`).
pub const SW_URL: &str = "/sw.js";
/// Cache Storage name and key under which the service worker finds this device's subscription.
pub const DEVICE_CACHE: &str = "bridge-device";
/// See [`DEVICE_CACHE`].
pub const DEVICE_KEY: &str = "/__bridge/device";
/// Push events a device can choose; `resolved` is always included (it closes answered prompts).
pub const PUSH_EVENTS: [(&str, &str); 3] = [
    (
        "needs_you",
        "A session needs you (a permission prompt or a question)",
    ),
    ("turn_done", "A long turn finished"),
    ("agent_exited", "An agent stopped unexpectedly"),
];
/// Always subscribed: closes a prompt's notification on every device once it is answered.
pub const RESOLVED: &str = "resolved";

// ------------------------------------------------------------------------------- pure decisions

/// The notification permission (`Notification.permission`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Permission {
    /// Not asked yet.
    #[default]
    Default,
    /// Allowed.
    Granted,
    /// Blocked (only the browser's site settings can undo it).
    Denied,
}

impl Permission {
    /// From the browser's string.
    pub fn parse(s: &str) -> Self {
        match s {
            "granted" => Permission::Granted,
            "denied" => Permission::Denied,
            _ => Permission::Default,
        }
    }
}

/// What this browser offers, read once by [`capabilities`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// `window.isSecureContext` (HTTPS, or http on a loopback host).
    pub secure_context: bool,
    /// `navigator.serviceWorker` exists.
    pub service_worker: bool,
    /// `window.PushManager` exists.
    pub push_manager: bool,
    /// `window.Notification` exists.
    pub notification: bool,
    /// An iPhone, iPad or iPod (iPadOS calls itself a Mac with a touch screen).
    pub ios: bool,
    /// Running as an installed app (`display-mode: standalone`, or iOS's `navigator.standalone`).
    pub standalone: bool,
    /// The notification permission.
    pub permission: Permission,
    /// The page's host (for the explanation).
    pub host: String,
}

impl Capabilities {
    /// A browser that offers all Web Push needs (a secure context, a service worker, push,
    /// notifications; not an iPhone, not installed), whose permission is not asked yet: where the
    /// tests of the Notifications panel start.
    pub fn push_ready(host: &str) -> Self {
        Self {
            secure_context: true,
            service_worker: true,
            push_manager: true,
            notification: true,
            ios: false,
            standalone: false,
            permission: Permission::Default,
            host: host.to_owned(),
        }
    }
}

/// Whether Web Push can work here and, if not, why (`data-state` of `notifications-status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PushSupport {
    /// Push can be enabled (the permission may still have to be asked).
    Ready,
    /// Plain HTTP on a host that is not loopback: browsers keep push (and service workers) from it.
    Insecure,
    /// iOS / iPadOS Safari outside a home-screen app: Apple offers push only to installed apps.
    IosNeedsHomeScreen,
    /// No service worker, Push API or notifications in this browser.
    Unsupported,
    /// The person blocked notifications for this site.
    Denied,
}

impl PushSupport {
    /// `data-state` value.
    pub fn as_str(self) -> &'static str {
        match self {
            PushSupport::Ready => "ready",
            PushSupport::Insecure => "insecure",
            PushSupport::IosNeedsHomeScreen => "ios-home-screen",
            PushSupport::Unsupported => "unsupported",
            PushSupport::Denied => "denied",
        }
    }

    /// Why push cannot work, and what to do, in plain words (`None` when it can).
    pub fn explain(self, host: &str) -> Option<String> {
        Some(match self {
            PushSupport::Ready => return None,
            PushSupport::Insecure => format!(
                "Push notifications need a secure connection, and this page came over plain HTTP from {host}. \
                 Open the console over HTTPS (see “Use it from your phone” in the README), or as http://127.0.0.1 on the relay's own computer."
            ),
            PushSupport::IosNeedsHomeScreen => "On iPhone and iPad, notifications work only in the installed app: tap Share, then “Add to Home Screen”, and open Bridge Console from the home screen.".to_string(),
            PushSupport::Unsupported => "This browser cannot receive push notifications (it has no service worker or Push API).".to_string(),
            PushSupport::Denied => "Notifications are blocked for this site. Allow them in the browser's site settings, then come back here.".to_string(),
        })
    }
}

/// Whether Web Push can work with these capabilities.
pub fn push_support(c: &Capabilities) -> PushSupport {
    if !c.secure_context {
        PushSupport::Insecure
    } else if c.ios && !c.standalone {
        PushSupport::IosNeedsHomeScreen
    } else if !(c.service_worker && c.push_manager && c.notification) {
        PushSupport::Unsupported
    } else if c.permission == Permission::Denied {
        PushSupport::Denied
    } else {
        PushSupport::Ready
    }
}

/// Whether the page can show notifications itself (while it is open): the fallback where push
/// cannot work.
pub fn in_page_possible(c: &Capabilities) -> bool {
    c.secure_context && c.notification && c.permission != Permission::Denied
}

/// Whether a user agent is iOS / iPadOS (`platform` and touch points tell an iPad from a Mac).
pub fn is_ios(user_agent: &str, platform: &str, max_touch_points: u32) -> bool {
    ["iPhone", "iPad", "iPod"]
        .iter()
        .any(|d| user_agent.contains(d))
        || (platform == "MacIntel" && max_touch_points > 1)
}

/// Browsers by what their user agent says, the first that matches winning (Edge, Opera and
/// Samsung Internet also say "Chrome/", and most say "Safari/").
const BROWSERS: &[(&[&str], &str)] = &[
    (&["Edg/", "EdgA/", "EdgiOS/"], "Edge"),
    (&["OPR/"], "Opera"),
    (&["SamsungBrowser/"], "Samsung Internet"),
    (&["Firefox/", "FxiOS/"], "Firefox"),
    (&["CriOS/", "Chrome/"], "Chrome"),
    (&["Safari/"], "Safari"),
];

/// Systems by what a user agent says, the first that matches winning (an iPhone's also says
/// "Mac OS X", Android's "Linux").
const SYSTEMS: &[(&[&str], &str)] = &[
    (&["iPhone"], "iPhone"),
    (&["iPad"], "iPad"),
    (&["Android"], "Android"),
    (&["CrOS"], "ChromeOS"),
    (&["Windows"], "Windows"),
    (&["Mac OS X", "Macintosh"], "macOS"),
    (&["Linux"], "Linux"),
];

/// The name of the first entry of `table` one of whose markers `ua` contains.
fn first_match(ua: &str, table: &[(&[&str], &'static str)]) -> Option<&'static str> {
    table
        .iter()
        .find(|(markers, _)| markers.iter().any(|m| ua.contains(m)))
        .map(|(_, name)| *name)
}

/// A readable name for this device ("Chrome on Android"), from the user agent and, where the
/// browser offers it, `navigator.userAgentData.platform`.
pub fn device_label(user_agent: &str, ua_data_platform: Option<&str>) -> String {
    let ua = user_agent;
    let browser = match first_match(ua, BROWSERS).unwrap_or("Browser") {
        "Chrome" if ua.contains("HeadlessChrome") => "Headless Chrome",
        b => b,
    };
    let os = match ua_data_platform.filter(|p| !p.is_empty()) {
        Some("macOS") if ua.contains("iPad") => "iPad",
        Some(p) => p,
        None => first_match(ua, SYSTEMS).unwrap_or("this device"),
    };
    format!("{browser} on {os}")
}

/// Whether a session (as the list reports it) waits for an answer.
pub use bridge_protocol::api::waits_for_answer;

/// Sessions that wait for an answer in `new` and did not in `old` (or wait for more than before).
pub fn newly_waiting<'a>(
    old: &[SessionSummary],
    new: &'a [SessionSummary],
) -> Vec<&'a SessionSummary> {
    new.iter()
        .filter(|s| waits_for_answer(s))
        .filter(|s| {
            old.iter().find(|o| o.id == s.id).is_none_or(|o| {
                !waits_for_answer(o) || s.pending_permissions > o.pending_permissions
            })
        })
        .collect()
}

/// Delay (ms) before the next attempt to reach the relay: 1 s doubling to 30 s, scaled by
/// `0.8 + 0.4 × jitter` (`jitter` in `[0, 1)`, so many consoles do not retry in step).
pub fn retry_delay_ms(attempt: u32, jitter: f64) -> u32 {
    let base = 1000u32.saturating_mul(1 << attempt.min(5)).min(30_000);
    (f64::from(base) * (0.8 + 0.4 * jitter.clamp(0.0, 1.0))) as u32
}

/// Decodes unpadded or padded base64url (the VAPID key's encoding); `None` if it is not.
pub fn base64url_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for c in s.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    (bits < 6).then_some(out)
}

/// What this device remembers about its push subscription, in Cache Storage ([`DEVICE_CACHE`]),
/// where the service worker reads it to answer from a notification and to subscribe again when the
/// browser replaces the subscription.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceRecord {
    /// The relay's id of the subscription.
    pub subscription_id: String,
    /// The push endpoint it was made for.
    #[serde(default)]
    pub endpoint: String,
    /// The device name given to the relay.
    #[serde(default)]
    pub label: String,
    /// The events chosen.
    #[serde(default)]
    pub events: Vec<String>,
}

/// The events to register: the chosen ones plus [`RESOLVED`], in a stable order.
pub fn events_with_resolved(chosen: &[String]) -> Vec<String> {
    let mut out: Vec<String> = PUSH_EVENTS
        .iter()
        .map(|(e, _)| e.to_string())
        .filter(|e| chosen.contains(e))
        .collect();
    out.push(RESOLVED.to_string());
    out
}

/// Why subscribing failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PushError {
    /// The permission was not given.
    NotAllowed(String),
    /// The browser's push service could not be reached (or refused).
    Unreachable(String),
    /// Anything else.
    Other(String),
}

impl std::fmt::Display for PushError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PushError::NotAllowed(m) => write!(f, "notifications were not allowed ({m})"),
            PushError::Unreachable(m) => {
                write!(f, "the browser's push service could not be reached ({m})")
            }
            PushError::Other(m) => f.write_str(m),
        }
    }
}

/// Classifies a `DOMException` (its `name`, `message`) from `pushManager.subscribe()`.
pub fn classify_subscribe_error(name: &str, message: &str) -> PushError {
    let m = if message.is_empty() { name } else { message }.to_string();
    match name {
        "NotAllowedError" => PushError::NotAllowed(m),
        "AbortError" | "NetworkError" | "TimeoutError" | "UnknownError" => {
            PushError::Unreachable(m)
        }
        _ => PushError::Other(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::summary;

    fn caps() -> Capabilities {
        Capabilities::push_ready("relay.example:8787")
    }

    #[test]
    fn push_support_names_the_first_obstacle() {
        assert_eq!(push_support(&caps()), PushSupport::Ready);
        let granted = Capabilities {
            permission: Permission::Granted,
            ..caps()
        };
        assert_eq!(push_support(&granted), PushSupport::Ready);
        // Plain HTTP on a LAN address: no service worker either, but the reason is the HTTP.
        let http = Capabilities {
            secure_context: false,
            service_worker: false,
            push_manager: false,
            ..caps()
        };
        assert_eq!(push_support(&http), PushSupport::Insecure);
        let text = PushSupport::Insecure.explain(&http.host).unwrap();
        assert!(
            text.contains("relay.example:8787") && text.contains("HTTPS"),
            "{text}"
        );
        // iOS Safari in a tab has no PushManager: the way out is the home screen, not another browser.
        let ios_tab = Capabilities {
            ios: true,
            push_manager: false,
            ..caps()
        };
        assert_eq!(push_support(&ios_tab), PushSupport::IosNeedsHomeScreen);
        let ios_app = Capabilities {
            ios: true,
            standalone: true,
            ..caps()
        };
        assert_eq!(push_support(&ios_app), PushSupport::Ready);
        let old_ios_app = Capabilities {
            push_manager: false,
            ..ios_app.clone()
        };
        assert_eq!(push_support(&old_ios_app), PushSupport::Unsupported);
        let no_sw = Capabilities {
            service_worker: false,
            ..caps()
        };
        assert_eq!(push_support(&no_sw), PushSupport::Unsupported);
        let denied = Capabilities {
            permission: Permission::Denied,
            ..caps()
        };
        assert_eq!(push_support(&denied), PushSupport::Denied);
        assert_eq!(PushSupport::Ready.explain("h"), None);
        for s in [
            PushSupport::Insecure,
            PushSupport::IosNeedsHomeScreen,
            PushSupport::Unsupported,
            PushSupport::Denied,
        ] {
            assert!(s.explain("h").is_some_and(|t| t.len() > 30), "{s:?}");
        }
    }

    #[test]
    fn in_page_notifications_need_a_secure_page_and_no_block() {
        assert!(in_page_possible(&caps()));
        assert!(!in_page_possible(&Capabilities {
            permission: Permission::Denied,
            ..caps()
        }));
        assert!(!in_page_possible(&Capabilities {
            notification: false,
            ..caps()
        }));
        assert!(!in_page_possible(&Capabilities {
            secure_context: false,
            ..caps()
        }));
        assert_eq!(Permission::parse("granted"), Permission::Granted);
        assert_eq!(Permission::parse("denied"), Permission::Denied);
        assert_eq!(Permission::parse("prompt"), Permission::Default);
    }

    const ANDROID_CHROME: &str = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36";
    const IPHONE_SAFARI: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";
    const IPAD_DESKTOP_UA: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15";
    const LINUX_FIREFOX: &str =
        "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
    const WIN_EDGE: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0";

    #[test]
    fn devices_get_readable_names() {
        assert_eq!(device_label(ANDROID_CHROME, None), "Chrome on Android");
        assert_eq!(
            device_label(ANDROID_CHROME, Some("Android")),
            "Chrome on Android"
        );
        assert_eq!(device_label(IPHONE_SAFARI, None), "Safari on iPhone");
        assert_eq!(device_label(IPAD_DESKTOP_UA, None), "Safari on macOS");
        assert_eq!(device_label(LINUX_FIREFOX, None), "Firefox on Linux");
        assert_eq!(device_label(WIN_EDGE, Some("Windows")), "Edge on Windows");
        assert_eq!(device_label(WIN_EDGE, Some("")), "Edge on Windows");
        assert_eq!(device_label("", None), "Browser on this device");
        assert_eq!(
            device_label(
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36",
                Some("Linux")
            ),
            "Headless Chrome on Linux"
        );
    }

    #[test]
    fn ios_is_told_apart_from_a_mac() {
        assert!(is_ios(IPHONE_SAFARI, "iPhone", 5));
        assert!(
            is_ios(IPAD_DESKTOP_UA, "MacIntel", 5),
            "iPadOS desktop mode"
        );
        assert!(!is_ios(IPAD_DESKTOP_UA, "MacIntel", 0), "a Mac");
        assert!(!is_ios(ANDROID_CHROME, "Linux armv8l", 5));
    }

    #[test]
    fn newly_waiting_sessions_are_found_once() {
        let old = vec![
            summary("a", "running", 0),
            summary("b", "requires_action", 1),
        ];
        let new = vec![
            summary("a", "requires_action", 1),
            summary("b", "requires_action", 1),
            summary("c", "idle", 0),
            summary("d", "running", 1),
        ];
        let ids: Vec<&str> = newly_waiting(&old, &new)
            .iter()
            .map(|s| s.id.as_str())
            .collect();
        assert_eq!(
            ids,
            ["a", "d"],
            "b was already waiting, c waits for nothing"
        );
        let more = vec![summary("b", "requires_action", 2)];
        assert_eq!(newly_waiting(&old, &more).len(), 1, "a second prompt in b");
        assert!(newly_waiting(&new, &new).is_empty());
    }

    #[test]
    fn relay_retries_back_off_with_jitter_and_a_ceiling() {
        let d: Vec<u32> = (0..8).map(|a| retry_delay_ms(a, 0.5)).collect();
        assert_eq!(d, [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
        assert_eq!(retry_delay_ms(0, 0.0), 800);
        assert_eq!(retry_delay_ms(0, 0.999_999), 1199);
        assert_eq!(retry_delay_ms(40, 1.0), 36_000);
        assert_eq!(retry_delay_ms(3, -4.0), 6400, "jitter is clamped");
    }

    #[test]
    fn base64url_decodes_a_vapid_key() {
        assert_eq!(base64url_decode("").unwrap(), b"");
        assert_eq!(base64url_decode("Zm9vYmFy").unwrap(), b"foobar");
        assert_eq!(base64url_decode("Zm9vYg").unwrap(), b"foob");
        assert_eq!(base64url_decode("Zm9vYg==").unwrap(), b"foob");
        assert_eq!(base64url_decode("-_8").unwrap(), [0xfb, 0xff]);
        assert_eq!(base64url_decode("a"), None, "6 bits are not a byte");
        assert_eq!(base64url_decode("ab$d"), None);
        // An uncompressed P-256 point: 65 bytes, 87 characters unpadded.
        let key = "BEl62iUYgUivxIkv69yViEuiBIa-Ib9-SkvMeAtA3LFgDzkrxZJjSgSnfckjBJuBkr3qBUYIHBQFLXYp5Nksh8U";
        let bytes = base64url_decode(key).unwrap();
        assert_eq!(bytes.len(), 65);
        assert_eq!(bytes[0], 4);
    }

    #[test]
    fn events_always_include_resolved_in_a_stable_order() {
        let chosen = vec!["agent_exited".to_string(), "needs_you".to_string()];
        assert_eq!(
            events_with_resolved(&chosen),
            ["needs_you", "agent_exited", "resolved"]
        );
        assert_eq!(events_with_resolved(&[]), ["resolved"]);
        let unknown = vec!["bogus".to_string()];
        assert_eq!(events_with_resolved(&unknown), ["resolved"]);
    }

    #[test]
    fn subscribe_errors_are_classified() {
        assert!(matches!(
            classify_subscribe_error("AbortError", "Registration failed - push service error"),
            PushError::Unreachable(m) if m.contains("push service")
        ));
        assert!(matches!(
            classify_subscribe_error("NotAllowedError", ""),
            PushError::NotAllowed(m) if m == "NotAllowedError"
        ));
        assert!(matches!(
            classify_subscribe_error("InvalidAccessError", "bad key"),
            PushError::Other(_)
        ));
        let e = PushError::Unreachable("x".into());
        assert!(e.to_string().contains("push service"));
    }

    #[test]
    fn the_device_record_reads_what_the_service_worker_writes() {
        // The service worker writes `{subscription_id, endpoint, label, events}` after it subscribes again.
        let r: DeviceRecord =
            serde_json::from_str(r#"{"subscription_id":"sub_1","extra":true}"#).unwrap();
        assert_eq!(r.subscription_id, "sub_1");
        assert!(r.events.is_empty());
        let back: DeviceRecord = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
