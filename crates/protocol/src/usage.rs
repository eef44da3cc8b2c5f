//! Answers to the informational control requests a console asks while a session runs:
//! `get_context_usage` (how full the context window is, by category) and `mcp_status` (the MCP
//! servers and their state). Shapes as CLI 2.1.332 sends them (see
//! `tests/fixtures/real-cli-2.1.332/bridge-capture-tasks-interrupt.ndjson` and
//! `bridge-capture-mcp-status.ndjson`); the large parts a console does not use (`gridRows`,
//! `skills`, `messageBreakdown` …) stay in `extra`.

use serde_json::Value;

use crate::extra::open_struct;
use crate::util::open_enum;

open_struct! {
    /// `get_context_usage` answer (`SDKControlGetContextUsageResponse`).
    #[derive(Default)]
    pub struct ContextUsageResponse {
        /// What fills the window: system prompt, tools, messages … plus the free space and the
        /// autocompact buffer (`kind` tells them apart).
        #[serde(default)]
        pub categories: Vec<ContextCategory>,
        /// Tokens in use.
        #[serde(rename = "totalTokens")]
        pub total_tokens: u64,
        /// The context window.
        #[serde(rename = "maxTokens")]
        pub max_tokens: u64,
        /// The model's window before any limit the CLI applies.
        #[serde(rename = "rawMaxTokens")]
        pub raw_max_tokens: Option<u64>,
        /// Percent of the window in use, as the CLI rounds it (kept as written: `2`, not `2.0`).
        pub percentage: Option<serde_json::Number>,
        /// The model the numbers are for.
        pub model: Option<String>,
        /// Where the CLI compacts on its own.
        #[serde(rename = "autoCompactThreshold")]
        pub auto_compact_threshold: Option<u64>,
        /// Whether it does.
        #[serde(rename = "isAutoCompactEnabled")]
        pub is_auto_compact_enabled: Option<bool>,
    }

    /// One category of `get_context_usage`.
    #[derive(Default)]
    pub struct ContextCategory {
        /// Label (`System prompt`, `Messages`, `Free space` …).
        pub name: String,
        /// Tokens.
        pub tokens: u64,
        /// Stable id (`system_prompt`, `messages`, `free_space` …).
        pub id: Option<String>,
        /// `used`, `deferred`, `buffer`, `free`.
        pub kind: Option<String>,
        /// The terminal's colour name for it.
        pub color: Option<String>,
        /// Loaded on demand, not in the window yet.
        #[serde(rename = "isDeferred")]
        pub is_deferred: Option<bool>,
    }
}

impl ContextCategory {
    /// Counts against the window (not free space, the autocompact buffer or deferred tools).
    pub fn is_used(&self) -> bool {
        match self.kind.as_deref() {
            Some(kind) => kind == "used",
            None => {
                self.is_deferred != Some(true)
                    && !matches!(
                        self.id.as_deref(),
                        Some("free_space" | "autocompact_buffer")
                    )
            }
        }
    }
}

open_struct! {
    /// `mcp_status` answer.
    #[derive(Default)]
    pub struct McpStatusResponse {
        #[serde(rename = "mcpServers", default)]
        pub mcp_servers: Vec<McpServerStatus>,
    }
}

open_enum! {
    /// `McpServerStatus.status`.
    pub enum McpServerState {
        Connected = "connected",
        Failed = "failed",
        NeedsAuth = "needs-auth",
        Pending = "pending",
        Disabled = "disabled",
    }
}

open_struct! {
    /// `McpServerStatus`.
    pub struct McpServerStatus {
        pub name: String,
        pub status: McpServerState,
        #[serde(rename = "serverInfo")]
        pub server_info: Option<McpServerVersion>,
        /// Why it failed.
        pub error: Option<String>,
        /// How it is started or reached (`{type, command, args}` / `{type, url}`).
        pub config: Option<Value>,
        pub scope: Option<String>,
        pub source: Option<String>,
        /// `stdio`, `http`, `sse` … (2.1.332 adds it beside `config.type`).
        pub transport: Option<String>,
        pub tools: Option<Vec<McpToolInfo>>,
    }

    /// `McpServerStatus.serverInfo`.
    pub struct McpServerVersion {
        pub name: String,
        pub version: String,
    }

    /// One tool of an MCP server.
    pub struct McpToolInfo {
        pub name: String,
        pub description: Option<String>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn context_usage_keeps_what_it_does_not_model() {
        let raw = json!({
            "categories": [
                {"id": "system_prompt", "name": "System prompt", "tokens": 1963, "color": "promptBorder", "kind": "used"},
                {"id": "system_tools_deferred", "name": "System tools (deferred)", "tokens": 4748, "isDeferred": true, "kind": "deferred"},
                {"id": "free_space", "name": "Free space", "tokens": 950739, "kind": "free"}
            ],
            "totalTokens": 16261, "maxTokens": 1000000, "rawMaxTokens": 1000000, "percentage": 2,
            "model": "claude-opus-5-5", "gridRows": [[{"color": "inactive"}]], "autoCompactThreshold": 967000
        });
        let parsed: ContextUsageResponse = serde_json::from_value(raw.clone()).unwrap();
        assert_eq!(parsed.total_tokens, 16261);
        assert_eq!(parsed.max_tokens, 1_000_000);
        assert_eq!(
            parsed
                .categories
                .iter()
                .filter(|c| c.is_used())
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>(),
            ["System prompt"]
        );
        assert!(parsed.extra.contains_key("gridRows"));
        assert_eq!(serde_json::to_value(&parsed).unwrap(), raw);
    }

    #[test]
    fn mcp_status_states_round_trip() {
        let raw = json!({"mcpServers": [
            {"name": "asker", "status": "connected", "serverInfo": {"name": "asker", "version": "1.0.0"},
             "config": {"type": "stdio", "command": "node", "args": []}, "transport": "stdio",
             "scope": "dynamic", "source": "dynamic", "tools": [{"name": "ask_user", "annotations": {}}]},
            {"name": "broken", "status": "failed", "error": "ENOENT"},
            {"name": "gh", "status": "needs-auth"},
            {"name": "later", "status": "warming-up"}
        ]});
        let parsed: McpStatusResponse = serde_json::from_value(raw.clone()).unwrap();
        let states: Vec<_> = parsed
            .mcp_servers
            .iter()
            .map(|s| s.status.clone())
            .collect();
        assert_eq!(
            states,
            [
                McpServerState::Connected,
                McpServerState::Failed,
                McpServerState::NeedsAuth,
                McpServerState::Other("warming-up".into())
            ]
        );
        assert_eq!(serde_json::to_value(&parsed).unwrap(), raw);
    }

    #[test]
    fn a_body_without_the_window_is_an_error() {
        assert!(serde_json::from_value::<ContextUsageResponse>(json!({"categories": []})).is_err());
    }
}
