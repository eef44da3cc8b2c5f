//! A system row.

use leptos::prelude::*;

use crate::format;
use crate::state::{SystemKind, SystemRow};

/// A system frame: session start, compaction, API retry, rate limit, session end, notices.
#[component]
pub fn SystemRowView(
    /// The row.
    row: SystemRow,
) -> impl IntoView {
    let (kind, level, body) = match row.kind {
        SystemKind::Init {
            model,
            cwd,
            tools,
            permission_mode,
            version,
        } => {
            let n = tools.len();
            (
                "init",
                "info".to_string(),
                view! {
                    <span class="sys-title">"Session"</span>
                    <span>{format!("{model} · {cwd} · {permission_mode} · Claude Code {version}")}</span>
                    <details class="inline-details">
                        <summary>{format!("{n} tools")}</summary>
                        <span class="tool-list">{tools.join(", ")}</span>
                    </details>
                }
                .into_any(),
            )
        }
        SystemKind::CompactBoundary {
            trigger,
            pre_tokens,
            post_tokens,
        } => {
            let tokens = match (pre_tokens, post_tokens) {
                (Some(a), Some(b)) => {
                    format!(", {} → {} tokens", format::tokens(a), format::tokens(b))
                }
                (Some(a), None) => format!(", {} tokens before", format::tokens(a)),
                _ => String::new(),
            };
            (
                "compact_boundary",
                "info".into(),
                view! { <span>{format!("Conversation compacted ({trigger}{tokens})")}</span> }
                    .into_any(),
            )
        }
        SystemKind::ApiRetry {
            attempt,
            max_retries,
            delay_ms,
            error,
            status,
        } => {
            let status = status.map(|s| format!(" {s}")).unwrap_or_default();
            (
                "api_retry",
                "warning".into(),
                view! {
                    <span>
                        {format!(
                            "API error ({error}{status}): retrying in {} (attempt {attempt} of {max_retries})",
                            format::duration_ms(delay_ms as f64),
                        )}
                    </span>
                }
                .into_any(),
            )
        }
        SystemKind::RateLimit {
            status,
            limit_type,
            resets_at,
            utilization,
        } => {
            let level = if status == "rejected" {
                "error"
            } else if status == "allowed" {
                "info"
            } else {
                "warning"
            };
            let what = limit_type
                .unwrap_or_else(|| "usage".into())
                .replace('_', " ");
            let pct = utilization
                .map(|u| format!(" · {:.0}% used", u * 100.0))
                .unwrap_or_default();
            let reset = resets_at
                .map(|t| {
                    let d = js_date(t);
                    format!(" · resets {d}")
                })
                .unwrap_or_default();
            let text = match status.as_str() {
                "rejected" => format!("Rate limit reached ({what}){pct}{reset}"),
                "allowed_warning" => format!("Approaching the rate limit ({what}){pct}{reset}"),
                _ => format!("Rate limit OK ({what}){pct}"),
            };
            (
                "rate_limit",
                level.into(),
                view! { <span>{text}</span> }.into_any(),
            )
        }
        SystemKind::Ended {
            exit_code,
            signal,
            stderr_tail,
        } => {
            let how = match (exit_code, signal) {
                (Some(0), _) => "normally".to_string(),
                (Some(c), _) => format!("with exit code {c}"),
                (None, Some(s)) => format!("by signal {s}"),
                _ => "unexpectedly".to_string(),
            };
            let level = if exit_code == Some(0) {
                "info"
            } else {
                "error"
            };
            (
                "ended",
                level.into(),
                view! {
                    <span class="sys-title">{format!("The session ended {how}.")}</span>
                    {(!stderr_tail.is_empty()).then(|| view! {
                        <details class="inline-details"><summary>"stderr"</summary><pre class="code">{stderr_tail}</pre></details>
                    })}
                }
                .into_any(),
            )
        }
        SystemKind::Notice { title, text, level } => (
            "notice",
            level,
            view! {
                <span class="sys-title">{title}</span>
                <span class="sys-text">{text}</span>
            }
            .into_any(),
        ),
    };
    let role = if level == "error" { "alert" } else { "note" };
    view! {
        <div class=format!("system-row level-{level}") data-testid="system-message" data-kind=kind role=role>
            {body}
        </div>
    }
}

fn js_date(unix_secs: f64) -> String {
    let d = js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(unix_secs * 1000.0));
    String::from(d.to_locale_string("default", &wasm_bindgen::JsValue::UNDEFINED))
}
