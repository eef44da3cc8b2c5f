//! `system` frames by subtype, and the background tasks they report.

use bridge_protocol::SystemMessage;
use serde_json::Value;

use super::{Session, SlashCommand, Source};
use crate::state::item::{SystemKind, TaskInfo, ToolStatus};

/// Internal subtypes that show nothing.
const SILENT_INTERNAL: &[&str] = &["post_turn_summary", "task_summary", "session_metadata"];

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn u(v: &Value, key: &str) -> Option<u64> {
    v.get(key)
        .and_then(|x| x.as_u64().or_else(|| x.as_f64().map(|f| f.max(0.0) as u64)))
}

/// The text a system frame carries, whichever field it is in.
pub(super) fn text_of(v: &Value) -> String {
    [
        "content", "text", "message", "reason", "error", "output", "summary",
    ]
    .iter()
    .find_map(|k| s(v, k))
    .unwrap_or_default()
    .to_string()
}

impl Session {
    /// A `system` frame: dispatched on its typed subtype; the fields shown are read from the frame
    /// as it came (`v`).
    pub(super) fn on_system(&mut self, source: &Source, sys: &SystemMessage, v: &Value) {
        let sub = sys.subtype();
        match sys {
            SystemMessage::Init(_) => {
                let model = s(v, "model").unwrap_or_default().to_string();
                let cwd = s(v, "cwd").unwrap_or_default().to_string();
                let mode = s(v, "permissionMode").unwrap_or_default().to_string();
                let version = s(v, "claude_code_version").unwrap_or_default().to_string();
                let tools: Vec<String> = v
                    .get("tools")
                    .and_then(Value::as_array)
                    .map(|t| {
                        t.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                self.info.model = Some(model.clone());
                self.info.cwd = Some(cwd.clone());
                self.info.permission_mode = Some(mode.clone());
                self.info.version = Some(version.clone());
                self.info.tools.clone_from(&tools);
                self.turn_running = true;
                let sig = (model.clone(), mode.clone(), cwd.clone());
                if self.last_init.as_ref() != Some(&sig) {
                    self.last_init = Some(sig);
                    self.push_system_raw(
                        v,
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
            SystemMessage::Status(_) => {
                match s(v, "status") {
                    Some("requesting") => self.turn_running = true,
                    Some("compacting") => self.compacting = true,
                    _ => self.compacting = false,
                }
                if let Some(mode) = s(v, "permissionMode") {
                    self.info.permission_mode = Some(mode.to_string());
                }
                if s(v, "compact_result") == Some("failed") {
                    let text = s(v, "compact_error")
                        .unwrap_or("Compaction failed.")
                        .to_string();
                    self.push_system_raw(
                        v,
                        SystemKind::Notice {
                            title: "compaction".into(),
                            text,
                            level: "error".into(),
                        },
                    );
                }
                self.bump();
            }
            SystemMessage::CompactBoundary(_) => {
                let meta = v.get("compact_metadata").cloned().unwrap_or(Value::Null);
                self.push_system_raw(
                    v,
                    SystemKind::CompactBoundary {
                        trigger: s(&meta, "trigger").unwrap_or("auto").to_string(),
                        pre_tokens: u(&meta, "pre_tokens"),
                        post_tokens: u(&meta, "post_tokens"),
                    },
                );
            }
            SystemMessage::ApiRetry(_) => self.push_system_raw(
                v,
                SystemKind::ApiRetry {
                    attempt: u(v, "attempt").unwrap_or(0),
                    max_retries: u(v, "max_retries").unwrap_or(0),
                    delay_ms: u(v, "retry_delay_ms").unwrap_or(0),
                    error: s(v, "error").unwrap_or("unknown").to_string(),
                    status: u(v, "error_status"),
                },
            ),
            SystemMessage::SessionStateChanged(_) => match s(v, "state") {
                Some("ended") => {
                    self.ended = true;
                    self.turn_running = false;
                    self.close_streaming(None);
                    self.push_system_raw(
                        v,
                        SystemKind::Ended {
                            exit_code: v.get("exit_code").and_then(Value::as_i64),
                            signal: v.get("signal").and_then(Value::as_i64),
                            stderr_tail: s(v, "stderr_tail").unwrap_or_default().to_string(),
                        },
                    );
                }
                Some("running") => {
                    self.turn_running = true;
                    self.bump();
                }
                Some("idle") => {
                    self.turn_running = false;
                    self.bump();
                }
                _ => self.bump(),
            },
            SystemMessage::Informational(_) => {
                let level = s(v, "level").unwrap_or("info").to_string();
                self.push_system_raw(
                    v,
                    SystemKind::Notice {
                        title: "information".into(),
                        text: text_of(v),
                        level,
                    },
                );
            }
            SystemMessage::PermissionDenied(_) => {
                if let Some(id) = s(v, "tool_use_id")
                    && let Some(tool) = self.tools.get_mut(id)
                {
                    tool.status = ToolStatus::Denied;
                    tool.deny_message = s(v, "message").map(str::to_string);
                    self.touch_tool(id);
                }
                let text = format!(
                    "{} was denied: {}",
                    s(v, "tool_name").unwrap_or("A tool"),
                    text_of(v)
                );
                self.push_system_raw(
                    v,
                    SystemKind::Notice {
                        title: "permission denied".into(),
                        text,
                        level: "warning".into(),
                    },
                );
            }
            SystemMessage::TaskStarted(_)
            | SystemMessage::TaskProgress(_)
            | SystemMessage::TaskUpdated(_)
            | SystemMessage::TaskNotification(_) => self.on_task(v, sub),
            SystemMessage::HookResponse(_) => {
                let name = s(v, "hook_name").or(s(v, "hook_event")).unwrap_or("hook");
                let outcome = s(v, "outcome").unwrap_or("success");
                let mut text = format!("{name}: {outcome}");
                let out = text_of(v);
                if !out.is_empty() {
                    text.push('\n');
                    text.push_str(&out);
                }
                let level = if outcome == "success" {
                    "info"
                } else {
                    "warning"
                };
                self.push_system_raw(
                    v,
                    SystemKind::Notice {
                        title: "hook".into(),
                        text,
                        level: level.into(),
                    },
                );
            }
            SystemMessage::LocalCommandOutput(_)
            | SystemMessage::Notification(_)
            | SystemMessage::WorkerShuttingDown(_)
            | SystemMessage::ModelRefusalFallback(_)
            | SystemMessage::ModelRefusalNoFallback(_)
            | SystemMessage::MirrorError(_)
            | SystemMessage::SessionWritesLost(_)
            | SystemMessage::PluginInstall(_) => {
                let level = match sub {
                    "local_command_output" | "plugin_install" => "info",
                    "notification" => s(v, "priority").map_or("info", |p| {
                        if p == "high" || p == "immediate" {
                            "warning"
                        } else {
                            "info"
                        }
                    }),
                    _ => "warning",
                };
                let mut text = text_of(v);
                if text.is_empty() {
                    text = sub.replace('_', " ");
                }
                self.push_system_raw(
                    v,
                    SystemKind::Notice {
                        title: sub.replace('_', " "),
                        text,
                        level: level.into(),
                    },
                );
            }
            SystemMessage::CommandsChanged(_) => {
                if let Some(cmds) = v.get("commands").and_then(Value::as_array) {
                    self.info.commands = cmds.iter().filter_map(SlashCommand::from_json).collect();
                }
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
            // The CLI's internal subtypes: a few are known to show nothing, the rest are shown raw.
            SystemMessage::Internal(_) if SILENT_INTERNAL.contains(&sub) => {}
            SystemMessage::Internal(_) => {
                if *source == Source::Relay && !sub.is_empty() {
                    let text = text_of(v);
                    self.push_system_raw(
                        v,
                        SystemKind::Notice {
                            title: sub.replace('_', " "),
                            text,
                            level: "info".into(),
                        },
                    );
                } else {
                    self.push_raw(v, None);
                }
            }
        }
    }

    /// Adds a system row for the frame `v` (its uuid and parent read from it).
    fn push_system_raw(&mut self, v: &Value, kind: SystemKind) {
        let parent = s(v, "parent_tool_use_id");
        self.push_system(s(v, "uuid"), parent, kind);
    }

    pub(super) fn on_task(&mut self, v: &Value, sub: &str) {
        let task_id = s(v, "task_id").unwrap_or_default().to_string();
        let tool_id = s(v, "tool_use_id").map(str::to_string).or_else(|| {
            self.tools
                .values()
                .find(|t| t.task.as_ref().is_some_and(|k| k.task_id == task_id))
                .map(|t| t.id.clone())
        });
        let status = match sub {
            "task_started" | "task_progress" => Some("running".to_string()),
            "task_updated" => v
                .get("patch")
                .and_then(|p| s(p, "status"))
                .map(str::to_string),
            _ => s(v, "status").map(str::to_string),
        };
        let summary = s(v, "summary").map(str::to_string);
        let description = s(v, "description").map(str::to_string);
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
        if sub == "task_notification" {
            let st = status.unwrap_or_else(|| "finished".into());
            let text = summary.unwrap_or_default();
            let level = if st == "completed" { "info" } else { "warning" };
            self.push_system_raw(
                v,
                SystemKind::Notice {
                    title: format!("task {st}"),
                    text,
                    level: level.into(),
                },
            );
        } else if tool_id.is_none() && sub == "task_started" {
            let text = description.unwrap_or_default();
            self.push_system_raw(
                v,
                SystemKind::Notice {
                    title: "task started".into(),
                    text,
                    level: "info".into(),
                },
            );
        } else {
            self.bump();
        }
    }
}
