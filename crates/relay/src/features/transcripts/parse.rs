//! Reading Claude Code's transcript lines (`<config dir>/projects/<cwd>/<session id>.jsonl`): the facts
//! the session list needs (from a file's head and tail only), and the history as the stream-json
//! frames the console already renders. Pure: bytes in, values out.

use serde_json::{Map, Value, json};

/// Longest title kept (characters).
pub const TITLE_CHARS: usize = 200;

/// Line types the CLI writes for its own bookkeeping: never shown. Any other type the history does not
/// know is passed on as it is, and the console shows it raw.
const BOOKKEEPING: &[&str] = &[
    "queue-operation",
    "attachment",
    "atis-latch",
    "api-request-shape",
    "api-request-blob",
    "api-request",
    "last-prompt",
    "cost-state",
    "mode",
    "tools-used",
    "file-history-snapshot",
    "file-history-delta",
    "summary",
    "custom-title",
    "ai-title",
    "tag",
    "pr-link",
    "progress",
];

/// What the list shows of one transcript, gathered from its head and tail.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    /// A `summary` / `custom-title` line (the latest seen wins).
    pub summary: Option<String>,
    /// The first real prompt (head).
    pub first_prompt: Option<String>,
    /// The CLI's own `last-prompt` record (tail): the title when the first prompt lies beyond the head.
    pub last_prompt: Option<String>,
    /// Latest `timestamp` seen.
    pub last_timestamp: Option<String>,
    /// Some user or assistant line was seen.
    pub has_messages: bool,
}

impl Facts {
    /// Summary line if any, else the first real prompt, else the CLI's last prompt.
    pub fn title(&self) -> Option<String> {
        self.summary
            .clone()
            .or_else(|| self.first_prompt.clone())
            .or_else(|| self.last_prompt.clone())
    }
}

/// Complete lines of a window read from the start of a file (`whole`: the window is the whole file;
/// otherwise the last, probably cut, line is dropped).
pub fn head_lines(bytes: &[u8], whole: bool) -> impl Iterator<Item = &[u8]> {
    let end = if whole {
        bytes.len()
    } else {
        bytes.iter().rposition(|b| *b == b'\n').unwrap_or(0)
    };
    bytes[..end].split(|b| *b == b'\n')
}

/// Complete lines of a window read from the end of a file (`whole`: it starts at the file's start;
/// otherwise the first, probably cut, line is dropped).
pub fn tail_lines(bytes: &[u8], whole: bool) -> impl Iterator<Item = &[u8]> {
    let start = if whole {
        0
    } else {
        bytes
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |i| i + 1)
    };
    bytes[start..].split(|b| *b == b'\n')
}

/// Line types whose facts the list reads; other lines (attachments, request blobs of 100 KB and more)
/// are not parsed at all.
const LISTED: &[&str] = &[
    "\"type\":\"user\"",
    "\"type\":\"assistant\"",
    "\"type\":\"summary\"",
    "\"type\":\"custom-title\"",
    "\"type\":\"last-prompt\"",
];

/// Updates `facts` from lines in file order (head: the first prompt counts; tail: the latest values win).
pub fn scan<'a>(lines: impl Iterator<Item = &'a [u8]>, facts: &mut Facts) {
    for line in lines {
        let Ok(text) = std::str::from_utf8(line) else {
            continue;
        };
        // A cheap look before the parse (a false positive only costs that parse).
        if !LISTED.iter().any(|t| text.contains(t)) {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        scan_value(&v, facts);
    }
}

fn scan_value(v: &Value, facts: &mut Facts) {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or_default();
    if let Some(c) = v.get("cwd").and_then(Value::as_str) {
        facts.cwd = Some(c.to_owned());
    }
    if let Some(b) = v.get("gitBranch").and_then(Value::as_str)
        && !b.is_empty()
    {
        facts.git_branch = Some(b.to_owned());
    }
    if let Some(t) = v.get("timestamp").and_then(Value::as_str)
        && facts.last_timestamp.as_deref().is_none_or(|l| t > l)
    {
        facts.last_timestamp = Some(t.to_owned());
    }
    match ty {
        "summary" => {
            if let Some(s) = v.get("summary").and_then(Value::as_str) {
                facts.summary = Some(clip(s));
            }
        }
        "custom-title" => {
            if let Some(s) = v.get("customTitle").and_then(Value::as_str) {
                facts.summary = Some(clip(s));
            }
        }
        "last-prompt" => {
            if let Some(s) = v.get("lastPrompt").and_then(Value::as_str)
                && !is_command_text(s)
            {
                facts.last_prompt = Some(clip(s));
            }
        }
        "user" | "assistant" => {
            facts.has_messages = true;
            if facts.first_prompt.is_none()
                && let Some(p) = prompt_text(v)
            {
                facts.first_prompt = Some(clip(&p));
            }
        }
        _ => {}
    }
}

/// Whitespace collapsed, at most [`TITLE_CHARS`] characters.
fn clip(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > TITLE_CHARS {
        let mut t: String = one.chars().take(TITLE_CHARS - 1).collect();
        t.push('…');
        t
    } else {
        one
    }
}

fn is_command_text(t: &str) -> bool {
    let t = t.trim_start();
    [
        "<command-name>",
        "<command-message>",
        "<command-args>",
        "<local-command-",
        "<bash-input>",
        "<bash-stdout>",
        "<bash-stderr>",
        "<system-reminder>",
        "[Request interrupted",
        "Caveat: The messages below",
    ]
    .iter()
    .any(|p| t.starts_with(p))
}

/// The text a person typed, when `v` is a real prompt line: a main-thread `user` line that is not meta,
/// synthetic, a compaction summary, a tool result or a slash command's bookkeeping.
pub fn prompt_text(v: &Value) -> Option<String> {
    if v.get("type").and_then(Value::as_str) != Some("user") {
        return None;
    }
    for flag in [
        "isMeta",
        "isSidechain",
        "isSynthetic",
        "isCompactSummary",
        "isVisibleInTranscriptOnly",
    ] {
        if v.get(flag).and_then(Value::as_bool) == Some(true) {
            return None;
        }
    }
    let content = v.get("message")?.get("content")?;
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            if blocks
                .iter()
                .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            {
                return None;
            }
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .filter(|t| !is_command_text(t))
                .collect::<Vec<_>>()
                .join("\n")
        }
        _ => return None,
    };
    let text = text.trim();
    (!text.is_empty() && !is_command_text(text)).then(|| text.to_owned())
}

/// A transcript's lines, parsed (lines that are not JSON objects are skipped).
pub fn parse_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect()
}

fn uuid_of(v: &Value) -> Option<&str> {
    v.get("uuid").and_then(Value::as_str)
}

/// Indices of the lines on the conversation's active chain, oldest first: from `leaf` (or the last
/// main-thread line with a uuid) back through `parentUuid` (`logicalParentUuid` across a compaction). Branches
/// abandoned by a rewind in the terminal are left out.
pub fn chain(lines: &[Value], leaf: Option<&str>) -> Vec<usize> {
    let mut by_uuid = std::collections::HashMap::new();
    for (i, v) in lines.iter().enumerate() {
        if let Some(u) = uuid_of(v) {
            by_uuid.insert(u, i);
        }
    }
    let start = match leaf {
        Some(u) => by_uuid.get(u).copied(),
        None => lines.iter().rposition(|v| {
            uuid_of(v).is_some() && v.get("isSidechain").and_then(Value::as_bool) != Some(true)
        }),
    };
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut cur = start;
    while let Some(i) = cur {
        if !seen.insert(i) {
            break; // a cycle: never loop
        }
        out.push(i);
        let v = &lines[i];
        let parent = v
            .get("parentUuid")
            .and_then(Value::as_str)
            .or_else(|| v.get("logicalParentUuid").and_then(Value::as_str));
        cur = parent.and_then(|p| by_uuid.get(p).copied());
    }
    out.reverse();
    out
}

/// Where a fork "from" the prompt `message_uuid` is cut: the uuid of the line before it on its chain
/// (`--resume-session-at` keeps everything up to and including that line), `None` when it is the first
/// line. `Err` when `message_uuid` is not a prompt of this transcript.
pub fn fork_point(lines: &[Value], message_uuid: &str) -> Result<Option<String>, String> {
    let Some(line) = lines.iter().find(|v| uuid_of(v) == Some(message_uuid)) else {
        return Err(format!(
            "no message {message_uuid} in this session's Claude Code transcript: only messages Claude \
             Code recorded can be forked from (the demo agent records none)"
        ));
    };
    if prompt_text(line).is_none() {
        return Err(format!(
            "message {message_uuid} is not a prompt a person typed: fork from one of those"
        ));
    }
    Ok(line
        .get("parentUuid")
        .and_then(Value::as_str)
        .map(str::to_owned))
}

/// The history as stream-json frames (`user` with `isReplay` for prompts, `assistant`, tool results,
/// `system`; unknown line types as they are), up to and including `leaf` (default: the whole active
/// chain), then a `session_state_changed: idle` so nothing looks like it is still running.
pub fn history(lines: &[Value], leaf: Option<&str>) -> Vec<Value> {
    let mut out = Vec::new();
    let mut session_id = None;
    for i in chain(lines, leaf) {
        let v = &lines[i];
        session_id = v.get("sessionId").and_then(Value::as_str).or(session_id);
        if let Some(f) = to_frame(v) {
            out.push(f);
        }
    }
    if leaf.is_none() {
        // Lines without a uuid are not on any chain: unknown ones are still shown, at the end.
        for v in lines.iter().filter(|v| uuid_of(v).is_none()) {
            if let Some(f) = to_frame(v) {
                out.push(f);
            }
        }
    }
    // The turns are over: a `result` closes the last one (without it a console waits for one before
    // sending the next message). Its cost is the CLI's own total (`cost-state`) for the whole history;
    // no `duration_ms`, so no "turn done" notification is sent for it.
    let cost = if leaf.is_none() {
        lines
            .iter()
            .rev()
            .find(|v| v.get("type").and_then(Value::as_str) == Some("cost-state"))
            .and_then(|v| v.get("totalCostUSD"))
            .and_then(Value::as_f64)
    } else {
        None
    };
    // Their uuids are the same on every read (a page of the history, read again, is the same frames):
    // derived from the last line shown.
    let last = out
        .iter()
        .rev()
        .find_map(|f| f.get("uuid").and_then(Value::as_str))
        .unwrap_or_default()
        .to_owned();
    let closing_uuid = |what: &str| {
        use sha2::Digest as _;
        let h = sha2::Sha256::digest(format!(
            "{what}\n{}\n{last}",
            session_id.unwrap_or_default()
        ));
        let mut b = [0u8; 16];
        b.copy_from_slice(&h[..16]);
        uuid::Builder::from_random_bytes(b).into_uuid().to_string()
    };
    out.push(json!({
        "type": "result",
        "subtype": "success",
        "is_error": false,
        "result": "",
        "total_cost_usd": cost.unwrap_or(0.0),
        "session_id": session_id.unwrap_or_default(),
        "uuid": closing_uuid("result"),
        "from_transcript": true,
    }));
    out.push(json!({
        "type": "system",
        "subtype": "session_state_changed",
        "state": "idle",
        "uuid": closing_uuid("idle"),
        "session_id": session_id.unwrap_or_default(),
        "from_transcript": true,
    }));
    out
}

/// One transcript line as the frame the CLI would have written on stdout, or `None` for bookkeeping,
/// meta lines and subagents' own lines.
pub fn to_frame(v: &Value) -> Option<Value> {
    let ty = v.get("type").and_then(Value::as_str)?;
    if BOOKKEEPING.contains(&ty) || v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let session_id = v.get("sessionId").cloned().unwrap_or(Value::Null);
    match ty {
        "user" => {
            if v.get("isMeta").and_then(Value::as_bool) == Some(true) {
                return None;
            }
            let message = v.get("message")?.clone();
            let tool_result = message
                .get("content")
                .and_then(Value::as_array)
                .is_some_and(|b| {
                    b.iter()
                        .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                });
            let mut f = Map::new();
            f.insert("type".into(), "user".into());
            f.insert("message".into(), message);
            f.insert("parent_tool_use_id".into(), Value::Null);
            f.insert("session_id".into(), session_id);
            copy(v, &mut f, "uuid", "uuid");
            copy(v, &mut f, "timestamp", "timestamp");
            if tool_result {
                copy(v, &mut f, "toolUseResult", "tool_use_result");
            } else if v.get("isSynthetic").and_then(Value::as_bool) == Some(true)
                || v.get("isCompactSummary").and_then(Value::as_bool) == Some(true)
            {
                f.insert("isSynthetic".into(), true.into());
            } else {
                f.insert("isReplay".into(), true.into());
            }
            Some(Value::Object(f))
        }
        "assistant" => {
            let mut f = Map::new();
            f.insert("type".into(), "assistant".into());
            f.insert("message".into(), v.get("message")?.clone());
            f.insert("parent_tool_use_id".into(), Value::Null);
            f.insert("session_id".into(), session_id);
            copy(v, &mut f, "uuid", "uuid");
            if v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
                f.insert("error".into(), "unknown".into());
            }
            Some(Value::Object(f))
        }
        _ => {
            let mut f = v.as_object()?.clone();
            f.insert("session_id".into(), session_id);
            f.remove("sessionId");
            Some(Value::Object(f))
        }
    }
}

fn copy(from: &Value, to: &mut Map<String, Value>, key: &str, as_key: &str) {
    if let Some(x) = from.get(key) {
        to.insert(as_key.into(), x.clone());
    }
}
