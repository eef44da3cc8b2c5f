//! Number and time formatting for the UI (pure).

use bridge_protocol::api;
use serde_json::Value;

/// `1.2s`, `45ms`, `2m 05s`.
pub fn duration_ms(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{ms:.0}ms")
    } else if ms < 60_000.0 {
        format!("{:.1}s", ms / 1000.0)
    } else {
        let secs = (ms / 1000.0).round() as u64;
        format!("{}m {:02}s", secs / 60, secs % 60)
    }
}

/// `950`, `12.3k`, `1.2M`.
pub fn tokens(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        format!("{:.1}M", n as f64 / 1_000_000.0)
    }
}

/// `$0.0123` (4 decimals under a dollar, 2 above). Nothing billed reads `$0.0000`, never
/// `$-0.0000` (an empty sum of costs is -0.0, and rounding noise may be a hair below zero).
pub fn cost(usd: f64) -> String {
    let usd = if usd.abs() < 0.00005 { 0.0 } else { usd };
    if usd.abs() < 1.0 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

/// The CLI's internal diagnostics among a result's `errors` (`[ede_diagnostic] result_type=user …`
/// after an interrupt): not for people. Returns (to show, to keep in the details).
pub fn split_diagnostics(errors: &[String]) -> (Vec<String>, Vec<String>) {
    errors
        .iter()
        .cloned()
        .partition(|e| !e.trim_start().starts_with("[ede_diagnostic]"))
}

/// A string field of a JSON object, or "".
pub fn field<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// An array field of a JSON object, or no items.
pub fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// A boolean field of a JSON object, or false.
pub fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Pretty JSON.
pub fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// A relative time like `5m ago` from an ISO-8601 / unix-seconds value and "now" in ms since epoch.
pub fn ago(value: &Value, now_ms: f64) -> String {
    let then_ms = match value {
        Value::Number(n) => n.as_f64().map(|s| if s > 1e12 { s } else { s * 1000.0 }),
        Value::String(s) => parse_iso_ms(s),
        _ => None,
    };
    then_ms.map_or_else(String::new, |then| api::ago(then, now_ms))
}

// Shared with the relay's pre-rendered session list (bridge-protocol's `api::list_entry`).
pub use bridge_protocol::api::{parse_iso_ms, session_name};

/// What a slash command's replayed frames say, without their tags: `<local-command-stdout>Compacted
/// </local-command-stdout>` is output "Compacted"; `<command-name>/review</command-name>…<command-args>12
/// </command-args>` is the command "/review 12". Returns a label and the text; anything else is unchanged.
pub fn local_command(text: &str) -> (&'static str, String) {
    fn inner<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
        let open = format!("<{tag}>");
        let close = format!("</{tag}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find(&close).map_or(text.len(), |e| start + e);
        Some(&text[start..end])
    }
    if let Some(out) = inner(text, "local-command-stdout") {
        return ("Command output", out.trim().to_string());
    }
    if let Some(err) = inner(text, "local-command-stderr") {
        return ("Command error", err.trim().to_string());
    }
    if let Some(name) = inner(text, "command-name") {
        let args = inner(text, "command-args").unwrap_or("").trim();
        let name = name.trim();
        let shown = if args.is_empty() {
            name.to_string()
        } else {
            format!("{name} {args}")
        };
        return ("Command", shown);
    }
    ("Command", text.to_string())
}

#[cfg(test)]
mod tests {
    use super::local_command;

    #[test]
    fn local_command_frames_lose_their_tags() {
        for (text, label, shown) in [
            (
                "<local-command-stdout>Compacted </local-command-stdout>",
                "Command output",
                "Compacted",
            ),
            (
                "<local-command-stderr>no such command</local-command-stderr>",
                "Command error",
                "no such command",
            ),
            (
                "<command-name>/review</command-name>\n  <command-message>review</command-message>\n  <command-args>12</command-args>",
                "Command",
                "/review 12",
            ),
            (
                "<command-name>/compact</command-name><command-args></command-args>",
                "Command",
                "/compact",
            ),
            // Unclosed: the rest of the text.
            ("<local-command-stdout>partial", "Command output", "partial"),
        ] {
            assert_eq!(local_command(text), (label, shown.to_string()), "{text}");
        }
        assert_eq!(local_command("plain").1, "plain");
    }

    use super::*;

    #[test]
    fn formats() {
        assert_eq!(duration_ms(45.0), "45ms");
        assert_eq!(duration_ms(1234.0), "1.2s");
        assert_eq!(duration_ms(125_000.0), "2m 05s");
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(cost(0.000822), "$0.0008");
        assert_eq!(cost(12.5), "$12.50");
    }

    #[test]
    fn nothing_billed_is_not_negative() {
        // What summing an empty usage map gives.
        let empty: f64 = std::iter::empty::<f64>().sum();
        assert!(empty.is_sign_negative(), "the std sum of nothing is -0.0");
        assert_eq!(cost(empty), "$0.0000");
        assert_eq!(cost(-0.0), "$0.0000");
        assert_eq!(cost(-1e-12), "$0.0000");
        assert_eq!(cost(-0.25), "$-0.2500");
    }

    #[test]
    fn internal_diagnostics_are_split_off() {
        let errors = vec![
            "[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null".to_string(),
            "API Error: 500".to_string(),
        ];
        let (shown, kept) = split_diagnostics(&errors);
        assert_eq!(shown, ["API Error: 500"]);
        assert_eq!(kept.len(), 1);
    }

    #[test]
    fn iso_times() {
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(
            parse_iso_ms("2026-11-30T03:56:23.573Z"),
            Some(1_796_010_983_573.0)
        );
        let now = parse_iso_ms("2026-11-30T04:00:00Z").unwrap();
        assert_eq!(
            ago(&Value::String("2026-11-30T03:55:00Z".into()), now),
            "5m ago"
        );
        assert_eq!(ago(&Value::Null, now), "");
    }
}
