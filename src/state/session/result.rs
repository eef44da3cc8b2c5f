//! `result` (the end of a turn, its cost) and `rate_limit_event`.

use bridge_protocol::{RateLimitEventMessage, ResultMessage};
use serde_json::{Number, Value};

use super::{RateLimit, Session};
use crate::state::item::{Item, ItemKind, ResultRow, SendState, SystemKind};

impl Session {
    // ------------------------------------------------------------------ internals: result & system

    pub(super) fn on_result(&mut self, v: &ResultMessage) {
        self.close_streaming(None);
        let total = v.total_cost_usd.as_ref().and_then(Number::as_f64);
        // A result without a total (the transcript replay) leaves the running cost as it is.
        let total = total.unwrap_or(self.cost.last_cli_total);
        let since: Option<f64> = v
            .extra
            .get("model_usage_since_last_result")
            .and_then(Value::as_object)
            // Folded from +0.0: an empty map sums to -0.0, shown as "$-0.0000".
            .map(|m| {
                m.values()
                    .filter_map(|mu| mu.get("costUSD").and_then(Value::as_f64))
                    .fold(0.0, |a, b| a + b)
            });
        if total + 1e-12 < self.cost.last_cli_total {
            // A new CLI process: its total starts again from zero.
            self.cost.base += self.cost.last_cli_total;
            self.cost.last_cli_total = 0.0;
        }
        let turn_cost = since.unwrap_or((total - self.cost.last_cli_total).max(0.0));
        self.cost.last_cli_total = total;
        self.cost.total = self.cost.base + total;
        // No `usage` (a replayed terminal session's closing result): the tokens are unknown.
        let input_tokens = v
            .usage
            .as_ref()
            .map(|u| u.input_tokens + u.cache_read() + u.cache_creation());
        let output_tokens = v.usage.as_ref().map(|u| u.output_tokens);
        let is_error = v.is_error;
        let mut errors: Vec<String> = v.errors.clone().unwrap_or_default();
        if is_error
            && errors.is_empty()
            && let Some(r) = &v.result
        {
            errors.push(r.clone());
        }
        for id in v.user_message_uuids.iter().flatten() {
            let key = format!("u:{id}");
            if let Some(Item {
                kind: ItemKind::User(m),
                ..
            }) = self.items.get_mut(&key)
                && m.send != SendState::Confirmed
            {
                m.send = SendState::Confirmed;
                self.touch(&key);
            }
        }
        self.turn_running = false;
        self.interrupt = None;
        self.compacting = false;
        let key = self.frame_key("res", Some(&v.uuid));
        self.insert_item(Item {
            key,
            rev: 0,
            parent: None,
            kind: ItemKind::Result(ResultRow {
                uuid: Some(v.uuid.clone()),
                subtype: v.subtype.as_str().to_string(),
                is_error,
                terminal_reason: v.terminal_reason.as_ref().map(|r| r.as_str().to_string()),
                api_error_status: v.api_error_status.flatten().map(u64::from),
                duration_ms: v.duration_ms.as_ref().and_then(Number::as_f64),
                duration_api_ms: v.duration_api_ms.as_ref().and_then(Number::as_f64),
                num_turns: v.num_turns,
                input_tokens,
                output_tokens,
                turn_cost,
                session_cost: self.cost.total,
                errors,
                denials: v.permission_denials.as_ref().map_or(0, Vec::len),
            }),
        });
    }

    pub(super) fn on_rate_limit(&mut self, v: &RateLimitEventMessage) {
        let info = &v.rate_limit_info;
        let status = info.status.as_str().to_string();
        let limit_type = info.rate_limit_type.clone();
        let resets_at = info.resets_at.as_ref().and_then(Number::as_f64);
        self.rate_limit = Some(RateLimit {
            status: status.clone(),
            limit_type: limit_type.clone(),
            resets_at,
        });
        self.push_system(
            Some(&v.uuid),
            None,
            SystemKind::RateLimit {
                status,
                limit_type,
                resets_at,
                utilization: info.utilization.as_ref().and_then(Number::as_f64),
            },
        );
    }
}
