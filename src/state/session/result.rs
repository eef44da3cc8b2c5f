//! `result` (the end of a turn, its cost) and `rate_limit_event`.

use super::*;

impl Session {
    // ------------------------------------------------------------------ internals: result & system

    pub(super) fn on_result(&mut self, v: &Value) {
        self.close_streaming(None);
        let total = f(v, "total_cost_usd").unwrap_or(0.0);
        let since: Option<f64> = v
            .get("model_usage_since_last_result")
            .and_then(Value::as_object)
            // Folded from +0.0: an empty map sums to -0.0, shown as "$-0.0000".
            .map(|m| {
                m.values()
                    .filter_map(|mu| f(mu, "costUSD"))
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
        let usage = v.get("usage").cloned().unwrap_or(Value::Null);
        let input_tokens = u(&usage, "input_tokens").unwrap_or(0)
            + u(&usage, "cache_read_input_tokens").unwrap_or(0)
            + u(&usage, "cache_creation_input_tokens").unwrap_or(0);
        let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        let subtype = s(v, "subtype").unwrap_or("success").to_string();
        let mut errors: Vec<String> = v
            .get("errors")
            .and_then(Value::as_array)
            .map(|e| {
                e.iter()
                    .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        if is_error
            && errors.is_empty()
            && let Some(r) = s(v, "result")
        {
            errors.push(r.to_string());
        }
        if let Some(ids) = v.get("user_message_uuids").and_then(Value::as_array) {
            for id in ids.iter().filter_map(Value::as_str) {
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
        }
        self.turn_running = false;
        self.interrupt = None;
        self.compacting = false;
        let key = self.frame_key("res", v);
        self.insert_item(Item {
            key,
            rev: 0,
            parent: None,
            kind: ItemKind::Result(ResultRow {
                uuid: s(v, "uuid").map(str::to_string),
                subtype,
                is_error,
                terminal_reason: s(v, "terminal_reason").map(str::to_string),
                api_error_status: u(v, "api_error_status"),
                duration_ms: f(v, "duration_ms"),
                duration_api_ms: f(v, "duration_api_ms"),
                num_turns: u(v, "num_turns"),
                input_tokens,
                output_tokens: u(&usage, "output_tokens").unwrap_or(0),
                turn_cost,
                session_cost: self.cost.total,
                errors,
                denials: v
                    .get("permission_denials")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len),
            }),
        });
    }

    pub(super) fn on_rate_limit(&mut self, v: &Value) {
        let info = v.get("rate_limit_info").cloned().unwrap_or(Value::Null);
        let status = s(&info, "status").unwrap_or("allowed").to_string();
        let limit_type = s(&info, "rateLimitType").map(str::to_string);
        let resets_at = f(&info, "resetsAt");
        self.rate_limit = Some(RateLimit {
            status: status.clone(),
            limit_type: limit_type.clone(),
            resets_at,
        });
        self.push_system(
            v,
            SystemKind::RateLimit {
                status,
                limit_type,
                resets_at,
                utilization: f(&info, "utilization"),
            },
        );
    }

}
