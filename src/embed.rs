//! The console embedded in another frontend (an iframe, an iOS or Android webview): the URL
//! switches (`embed=1`, `session=<id>`, `theme=…`, `controls=observer`) and the versioned message
//! API (`{"bridge": 1, "type": …}`) in both directions. Everything here is pure and tested natively;
//! [`host`] does the browser side (postMessage, the native bridges, the resize observer).

pub mod host;

use std::collections::{BTreeSet, HashSet};

use serde::Serialize;
use serde_json::Value;

use crate::nav::percent_decode;

/// The message API's version: every message carries `"bridge": 1`.
pub const VERSION: u64 = 1;

/// The colour scheme the host asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Theme {
    /// Follow the system (`prefers-color-scheme`).
    #[default]
    Auto,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

impl Theme {
    /// `light`, `dark` or `auto`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Theme::Auto),
            "light" => Some(Theme::Light),
            "dark" => Some(Theme::Dark),
            _ => None,
        }
    }

    /// The `data-theme` attribute of `<html>` (None: no attribute, the system decides).
    pub fn attribute(self) -> Option<&'static str> {
        match self {
            Theme::Auto => None,
            Theme::Light => Some("light"),
            Theme::Dark => Some("dark"),
        }
    }
}

/// The switches of the address (query and fragment together).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Switches {
    /// `embed=1`: no session list, compact header.
    pub embed: bool,
    /// `session=<id>`: open that session and stay on it.
    pub session: Option<String>,
    /// `theme=light|dark|auto`.
    pub theme: Option<Theme>,
    /// `controls=observer`: a read-only console even for a controller.
    pub observer: bool,
}

/// What the console reads from its address at start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Address {
    /// The switches.
    pub switches: Switches,
    /// The `login=<token>` of the fragment (decoded), to exchange for the cookie.
    pub login: Option<String>,
    /// The fragment without the login secret (`#embed=1`, or empty): what the address bar keeps.
    pub fragment: String,
}

/// Reads `location.search` and `location.hash` (`#login=…&embed=1` or `#embed=1&login=…`).
pub fn parse_address(search: &str, hash: &str) -> Address {
    let mut a = Address::default();
    let mut kept = Vec::new();
    let query = search.trim_start_matches('?').split('&');
    let fragment = hash.trim_start_matches('#').split('&');
    for (in_fragment, kv) in query
        .map(|kv| (false, kv))
        .chain(fragment.map(|kv| (true, kv)))
    {
        if kv.is_empty() {
            continue;
        }
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        let v = percent_decode(v);
        match k {
            "login" if in_fragment => {
                if !v.is_empty() {
                    a.login = Some(v);
                }
                continue;
            }
            "embed" => a.switches.embed = matches!(v.as_str(), "1" | "true" | ""),
            "session" if !v.is_empty() => a.switches.session = Some(v),
            "theme" => a.switches.theme = Theme::parse(&v).or(a.switches.theme),
            "controls" => a.switches.observer = v == "observer",
            _ => {}
        }
        if in_fragment {
            kept.push(kv);
        }
    }
    if !kept.is_empty() {
        a.fragment = format!("#{}", kept.join("&"));
    }
    a
}

/// A message from the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostMessage {
    /// Open (and stay on) a session.
    OpenSession {
        /// The session.
        session_id: String,
    },
    /// Send a prompt to the open session.
    Send {
        /// The prompt.
        text: String,
    },
    /// Switch the colour scheme.
    SetTheme(Theme),
    /// A token to sign in with (kept in memory, exchanged for the login cookie).
    Auth {
        /// The token.
        token: String,
    },
}

/// Why a host message is ignored (logged to `console.debug`, never thrown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ignored {
    /// Not JSON, or not an object with `"bridge"`: not for us.
    NotBridge,
    /// Another version of the API.
    Version(Value),
    /// A type this console does not know (a newer host).
    UnknownType(String),
    /// A known type with a missing or wrong field.
    Malformed(String),
}

impl std::fmt::Display for Ignored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ignored::NotBridge => write!(f, "not a bridge message"),
            Ignored::Version(v) => write!(f, "bridge version {v} (this console speaks {VERSION})"),
            Ignored::UnknownType(t) => write!(f, "unknown message type {t:?}"),
            Ignored::Malformed(why) => write!(f, "malformed message: {why}"),
        }
    }
}

/// Reads a host message (an object, or its JSON text from a native bridge).
pub fn parse_host_message(v: &Value) -> Result<HostMessage, Ignored> {
    if let Value::String(text) = v {
        let inner: Value = serde_json::from_str(text).map_err(|_| Ignored::NotBridge)?;
        if inner.is_string() {
            return Err(Ignored::NotBridge);
        }
        return parse_host_message(&inner);
    }
    let version = v.get("bridge").ok_or(Ignored::NotBridge)?;
    if version.as_u64() != Some(VERSION) {
        return Err(Ignored::Version(version.clone()));
    }
    let kind = v
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| Ignored::Malformed("no \"type\"".into()))?;
    let field = |name: &str| {
        v.get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| Ignored::Malformed(format!("{kind} needs a string {name:?}")))
    };
    Ok(match kind {
        "open_session" => HostMessage::OpenSession {
            session_id: field("session_id")?,
        },
        "send" => HostMessage::Send {
            text: field("text")?,
        },
        "set_theme" => HostMessage::SetTheme(
            Theme::parse(&field("theme")?)
                .ok_or_else(|| Ignored::Malformed("theme is light, dark or auto".into()))?,
        ),
        "auth" => HostMessage::Auth {
            token: field("token")?,
        },
        other => return Err(Ignored::UnknownType(other.to_string())),
    })
}

/// A message to the host.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ConsoleMessage {
    /// The console listens.
    Ready,
    /// The connection or the session's state changed.
    State {
        /// `connecting`, `live`, `reconnecting`, `paused`, `ended`, `offline`.
        connection: String,
        /// `idle`, `running`, `requires_action`, `ended`.
        session_state: String,
        /// The open session.
        session_id: Option<String>,
    },
    /// A prompt waits for an answer.
    NeedsYou {
        /// Session.
        session_id: String,
        /// The control request.
        request_id: String,
        /// The tool (or dialog kind).
        tool_name: String,
        /// One line for a notification.
        summary: String,
    },
    /// The prompt was answered (here or elsewhere) or withdrawn.
    Resolved {
        /// Session.
        session_id: String,
        /// The control request.
        request_id: String,
    },
    /// A turn finished.
    TurnDone {
        /// Session.
        session_id: String,
        /// Cost of the turn (USD).
        cost_usd: f64,
        /// Duration (ms), when the agent reported it.
        duration_ms: Option<f64>,
    },
    /// A link was clicked: the host opens it.
    OpenLink {
        /// The absolute URL.
        url: String,
    },
    /// The document's height changed.
    Height {
        /// CSS pixels.
        px: u32,
    },
}

impl ConsoleMessage {
    /// The wire form, `{"bridge": 1, "type": …, …}`.
    pub fn to_value(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            m.insert("bridge".into(), VERSION.into());
        }
        v
    }
}

/// `scheme://host[:port]` of an absolute URL, lower case (None for anything else).
pub fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return None;
    }
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    (!host.is_empty() && !host.contains('@')).then(|| {
        format!(
            "{}://{}",
            scheme.to_ascii_lowercase(),
            host.to_ascii_lowercase()
        )
    })
}

/// Whether a message from `origin` may be read (the relay's --embed-origin list).
pub fn accepts(origin: &str, allowed: &[String]) -> bool {
    let origin = origin.trim_end_matches('/').to_ascii_lowercase();
    allowed.contains(&origin)
}

/// Where to post: the parent's origin when it is known and listed (nothing when it is known and
/// not listed); when it is not known, each listed origin (the browser delivers only to the one
/// the parent really has).
pub fn target_origins(parent: Option<&str>, allowed: &[String]) -> Vec<String> {
    match parent {
        Some(p) if accepts(p, allowed) => vec![p.trim_end_matches('/').to_ascii_lowercase()],
        Some(_) => Vec::new(),
        None => allowed.to_vec(),
    }
}

/// What the tracker looks at, taken from the store after each change.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// The open session.
    pub session_id: Option<String>,
    /// The connection's `data-state`.
    pub connection: String,
    /// The session's state.
    pub session_state: String,
    /// The history up to the moment the session was opened is applied (no replayed events).
    pub caught_up: bool,
    /// Waiting prompts: (request id, tool name, summary).
    pub prompts: Vec<(String, String, String)>,
    /// The latest turn results (key, cost, duration), oldest first.
    pub results: Vec<(String, f64, Option<f64>)>,
}

/// Turns successive [`Snapshot`]s into the messages the host gets: `state` on each change,
/// `needs_you` / `resolved` as prompts come and go, `turn_done` for each new result. History
/// replayed when a session opens reports nothing but the prompts still waiting.
#[derive(Debug, Default)]
pub struct Tracker {
    state: Option<(Option<String>, String, String)>,
    session: Option<String>,
    baseline: bool,
    open: BTreeSet<String>,
    results: HashSet<String>,
}

impl Tracker {
    /// The messages `snap` calls for.
    pub fn update(&mut self, snap: &Snapshot) -> Vec<ConsoleMessage> {
        let mut out = Vec::new();
        let state = (
            snap.session_id.clone(),
            snap.connection.clone(),
            snap.session_state.clone(),
        );
        if self.state.as_ref() != Some(&state) {
            out.push(ConsoleMessage::State {
                connection: state.1.clone(),
                session_state: state.2.clone(),
                session_id: state.0.clone(),
            });
            self.state = Some(state);
        }
        if self.session != snap.session_id {
            self.session = snap.session_id.clone();
            self.baseline = false;
            self.open.clear();
            self.results.clear();
        }
        let Some(sid) = snap.session_id.clone() else {
            return out;
        };
        if !snap.caught_up {
            return out;
        }
        if !self.baseline {
            self.baseline = true;
            self.results = snap.results.iter().map(|r| r.0.clone()).collect();
        }
        let now: BTreeSet<String> = snap.prompts.iter().map(|p| p.0.clone()).collect();
        for rid in self.open.difference(&now) {
            out.push(ConsoleMessage::Resolved {
                session_id: sid.clone(),
                request_id: rid.clone(),
            });
        }
        for (rid, tool, summary) in &snap.prompts {
            if !self.open.contains(rid) {
                out.push(ConsoleMessage::NeedsYou {
                    session_id: sid.clone(),
                    request_id: rid.clone(),
                    tool_name: tool.clone(),
                    summary: summary.clone(),
                });
            }
        }
        self.open = now;
        for (key, cost, duration) in &snap.results {
            if self.results.insert(key.clone()) {
                out.push(ConsoleMessage::TurnDone {
                    session_id: sid.clone(),
                    cost_usd: *cost,
                    duration_ms: *duration,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn switches_come_from_the_query_and_the_fragment() {
        let a = parse_address(
            "?embed=1&session=abc%20d",
            "#login=brl_x%2By&theme=dark&controls=observer",
        );
        assert!(a.switches.embed && a.switches.observer);
        assert_eq!(a.switches.session.as_deref(), Some("abc d"));
        assert_eq!(a.switches.theme, Some(Theme::Dark));
        assert_eq!(a.login.as_deref(), Some("brl_x+y"));
        // The login secret leaves the address bar; the switches stay.
        assert_eq!(a.fragment, "#theme=dark&controls=observer");
        let b = parse_address("", "#login=tok");
        assert_eq!(b.login.as_deref(), Some("tok"));
        assert_eq!(b.fragment, "");
        assert_eq!(b.switches, Switches::default());
        let c = parse_address("?view=needs-you", "#embed=1&login=t");
        assert!(c.switches.embed);
        assert_eq!(c.login.as_deref(), Some("t"));
        assert_eq!(c.fragment, "#embed=1");
        // `login=` in the query is not a login (secrets only travel in the fragment).
        assert_eq!(parse_address("?login=t", "").login, None);
        let d = parse_address("?embed=0&theme=pink&controls=full", "");
        assert_eq!(d.switches, Switches::default());
        assert_eq!(parse_address("", "").fragment, "");
    }

    #[test]
    fn host_messages_are_validated_and_never_throw() {
        let ok = |v: Value| parse_host_message(&v);
        assert_eq!(
            ok(json!({"bridge": 1, "type": "open_session", "session_id": "s1"})),
            Ok(HostMessage::OpenSession {
                session_id: "s1".into()
            })
        );
        assert_eq!(
            ok(json!({"bridge": 1, "type": "send", "text": "hi", "extra": true})),
            Ok(HostMessage::Send { text: "hi".into() })
        );
        assert_eq!(
            ok(json!({"bridge": 1, "type": "set_theme", "theme": "light"})),
            Ok(HostMessage::SetTheme(Theme::Light))
        );
        assert_eq!(
            ok(json!(r#"{"bridge":1,"type":"auth","token":"t"}"#)),
            Ok(HostMessage::Auth { token: "t".into() })
        );
        assert_eq!(
            ok(json!({"bridge": 2, "type": "send", "text": "hi"})),
            Err(Ignored::Version(json!(2)))
        );
        assert_eq!(
            ok(json!({"bridge": 1, "type": "dance"})),
            Err(Ignored::UnknownType("dance".into()))
        );
        for bad in [
            json!({"bridge": 1}),
            json!({"bridge": 1, "type": "send"}),
            json!({"bridge": 1, "type": "send", "text": 3}),
            json!({"bridge": 1, "type": "set_theme", "theme": "pink"}),
            json!({"bridge": 1, "type": 7}),
        ] {
            assert!(
                matches!(ok(bad.clone()), Err(Ignored::Malformed(_))),
                "{bad}"
            );
        }
        for other in [
            json!(null),
            json!(3),
            json!([1]),
            json!({"type": "send"}),
            json!("not json"),
            json!("\"a string\""),
        ] {
            assert_eq!(ok(other), Err(Ignored::NotBridge));
        }
    }

    #[test]
    fn console_messages_carry_the_version() {
        assert_eq!(
            ConsoleMessage::Ready.to_value(),
            json!({"bridge": 1, "type": "ready"})
        );
        assert_eq!(
            ConsoleMessage::Height { px: 640 }.to_value(),
            json!({"bridge": 1, "type": "height", "px": 640})
        );
        assert_eq!(
            ConsoleMessage::TurnDone {
                session_id: "s".into(),
                cost_usd: 0.25,
                duration_ms: Some(1200.0)
            }
            .to_value(),
            json!({"bridge": 1, "type": "turn_done", "session_id": "s", "cost_usd": 0.25, "duration_ms": 1200.0})
        );
        assert_eq!(
            ConsoleMessage::OpenLink {
                url: "https://x.example/".into()
            }
            .to_value()["type"],
            "open_link"
        );
    }

    #[test]
    fn posts_go_to_listed_origins_only() {
        let allowed = vec![
            "https://app.example".to_string(),
            "http://127.0.0.1:5".into(),
        ];
        assert!(accepts("https://app.example", &allowed));
        assert!(accepts("HTTPS://APP.example/", &allowed));
        assert!(!accepts("https://app.example.evil", &allowed));
        assert!(!accepts("null", &allowed));
        assert!(!accepts("https://app.example", &[]));
        assert_eq!(
            target_origins(Some("https://app.example"), &allowed),
            ["https://app.example"]
        );
        assert!(target_origins(Some("https://evil.example"), &allowed).is_empty());
        assert_eq!(target_origins(None, &allowed), allowed);
        assert!(target_origins(None, &[]).is_empty());
        assert_eq!(
            origin_of("https://App.example:8443/x?y#z").as_deref(),
            Some("https://app.example:8443")
        );
        assert_eq!(origin_of("javascript:alert(1)"), None);
        assert_eq!(origin_of("about:blank"), None);
        assert_eq!(origin_of("https://user@evil.example/"), None);
    }

    fn snap(prompts: &[&str], results: &[&str], caught_up: bool) -> Snapshot {
        Snapshot {
            session_id: Some("s".into()),
            connection: "live".into(),
            session_state: if prompts.is_empty() {
                "idle".into()
            } else {
                "requires_action".into()
            },
            caught_up,
            prompts: prompts
                .iter()
                .map(|p| (p.to_string(), "Bash".into(), format!("Bash: {p}")))
                .collect(),
            results: results
                .iter()
                .map(|r| (r.to_string(), 0.1, Some(5.0)))
                .collect(),
        }
    }

    #[test]
    fn the_tracker_reports_changes_not_history() {
        let mut t = Tracker::default();
        let types = |v: Vec<ConsoleMessage>| {
            v.iter()
                .map(|m| m.to_value()["type"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        // Replaying: only the state.
        assert_eq!(types(t.update(&snap(&["old"], &["r0"], false))), ["state"]);
        // Caught up: old results are history, a prompt still waiting is news.
        assert_eq!(
            types(t.update(&snap(&["p1"], &["r0"], true))),
            ["needs_you"]
        );
        assert!(t.update(&snap(&["p1"], &["r0"], true)).is_empty());
        let out = t.update(&snap(&[], &["r0", "r1"], true));
        assert_eq!(types(out.clone()), ["state", "resolved", "turn_done"]);
        assert_eq!(
            out[1].to_value(),
            json!({"bridge": 1, "type": "resolved", "session_id": "s", "request_id": "p1"})
        );
        // Another session starts over.
        let mut other = snap(&["q"], &["x"], true);
        other.session_id = Some("t".into());
        assert_eq!(types(t.update(&other)), ["state", "needs_you"]);
        let none = Snapshot {
            connection: "connecting".into(),
            session_state: "idle".into(),
            ..Snapshot::default()
        };
        assert_eq!(types(t.update(&none)), ["state"]);
    }
}
