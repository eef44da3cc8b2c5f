//! Prompts shown before the session has loaded (issue 29): a notification that Claude needs the
//! person opens `/s/<id>`, and the relay's pre-rendered page carries the prompts that session waits
//! on (`prompts` in the boot data, see `crates/relay/src/http/first_screen.rs`). The console shows
//! the first one's dialog as soon as the dialogs part is in — before the session part, its history
//! and its live connection, which load after it — and answers it over HTTP like any other.
//!
//! The early dialog keeps its prompt until it is answered here or the session's model says it was
//! settled (answered elsewhere, withdrawn): the session view's prompt dock leaves a prompt this
//! handle holds to it, so the dialog the person may be editing is never replaced by another copy
//! when the session view arrives.

use bridge_protocol::PersonPrompt;
use leptos::prelude::*;
use serde_json::Value;

use crate::state::Session;

/// The waiting prompts of one session, known before its model has them: the `control_request`
/// frames as the relay put them in the page. They are read into prompts only where they are shown
/// (`crate::state::prompt_of_frame`, in the dialogs part), so the main module carries none of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Waiting {
    /// The session they belong to.
    pub session_id: String,
    /// Oldest first: `control_request` frames of subtypes a person answers.
    pub requests: Vec<Value>,
}

/// A frame's `request_id`.
fn rid(frame: &Value) -> &str {
    frame
        .get("request_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Whether a request's dialog can be shown before the session has loaded: one a person answers,
/// except a plan approval whose plan is not in the request (the real CLI asks with an empty input;
/// the plan is in the model's `tool_use`, which only the session's history has — approving a plan
/// not shown is not offered).
fn shown_early(request: &Value) -> bool {
    let subtype = request.get("subtype").and_then(Value::as_str);
    if subtype.and_then(PersonPrompt::of_subtype).is_none() {
        return false;
    }
    let plan_missing = request.get("tool_name").and_then(Value::as_str) == Some("ExitPlanMode")
        && request
            .get("input")
            .and_then(|i| i.get("plan"))
            .and_then(Value::as_str)
            .is_none_or(|p| p.trim().is_empty());
    !plan_missing
}

impl Waiting {
    /// Reads the boot data's `prompts` (`{"session_id": …, "requests": [control_request, …]}`);
    /// requests no person answers, and anything else, are skipped.
    pub fn from_boot(v: &Value) -> Option<Waiting> {
        let session_id = v.get("session_id")?.as_str()?.to_string();
        let requests: Vec<Value> = v
            .get("requests")?
            .as_array()?
            .iter()
            .filter(|f| {
                f.get("type").and_then(Value::as_str) == Some("control_request")
                    && !rid(f).is_empty()
                    && f.get("request").is_some_and(shown_early)
            })
            .cloned()
            .collect();
        (!requests.is_empty()).then_some(Waiting {
            session_id,
            requests,
        })
    }
}

/// The handle: cheap to copy, provided in context through the store.
#[derive(Clone, Copy)]
pub struct EarlyPrompts {
    waiting: RwSignal<Option<Waiting>>,
}

impl Default for EarlyPrompts {
    fn default() -> Self {
        Self::new()
    }
}

impl EarlyPrompts {
    /// Nothing waiting.
    pub fn new() -> Self {
        EarlyPrompts {
            waiting: RwSignal::new(None),
        }
    }

    /// The prompts a page came with.
    pub fn seed(&self, waiting: Waiting) {
        self.waiting.set(Some(waiting));
    }

    /// Whether any prompt waits for `session_id` (untracked: for deciding what loads first).
    pub fn any_for(&self, session_id: &str) -> bool {
        self.waiting.with_untracked(|w| Self::has(w, session_id))
    }

    /// Whether any prompt waits for `session_id` (tracked: whether the early dialog shows).
    pub fn showing(&self, session_id: &str) -> bool {
        self.waiting.with(|w| Self::has(w, session_id))
    }

    fn has(w: &Option<Waiting>, session_id: &str) -> bool {
        w.as_ref()
            .is_some_and(|w| w.session_id == session_id && !w.requests.is_empty())
    }

    /// The frame of the prompt to show for `session_id` (the oldest) and how many wait (tracked).
    pub fn head(&self, session_id: &str) -> Option<(Value, usize)> {
        self.waiting.with(|w| {
            let w = w.as_ref().filter(|w| w.session_id == session_id)?;
            Some((w.requests.first()?.clone(), w.requests.len()))
        })
    }

    /// Whether this handle holds `request_id` of `session_id` (tracked): the prompt dock leaves it
    /// to the early dialog.
    pub fn holds(&self, session_id: &str, request_id: &str) -> bool {
        self.waiting.with(|w| {
            w.as_ref().is_some_and(|w| {
                w.session_id == session_id && w.requests.iter().any(|f| rid(f) == request_id)
            })
        })
    }

    /// Takes `request_id` out (it is being answered), returning its frame if it was here.
    pub fn take(&self, request_id: &str) -> Option<Value> {
        if !self.waiting.with_untracked(|w| {
            w.as_ref()
                .is_some_and(|w| w.requests.iter().any(|f| rid(f) == request_id))
        }) {
            return None;
        }
        let mut taken = None;
        self.waiting.update(|w| {
            if let Some(w) = w
                && let Some(pos) = w.requests.iter().position(|f| rid(f) == request_id)
            {
                taken = Some(w.requests.remove(pos));
            }
        });
        taken
    }

    /// Puts back a prompt whose answer was not delivered (oldest first again).
    pub fn put_back(&self, session_id: &str, frame: Value) {
        self.waiting.update(|w| {
            if let Some(w) = w.as_mut().filter(|w| w.session_id == session_id)
                && !w.requests.iter().any(|f| rid(f) == rid(&frame))
            {
                w.requests.insert(0, frame);
            }
        });
    }

    /// Drops what the session's model saw settled (answered elsewhere, withdrawn by the CLI).
    pub fn drop_settled(&self, session_id: &str, model: &Session) {
        let stale = self.waiting.with_untracked(|w| {
            w.as_ref().is_some_and(|w| {
                w.session_id == session_id && w.requests.iter().any(|f| model.is_settled(rid(f)))
            })
        });
        if stale {
            self.waiting.update(|w| {
                if let Some(w) = w {
                    w.requests.retain(|f| !model.is_settled(rid(f)));
                }
            });
        }
    }

    /// Forgets the prompts of any session but `session_id` (another session was opened).
    pub fn keep_only(&self, session_id: Option<&str>) {
        let other = self.waiting.with_untracked(|w| {
            w.as_ref()
                .is_some_and(|w| Some(w.session_id.as_str()) != session_id)
        });
        if other {
            self.waiting.set(None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{PromptKind, prompt_of_frame};
    use serde_json::json;

    fn boot() -> Value {
        json!({
            "session_id": "cse_a",
            "requests": [
                {"type": "control_request", "request_id": "r1", "request": {
                    "subtype": "can_use_tool", "tool_name": "Bash", "tool_use_id": "tu1",
                    "input": {"command": "<img src=x onerror=alert(1)>"},
                    "permission_suggestions": [{"type": "addRules", "behavior": "allow",
                        "destination": "session", "rules": [{"toolName": "Bash"}]}]}},
                {"type": "control_request", "request_id": "r2", "request": {"subtype": "interrupt"}},
                {"type": "control_request", "request_id": "r3", "request": {
                    "subtype": "elicitation", "mcp_server_name": "db", "message": "Pick one",
                    "requested_schema": {"type": "object"}}},
                {"type": "assistant", "request_id": "r4"},
                {"type": "control_request", "request_id": "r5", "request": {
                    "subtype": "can_use_tool", "tool_name": "ExitPlanMode", "tool_use_id": "tu5",
                    "input": {}}},
                {"type": "control_request", "request_id": "r6", "request": {
                    "subtype": "can_use_tool", "tool_name": "ExitPlanMode", "tool_use_id": "tu6",
                    "input": {"plan": "# The plan"}}},
                "not a frame"
            ]
        })
    }

    #[test]
    fn the_boot_data_gives_the_prompts_a_person_answers() {
        let w = Waiting::from_boot(&boot()).unwrap();
        assert_eq!(w.session_id, "cse_a");
        let ids: Vec<_> = w.requests.iter().map(rid).collect();
        assert_eq!(
            ids,
            ["r1", "r3", "r6"],
            "an interrupt or another frame is no prompt; a plan not in the request waits for the session"
        );
        let p = prompt_of_frame(&w.requests[0]).unwrap();
        assert_eq!(p.request_id, "r1");
        assert_eq!(p.kind, PromptKind::Permission);
        assert_eq!(p.tool_name, "Bash");
        assert_eq!(p.tool_use_id.as_deref(), Some("tu1"));
        assert_eq!(p.input["command"], "<img src=x onerror=alert(1)>");
        assert_eq!(p.suggestions.len(), 1);
        let e = prompt_of_frame(&w.requests[1]).unwrap();
        assert_eq!(e.kind, PromptKind::Elicitation);
        assert_eq!(e.description.as_deref(), Some("Pick one"));
        assert!(prompt_of_frame(&json!({"type": "assistant"})).is_none());
        assert!(Waiting::from_boot(&json!({"session_id": "cse_a", "requests": []})).is_none());
        assert!(Waiting::from_boot(&json!({"requests": []})).is_none());
    }

    #[test]
    fn a_prompt_is_held_until_taken_put_back_or_settled() {
        let owner = Owner::new();
        owner.with(|| {
            let early = EarlyPrompts::new();
            early.seed(Waiting::from_boot(&boot()).unwrap());
            assert!(early.any_for("cse_a"));
            assert!(!early.any_for("cse_b"));
            let head = |e: &EarlyPrompts| e.head("cse_a").map(|(f, n)| (rid(&f).to_string(), n));
            assert_eq!(head(&early), Some(("r1".into(), 3)));
            assert!(early.head("cse_b").is_none());
            assert!(early.showing("cse_a"));
            assert!(early.holds("cse_a", "r1"));

            let p = early.take("r1").unwrap();
            assert!(!early.holds("cse_a", "r1"));
            assert!(early.take("r1").is_none());
            assert_eq!(head(&early), Some(("r3".into(), 2)));
            early.put_back("cse_a", p);
            assert_eq!(head(&early), Some(("r1".into(), 3)));

            // The model saw r1 answered elsewhere: it goes.
            let mut model = Session::default();
            model.apply_text(
                crate::state::Source::Client,
                r#"{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"behavior":"allow","updatedInput":{}}}}"#,
            );
            assert!(model.is_settled("r1"));
            early.drop_settled("cse_a", &model);
            assert!(!early.holds("cse_a", "r1"));
            assert!(early.holds("cse_a", "r3"));

            early.keep_only(Some("cse_a"));
            assert!(early.any_for("cse_a"));
            early.keep_only(Some("cse_b"));
            assert!(!early.any_for("cse_a"));
        });
    }
}
