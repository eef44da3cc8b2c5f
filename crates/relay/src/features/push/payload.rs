//! What a notification says: the events sessions report ([`PushEvent`]) and the JSON the service worker
//! receives (at most [`MAX_PAYLOAD`] bytes before encryption):
//!
//! ```json
//! {"v":1,"type":"needs_you","session_id":"cse_…","request_id":"…","tool_name":"Bash",
//!  "title":"Claude needs you — project","body":"Bash: rm -rf build","url":"/s/cse_…","answerable":true}
//! ```
//!
//! `request_id` is set for `needs_you` and `resolved`, `tool_name` for tool prompts. `answerable` is
//! present (and `true`) only for a `can_use_tool` prompt of an ordinary tool whose whole input is shown
//! uncut in the body: only then may the service worker offer Allow / Deny. Pure functions, no I/O.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bridge_protocol::PersonPrompt;
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use super::store::EventKind;
pub use crate::core::notice::{Event, Prompt, PushEvent, Resolution};
use crate::core::util::truncate_utf8;

/// Largest payload (UTF-8 JSON, before encryption).
pub const MAX_PAYLOAD: usize = 3000;
/// A body describing a prompt is cut at this many characters (then it is not answerable).
pub const BODY_CHARS: usize = 300;
const LABEL_CHARS: usize = 60;
const TOOL_NAME_BYTES: usize = 128;
/// Longer request ids are left out of the payload (the notification is then only informative).
const REQUEST_ID_BYTES: usize = 256;
/// Seconds a prompt notification is kept by the push service for an offline device.
pub const PROMPT_TTL: u32 = 3600;
/// Seconds a turn or exit notification is kept.
pub const STATUS_TTL: u32 = 24 * 3600;

/// Tools whose prompt is answered with more than allow/deny; they need the console.
const CONSOLE_ONLY_TOOLS: &[&str] = &["AskUserQuestion", "ExitPlanMode"];

impl Event {
    pub fn kind(&self) -> EventKind {
        match self {
            Event::NeedsYou(_) => EventKind::NeedsYou,
            Event::Resolved { .. } => EventKind::Resolved,
            Event::TurnDone { .. } => EventKind::TurnDone,
            Event::AgentExited { .. } => EventKind::AgentExited,
        }
    }
}

/// `Urgency` header values (RFC 8030 §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Urgency {
    Normal,
    High,
}

impl Urgency {
    pub fn as_str(self) -> &'static str {
        match self {
            Urgency::Normal => "normal",
            Urgency::High => "high",
        }
    }
}

/// A rendered notification, ready to encrypt and send.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// UTF-8 JSON, at most [`MAX_PAYLOAD`] bytes.
    pub plaintext: Vec<u8>,
    pub urgency: Urgency,
    pub ttl: u32,
    pub topic: Option<String>,
}

/// The `Topic` of a session's messages: 32 characters of the URL-safe base64 alphabet (RFC 8030 §5.4).
pub fn topic(session_id: &str) -> String {
    let digest = Sha256::digest(session_id.as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[..24])
}

/// Whether a `can_use_tool` prompt may be answered outside the console (not a question, not a plan).
pub fn is_ordinary_tool(subtype: &str, tool_name: Option<&str>) -> bool {
    PersonPrompt::of_subtype(subtype) == Some(PersonPrompt::CanUseTool)
        && tool_name.is_none_or(|t| !CONSOLE_ONLY_TOOLS.contains(&t))
}

/// `s` cut at `max` characters (the last one becoming `…`); `true` when something was cut.
fn cut_chars(s: &str, max: usize) -> (String, bool) {
    match s.char_indices().nth(max) {
        None => (s.to_owned(), false),
        Some(_) => {
            let keep: String = s.chars().take(max.saturating_sub(1)).collect();
            (format!("{keep}…"), true)
        }
    }
}

/// The longest tool line a notification may offer Allow / Deny for.
pub const ANSWERABLE_CHARS: usize = 120;

/// Whether `s` shows whole and as it is on one notification line, so that what the person reads is
/// what runs: at most [`ANSWERABLE_CHARS`] characters, printable ASCII or letters and digits of other
/// scripts, words parted by single spaces, no space at either end. Refused: line and paragraph
/// breaks (`\n`, U+2028/9), tabs and every other control, runs of spaces, spaces that are not U+0020
/// (U+00A0, U+3000, ...), characters that render blank (U+2800 Braille blank, the Hangul fillers
/// U+115F/U+1160/U+3164/U+FFA0), invisible format characters and bidirectional overrides, and
/// combining marks (which can pile up over the text). A prompt failing this opens the console.
fn shows_on_one_line(s: &str) -> bool {
    if s.chars().count() > ANSWERABLE_CHARS
        || s.starts_with(' ')
        || s.ends_with(' ')
        || s.contains("  ")
    {
        return false;
    }
    s.chars().all(|c| {
        c == ' '
            || c.is_ascii_graphic()
            || (!c.is_ascii()
                && c.is_alphanumeric()
                && !matches!(
                    c,
                    '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{2800}'
                ))
    })
}

/// The one line describing a tool call: the tool and its command or file, then any further input
/// (compact JSON; the model's `description` of the call is left out).
fn tool_line(tool: &str, input: Option<&Value>) -> String {
    let Some(input) = input else {
        return tool.to_owned();
    };
    let head = ["command", "file_path", "notebook_path"]
        .into_iter()
        .find(|k| input.get(*k).is_some_and(Value::is_string));
    match (head, input.as_object()) {
        (Some(k), Some(obj)) => {
            let mut s = format!("{tool}: {}", input[k].as_str().unwrap_or_default());
            let rest: Map<String, Value> = obj
                .iter()
                .filter(|(key, _)| *key != k && *key != "description")
                .map(|(key, v)| (key.clone(), v.clone()))
                .collect();
            if !rest.is_empty() {
                s.push(' ');
                s.push_str(&Value::Object(rest).to_string());
            }
            s
        }
        _ => format!("{tool}: {input}"),
    }
}

/// A prompt's body and whether it may be answered from the notification.
pub fn prompt_body(p: &Prompt) -> (String, bool) {
    let tool = p.tool_name.as_deref();
    match PersonPrompt::of_subtype(&p.subtype) {
        Some(PersonPrompt::CanUseTool) if tool == Some("AskUserQuestion") => {
            let questions = p
                .input
                .as_ref()
                .and_then(|i| i.get("questions"))
                .and_then(Value::as_array);
            let first = questions
                .and_then(|q| q.first())
                .and_then(|q| q.get("question"))
                .and_then(Value::as_str)
                .unwrap_or("Claude has a question for you");
            let more = questions.map_or(0, |q| q.len().saturating_sub(1));
            let text = match more {
                0 => first.to_owned(),
                1 => format!("{first} (+1 more question)"),
                n => format!("{first} (+{n} more questions)"),
            };
            (cut_chars(&text, BODY_CHARS).0, false)
        }
        Some(PersonPrompt::CanUseTool) if tool == Some("ExitPlanMode") => {
            ("Plan ready for approval".into(), false)
        }
        Some(PersonPrompt::CanUseTool) => {
            let (body, cut) = cut_chars(
                &tool_line(tool.unwrap_or("tool"), p.input.as_ref()),
                BODY_CHARS,
            );
            let answerable = !cut && shows_on_one_line(&body);
            (body, answerable)
        }
        Some(PersonPrompt::Elicitation) => {
            let message = p
                .input
                .as_ref()
                .and_then(|i| i.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("An MCP server asks for input");
            let text = match tool {
                Some(server) => format!("{server}: {message}"),
                None => message.to_owned(),
            };
            (cut_chars(&text, BODY_CHARS).0, false)
        }
        Some(PersonPrompt::RequestUserDialog) | None => {
            let text = match tool {
                Some(kind) => format!("Claude is waiting for your answer ({kind})"),
                None => "Claude is waiting for your answer".to_owned(),
            };
            (cut_chars(&text, BODY_CHARS).0, false)
        }
    }
}

/// What a prompt is called in a `resolved` body.
fn prompt_name(p: &Prompt) -> String {
    match (PersonPrompt::of_subtype(&p.subtype), p.tool_name.as_deref()) {
        (Some(PersonPrompt::CanUseTool), Some("AskUserQuestion")) => "Question".into(),
        (Some(PersonPrompt::CanUseTool), Some("ExitPlanMode")) => "Plan approval".into(),
        (Some(PersonPrompt::CanUseTool), Some(t)) => format!("{t} permission"),
        (Some(PersonPrompt::CanUseTool), None) => "Permission".into(),
        (Some(PersonPrompt::Elicitation), _) => "Input request".into(),
        (Some(PersonPrompt::RequestUserDialog) | None, _) => "Request".into(),
    }
}

/// `2 min 05 s`, `45 s`, `1 h 02 min`.
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    }
}

fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// The JSON object in its final field order; `fit` shrinks it under [`MAX_PAYLOAD`].
struct Fields {
    kind: &'static str,
    session_id: Option<String>,
    request_id: Option<String>,
    tool_name: Option<String>,
    title: String,
    body: String,
    url: String,
    answerable: bool,
}

impl Fields {
    fn to_json(&self) -> Vec<u8> {
        let mut m = Map::new();
        m.insert("v".into(), 1.into());
        m.insert("type".into(), self.kind.into());
        if let Some(s) = &self.session_id {
            m.insert("session_id".into(), s.clone().into());
        }
        if let Some(r) = &self.request_id {
            m.insert("request_id".into(), r.clone().into());
        }
        if let Some(t) = &self.tool_name {
            m.insert("tool_name".into(), t.clone().into());
        }
        m.insert("title".into(), self.title.clone().into());
        m.insert("body".into(), self.body.clone().into());
        m.insert("url".into(), self.url.clone().into());
        if self.answerable {
            m.insert("answerable".into(), true.into());
        }
        Value::Object(m).to_string().into_bytes()
    }

    /// Serializes, cutting the body, then the title, then dropping the tool name and request id until
    /// the JSON fits. A cut body is no longer answerable.
    fn fit(mut self) -> Vec<u8> {
        if self
            .request_id
            .as_ref()
            .is_some_and(|r| r.len() > REQUEST_ID_BYTES)
        {
            self.request_id = None;
            self.answerable = false;
        }
        if let Some(t) = &mut self.tool_name {
            *t = truncate_utf8(t, TOOL_NAME_BYTES).to_owned();
        }
        loop {
            let json = self.to_json();
            let excess = json.len().saturating_sub(MAX_PAYLOAD);
            if excess == 0 {
                return json;
            }
            let shrink = |s: &mut String| {
                // `…` is 3 bytes; escaping means a raw byte can cost up to 6 in JSON, so this only
                // guarantees progress, and the loop runs again.
                let keep = s.len().saturating_sub(excess + 3);
                let cut = truncate_utf8(s, keep).to_owned();
                *s = if cut.is_empty() {
                    String::new()
                } else {
                    format!("{cut}…")
                };
            };
            if !self.body.is_empty() {
                self.answerable = false;
                shrink(&mut self.body);
            } else if !self.title.is_empty() {
                shrink(&mut self.title);
            } else if self.tool_name.is_some() {
                self.tool_name = None;
            } else if self.request_id.is_some() {
                self.request_id = None;
            } else {
                return json;
            }
        }
    }
}

/// Renders an event for the service worker.
pub fn render(ev: &PushEvent) -> Message {
    let label = cut_chars(&ev.session_label, LABEL_CHARS).0;
    let mut f = Fields {
        kind: ev.event.kind().as_str(),
        session_id: Some(ev.session_id.clone()),
        request_id: None,
        tool_name: None,
        title: String::new(),
        body: String::new(),
        url: format!("/s/{}", ev.session_id),
        answerable: false,
    };
    let mut topic = Some(topic(&ev.session_id));
    let (urgency, ttl) = match &ev.event {
        Event::NeedsYou(p) => {
            let (body, answerable) = prompt_body(p);
            f.request_id = Some(p.request_id.clone());
            if PersonPrompt::of_subtype(&p.subtype) == Some(PersonPrompt::CanUseTool) {
                f.tool_name.clone_from(&p.tool_name);
            }
            f.title = format!("Claude needs you — {label}");
            f.body = body;
            f.answerable = answerable && is_ordinary_tool(&p.subtype, p.tool_name.as_deref());
            (Urgency::High, PROMPT_TTL)
        }
        Event::Resolved {
            prompt,
            resolution,
            others_pending,
        } => {
            f.request_id = Some(prompt.request_id.clone());
            if PersonPrompt::of_subtype(&prompt.subtype) == Some(PersonPrompt::CanUseTool) {
                f.tool_name.clone_from(&prompt.tool_name);
            }
            let how = match resolution {
                Resolution::Answered { decision, device } => {
                    let verb = match decision.as_str() {
                        "allow" => "allowed",
                        "deny" => "denied",
                        "accept" => "accepted",
                        "decline" => "declined",
                        "cancel" => "cancelled",
                        _ => "answered",
                    };
                    match device {
                        Some(d) => format!("{verb} from {d}"),
                        None => verb.to_owned(),
                    }
                }
                Resolution::Withdrawn => "withdrawn by the agent".into(),
                Resolution::TimedOut => "denied by the relay: nobody answered in time".into(),
                Resolution::AgentExited => "dropped: the agent exited".into(),
            };
            f.title = format!("Resolved — {label}");
            f.body = format!("{}: {how}", prompt_name(prompt));
            if *others_pending {
                topic = None;
            }
            (Urgency::Normal, PROMPT_TTL)
        }
        Event::TurnDone {
            duration,
            cost_usd,
            error,
        } => {
            let cost = cost_usd.map_or_else(String::new, |c| format!(" · ${c:.4}"));
            let took = format_duration(*duration);
            match error {
                None => {
                    f.title = format!("Turn finished — {label}");
                    f.body = format!("Finished in {took}{cost}");
                }
                Some(e) => {
                    f.title = format!("Turn failed — {label}");
                    f.body = format!("Ended with an error ({e}) after {took}{cost}");
                }
            }
            (Urgency::Normal, STATUS_TTL)
        }
        Event::AgentExited {
            exit_code,
            signal,
            stderr_tail,
        } => {
            let why = match (exit_code, signal) {
                (_, Some(s)) => match signal_name(*s) {
                    Some(n) => format!("Killed by signal {s} ({n})"),
                    None => format!("Killed by signal {s}"),
                },
                (Some(c), None) => format!("Exited with code {c}"),
                (None, None) => "Exited".to_owned(),
            };
            let last = stderr_tail
                .lines()
                .rev()
                .map(str::trim)
                .find(|l| !l.is_empty());
            let text = match last {
                Some(l) => format!("{why}: {l}"),
                None => why,
            };
            f.title = format!("Agent exited — {label}");
            f.body = cut_chars(&text, BODY_CHARS).0;
            (Urgency::Normal, STATUS_TTL)
        }
    };
    Message {
        plaintext: f.fit(),
        urgency,
        ttl,
        topic,
    }
}

/// `POST /v1/push/subscriptions/{id}/test`.
pub fn render_test(host: &str) -> Message {
    let f = Fields {
        kind: "test",
        session_id: None,
        request_id: None,
        tool_name: None,
        title: "Bridge Console".into(),
        body: format!("Test notification from {host}"),
        url: "/".into(),
        answerable: false,
    };
    Message {
        plaintext: f.fit(),
        urgency: Urgency::Normal,
        ttl: 300,
        topic: None,
    }
}

#[cfg(test)]
mod tests;
