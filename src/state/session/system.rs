//! `system` frames by subtype, and the background tasks they report. The fields shown are read
//! from the typed message; a key bridge-protocol does not model is read from its `extra`.

use bridge_protocol::{
    SystemMessage, SystemModelRefusalFallback, SystemModelRefusalNoFallback, SystemPermissionDenied,
};
use serde_json::{Map, Value};

use super::decode::Raw;
use super::{Session, SlashCommand, Source};
use crate::state::item::{SystemKind, TaskInfo, ToolStatus};

/// Internal subtypes that show nothing.
const SILENT_INTERNAL: &[&str] = &["post_turn_summary", "task_summary", "session_metadata"];

/// The keys a system frame's text may be in, first found wins.
const TEXT_KEYS: [&str; 7] = [
    "content", "text", "message", "reason", "error", "output", "summary",
];

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn extra_str<'a>(extra: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    extra.get(key).and_then(Value::as_str)
}

/// A JSON number as a count (a fraction or a negative number read as its whole non-negative part).
fn count(n: &serde_json::Number) -> u64 {
    n.as_u64()
        .unwrap_or_else(|| n.as_f64().map_or(0, |f| f.max(0.0) as u64))
}

/// The text a system frame carries, whichever field it is in (a frame kept whole).
pub(super) fn text_of(v: &Value) -> String {
    TEXT_KEYS
        .iter()
        .find_map(|k| s(v, k))
        .unwrap_or_default()
        .to_string()
}

/// The text of a typed system message: `known` are the text keys its type models (absent when
/// `None`), any other text key is looked up in its `extra`; [`TEXT_KEYS`] order, first found wins.
fn text_in(known: &[(&str, Option<&str>)], extra: &Map<String, Value>) -> String {
    TEXT_KEYS
        .iter()
        .find_map(|k| match known.iter().find(|(name, _)| name == k) {
            Some((_, value)) => *value,
            None => extra_str(extra, k),
        })
        .unwrap_or_default()
        .to_string()
}

/// What a task frame says about its task (read from the typed subtypes).
struct TaskFrame<'a> {
    task_id: &'a str,
    tool_use_id: Option<&'a str>,
    status: Option<String>,
    summary: Option<&'a str>,
    description: Option<&'a str>,
    /// A `task_notification`: the task ended.
    ended: bool,
    /// A `task_started`.
    started: bool,
}

impl<'a> TaskFrame<'a> {
    fn of(sys: &'a SystemMessage) -> Option<Self> {
        let extra = sys.extra()?;
        let ex = |k: &str| extra_str(extra, k);
        Some(match sys {
            SystemMessage::TaskStarted(t) => TaskFrame {
                task_id: &t.task_id,
                tool_use_id: t.tool_use_id.as_deref(),
                status: Some("running".into()),
                summary: ex("summary"),
                description: Some(&t.description),
                ended: false,
                started: true,
            },
            SystemMessage::TaskProgress(t) => TaskFrame {
                task_id: &t.task_id,
                tool_use_id: t.tool_use_id.as_deref(),
                status: Some("running".into()),
                summary: t.summary.as_deref(),
                description: Some(&t.description),
                ended: false,
                started: false,
            },
            SystemMessage::TaskUpdated(t) => TaskFrame {
                task_id: &t.task_id,
                tool_use_id: ex("tool_use_id"),
                status: t.patch.status.as_ref().map(|s| s.as_str().to_string()),
                summary: ex("summary"),
                description: ex("description"),
                ended: false,
                started: false,
            },
            SystemMessage::TaskNotification(t) => TaskFrame {
                task_id: &t.task_id,
                tool_use_id: t.tool_use_id.as_deref(),
                status: Some(t.status.as_str().to_string()),
                summary: Some(&t.summary),
                description: ex("description"),
                ended: true,
                started: false,
            },
            _ => return None,
        })
    }
}

impl Session {
    /// A `system` frame, dispatched on its typed subtype; the fields shown are read from the typed
    /// message (`v`, the frame as it came, is only shown raw).
    pub(super) fn on_system(&mut self, source: &Source, sys: &SystemMessage, v: Raw<'_>) {
        let sub = sys.subtype();
        match sys {
            SystemMessage::Init(init) => {
                let model = init.model.clone();
                let cwd = init.cwd.clone();
                let mode = init.permission_mode.as_str().to_string();
                let version = init.claude_code_version.clone();
                let tools = init.tools.clone();
                self.info.model = Some(model.clone());
                self.info.cwd = Some(cwd.clone());
                self.info.permission_mode = Some(mode.clone());
                self.info.version = Some(version.clone());
                self.info.tools.clone_from(&tools);
                self.turn_running = true;
                let sig = (model.clone(), mode.clone(), cwd.clone());
                if self.last_init.as_ref() != Some(&sig) {
                    self.last_init = Some(sig);
                    self.push_system_row(
                        sys,
                        SystemKind::Init {
                            model,
                            cwd,
                            tools,
                            permission_mode: mode,
                            version,
                        },
                    );
                } else {
                    self.bump();
                }
            }
            SystemMessage::Status(st) => {
                match st.status.as_ref().map(|k| k.as_str()) {
                    Some("requesting") => self.turn_running = true,
                    Some("compacting") => self.compacting = true,
                    _ => self.compacting = false,
                }
                if let Some(mode) = &st.permission_mode {
                    self.info.permission_mode = Some(mode.as_str().to_string());
                }
                if st.compact_result.as_deref() == Some("failed") {
                    let text = st
                        .compact_error
                        .as_deref()
                        .unwrap_or("Compaction failed.")
                        .to_string();
                    self.push_system_row(sys, SystemKind::notice("compaction", text, "error"));
                }
                self.bump();
            }
            SystemMessage::CompactBoundary(c) => {
                let meta = c.compact_metadata.as_ref();
                self.push_system_row(
                    sys,
                    SystemKind::CompactBoundary {
                        trigger: meta.map_or("auto", |m| m.trigger.as_str()).to_string(),
                        pre_tokens: meta.map(|m| m.pre_tokens),
                        post_tokens: meta.and_then(|m| m.post_tokens),
                    },
                );
            }
            SystemMessage::ApiRetry(r) => self.push_system_row(
                sys,
                SystemKind::ApiRetry {
                    attempt: r.attempt,
                    max_retries: r.max_retries,
                    delay_ms: count(&r.retry_delay_ms),
                    error: r.error.as_str().to_string(),
                    status: r.error_status.map(u64::from),
                },
            ),
            SystemMessage::SessionStateChanged(c) => match c.state.as_str() {
                "ended" => {
                    self.ended = true;
                    self.turn_running = false;
                    self.close_streaming(None);
                    // The relay's exit details are not modelled by bridge-protocol (in `extra`).
                    self.push_system_row(
                        sys,
                        SystemKind::Ended {
                            exit_code: c.extra.get("exit_code").and_then(Value::as_i64),
                            signal: c.extra.get("signal").and_then(Value::as_i64),
                            stderr_tail: extra_str(&c.extra, "stderr_tail")
                                .unwrap_or_default()
                                .to_string(),
                        },
                    );
                }
                "running" => {
                    self.turn_running = true;
                    self.bump();
                }
                "idle" => {
                    self.turn_running = false;
                    self.bump();
                }
                _ => self.bump(),
            },
            SystemMessage::Informational(i) => {
                let text = text_in(&[("content", Some(&i.content))], &i.extra);
                self.push_system_row(
                    sys,
                    SystemKind::notice("information", text, i.level.as_str()),
                );
            }
            SystemMessage::PermissionDenied(d) => self.on_permission_denied(sys, d),
            SystemMessage::TaskStarted(_)
            | SystemMessage::TaskProgress(_)
            | SystemMessage::TaskUpdated(_)
            | SystemMessage::TaskNotification(_) => {
                if let Some(task) = TaskFrame::of(sys) {
                    self.on_task(sys, &task);
                }
            }
            SystemMessage::HookResponse(h) => {
                let outcome = h.outcome.as_str();
                let mut text = format!("{}: {outcome}", h.hook_name);
                let out = text_in(&[("output", Some(&h.output))], &h.extra);
                if !out.is_empty() {
                    text.push('\n');
                    text.push_str(&out);
                }
                let level = if outcome == "success" {
                    "info"
                } else {
                    "warning"
                };
                self.push_system_row(sys, SystemKind::notice("hook", text, level));
            }
            SystemMessage::LocalCommandOutput(m) => {
                self.push_subtype_notice(sys, "info", &[("content", Some(&m.content))]);
            }
            SystemMessage::PluginInstall(m) => {
                self.push_subtype_notice(sys, "info", &[("error", m.error.as_deref())]);
            }
            SystemMessage::Notification(m) => {
                let urgent = m.priority == "high" || m.priority == "immediate";
                let level = if urgent { "warning" } else { "info" };
                self.push_subtype_notice(sys, level, &[("text", Some(&m.text))]);
            }
            SystemMessage::WorkerShuttingDown(m) => {
                self.push_subtype_notice(sys, "warning", &[("reason", Some(&m.reason))]);
            }
            SystemMessage::ModelRefusalFallback(SystemModelRefusalFallback { content, .. })
            | SystemMessage::ModelRefusalNoFallback(SystemModelRefusalNoFallback {
                content, ..
            }) => self.push_subtype_notice(sys, "warning", &[("content", Some(content))]),
            SystemMessage::MirrorError(m) => {
                self.push_subtype_notice(sys, "warning", &[("error", Some(&m.error))]);
            }
            SystemMessage::SessionWritesLost(_) => self.push_subtype_notice(sys, "warning", &[]),
            SystemMessage::CommandsChanged(c) => {
                self.info.commands = c
                    .commands
                    .iter()
                    .filter_map(SlashCommand::from_protocol)
                    .collect();
                self.bump();
            }
            // Known, nothing to show.
            SystemMessage::ThinkingTokens(_)
            | SystemMessage::BackgroundTasksChanged(_)
            | SystemMessage::HookStarted(_)
            | SystemMessage::HookProgress(_)
            | SystemMessage::ControlRequestProgress(_)
            | SystemMessage::ElicitationComplete(_)
            | SystemMessage::FilesPersisted(_)
            | SystemMessage::MemoryRecall(_) => {}
            // The CLI's internal subtypes (kept whole): a few are known to show nothing, the rest
            // are shown raw.
            SystemMessage::Internal(_) if SILENT_INTERNAL.contains(&sub) => {}
            SystemMessage::Internal(raw) => {
                if *source == Source::Relay && !sub.is_empty() {
                    let text = text_of(raw);
                    self.push_system_row(
                        sys,
                        SystemKind::notice(sub.replace('_', " "), text, "info"),
                    );
                } else {
                    self.push_raw(&v.value(), None);
                }
            }
        }
    }

    /// `system/permission_denied`: the tool's card says denied, and a notice says why.
    fn on_permission_denied(&mut self, sys: &SystemMessage, d: &SystemPermissionDenied) {
        if let Some(tool) = self.tools.get_mut(&d.tool_use_id) {
            tool.status = ToolStatus::Denied;
            tool.deny_message = Some(d.message.clone());
            self.touch_tool(&d.tool_use_id);
        }
        let text = format!(
            "{} was denied: {}",
            d.tool_name,
            text_in(&[("message", Some(&d.message))], &d.extra)
        );
        self.push_system_row(
            sys,
            SystemKind::notice("permission denied", text, "warning"),
        );
    }

    /// A notice titled by the subtype of `sys` ("local command output"): its text is found as
    /// [`text_in`] finds it (`known`, the text keys its type models), else it is the title.
    fn push_subtype_notice(
        &mut self,
        sys: &SystemMessage,
        level: &str,
        known: &[(&str, Option<&str>)],
    ) {
        let title = sys.subtype().replace('_', " ");
        let empty = Map::new();
        let mut text = text_in(known, sys.extra().unwrap_or(&empty));
        if text.is_empty() {
            text.clone_from(&title);
        }
        self.push_system_row(sys, SystemKind::notice(title, text, level));
    }

    /// Adds a system row for the message `sys` (its uuid, and the `parent_tool_use_id` a subagent's
    /// frame carries).
    fn push_system_row(&mut self, sys: &SystemMessage, kind: SystemKind) {
        let parent = sys.extra().and_then(|e| extra_str(e, "parent_tool_use_id"));
        self.push_system(sys.uuid(), parent, kind);
    }

    fn on_task(&mut self, sys: &SystemMessage, frame: &TaskFrame<'_>) {
        let task_id = frame.task_id.to_string();
        let tool_id = frame.tool_use_id.map(str::to_string).or_else(|| {
            self.tools
                .values()
                .find(|t| t.task.as_ref().is_some_and(|k| k.task_id == task_id))
                .map(|t| t.id.clone())
        });
        let status = frame.status.clone();
        let summary = frame.summary.map(str::to_string);
        let description = frame.description.map(str::to_string);
        if let Some(id) = tool_id.as_deref()
            && let Some(tool) = self.tools.get_mut(id)
        {
            let task = tool.task.get_or_insert_with(|| TaskInfo {
                task_id: task_id.clone(),
                ..TaskInfo::default()
            });
            if status.is_some() {
                task.status.clone_from(&status);
            }
            if summary.is_some() {
                task.summary.clone_from(&summary);
            }
            if description.is_some() {
                task.description.clone_from(&description);
            }
            self.touch_tool(id);
        }
        if frame.ended {
            let st = status.unwrap_or_else(|| "finished".into());
            let text = summary.unwrap_or_default();
            let level = if st == "completed" { "info" } else { "warning" };
            self.push_system_row(sys, SystemKind::notice(format!("task {st}"), text, level));
        } else if tool_id.is_none() && frame.started {
            let text = description.unwrap_or_default();
            self.push_system_row(sys, SystemKind::notice("task started", text, "info"));
        } else {
            self.bump();
        }
    }
}
