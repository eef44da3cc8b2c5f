//! Control requests (prompts for the person), their answers and cancellations.

use bridge_protocol::{
    ControlRequest, ControlRequestBody, ControlResponse, ControlResponseBody, PersonPrompt,
};
use serde_json::{Map, Value};

use super::{InterruptState, LocalRequest, Session, Source};
use crate::state::agent_info::InfoKind;
use crate::state::item::{Item, ItemKind, SystemKind, SystemRow, ToolStatus};
use crate::state::prompt::{Prompt, PromptKind, SettledBy};

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// Which dialog a `can_use_tool` request gets.
fn can_use_tool_kind(
    tool_name: &str,
    requires_user_interaction: Option<bool>,
    input: &Value,
) -> PromptKind {
    if tool_name == "AskUserQuestion" {
        PromptKind::Question
    } else if tool_name == "ExitPlanMode" {
        PromptKind::PlanApproval
    } else if requires_user_interaction == Some(true) && input.get("questions").is_some() {
        PromptKind::Question
    } else {
        PromptKind::Permission
    }
}

/// What a prompt shows, read from a request a person answers.
struct Asked {
    kind: PromptKind,
    tool_name: String,
    display_name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    decision_reason: Option<String>,
    decision_reason_type: Option<String>,
    blocked_path: Option<String>,
    tool_use_id: Option<String>,
    /// The tool input (or elicitation schema / dialog payload).
    input: Value,
    suggestions: Vec<Value>,
}

impl Asked {
    /// From a typed request: `None` for the subtypes no person answers. Which those are is decided
    /// once, exhaustively, by [`ControlRequestBody::person_prompt`]; a new kind of prompt there
    /// does not compile here until [`Asked::from_json`] reads it.
    fn of(body: &ControlRequestBody) -> Option<Self> {
        use ControlRequestBody as B;
        match body {
            B::CanUseTool(c) => {
                let ex = |k: &str| extra_string(&c.extra, k);
                Some(Asked {
                    kind: can_use_tool_kind(&c.tool_name, c.requires_user_interaction, &c.input),
                    tool_name: c.tool_name.clone(),
                    display_name: c.display_name.clone(),
                    title: c.title.clone(),
                    description: c.description.clone().or_else(|| ex("message")),
                    decision_reason: c.decision_reason.clone(),
                    decision_reason_type: c
                        .decision_reason_type
                        .as_ref()
                        .map(|t| t.as_str().to_string()),
                    blocked_path: c.blocked_path.clone(),
                    tool_use_id: Some(c.tool_use_id.clone()),
                    input: c.input.clone(),
                    suggestions: c
                        .permission_suggestions
                        .iter()
                        .flatten()
                        .filter_map(|u| serde_json::to_value(u).ok())
                        .collect(),
                })
            }
            B::Elicitation(e) => {
                let mut asked =
                    Asked::untyped(PromptKind::Elicitation, e.mcp_server_name.clone(), &e.extra);
                asked.display_name = e.display_name.clone();
                asked.title = e.title.clone();
                asked.description =
                    Some(e.description.clone().unwrap_or_else(|| e.message.clone()));
                asked.input = e
                    .requested_schema
                    .clone()
                    .map_or(Value::Null, Value::Object);
                Some(asked)
            }
            B::RequestUserDialog(d) => {
                let mut asked =
                    Asked::untyped(PromptKind::UserDialog, d.dialog_kind.clone(), &d.extra);
                asked.tool_use_id = d.tool_use_id.clone();
                asked.input = d.payload.clone();
                Some(asked)
            }
            // Nothing a person answers (hook callbacks and MCP messages are the relay's business):
            // `person_prompt` decides which requests those are, exhaustively.
            _ => {
                debug_assert_eq!(body.person_prompt(), None, "{}", body.subtype());
                None
            }
        }
    }

    /// A prompt of `kind` whose fields, besides its name, are read from `fields` (a type's
    /// `extra`, or the JSON of a request that did not decode).
    fn untyped(kind: PromptKind, tool_name: String, fields: &Map<String, Value>) -> Self {
        let ex = |k: &str| extra_string(fields, k);
        Asked {
            kind,
            tool_name,
            display_name: ex("display_name"),
            title: ex("title"),
            description: ex("description").or_else(|| ex("message")),
            decision_reason: ex("decision_reason"),
            decision_reason_type: ex("decision_reason_type"),
            blocked_path: ex("blocked_path"),
            tool_use_id: ex("tool_use_id"),
            input: Value::Null,
            suggestions: fields
                .get("permission_suggestions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        }
    }

    /// From the JSON of a request that did not decode (`req`, the frame's `request`): the prompts a
    /// person answers, by their `subtype`.
    fn from_json(req: &Value) -> Option<Self> {
        let empty = Map::new();
        let fields = req.as_object().unwrap_or(&empty);
        let (kind, name, input) = match PersonPrompt::of_subtype(s(req, "subtype")?)? {
            PersonPrompt::CanUseTool => {
                let input = req
                    .get("input")
                    .cloned()
                    .unwrap_or(Value::Object(Map::new()));
                let name = s(req, "tool_name").unwrap_or_default();
                let kind = can_use_tool_kind(
                    name,
                    req.get("requires_user_interaction")
                        .and_then(Value::as_bool),
                    &input,
                );
                (kind, s(req, "tool_name").unwrap_or("tool"), input)
            }
            PersonPrompt::Elicitation => (
                PromptKind::Elicitation,
                s(req, "mcp_server_name").unwrap_or("MCP server"),
                req.get("requested_schema").cloned().unwrap_or(Value::Null),
            ),
            PersonPrompt::RequestUserDialog => (
                PromptKind::UserDialog,
                s(req, "dialog_kind").unwrap_or("dialog"),
                req.get("payload").cloned().unwrap_or(Value::Null),
            ),
        };
        let mut asked = Asked::untyped(kind, name.to_string(), fields);
        asked.input = input;
        Some(asked)
    }
}

impl Asked {
    fn into_prompt(self, request_id: String, request: Value) -> Prompt {
        Prompt {
            request_id,
            kind: self.kind,
            tool_name: self.tool_name,
            display_name: self.display_name,
            title: self.title,
            description: self.description,
            decision_reason: self.decision_reason,
            decision_reason_type: self.decision_reason_type,
            blocked_path: self.blocked_path,
            tool_use_id: self.tool_use_id,
            input: self.input,
            suggestions: self.suggestions,
            request,
            answered_locally: false,
        }
    }
}

/// The prompt a person answers that a `control_request` frame asks (read from its JSON, as for a
/// request that did not decode: no typed decoder, so the main module can show a waiting prompt
/// before the session part is in); `None` for any other frame.
pub fn prompt_of_frame(v: &Value) -> Option<Prompt> {
    if s(v, "type") != Some("control_request") {
        return None;
    }
    let rid = s(v, "request_id")?;
    let request = v.get("request")?;
    Some(Asked::from_json(request)?.into_prompt(rid.to_string(), request.clone()))
}

fn extra_string(fields: &Map<String, Value>, key: &str) -> Option<String> {
    fields.get(key).and_then(Value::as_str).map(str::to_string)
}

impl Session {
    // ------------------------------------------------------------------ internals: control

    /// A control request a client sent (another controller's, or this console's own echo).
    pub(super) fn on_client_control_request(&mut self, r: &ControlRequest) {
        let rid = r.request_id.clone();
        if let Some(kind) = InfoKind::of_request(&r.request) {
            self.agent_info.asked(&rid, kind);
        }
        if matches!(r.request, ControlRequestBody::Interrupt(_))
            && !self.local_requests.contains_key(&rid)
        {
            self.interrupt = Some(InterruptState::Requested);
            self.local_requests.insert(rid, LocalRequest::Interrupt);
            self.bump();
        }
    }

    /// A control request the CLI sent: the ones a person answers become prompts (their fields
    /// read from the typed request; the frame's `request` JSON is kept for the dialogs); any other
    /// is shown raw.
    pub(super) fn on_control_request(&mut self, r: &ControlRequest, v: &Value) {
        self.request_prompt(r.request_id.clone(), Asked::of(&r.request), v, None);
    }

    /// A `control_request` that did not decode (a field of a known subtype does not fit). The CLI
    /// waits for its answer, so a prompt a person answers is still offered (from the frame's JSON)
    /// besides the raw row with the error.
    pub(super) fn on_undecoded_control_request(&mut self, v: &Value, error: &str) {
        let Some(rid) = s(v, "request_id") else {
            return self.push_raw(v, Some(error));
        };
        let asked = Asked::from_json(v.get("request").unwrap_or(&Value::Null));
        if asked.is_some() {
            self.push_raw(v, Some(error));
        }
        self.request_prompt(rid.to_string(), asked, v, Some(error));
    }

    fn request_prompt(
        &mut self,
        rid: String,
        asked: Option<Asked>,
        v: &Value,
        error: Option<&str>,
    ) {
        let Some(asked) = asked else {
            if let std::collections::hash_map::Entry::Vacant(e) = self.settled.entry(rid) {
                e.insert(SettledBy::Other);
                self.push_raw(v, error);
            }
            return;
        };
        if self.settled.contains_key(&rid) || self.prompts.iter().any(|p| p.request_id == rid) {
            return;
        }
        let prompt = asked.into_prompt(
            rid.clone(),
            v.get("request").cloned().unwrap_or(Value::Null),
        );
        let tool_use_id = prompt.tool_use_id.clone();
        self.prompts.push(prompt);
        if let Some(id) = tool_use_id.as_deref()
            && let Some(tool) = self.tools.get_mut(id)
        {
            tool.permission_request = Some(rid);
            if matches!(tool.status, ToolStatus::Streaming | ToolStatus::Running) {
                tool.status = ToolStatus::PendingPermission;
            }
            self.touch_tool(id);
        }
        self.bump();
    }

    pub(super) fn settle(&mut self, request_id: &str, by: SettledBy, answer: Option<&Value>) {
        let Some(pos) = self.prompts.iter().position(|p| p.request_id == request_id) else {
            return;
        };
        let prompt = self.prompts.remove(pos);
        if by != SettledBy::Me && !prompt.answered_locally && !self.observer && !self.replaying {
            let what = prompt.display_name.as_deref().unwrap_or(&prompt.tool_name);
            let text = match by {
                SettledBy::Cancelled => format!("Claude Code withdrew the request for {what}."),
                _ => format!("The request for {what} was answered in another window."),
            };
            self.notice(text);
        }
        self.settled.insert(request_id.to_string(), by.clone());
        if prompt.kind == PromptKind::Elicitation {
            self.record_form_answer(&prompt, &by, answer);
        }
        if let Some(id) = prompt.tool_use_id.as_deref()
            && let Some(tool) = self.tools.get_mut(id)
        {
            let behavior = answer.and_then(|a| s(a, "behavior"));
            match behavior {
                Some("allow") => {
                    if tool.status == ToolStatus::PendingPermission {
                        tool.status = ToolStatus::Running;
                    }
                    if prompt.kind == PromptKind::Permission
                        && let Some(updated) = answer.and_then(|a| a.get("updatedInput"))
                        && updated.is_object()
                        && updated != &tool.input
                        && updated != &prompt.input
                    {
                        tool.ran_input = Some(updated.clone());
                    }
                }
                Some("deny") => {
                    if tool.output.is_none() {
                        tool.status = ToolStatus::Denied;
                    }
                    tool.deny_message = answer.and_then(|a| s(a, "message")).map(str::to_string);
                }
                _ => {
                    if tool.status == ToolStatus::PendingPermission {
                        tool.status = ToolStatus::Running;
                    }
                }
            }
            self.touch_tool(id);
        }
        self.bump();
    }

    pub(super) fn on_control_response(&mut self, source: &Source, r: &ControlResponse) {
        let (rid, ok, body, error) = match &r.response {
            ControlResponseBody::Success(ok) => (
                ok.request_id.clone(),
                true,
                ok.response.clone().unwrap_or(Value::Null),
                None,
            ),
            ControlResponseBody::Error(e) => (
                e.request_id.clone(),
                false,
                Value::Null,
                Some(e.error.as_str()),
            ),
            ControlResponseBody::Other(raw) => {
                let Some(rid) = s(raw, "request_id") else {
                    return;
                };
                (
                    rid.to_string(),
                    s(raw, "subtype") != Some("error"),
                    raw.get("response").cloned().unwrap_or(Value::Null),
                    s(raw, "error"),
                )
            }
        };
        if let Some(p) = self.prompts.iter().find(|p| p.request_id == rid) {
            let by = if p.answered_locally {
                SettledBy::Me
            } else {
                SettledBy::Other
            };
            if *source == Source::Relay && !p.answered_locally && !self.observer {
                let msg = s(&body, "message")
                    .unwrap_or("no controller answered in time")
                    .to_string();
                self.notice(format!("The relay answered for you: {msg}"));
            }
            self.settle(&rid, by, Some(&body));
            return;
        }
        if self.settled.contains_key(&rid) {
            return; // the second echo of an answer
        }
        if self.agent_info.on_response(&rid, ok, &body, error) {
            return self.bump();
        }
        if let Some(req) = self.local_requests.remove(&rid) {
            let error = error.unwrap_or("error").to_string();
            match req {
                LocalRequest::Interrupt => {
                    self.interrupt = Some(if ok {
                        InterruptState::Acknowledged
                    } else {
                        InterruptState::Failed(error.clone())
                    });
                }
                LocalRequest::SetModel(m) if ok => {
                    self.info.model_choice.clone_from(&m);
                    self.info.model = Some(
                        s(&body, "model")
                            .map(str::to_string)
                            .or(m)
                            .unwrap_or("default".into()),
                    );
                }
                LocalRequest::SetPermissionMode(m) if ok => {
                    self.info.permission_mode = Some(s(&body, "mode").map_or(m, str::to_string));
                }
                LocalRequest::Initialize if ok => self.set_initialize(&body),
                _ => {}
            }
            if !ok {
                self.notice(format!("The CLI refused a request: {error}"));
            }
            self.bump();
            return;
        }
        if ok && body.get("models").is_some() {
            self.set_initialize(&body);
        } else if let Some(mode) = s(&body, "mode") {
            self.info.permission_mode = Some(mode.to_string());
            self.bump();
        }
        // Remember answers to prompts not seen (yet), so a late request is not shown as open.
        if body.get("behavior").is_some() || body.get("action").is_some() {
            self.settled.insert(rid, SettledBy::Other);
        }
    }

    /// Keeps what was answered to an MCP form in the transcript (the tool's result need not say).
    pub(super) fn record_form_answer(
        &mut self,
        prompt: &Prompt,
        by: &SettledBy,
        answer: Option<&Value>,
    ) {
        let key = format!("form:{}", prompt.request_id);
        if self.items.contains_key(&key) {
            return;
        }
        let action = answer.and_then(|a| s(a, "action"));
        let who = match by {
            SettledBy::Me => "You",
            _ if self.observer => "The controller",
            _ => "Another window",
        };
        let (text, level) = match (by, action) {
            (SettledBy::Cancelled, _) => (
                "Withdrawn by Claude Code before it was answered.".to_string(),
                "notice",
            ),
            (_, Some("accept")) => {
                let values = answer
                    .and_then(|a| a.get("content"))
                    .and_then(Value::as_object)
                    .map(|c| {
                        c.iter()
                            .map(|(k, v)| format!("{k} = {}", form_value(v)))
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default();
                if values.is_empty() {
                    (format!("{who} submitted the form."), "info")
                } else {
                    (format!("{who} submitted: {values}"), "info")
                }
            }
            (_, Some("decline")) => (format!("{who} declined to answer."), "notice"),
            (_, Some("cancel")) => (format!("{who} dismissed the form."), "notice"),
            _ => (format!("{who} answered."), "info"),
        };
        self.insert_item(Item {
            key,
            rev: 0,
            parent: None,
            kind: ItemKind::System(SystemRow {
                uuid: None,
                kind: SystemKind::notice(format!("form · {}", prompt.tool_name), text, level),
            }),
        });
    }

    pub(super) fn on_cancel(&mut self, rid: &str) {
        let rid = rid.to_string();
        if self.prompts.iter().any(|p| p.request_id == rid) {
            self.settle(&rid, SettledBy::Cancelled, None);
        } else {
            self.settled.entry(rid).or_insert(SettledBy::Cancelled);
        }
    }
}

/// A form value as a person reads it: text as is (cut at 200 characters), yes / no, numbers, else JSON.
fn form_value(v: &Value) -> String {
    let text = match v {
        Value::String(t) => t.clone(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        other => other.to_string(),
    };
    if text.chars().count() > 200 {
        format!("{}…", text.chars().take(200).collect::<String>())
    } else {
        text
    }
}
