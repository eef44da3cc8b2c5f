//! Scenario files: what the demo agent answers, as data.
//!
//! A scenario is a list of [`Reply`]s. For each user turn the agent picks the first reply whose `match`
//! fits the user's text (a reply without `match` fits anything) and plays its [`Step`]s in order. The
//! schema is documented with examples in `crates/demo-agent/README.md`.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

/// Names of the scenarios compiled into the binary (see `scenarios/*.json`).
pub const BUILTIN_NAMES: &[&str] = &[
    "default", "long", "hostile", "crash", "edit", "ask", "mcp", "many",
];

fn builtin_source(name: &str) -> Option<&'static str> {
    Some(match name {
        "default" => include_str!("../scenarios/default.json"),
        "long" => include_str!("../scenarios/long.json"),
        "hostile" => include_str!("../scenarios/hostile.json"),
        "crash" => include_str!("../scenarios/crash.json"),
        "edit" => include_str!("../scenarios/edit.json"),
        "ask" => include_str!("../scenarios/ask.json"),
        "mcp" => include_str!("../scenarios/mcp.json"),
        "many" => include_str!("../scenarios/many.json"),
        _ => return None,
    })
}

/// Why a scenario could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("cannot read scenario file {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid scenario {origin}: {source}")]
    Parse {
        origin: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("invalid scenario {origin}: {reason}")]
    Invalid { origin: String, reason: String },
    #[error(
        "unknown scenario {0:?}: not a file and not a builtin (builtins: default, long, hostile, crash, edit, ask, many)"
    )]
    Unknown(String),
}

/// A scripted conversation.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name, shown in the agent's stderr banner.
    #[serde(default)]
    pub name: String,
    /// Free text for people reading the file.
    #[serde(default)]
    pub description: String,
    /// Candidate replies, tried in order.
    pub replies: Vec<Reply>,
}

/// One candidate answer to a user message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// Case-insensitive substring(s) of the user's text; any one matching selects this reply.
    /// Absent: matches every message.
    #[serde(default, rename = "match")]
    pub match_: Option<Match>,
    /// What the agent does, in order.
    pub steps: Vec<Step>,
}

/// A `match` value: one substring or a list of alternatives.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Match {
    One(String),
    Any(Vec<String>),
}

impl Match {
    fn matches(&self, text: &str) -> bool {
        let text = text.to_lowercase();
        match self {
            Match::One(s) => text.contains(&s.to_lowercase()),
            Match::Any(v) => v.iter().any(|s| text.contains(&s.to_lowercase())),
        }
    }
}

/// Only play a step when the turn's last tool call ended this way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// The last tool ran (allowed by the user, a rule, or the mode).
    Allowed,
    /// The last tool was denied.
    Denied,
}

/// How the agent decides whether a tool call needs a `can_use_tool` prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionPolicy {
    /// Like the CLI: read-only tools and commands run, everything else asks (subject to the permission
    /// mode and session rules).
    #[default]
    Default,
    /// Always ask (unless a session rule or `bypassPermissions` allows it).
    Ask,
    /// Never ask.
    Allow,
}

/// One step of a reply. Content blocks (`text`, `thinking`, `tool_use`) are grouped into API messages the
/// way the model does it: a message ends after its tool calls, and the next block starts a new message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// A streamed text block (markdown).
    Text {
        text: String,
        /// Repeat the text this many times inside the block (`{i}` = 1-based repetition number).
        #[serde(default)]
        repeat_text: Option<u32>,
        /// Characters per `text_delta` (default 12).
        #[serde(default)]
        chunk_chars: Option<usize>,
        /// Delay before each delta at speed 1 (default 20 ms).
        #[serde(default)]
        delay_ms: Option<u64>,
        /// Play the step only if the last tool was allowed / denied.
        #[serde(default, rename = "if")]
        if_: Option<Condition>,
        /// Repeat the whole step (one block each; `{i}` = 1-based number).
        #[serde(default)]
        repeat: Option<u32>,
    },
    /// A streamed thinking block (`thinking_delta`s, a `signature_delta`, `system/thinking_tokens`).
    Thinking {
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
        #[serde(default)]
        repeat_text: Option<u32>,
        #[serde(default)]
        chunk_chars: Option<usize>,
        #[serde(default)]
        delay_ms: Option<u64>,
        #[serde(default, rename = "if")]
        if_: Option<Condition>,
        #[serde(default)]
        repeat: Option<u32>,
    },
    /// A tool call: input streamed as `input_json_delta` pieces, then permission, then a simulated run.
    ToolUse {
        name: String,
        input: Value,
        #[serde(default)]
        permission: PermissionPolicy,
        /// Simulated output (Bash stdout, or the tool_result text for other tools).
        #[serde(default)]
        output: Option<String>,
        /// Make the simulated run fail (`is_error: true`).
        #[serde(default)]
        is_error: bool,
        /// `can_use_tool.description` (default: the input's `description`, if any).
        #[serde(default)]
        description: Option<String>,
        /// `can_use_tool.blocked_path` (default: derived for `touch`/`mkdir`/Write/Edit).
        #[serde(default)]
        blocked_path: Option<String>,
        /// Simulated execution time at speed 1 (default 150 ms).
        #[serde(default)]
        run_ms: Option<u64>,
        /// Make the tool ask the person through MCP elicitation while it runs, as an MCP server does
        /// with `elicitation/create`: the agent sends an `elicitation` control request with these fields
        /// (`message`, `requested_schema`, `property_order`, `mode`, ...; `mcp_server_name` defaults to
        /// the server in an `mcp__<server>__<tool>` name). The tool's result is then
        /// `Elicitation <action>: <content as JSON>`.
        #[serde(default)]
        elicit: Option<Value>,
        #[serde(default)]
        delay_ms: Option<u64>,
        #[serde(default, rename = "if")]
        if_: Option<Condition>,
        #[serde(default)]
        repeat: Option<u32>,
    },
    /// Wait (at speed 1), still answering control requests.
    Pause {
        ms: u64,
        #[serde(default, rename = "if")]
        if_: Option<Condition>,
    },
    /// Exit the process with `code` after writing `stderr` to stderr (mid-turn crash).
    Crash {
        #[serde(default = "default_crash_code")]
        code: i32,
        #[serde(default)]
        stderr: String,
    },
}

fn default_crash_code() -> i32 {
    1
}

impl Step {
    /// The step's condition, if any.
    pub fn condition(&self) -> Option<Condition> {
        match self {
            Step::Text { if_, .. }
            | Step::Thinking { if_, .. }
            | Step::ToolUse { if_, .. }
            | Step::Pause { if_, .. } => *if_,
            Step::Crash { .. } => None,
        }
    }

    fn repeat(&self) -> u32 {
        match self {
            Step::Text { repeat, .. }
            | Step::Thinking { repeat, .. }
            | Step::ToolUse { repeat, .. } => repeat.unwrap_or(1),
            Step::Pause { .. } | Step::Crash { .. } => 1,
        }
    }
}

/// Placeholder values substituted into a reply's strings.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    pub cwd: String,
    pub prompt: String,
    pub model: String,
}

impl Scenario {
    /// Parses a scenario from JSON text; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<Self, ScenarioError> {
        let scenario: Scenario =
            serde_json::from_str(text).map_err(|source| ScenarioError::Parse {
                origin: origin.to_owned(),
                source,
            })?;
        scenario.validate(origin)?;
        Ok(scenario)
    }

    /// Loads a scenario file.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ScenarioError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_json(&text, &path.display().to_string())
    }

    /// One of the scenarios compiled in ([`BUILTIN_NAMES`]).
    pub fn builtin(name: &str) -> Option<Self> {
        let src = builtin_source(name)?;
        // Builtins are checked by the crate's tests; a broken one is a build bug.
        Some(Self::from_json(src, name).expect("builtin scenario is valid"))
    }

    /// A builtin name, else a file path.
    pub fn resolve(name_or_path: &str) -> Result<Self, ScenarioError> {
        if let Some(s) = Self::builtin(name_or_path) {
            return Ok(s);
        }
        let path = Path::new(name_or_path);
        if path.exists() {
            return Self::load(path);
        }
        Err(ScenarioError::Unknown(name_or_path.to_owned()))
    }

    fn validate(&self, origin: &str) -> Result<(), ScenarioError> {
        let invalid = |reason: String| ScenarioError::Invalid {
            origin: origin.to_owned(),
            reason,
        };
        if self.replies.is_empty() {
            return Err(invalid("`replies` is empty".into()));
        }
        for (r, reply) in self.replies.iter().enumerate() {
            for (s, step) in reply.steps.iter().enumerate() {
                if let Step::ToolUse { input, name, .. } = step {
                    if !input.is_object() {
                        return Err(invalid(format!(
                            "replies[{r}].steps[{s}]: tool_use input must be an object"
                        )));
                    }
                    if name.is_empty() {
                        return Err(invalid(format!(
                            "replies[{r}].steps[{s}]: tool_use name is empty"
                        )));
                    }
                }
                match step {
                    Step::Text {
                        chunk_chars: Some(0),
                        ..
                    }
                    | Step::Thinking {
                        chunk_chars: Some(0),
                        ..
                    } => {
                        return Err(invalid(format!(
                            "replies[{r}].steps[{s}]: chunk_chars must be > 0"
                        )));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// The reply for a user message: the first whose `match` fits, else `None`.
    pub fn select(&self, user_text: &str) -> Option<&Reply> {
        self.replies
            .iter()
            .find(|r| r.match_.as_ref().is_none_or(|m| m.matches(user_text)))
    }
}

impl Reply {
    /// The steps with `repeat`/`repeat_text` expanded and placeholders (`{cwd}`, `{prompt}`, `{model}`,
    /// `{i}`) substituted. `{tool_result}` is left for the agent (it is known only at run time).
    pub fn expand(&self, vars: &Vars) -> Vec<Step> {
        let mut out = Vec::new();
        for step in &self.steps {
            let n = step.repeat().max(1);
            for i in 1..=n {
                let idx = (n > 1).then_some(i);
                out.push(expand_step(step, vars, idx));
            }
        }
        out
    }
}

fn subst(s: &str, vars: &Vars, i: Option<u32>) -> String {
    let mut s = s
        .replace("{cwd}", &vars.cwd)
        .replace("{model}", &vars.model)
        .replace("{prompt}", &vars.prompt);
    if let Some(i) = i {
        s = s.replace("{i}", &i.to_string());
    }
    s
}

fn subst_value(v: &Value, vars: &Vars, i: Option<u32>) -> Value {
    match v {
        Value::String(s) => Value::String(subst(s, vars, i)),
        Value::Array(a) => Value::Array(a.iter().map(|x| subst_value(x, vars, i)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (subst(k, vars, i), subst_value(x, vars, i)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn repeated(text: &str, times: Option<u32>, vars: &Vars, i: Option<u32>) -> String {
    match times {
        Some(n) if n > 1 => (1..=n).map(|k| subst(text, vars, Some(k))).collect(),
        _ => subst(text, vars, i),
    }
}

fn expand_step(step: &Step, vars: &Vars, i: Option<u32>) -> Step {
    let mut out = step.clone();
    let sub = |s: &mut String| *s = subst(s, vars, i);
    match &mut out {
        Step::Text {
            text,
            repeat_text,
            repeat,
            ..
        } => {
            *text = repeated(text, repeat_text.take(), vars, i);
            *repeat = None;
        }
        Step::Thinking {
            thinking,
            repeat_text,
            repeat,
            ..
        } => {
            *thinking = repeated(thinking, repeat_text.take(), vars, i);
            *repeat = None;
        }
        Step::ToolUse {
            input,
            output,
            description,
            blocked_path,
            elicit,
            repeat,
            ..
        } => {
            *input = subst_value(input, vars, i);
            [output, description, blocked_path]
                .into_iter()
                .flatten()
                .for_each(sub);
            if let Some(e) = elicit {
                *e = subst_value(e, vars, i);
            }
            *repeat = None;
        }
        Step::Pause { .. } => {}
        Step::Crash { stderr, .. } => sub(stderr),
    }
    out
}
