//! Answers to the CLI's prompts other than a plain allow/deny: an MCP server's `elicitation`
//! (accept with content, decline, cancel), a `request_user_dialog` (completed, cancelled) and the
//! `updatedInput` that answers an `AskUserQuestion` tool call. Plan approval's "auto-accept edits"
//! is [`PermissionUpdate::set_mode`] with `acceptEdits` / `session`; permission suggestions are
//! edited with [`PermissionUpdate`]'s setters.
//!
//! [`PermissionUpdate::set_mode`]: crate::PermissionUpdate::set_mode
//! [`PermissionUpdate`]: crate::PermissionUpdate

use serde_json::{Map, Value};

use crate::control::{ElicitationResponse, UserDialogResponse};
use crate::message::ClientMessage;
use crate::values::{DialogBehavior, ElicitationAction};

/// Answers an `elicitation`: `{"action":…}` plus `content` (only with `accept`).
pub fn elicitation(
    request_id: &str,
    action: ElicitationAction,
    content: Option<Map<String, Value>>,
) -> ClientMessage {
    let body = ElicitationResponse {
        action,
        content,
        extra: Map::new(),
    };
    super::success(
        request_id,
        Some(serde_json::to_value(body).expect("an ElicitationResponse serializes to JSON")),
    )
}

/// Answers a `request_user_dialog`: `{"behavior":"completed"|"cancelled"}`.
pub fn user_dialog(request_id: &str, behavior: DialogBehavior) -> ClientMessage {
    let body = UserDialogResponse {
        behavior,
        result: None,
        extra: Map::new(),
    };
    super::success(
        request_id,
        Some(serde_json::to_value(body).expect("a UserDialogResponse serializes to JSON")),
    )
}

/// The `updatedInput` that answers an `AskUserQuestion` call: the tool's `input` (kept whole) plus
/// `answers: {question: "label, label"}` — each question's picks (and free answer) joined with
/// `", "`, in the order given; a question with nothing picked is left out. Send it with
/// [`super::allow`] (or [`super::value::allow`]).
pub fn question_answers<Q, P>(input: &Value, picks: impl IntoIterator<Item = (Q, P)>) -> Value
where
    Q: Into<String>,
    P: IntoIterator,
    P::Item: AsRef<str>,
{
    let mut answers = Map::new();
    for (question, picked) in picks {
        let picked: Vec<String> = picked.into_iter().map(|p| p.as_ref().to_owned()).collect();
        if !picked.is_empty() {
            answers.insert(question.into(), Value::String(picked.join(", ")));
        }
    }
    let mut obj = input.as_object().cloned().unwrap_or_default();
    obj.insert("answers".to_owned(), Value::Object(answers));
    Value::Object(obj)
}

/// The same answers as JSON payloads (see [`super::value`]), equal to `serde_json::to_value` of the
/// typed builder of the same meaning.
pub mod value {
    use serde_json::{Map, Value};

    use crate::values::{DialogBehavior, ElicitationAction};

    fn elicitation(request_id: &str, action: ElicitationAction, content: Option<Value>) -> Value {
        let mut body = Map::new();
        body.insert(
            "action".to_owned(),
            Value::String(action.as_str().to_owned()),
        );
        if let Some(content) = content {
            body.insert("content".to_owned(), content);
        }
        super::super::value::success(request_id, Some(Value::Object(body)))
    }

    /// Accepts an `elicitation` with the form's `content`: `{"action":"accept","content":{…}}`.
    pub fn elicitation_accept(request_id: &str, content: Map<String, Value>) -> Value {
        elicitation(
            request_id,
            ElicitationAction::Accept,
            Some(Value::Object(content)),
        )
    }

    /// Declines an `elicitation`: `{"action":"decline"}`.
    pub fn elicitation_decline(request_id: &str) -> Value {
        elicitation(request_id, ElicitationAction::Decline, None)
    }

    /// Cancels an `elicitation`: `{"action":"cancel"}`.
    pub fn elicitation_cancel(request_id: &str) -> Value {
        elicitation(request_id, ElicitationAction::Cancel, None)
    }

    /// Answers a `request_user_dialog`: `{"behavior":"completed"|"cancelled"}`.
    pub fn user_dialog(request_id: &str, behavior: DialogBehavior) -> Value {
        let mut body = Map::new();
        body.insert(
            "behavior".to_owned(),
            Value::String(behavior.as_str().to_owned()),
        );
        super::super::value::success(request_id, Some(Value::Object(body)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::build;
    use crate::permission::{PermissionRuleValue, PermissionUpdate};
    use crate::values::{PermissionBehavior, PermissionMode, PermissionUpdateDestination};

    fn success(rid: &str, response: Value) -> Value {
        json!({"type": "control_response",
            "response": {"subtype": "success", "request_id": rid, "response": response}})
    }

    fn typed(msg: &ClientMessage) -> Value {
        serde_json::to_value(msg).unwrap()
    }

    #[test]
    fn elicitation_answers() {
        let mut content = Map::new();
        content.insert("name".into(), json!("Ada"));
        content.insert("age".into(), json!(36));
        let accept = value::elicitation_accept("r1", content.clone());
        assert_eq!(
            accept,
            success(
                "r1",
                json!({"action": "accept", "content": {"name": "Ada", "age": 36}})
            )
        );
        assert_eq!(
            serde_json::to_string(&accept).unwrap(),
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"action":"accept","content":{"name":"Ada","age":36}}}}"#
        );
        assert_eq!(
            accept,
            typed(&elicitation("r1", ElicitationAction::Accept, Some(content)))
        );
        let decline = value::elicitation_decline("r2");
        assert_eq!(decline, success("r2", json!({"action": "decline"})));
        assert_eq!(
            decline,
            typed(&elicitation("r2", ElicitationAction::Decline, None))
        );
        let cancel = value::elicitation_cancel("r3");
        assert_eq!(cancel, success("r3", json!({"action": "cancel"})));
        assert_eq!(
            cancel,
            typed(&elicitation("r3", ElicitationAction::Cancel, None))
        );
    }

    #[test]
    fn user_dialog_answers() {
        for (behavior, word) in [
            (DialogBehavior::Completed, "completed"),
            (DialogBehavior::Cancelled, "cancelled"),
        ] {
            let v = value::user_dialog("d1", behavior.clone());
            assert_eq!(v, success("d1", json!({"behavior": word})));
            assert_eq!(v, typed(&user_dialog("d1", behavior)));
        }
    }

    #[test]
    fn question_answers_keep_the_input_and_join_picks() {
        let input = json!({"questions": [{"question": "Which DB?"}, {"question": "Extras?"},
            {"question": "Unanswered?"}]});
        let out = question_answers(
            &input,
            [
                ("Which DB?", vec!["SQLite"]),
                ("Extras?", vec!["Cache", "Logs"]),
                ("Unanswered?", vec![]),
            ],
        );
        assert_eq!(out["questions"], input["questions"], "the input is kept");
        assert_eq!(
            serde_json::to_string(&out["answers"]).unwrap(),
            r#"{"Which DB?":"SQLite","Extras?":"Cache, Logs"}"#,
            "answers in question order, picks joined with \", \", unanswered left out"
        );
        assert_eq!(
            question_answers(&Value::Null, [("Q", ["a"])]),
            json!({"answers": {"Q": "a"}})
        );
    }

    #[test]
    fn plan_approval_accept_edits_is_a_session_set_mode() {
        let update = PermissionUpdate::set_mode(
            PermissionMode::AcceptEdits,
            PermissionUpdateDestination::Session,
        );
        let msg = build::value::allow("p1", Some("t1"), json!({"plan": "x"}), vec![update]);
        assert_eq!(
            serde_json::to_string(&msg["response"]["response"]).unwrap(),
            r#"{"behavior":"allow","updatedInput":{"plan":"x"},"updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}],"toolUseID":"t1"}"#
        );
    }

    #[test]
    fn edited_suggestions_serialize_as_the_cli_expects() {
        let mut rules: PermissionUpdate = serde_json::from_value(json!({"type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "touch created.txt"}],
            "behavior": "allow", "destination": "localSettings"}))
        .unwrap();
        rules.set_rule_content(0, "touch:*");
        rules.set_destination(PermissionUpdateDestination::Session);
        assert_eq!(
            serde_json::to_string(&rules).unwrap(),
            r#"{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch:*"}],"behavior":"allow","destination":"session"}"#
        );
        rules.set_rule_content(0, "  ");
        assert_eq!(
            rules,
            PermissionUpdate::add_rules(
                vec![PermissionRuleValue::tool("Bash")],
                PermissionBehavior::Allow,
                PermissionUpdateDestination::Session
            ),
            "an empty rule content is a whole-tool rule"
        );
        assert!(
            !serde_json::to_string(&rules)
                .unwrap()
                .contains("ruleContent")
        );

        let mut mode = PermissionUpdate::set_mode(
            PermissionMode::AcceptEdits,
            PermissionUpdateDestination::Session,
        );
        mode.set_mode_to(PermissionMode::Plan);
        mode.set_destination(PermissionUpdateDestination::UserSettings);
        assert_eq!(
            serde_json::to_string(&mode).unwrap(),
            r#"{"type":"setMode","mode":"plan","destination":"userSettings"}"#
        );

        let mut dirs = PermissionUpdate::add_directories(
            vec!["/a".into()],
            PermissionUpdateDestination::Session,
        );
        dirs.set_directories(vec!["/b".into(), "/c".into()]);
        dirs.set_destination(PermissionUpdateDestination::ProjectSettings);
        assert_eq!(
            serde_json::to_string(&dirs).unwrap(),
            r#"{"type":"addDirectories","directories":["/b","/c"],"destination":"projectSettings"}"#
        );
        assert_eq!(dirs.directories(), ["/b".to_string(), "/c".to_string()]);

        let mut other: PermissionUpdate =
            serde_json::from_value(json!({"type": "futureKind", "destination": "session", "x": 1}))
                .unwrap();
        other.set_destination(PermissionUpdateDestination::LocalSettings);
        assert_eq!(
            serde_json::to_string(&other).unwrap(),
            r#"{"type":"futureKind","destination":"localSettings","x":1}"#,
            "an unknown kind keeps its fields; only the destination changes"
        );
    }
}
