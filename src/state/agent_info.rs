//! What the session header shows about the running CLI beyond the transcript: the context window's
//! use (`get_context_usage`) and the MCP servers' state (`mcp_status`).
//!
//! The console asks with control requests; the relay keeps both the requests and the CLI's answers
//! in the session log, so an observer (who may not ask) and a reloaded page see the last known
//! values too. Answers are matched to requests by `request_id`: ours (registered before sending,
//! see [`AgentInfo::asked`]) and other clients' (seen in the log as client `control_request`s).

use bridge_protocol::{ContextUsageResponse, McpServerState, McpStatusResponse};
use serde_json::Value;

/// Which informational request an id belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InfoKind {
    /// `get_context_usage`.
    ContextUsage,
    /// `mcp_status`.
    McpStatus,
}

impl InfoKind {
    /// What a control request asks about, if it is one of these.
    pub fn of_request(request: &bridge_protocol::ControlRequestBody) -> Option<Self> {
        use bridge_protocol::ControlRequestBody as B;
        match request {
            B::GetContextUsage(_) => Some(Self::ContextUsage),
            B::McpStatus(_) => Some(Self::McpStatus),
            _ => None,
        }
    }
}

/// One category of the context window.
#[derive(Clone, Debug, PartialEq)]
pub struct ContextPart {
    /// Label ("Messages", "System tools" …).
    pub name: String,
    /// Tokens.
    pub tokens: u64,
    /// Counts against the window (free space, the autocompact buffer and deferred tools do not).
    pub used: bool,
}

/// How full the context window is.
#[derive(Clone, Debug, PartialEq)]
pub struct ContextUsage {
    /// Tokens in use.
    pub used: u64,
    /// The window.
    pub window: u64,
    /// Model the numbers are for.
    pub model: Option<String>,
    /// Where the CLI compacts on its own, if it does.
    pub auto_compact_at: Option<u64>,
    /// The categories, as the CLI lists them.
    pub parts: Vec<ContextPart>,
}

/// How close to full the window is (the meter's colour).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    /// Under 70 %.
    Ok,
    /// 70 % to 90 %.
    High,
    /// 90 % or more (compaction is near).
    Full,
}

impl Fill {
    /// CSS / `data-level` name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::High => "high",
            Self::Full => "full",
        }
    }
}

impl ContextUsage {
    /// Percent of the window in use (0 when the window is unknown).
    pub fn percent(&self) -> f64 {
        if self.window == 0 {
            0.0
        } else {
            (self.used as f64 * 100.0 / self.window as f64).clamp(0.0, 100.0)
        }
    }

    /// The meter's level.
    pub fn fill(&self) -> Fill {
        match self.percent() {
            p if p >= 90.0 => Fill::Full,
            p if p >= 70.0 => Fill::High,
            _ => Fill::Ok,
        }
    }
}

/// One MCP server.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServer {
    /// Its name in the configuration.
    pub name: String,
    /// connected / failed / needs-auth / pending / disabled (or a newer value).
    pub state: McpServerState,
    /// Why it failed.
    pub error: Option<String>,
    /// `serverInfo.version`.
    pub version: Option<String>,
    /// `stdio`, `http` …
    pub transport: Option<String>,
    /// How many tools it offers.
    pub tools: usize,
}

/// What the header's MCP chip says about a list of servers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpSummary {
    /// `MCP connected/total`, plus how many failed (`MCP 1/3 · 1 failed`).
    pub label: String,
    /// The colour, by the worst state: `danger` only when a server failed, `warn` when one needs
    /// authentication, `ok` when all are connected, `muted` otherwise (pending, disabled: normal
    /// information, not an error).
    pub severity: &'static str,
    /// The names of the servers that failed (named on the chip's label for screen readers and in
    /// its popover first).
    pub failed: Vec<String>,
}

impl McpSummary {
    /// Summarises `servers`.
    pub fn of(servers: &[McpServer]) -> McpSummary {
        let count = |state: &McpServerState| servers.iter().filter(|s| s.state == *state).count();
        let connected = count(&McpServerState::Connected);
        let failed: Vec<String> = servers
            .iter()
            .filter(|s| s.state == McpServerState::Failed)
            .map(|s| s.name.clone())
            .collect();
        let severity = if !failed.is_empty() {
            "danger"
        } else if count(&McpServerState::NeedsAuth) > 0 {
            "warn"
        } else if connected == servers.len() {
            "ok"
        } else {
            "muted"
        };
        let mut label = format!("MCP {connected}/{}", servers.len());
        if !failed.is_empty() {
            label.push_str(&format!(" · {} failed", failed.len()));
        }
        McpSummary {
            label,
            severity,
            failed,
        }
    }

    /// The servers in the order the popover lists them: failed first, then needing
    /// authentication, then the rest as reported.
    pub fn ordered(servers: &[McpServer]) -> Vec<McpServer> {
        let rank = |s: &McpServer| match s.state {
            McpServerState::Failed => 0,
            McpServerState::NeedsAuth => 1,
            _ => 2,
        };
        let mut list = servers.to_vec();
        list.sort_by_key(rank);
        list
    }
}

/// Context usage and MCP state of a session, with what is needed to keep them current.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentInfo {
    /// Requests asked and not answered yet (bounded).
    asked: Vec<(String, InfoKind)>,
    /// Requests already answered (bounded): a request's echo that is applied after its answer
    /// (the answer can come back on the stream before the POST that sent the request returns)
    /// must not make it wait again.
    answered: Vec<String>,
    context: Option<ContextUsage>,
    mcp: Option<Vec<McpServer>>,
    /// The CLI refused or failed the last request of that kind.
    error: Option<String>,
}

const MAX_ASKED: usize = 32;

impl AgentInfo {
    /// The last known context usage.
    pub fn context(&self) -> Option<&ContextUsage> {
        self.context.as_ref()
    }

    /// The last known MCP servers (None: never asked; empty: none configured).
    pub fn mcp(&self) -> Option<&[McpServer]> {
        self.mcp.as_deref()
    }

    /// Why the last request failed, if it did.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// True while a request of this kind waits for its answer.
    pub fn waiting(&self, kind: InfoKind) -> bool {
        self.asked.iter().any(|(_, k)| *k == kind)
    }

    /// No value of this kind is known (and none is being asked). Once known, a value is kept
    /// current without asking: each main-thread API call's usage moves the context meter
    /// ([`Self::observe_usage`]); the CLI's full breakdown is asked for again only on demand, or
    /// when nothing is known yet. (Each `get_context_usage` costs the CLI some 15–30 token-counting
    /// API calls and a 30 KB answer in the log: asking after every turn would be wasteful.)
    pub fn stale(&self, kind: InfoKind) -> bool {
        if self.waiting(kind) {
            return false;
        }
        match kind {
            InfoKind::ContextUsage => self.context.is_none(),
            // A server still starting is asked about again (cheap: no API call).
            InfoKind::McpStatus => self
                .mcp
                .as_ref()
                .is_none_or(|servers| servers.iter().any(|s| s.state == McpServerState::Pending)),
        }
    }

    /// A main-thread API call reported its usage: the prompt it read plus what it wrote is what
    /// the context holds now. Moves the meter between full reports (the categories keep the last
    /// report's figures).
    pub fn observe_usage(&mut self, tokens: u64) {
        if let Some(c) = self.context.as_mut()
            && tokens > 0
        {
            c.used = tokens;
        }
    }

    /// A request was sent (by this console, or seen in the log from another client).
    pub fn asked(&mut self, request_id: &str, kind: InfoKind) {
        if self.asked.iter().any(|(id, _)| id == request_id)
            || self.answered.iter().any(|id| id == request_id)
        {
            return;
        }
        if self.asked.len() >= MAX_ASKED {
            self.asked.remove(0);
        }
        self.asked.push((request_id.to_string(), kind));
    }

    /// Sending it failed: it will not be answered.
    pub fn ask_failed(&mut self, request_id: &str, error: &str) {
        self.asked.retain(|(id, _)| id != request_id);
        self.error = Some(error.to_string());
    }

    /// A control response. Returns true when it answered one of these requests (then it is
    /// consumed here); false for anything else.
    pub fn on_response(
        &mut self,
        request_id: &str,
        ok: bool,
        body: &Value,
        error: Option<&str>,
    ) -> bool {
        let Some(i) = self.asked.iter().position(|(id, _)| id == request_id) else {
            return false;
        };
        let (id, kind) = self.asked.remove(i);
        if self.answered.len() >= MAX_ASKED {
            self.answered.remove(0);
        }
        self.answered.push(id);
        if !ok {
            let what = match kind {
                InfoKind::ContextUsage => "context usage",
                InfoKind::McpStatus => "MCP status",
            };
            self.error = Some(format!(
                "Claude Code did not report its {what}: {}",
                error.unwrap_or("error")
            ));
            return true;
        }
        match kind {
            InfoKind::ContextUsage => {
                match bridge_protocol::from_value_text::<ContextUsageResponse>(body) {
                    Ok(r) => {
                        self.context = Some(ContextUsage {
                            used: r.total_tokens,
                            window: r.max_tokens,
                            model: r.model,
                            auto_compact_at: r
                                .auto_compact_threshold
                                .filter(|_| r.is_auto_compact_enabled != Some(false)),
                            parts: r
                                .categories
                                .iter()
                                .map(|c| ContextPart {
                                    name: c.name.clone(),
                                    tokens: c.tokens,
                                    used: c.is_used(),
                                })
                                .collect(),
                        });
                        self.error = None;
                    }
                    Err(e) => self.error = Some(format!("Unreadable context usage: {e}")),
                }
            }
            InfoKind::McpStatus => {
                match bridge_protocol::from_value_text::<McpStatusResponse>(body) {
                    Ok(r) => {
                        self.mcp = Some(
                            r.mcp_servers
                                .into_iter()
                                .map(|s| McpServer {
                                    name: s.name,
                                    state: s.status,
                                    error: s.error,
                                    version: s.server_info.map(|i| i.version),
                                    transport: s.transport,
                                    tools: s.tools.map_or(0, |t| t.len()),
                                })
                                .collect(),
                        );
                        self.error = None;
                    }
                    Err(e) => self.error = Some(format!("Unreadable MCP status: {e}")),
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_echo_applied_after_its_answer_does_not_wait_again() {
        let mut info = AgentInfo::default();
        info.asked("c1", InfoKind::ContextUsage);
        let usage = json!({"totalTokens": 100, "maxTokens": 1000, "rawMaxTokens": 1000, "percentage": 10.0, "categories": [], "model": "m"});
        info.on_response("c1", true, &usage, None);
        // The request's echo (the same id) arrives after the answer.
        info.asked("c1", InfoKind::ContextUsage);
        assert!(
            !info.waiting(InfoKind::ContextUsage),
            "answered: not waiting again"
        );
        info.asked("c2", InfoKind::ContextUsage);
        assert!(info.waiting(InfoKind::ContextUsage), "a new request waits");
    }

    #[test]
    fn answers_are_matched_by_request_id() {
        let mut info = AgentInfo::default();
        assert!(info.stale(InfoKind::ContextUsage));
        info.asked("c1", InfoKind::ContextUsage);
        assert!(!info.stale(InfoKind::ContextUsage), "being asked");
        // Someone else's answer is not ours.
        assert!(!info.on_response("other", true, &json!({"mode": "plan"}), None));
        assert!(info.on_response(
            "c1",
            true,
            &json!({"categories": [
                {"name": "Messages", "tokens": 150000, "kind": "used"},
                {"name": "Free space", "tokens": 50000, "kind": "free"}
            ], "totalTokens": 150000, "maxTokens": 200000}),
            None
        ));
        let c = info.context().unwrap();
        assert_eq!(c.percent(), 75.0);
        assert_eq!(c.fill(), Fill::High);
        assert!(!info.stale(InfoKind::ContextUsage));
        // Later API calls move the meter without asking again; the categories stay.
        info.observe_usage(190_000);
        let c = info.context().unwrap();
        assert_eq!(c.percent(), 95.0);
        assert_eq!(c.fill(), Fill::Full);
        assert_eq!(c.parts.len(), 2);
        assert!(
            !info.stale(InfoKind::ContextUsage),
            "known values are not asked again"
        );
        info.observe_usage(0);
        assert_eq!(
            info.context().unwrap().used,
            190_000,
            "a call without usage changes nothing"
        );
    }

    #[test]
    fn usage_before_any_report_waits_for_the_window() {
        let mut info = AgentInfo::default();
        info.observe_usage(5_000);
        assert!(info.context().is_none(), "no window known: no meter yet");
        assert!(info.stale(InfoKind::ContextUsage));
    }

    #[test]
    fn a_server_still_starting_is_asked_about_again() {
        let mut info = AgentInfo::default();
        info.asked("m1", InfoKind::McpStatus);
        let pending = json!({"mcpServers": [{"name": "asker", "status": "pending"}]});
        assert!(info.on_response("m1", true, &pending, None));
        assert!(info.stale(InfoKind::McpStatus), "pending: ask again");
        info.asked("m2", InfoKind::McpStatus);
        let up = json!({"mcpServers": [{"name": "asker", "status": "connected"}]});
        assert!(info.on_response("m2", true, &up, None));
        assert!(!info.stale(InfoKind::McpStatus), "settled: known");
    }

    #[test]
    fn refusals_are_kept_as_an_error() {
        let mut info = AgentInfo::default();
        info.asked("m1", InfoKind::McpStatus);
        assert!(info.on_response("m1", false, &Value::Null, Some("unsupported")));
        assert!(info.error().unwrap().contains("unsupported"));
        assert!(info.mcp().is_none());
    }

    fn server(name: &str, status: &str) -> McpServer {
        McpServer {
            name: name.into(),
            state: McpServerState::from(status.to_string()),
            error: None,
            version: None,
            transport: None,
            tools: 0,
        }
    }

    #[test]
    fn mcp_summary_is_red_only_for_a_failed_server_and_names_it() {
        // The demo's answer: one connected, one needing auth, one failed.
        let demo = [
            server("demo-files", "connected"),
            server("demo-tracker", "needs-auth"),
            server("demo-broken", "failed"),
        ];
        let s = McpSummary::of(&demo);
        assert_eq!(s.severity, "danger");
        assert_eq!(s.label, "MCP 1/3 · 1 failed");
        assert_eq!(s.failed, ["demo-broken"]);
        let order: Vec<_> = McpSummary::ordered(&demo)
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(order, ["demo-broken", "demo-tracker", "demo-files"]);
        // Starting, disabled or needing auth out of three is information, not an error.
        let starting = [
            server("a", "connected"),
            server("b", "pending"),
            server("c", "disabled"),
        ];
        let s = McpSummary::of(&starting);
        assert_eq!((s.severity, s.label.as_str()), ("muted", "MCP 1/3"));
        assert!(s.failed.is_empty());
        let auth = [server("a", "connected"), server("b", "needs-auth")];
        assert_eq!(McpSummary::of(&auth).severity, "warn");
        let all = [server("a", "connected"), server("b", "connected")];
        assert_eq!(McpSummary::of(&all).severity, "ok");
    }
}
