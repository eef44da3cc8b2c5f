//! Playing a turn: the queued messages become one scenario reply whose steps (text, thinking, tool
//! calls, pauses, crashes) are streamed in order; `/compact` is answered as a local command.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::models::{hex_id, new_uuid, now_iso};
use super::permission::ToolStep;
use super::{Abort, Agent, Flow, Turn, UserMsg};
use crate::AgentExit;
use crate::scenario::{Step, Vars};
use crate::tools;

impl<W: Write> Agent<W> {
    pub(super) fn run_turn(&mut self, batch: Vec<UserMsg>) -> Flow<()> {
        self.in_turn = true;
        let r = self.run_turn_inner(batch);
        self.in_turn = false;
        self.pending_permission = None;
        r
    }

    pub(super) fn run_turn_inner(&mut self, batch: Vec<UserMsg>) -> Flow<()> {
        let uuids: Vec<String> = batch.iter().filter_map(|m| m.uuid.clone()).collect();
        for u in &uuids {
            self.lifecycle(u, "started")?;
        }
        if let [only] = batch.as_slice()
            && let Some(args) = only.text.trim().strip_prefix("/compact")
            && (args.is_empty() || args.starts_with(char::is_whitespace))
        {
            return self.compact(only, uuids, args.trim());
        }
        self.init_frame(&uuids)?;
        self.status(json!("requesting"), Some(&uuids))?;
        let text = batch
            .iter()
            .map(|m| m.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        if self.opts.replay_user_messages {
            self.replay(&batch, &text)?;
        }
        let mut turn = Turn::new(uuids, self.model.clone(), text.chars().count());
        let vars = Vars {
            cwd: self.opts.cwd.clone(),
            prompt: text.clone(),
            model: self.model.clone(),
        };
        let images: Vec<&String> = batch.iter().flat_map(|m| &m.images).collect();
        let mut steps = match self.scenario.select(&text) {
            Some(reply) => reply.expand(&vars),
            None => vec![Step::Text {
                text: format!(
                    "(demo agent: scenario {:?} has no reply matching this message)",
                    self.scenario.name
                ),
                repeat_text: None,
                chunk_chars: None,
                delay_ms: None,
                if_: None,
                repeat: None,
            }],
        };
        if !images.is_empty() {
            // The demo has no eyes, but says what arrived, so the console shows attachments working.
            let seen = images
                .iter()
                .map(|d| format!("I see an image ({d})."))
                .collect::<Vec<_>>()
                .join(" ");
            steps.insert(
                0,
                Step::Text {
                    text: format!("{seen}\n\n"),
                    repeat_text: None,
                    chunk_chars: None,
                    delay_ms: None,
                    if_: None,
                    repeat: None,
                },
            );
        }
        match self.play(&mut turn, steps) {
            Ok(()) => self.finish_success(&mut turn),
            Err(Abort::Interrupted) => self.finish_interrupted(&mut turn, false),
            Err(Abort::InterruptedTools | Abort::StdinClosed) => {
                self.finish_interrupted(&mut turn, true)
            }
            Err(e) => Err(e),
        }
    }

    /// `/compact`, as CLI 2.1.332 answers it (see the `bridge-capture-compact` fixture): `compacting`, the
    /// result status, a fresh `init`, the `compact_boundary`, the summary the conversation continues from
    /// (a synthetic user frame), the command's output and the command itself replayed, and a `success`
    /// result with no model turn (`num_turns: 0`, `local_command`).
    pub(super) fn compact(&mut self, msg: &UserMsg, uuids: Vec<String>, args: &str) -> Flow<()> {
        let mut turn = Turn::new(uuids, self.model.clone(), 0);
        self.status(json!("compacting"), None)?;
        // Compaction is a local command: it finishes even if an interrupt arrives meanwhile (the
        // interrupt is answered), so the turn always ends with its result.
        if let Err(Abort::Fatal(e)) = self.pause(400) {
            return Err(Abort::Fatal(e));
        }
        let done = json!({"type": "system", "subtype": "status", "status": null, "compact_result": "success",
                          "session_id": self.session_id, "uuid": new_uuid()});
        self.emit(&done)?;
        self.init_frame(&[])?;
        // Plausible figures: the conversation grows with every turn.
        let pre_tokens = 12_000 + 1_500 * self.result_index;
        let post_tokens = 2_600u64.min(pre_tokens);
        let boundary = json!({
            "type": "system", "subtype": "compact_boundary", "session_id": self.session_id, "uuid": new_uuid(),
            "compact_metadata": {"trigger": "manual", "pre_tokens": pre_tokens, "post_tokens": post_tokens,
                                 "cumulative_dropped_tokens": pre_tokens - post_tokens,
                                 "duration_ms": turn.start.elapsed().as_millis() as u64},
        });
        let mut boundary = boundary;
        if let Some(parent) = &self.last_message_uuid {
            boundary["logical_parent_uuid"] = json!(parent);
        }
        self.emit(&boundary)?;
        // Shaped like the CLI's summary (several paragraphs), with the demo's own content.
        let instructions = if args.is_empty() {
            String::new()
        } else {
            format!("\nSummary instructions given: {args}\n")
        };
        let summary = format!(
            "This session is being continued from a previous conversation that ran out of context. \
             The summary below covers the earlier portion of the conversation.\n\n\
             Summary (demo agent):\n\
             1. The person tried Bridge Console with the scripted demo agent (scenario {:?}).\n\
             2. Every answer so far came from that scenario; no model was called.\n\
             3. {} turns completed before this compaction.\n{instructions}\n\
             Continue the conversation from where it left off without asking the user any further questions. \
             Resume directly — do not acknowledge the summary and do not recap what was happening.",
            self.scenario.name, self.result_index
        );
        let synthetic = json!({"type": "user", "message": {"role": "user", "content": summary},
            "session_id": self.session_id, "parent_tool_use_id": null, "uuid": new_uuid(),
            "timestamp": now_iso(), "isReplay": false, "isSynthetic": true});
        self.emit(&synthetic)?;
        if self.opts.replay_user_messages {
            let output = json!({"type": "user",
                "message": {"role": "user", "content": "<local-command-stdout>Compacted </local-command-stdout>"},
                "session_id": self.session_id, "parent_tool_use_id": null, "uuid": new_uuid(),
                "timestamp": now_iso(), "isReplay": true});
            self.emit(&output)?;
            let command = json!({"type": "user",
                "message": {"role": "user", "content": format!(
                    "<command-name>/compact</command-name>\n            <command-message>compact</command-message>\n            <command-args>{args}</command-args>")},
                "session_id": self.session_id, "parent_tool_use_id": null,
                "uuid": msg.uuid.clone().unwrap_or_else(new_uuid),
                "timestamp": now_iso(), "isReplay": true});
            self.emit(&command)?;
        }
        let mut result = self.result_frame(&turn, "success", "completed");
        if let Some(o) = result.as_object_mut() {
            for k in [
                "terminal_reason",
                "begun_message_ids",
                "ttft_ms",
                "api_error_status",
            ] {
                o.remove(k);
            }
            o.insert("result".into(), json!(""));
            o.insert("stop_reason".into(), Value::Null);
            o.insert("duration_api_ms".into(), json!(0));
            o.insert("local_command".into(), json!("compact"));
        }
        self.emit(&result)?;
        for u in std::mem::take(&mut turn.uuids) {
            self.lifecycle(&u, "completed")?;
        }
        Ok(())
    }

    pub(super) fn replay(&mut self, batch: &[UserMsg], joined: &str) -> io::Result<()> {
        let n = batch.len();
        for (i, m) in batch.iter().enumerate() {
            let last = i + 1 == n;
            let message = if n > 1 && last {
                json!({"role": "user", "content": joined})
            } else {
                m.message.clone()
            };
            let mut v = json!({
                "type": "user",
                "message": message,
                "session_id": self.session_id,
                "parent_tool_use_id": m.parent_tool_use_id,
                "uuid": m.uuid.clone().unwrap_or_else(new_uuid),
            });
            if last {
                v["timestamp"] = json!(now_iso());
            }
            v["isReplay"] = json!(true);
            self.emit(&v)?;
        }
        Ok(())
    }

    pub(super) fn play(&mut self, turn: &mut Turn, steps: Vec<Step>) -> Flow<()> {
        for step in steps {
            // A text/thinking block after tool calls belongs to the next model request: finish the current
            // message and run its tools first, so that `if` sees their outcome.
            if matches!(step, Step::Text { .. } | Step::Thinking { .. })
                && turn.msg.as_ref().is_some_and(|m| m.after_tool)
            {
                self.close_msg(turn)?;
            }
            if let Some(cond) = step.condition()
                && turn.last_outcome != Some(cond)
            {
                continue;
            }
            match step {
                Step::Pause { ms, .. } => self.pause(ms)?,
                Step::Crash { code, stderr } => {
                    self.out.flush()?;
                    return Err(Abort::Fatal(
                        AgentExit {
                            code,
                            message: stderr,
                        }
                        .into(),
                    ));
                }
                Step::Text {
                    text,
                    chunk_chars,
                    delay_ms,
                    ..
                } => {
                    let text = text.replace("{tool_result}", &turn.last_tool_result);
                    self.ensure_msg(turn, false)?;
                    self.stream_text_like(
                        turn,
                        "text",
                        &text,
                        None,
                        chunk_chars.unwrap_or(12),
                        delay_ms.unwrap_or(20),
                    )?;
                    turn.last_text = text;
                }
                Step::Thinking {
                    thinking,
                    signature,
                    chunk_chars,
                    delay_ms,
                    ..
                } => {
                    self.ensure_msg(turn, false)?;
                    let sig = signature.unwrap_or_else(|| format!("EqQBCkgIARAB{}", hex_id(48)));
                    self.stream_text_like(
                        turn,
                        "thinking",
                        &thinking,
                        Some(&sig),
                        chunk_chars.unwrap_or(16),
                        delay_ms.unwrap_or(15),
                    )?;
                }
                Step::ToolUse {
                    name,
                    input,
                    permission,
                    output,
                    is_error,
                    description,
                    blocked_path,
                    run_ms,
                    elicit,
                    delay_ms,
                    ..
                } => {
                    self.ensure_msg(turn, true)?;
                    let id = format!("toolu_{}", hex_id(20));
                    self.stream_tool_input(turn, &id, &name, &input, delay_ms.unwrap_or(30))?;
                    let decision =
                        tools::decide(&name, &input, permission, &self.mode, &self.rules);
                    let step = ToolStep {
                        id,
                        name,
                        input,
                        output,
                        is_error,
                        description,
                        blocked_path,
                        run_ms: run_ms.unwrap_or(150),
                        elicit,
                    };
                    self.tool_decision(turn, step, decision)?;
                }
            }
        }
        self.close_msg(turn)?;
        Ok(())
    }
}
