//! How the session list shows a session, as plain text: the console's list entry and the relay's
//! pre-rendered first screen (`index.html` for a signed-in browser) both use this one definition, so
//! the page the relay paints before the console runs says what the console says once it is up.
//! Pure (the time is an argument); escaping is the renderer's business.

use super::{Origin, SessionSummary};
use crate::values::SessionState;

/// A session's entry in the list, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEntry {
    /// Its title, else the last segment of its cwd, else a short id ([`session_name`]).
    pub name: String,
    /// The state as sent (`requires_action`): the entry's `data-state` and badge class.
    pub state: String,
    /// The state as shown (`requires action`).
    pub state_label: String,
    /// `relay` or `cli`.
    pub origin: String,
    /// Claude Code's own session, started in a terminal (marked "Terminal").
    pub from_terminal: bool,
    /// `Fork of <title>` for a forked session.
    pub fork_of: Option<String>,
    /// Its working directory, or empty.
    pub cwd: String,
    /// The node running it (a scale-out gateway's list), shown first as `on <host>`.
    pub host: Option<String>,
    /// Model, prompts waiting, git branch and last activity, joined with ` · `.
    pub meta: String,
}

impl ListEntry {
    /// The entry of `s` when the time is `now_ms` (ms since the epoch).
    pub fn of(s: &SessionSummary, now_ms: f64) -> Self {
        let mut meta = Vec::new();
        if let Some(m) = &s.model {
            meta.push(m.clone());
        }
        if s.pending_permissions > 0 {
            meta.push(format!("{} waiting", s.pending_permissions));
        }
        if let Some(b) = s.git_branch() {
            meta.push(b.to_owned());
        }
        let ago = s
            .last_activity_at
            .as_deref()
            .and_then(parse_iso_ms)
            .map(|then| ago(then, now_ms))
            .unwrap_or_default();
        if !ago.is_empty() {
            meta.push(ago);
        }
        let state = s.state.as_str().to_owned();
        ListEntry {
            name: session_name(s.title.as_deref(), s.cwd.as_deref(), &s.id),
            state_label: state.replace('_', " "),
            state,
            origin: s.origin().as_str().to_owned(),
            from_terminal: s.origin() == Origin::Cli,
            fork_of: s
                .cli
                .as_ref()
                .and_then(|c| c.forked_from.as_ref())
                .map(|f| {
                    format!(
                        "Fork of {}",
                        f.title.as_deref().unwrap_or("another session")
                    )
                }),
            cwd: s.cwd.clone().unwrap_or_default(),
            host: s
                .extra
                .get("host")
                .and_then(|v| v.as_str())
                .filter(|h| !h.is_empty())
                .map(str::to_owned),
            meta: meta.join(" · "),
        }
    }
}

/// Whether a session waits for an answer (the list's "Needs you"): it requires action, or
/// permission prompts wait.
pub fn waits_for_answer(s: &SessionSummary) -> bool {
    s.state == SessionState::RequiresAction || s.pending_permissions > 0
}

/// A session's display name: its title, else the last segment of its cwd, else a short id.
pub fn session_name(title: Option<&str>, cwd: Option<&str>, id: &str) -> String {
    if let Some(t) = title.map(str::trim).filter(|t| !t.is_empty()) {
        return t.to_string();
    }
    if let Some(c) = cwd.map(str::trim).filter(|c| !c.is_empty()) {
        let last = c
            .trim_end_matches(['/', '\\'])
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or_default();
        return if last.is_empty() {
            c.to_string()
        } else {
            last.to_string()
        };
    }
    id.chars().take(8).collect()
}

/// A relative time like `5m ago` from `then_ms` and `now_ms` (ms since the epoch).
pub fn ago(then_ms: f64, now_ms: f64) -> String {
    let secs = ((now_ms - then_ms) / 1000.0).max(0.0) as u64;
    match secs {
        0..=59 => "just now".into(),
        60..=3599 => format!("{}m ago", secs / 60),
        3600..=86_399 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// Parses `YYYY-MM-DDTHH:MM:SS(.fff)?Z` (UTC) to ms since the epoch.
pub fn parse_iso_ms(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    // The fraction of a second, in ms, from its digits as an integer (at most 9 read: nanoseconds)
    // — no float parsing, whose code the console's main module would otherwise carry for this.
    let frac_ms: f64 = if b.get(19) == Some(&b'.') {
        let digits = b[20..].iter().take_while(|c| c.is_ascii_digit()).take(9);
        let (n, k) = digits.fold((0u64, 0i32), |(n, k), c| {
            (n * 10 + u64::from(c - b'0'), k + 1)
        });
        n as f64 * 1000.0 / 10f64.powi(k)
    } else {
        0.0
    };
    // Days from civil (Howard Hinnant).
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3600 + mi * 60 + se) as f64 * 1000.0 + frac_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{CliLink, ForkedFrom};

    #[test]
    fn iso_times_read_to_the_millisecond() {
        let s = parse_iso_ms("2026-11-30T04:00:00Z").unwrap();
        assert_eq!(parse_iso_ms("2026-11-30T04:00:00.123Z"), Some(s + 123.0));
        assert_eq!(parse_iso_ms("2026-11-30T04:00:00.5Z"), Some(s + 500.0));
        assert_eq!(
            parse_iso_ms("2026-11-30T04:00:00.123456789Z"),
            Some(s + 123.456789)
        );
        assert_eq!(parse_iso_ms("2026-11-30T04:00:00.Z"), Some(s));
        assert_eq!(parse_iso_ms("1970-01-01T00:00:01Z"), Some(1000.0));
        assert_eq!(parse_iso_ms("2026-11-30"), None);
    }

    #[test]
    fn an_entry_says_what_the_list_shows() {
        let now = parse_iso_ms("2026-11-30T04:00:00Z").unwrap();
        let mut s = SessionSummary::new("cse_0123456789", SessionState::RequiresAction);
        s.title = Some("  Fix <b>CI</b> ".into());
        s.cwd = Some("/tmp/proj".into());
        s.model = Some("opus".into());
        s.pending_permissions = 2;
        s.last_activity_at = Some("2026-11-30T03:55:00Z".into());
        s.extra.insert("host".into(), "node-a".into());
        let e = ListEntry::of(&s, now);
        assert_eq!(e.name, "Fix <b>CI</b>");
        assert_eq!(
            (e.state.as_str(), e.state_label.as_str()),
            ("requires_action", "requires action")
        );
        assert_eq!(e.meta, "opus · 2 waiting · 5m ago");
        assert_eq!(e.host.as_deref(), Some("node-a"));
        assert_eq!(
            (e.origin.as_str(), e.from_terminal, e.fork_of),
            ("relay", false, None)
        );
        assert!(waits_for_answer(&s));

        let mut cli = SessionSummary::new("3f1e", SessionState::Idle);
        cli.origin = Some(Origin::Cli);
        cli.git_branch = Some(Some("main".into()));
        cli.cli = Some(CliLink {
            forked_from: Some(ForkedFrom::default()),
            ..CliLink::default()
        });
        let e = ListEntry::of(&cli, now);
        assert_eq!(
            (e.name.as_str(), e.meta.as_str(), e.cwd.as_str()),
            ("3f1e", "main", "")
        );
        assert!(e.from_terminal && e.host.is_none());
        assert_eq!(e.fork_of.as_deref(), Some("Fork of another session"));
        assert!(!waits_for_answer(&cli));
    }

    #[test]
    fn times_and_names() {
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(
            parse_iso_ms("2026-11-30T03:56:23.573Z"),
            Some(1_796_010_983_573.0)
        );
        assert_eq!(parse_iso_ms("yesterday"), None);
        assert_eq!(ago(0.0, 59_000.0), "just now");
        assert_eq!(ago(0.0, 3_600_000.0), "1h ago");
        assert_eq!(ago(0.0, 3.0 * 86_400_000.0), "3d ago");
        assert_eq!(
            session_name(Some("Fix CI"), Some("/tmp/x"), "abcdef123"),
            "Fix CI"
        );
        assert_eq!(
            session_name(Some("  "), Some("/tmp/s1/proj/"), "abcdef123"),
            "proj"
        );
        assert_eq!(
            session_name(None, Some("C:\\work\\app"), "abcdef123"),
            "app"
        );
        assert_eq!(session_name(None, Some("/"), "abcdef123"), "/");
        assert_eq!(session_name(None, None, "abcdef123"), "abcdef12");
    }
}
