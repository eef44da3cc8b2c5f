//! Push notifications a session raises: a prompt needs someone, a prompt was resolved, a turn is done.

use std::time::{Duration, Instant};

use bridge_protocol::ResultSubtype;
use serde_json::Value;

use crate::core::notice::PushEvent;

use super::{Inner, Pending, Session, SessionMeta};

impl Session {
    pub(super) fn notify(&self, g: &Inner, event: crate::core::notice::Event) {
        if let Some(push) = &self.ctx.push {
            push.notify(PushEvent {
                session_id: self.id.clone(),
                session_label: session_label(&g.meta),
                event,
            });
        }
    }

    pub(super) fn prompt_of(p: &Pending, with_input: bool) -> crate::core::notice::Prompt {
        crate::core::notice::Prompt {
            request_id: p.request_id.clone(),
            subtype: p.subtype.clone(),
            tool_name: p.tool_name.clone(),
            input: if with_input { p.input.clone() } else { None },
        }
    }

    /// `resolved` for a prompt a person was told about (`needs_action`), once it stopped waiting.
    pub(super) fn notify_resolved(
        &self,
        g: &Inner,
        p: &Pending,
        resolution: crate::core::notice::Resolution,
    ) {
        if !p.needs_action() || self.ctx.push.is_none() {
            return;
        }
        let others_pending = g.pending.iter().any(Pending::needs_action);
        self.notify(
            g,
            crate::core::notice::Event::Resolved {
                prompt: Self::prompt_of(p, false),
                resolution,
                others_pending,
            },
        );
    }

    /// `turn_done` from a `result` frame: its `duration_ms`, else the time since the turn started.
    /// Each figure is read on its own (a result missing some still says the others).
    pub(super) fn notify_turn_done(&self, g: &Inner, result: &Value, started: Option<Instant>) {
        let duration = result
            .get("duration_ms")
            .and_then(Value::as_f64)
            .filter(|ms| ms.is_finite() && *ms >= 0.0)
            .map(|ms| Duration::from_secs_f64(ms / 1000.0))
            .or_else(|| started.map(|t| t.elapsed()));
        let Some(duration) = duration else {
            return;
        };
        let subtype = result
            .get("subtype")
            .and_then(Value::as_str)
            .map_or(ResultSubtype::Success, ResultSubtype::from);
        let is_error = result.get("is_error").and_then(Value::as_bool) == Some(true);
        let error = match (subtype, is_error) {
            (ResultSubtype::Success, false) => None,
            (ResultSubtype::Success, true) => Some("error".to_owned()),
            (other, _) => Some(other.as_str().to_owned()),
        };
        self.notify(
            g,
            crate::core::notice::Event::TurnDone {
                duration,
                cost_usd: result.get("total_cost_usd").and_then(Value::as_f64),
                error,
            },
        );
    }
}

/// What notifications call a session: its title, else its working directory's last component.
fn session_label(meta: &SessionMeta) -> String {
    match meta.title.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => t.to_owned(),
        _ => std::path::Path::new(&meta.cwd)
            .file_name()
            .map_or_else(|| meta.cwd.clone(), |n| n.to_string_lossy().into_owned()),
    }
}
