//! Ending a turn: usage and cost figures, the `result` frame, and the clean-up frames the CLI writes
//! after an interrupt.

use std::io::Write;

use serde_json::{Map, Value, json};

use super::models::{cost_usd, new_uuid, tokens_for};
use super::{Agent, Flow, Turn};

impl<W: Write> Agent<W> {
    pub(super) fn usage_value(&self, turn: &Turn) -> Value {
        json!({
            "input_tokens": turn.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": turn.output_tokens,
            "output_tokens_details": {"thinking_tokens": turn.thinking_tokens},
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0},
            "inference_geo": "",
            "iterations": [],
            "speed": "standard",
            "fallback_credit": null
        })
    }

    pub(super) fn model_usage(&self, turn: &Turn, cost: f64) -> Value {
        if turn.num_msgs == 0 {
            return json!({});
        }
        let mut m = Map::new();
        m.insert(
            turn.model.clone(),
            json!({
                "inputTokens": turn.input_tokens,
                "outputTokens": turn.output_tokens,
                "cacheReadInputTokens": 0,
                "cacheCreationInputTokens": 0,
                "webSearchRequests": 0,
                "costUSD": cost,
                "contextWindow": 200000,
                "maxOutputTokens": 32000,
                "thinkingTokens": turn.thinking_tokens,
                "canonicalModel": turn.model,
                "provider": "firstParty",
                "costBasis": "list"
            }),
        );
        Value::Object(m)
    }

    pub(super) fn result_frame(
        &mut self,
        turn: &Turn,
        subtype: &str,
        terminal_reason: &str,
    ) -> Value {
        let cost = cost_usd(&turn.model, turn.input_tokens, turn.output_tokens);
        let duration = turn.start.elapsed();
        let api = duration.saturating_sub(turn.waited);
        let success = subtype == "success";
        let mut v = json!({
            "type": "result",
            "subtype": subtype,
            "is_error": !success,
            "duration_ms": duration.as_millis() as u64,
            "duration_api_ms": api.as_millis() as u64,
            "num_turns": turn.num_msgs,
        });
        if success {
            v["result"] = json!(turn.last_text);
            v["stop_reason"] = turn.last_stop_reason.clone();
        } else {
            v["stop_reason"] = Value::Null;
        }
        v["session_id"] = json!(self.session_id);
        self.total_cost_usd += cost;
        v["total_cost_usd"] = json!(self.total_cost_usd);
        v["usage"] = self.usage_value(turn);
        v["modelUsage"] = self.model_usage(turn, cost);
        v["permission_denials"] = json!(turn.denials);
        if !success {
            v["errors"] = json!([]);
        }
        v["terminal_reason"] = json!(terminal_reason);
        v["fast_mode_state"] = json!("off");
        v["fast_mode_disabled_reason"] = json!("sdk_opt_in_required");
        v["api_error_status"] = Value::Null;
        if let Some(t) = turn.ttft_ms {
            v["ttft_ms"] = json!(t);
        }
        v["begun_message_ids"] = json!(turn.message_ids);
        v["uuid"] = json!(new_uuid());
        if let Some(o) = v.as_object_mut() {
            turn.uuid_fields(o, true);
        }
        v["queued_turn_count"] = json!(self.queue.len());
        v["result_index"] = json!(self.result_index);
        self.result_index += 1;
        v
    }

    pub(super) fn finish_success(&mut self, turn: &mut Turn) -> Flow<()> {
        let v = self.result_frame(turn, "success", "completed");
        self.emit(&v)?;
        for u in turn.uuids.clone() {
            self.lifecycle(&u, "completed")?;
        }
        Ok(())
    }

    /// The clean-up frames the CLI writes after an interrupt, then the error result. `tools`: the turn was
    /// stopped at a tool (prompt interrupted, deny with `interrupt: true`) rather than while streaming.
    pub(super) fn finish_interrupted(&mut self, turn: &mut Turn, tools: bool) -> Flow<()> {
        let mut tools = tools;
        if let Some(m) = turn.msg.take() {
            if m.closed {
                // Interrupted while the message's tools were running.
                tools = true;
            } else if tools {
                // The stream itself was complete: end the message normally, without running its tools.
                let out = tokens_for(m.out_chars).max(1);
                turn.output_tokens += out;
                turn.msg = Some(m);
                self.stream_event(
                    turn,
                    json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
                           "usage": {"output_tokens": out}}),
                )?;
                self.stream_event(turn, json!({"type": "message_stop"}))?;
            } else {
                turn.msg = Some(m);
                let api_id = turn.msg.as_ref().map(|m| m.id.clone()).unwrap_or_default();
                let mut from_index = turn.msg.as_ref().map_or(0, |m| m.next_index);
                if let Some(b) = turn.block.take() {
                    from_index = b.index;
                    if !b.partial.is_empty() && b.kind != "tool_use" {
                        let block = if b.kind == "thinking" {
                            json!({"type": "thinking", "thinking": b.partial, "signature": ""})
                        } else {
                            turn.last_text = b.partial.clone();
                            json!({"type": "text", "text": b.partial})
                        };
                        self.assistant(turn, block)?;
                        from_index = b.index + 1;
                    }
                    self.stream_event(
                        turn,
                        json!({"type": "content_block_stop", "index": b.index}),
                    )?;
                }
                let out = tokens_for(turn.msg.as_ref().map_or(0, |m| m.out_chars)).max(1);
                turn.output_tokens += out;
                self.stream_event(
                    turn,
                    json!({"type": "message_delta", "delta": {"stop_reason": null, "stop_sequence": null},
                           "usage": {"output_tokens": out}}),
                )?;
                self.stream_event(
                    turn,
                    json!({"type": "message_stop",
                           "abandoned_blocks": {"api_message_id": api_id, "from_block_index": from_index}}),
                )?;
            }
            let pending = turn.msg.take().map(|m| m.to_run).unwrap_or_default();
            for t in pending {
                self.reject_result(
                    turn,
                    &t.id,
                    "[Request interrupted by user for tool use]",
                    "user_abort",
                )?;
            }
        }
        let text = if tools {
            "[Request interrupted by user for tool use]"
        } else {
            "[Request interrupted by user]"
        };
        self.user_text_frame(text)?;
        let reason = if tools {
            "aborted_tools"
        } else {
            "aborted_streaming"
        };
        let v = self.result_frame(turn, "error_during_execution", reason);
        self.emit(&v)?;
        for u in turn.uuids.clone() {
            self.lifecycle(&u, "completed")?;
        }
        Ok(())
    }
}
