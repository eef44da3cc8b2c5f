//! MCP servers in the session header.

use bridge_protocol::McpServerState;
use leptos::prelude::*;

use crate::components::info_refresh::InfoRefresh;
use crate::state::{InfoKind, McpServer, McpSummary};
use crate::store::Store;

fn state_class(s: &McpServerState) -> &'static str {
    match s {
        McpServerState::Connected => "ok",
        McpServerState::Failed => "danger",
        McpServerState::NeedsAuth => "warn",
        McpServerState::Pending | McpServerState::Disabled | McpServerState::Other(_) => "muted",
    }
}

/// The MCP servers Claude Code uses and their state (`data-testid="mcp-status"`, `data-state`
/// ok / warn / danger / muted, see [`McpSummary`]): "MCP 1/3 · 1 failed" with the worst state's
/// colour on its dot; tapping lists each server, failed ones first (`mcp-server`, `data-state`
/// connected / failed / needs-auth / pending / disabled), with its error.
/// Hidden until reported, and when no server is configured.
#[component]
pub fn McpStatus() -> impl IntoView {
    let store = Store::expect();
    let servers = Memo::new(move |_| {
        store
            .session
            .with(|s| s.agent_info().mcp().map(<[McpServer]>::to_vec))
    });
    let open = RwSignal::new(false);
    move || {
        servers.get().filter(|l| !l.is_empty()).map(|list| {
            let summary = McpSummary::of(&list);
            let worst = summary.severity;
            let label = summary.label.clone();
            let aria = if summary.failed.is_empty() {
                format!("{label} servers connected — show MCP servers")
            } else {
                format!(
                    "{label}: {} — show MCP servers",
                    summary.failed.join(", ")
                )
            };
            let list = McpSummary::ordered(&list);
            view! {
                <div class="mcp-status info-chip" data-testid="mcp-status" data-state=worst>
                    <button
                        class=format!("chip-button mcp-button mcp-{worst}")
                        data-testid="mcp-status-toggle"
                        aria-expanded=move || open.get().to_string()
                        aria-label=aria
                        on:click=move |_| open.update(|o| *o = !*o)
                    >
                        <span class="dot" aria-hidden="true"></span>
                        {label}
                    </button>
                    {move || open.get().then(|| {
                        let list = list.clone();
                        view! {
                            <div class="info-popover" role="group" aria-label="MCP servers">
                                <ul class="mcp-servers" role="list">
                                    {list.into_iter().map(|s| {
                                        let cls = state_class(&s.state);
                                        let detail = [
                                            s.transport.clone(),
                                            s.version.clone().map(|v| format!("v{v}")),
                                            (s.tools > 0).then(|| format!("{} tool{}", s.tools, if s.tools == 1 { "" } else { "s" })),
                                        ]
                                        .into_iter()
                                        .flatten()
                                        .collect::<Vec<_>>()
                                        .join(" · ");
                                        view! {
                                            <li class=format!("mcp-server mcp-{cls}") data-testid="mcp-server" data-state=s.state.as_str().to_string() role="listitem">
                                                <span class="dot" aria-hidden="true"></span>
                                                <span class="mcp-name">{s.name.clone()}</span>
                                                <span class=format!("chip {cls}")>{s.state.as_str().to_string()}</span>
                                                {(!detail.is_empty()).then(|| view! { <span class="muted">{detail}</span> })}
                                                {s.error.clone().map(|e| view! { <div class="mcp-error">{e}</div> })}
                                            </li>
                                        }
                                    }).collect_view()}
                                </ul>
                                <InfoRefresh kind=InfoKind::McpStatus test_id="mcp-refresh" />
                            </div>
                        }
                    })}
                </div>
            }
        })
    }
}
