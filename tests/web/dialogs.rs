//! The prompt dialogs send what the protocol builders make.

use super::*;

/// Shows the prompt `request` (as `req-a`), presses `button` (after `fill`) and returns the one
/// answer the store sent.
async fn answer_with(request: Value, fill: &[(&str, &str)], button: &str) -> String {
    let m = mount(false, || view! { <PromptDock /> });
    m.store
        .apply_now(json!({"type": "control_request", "request_id": "req-a", "request": request}));
    tick().await;
    for (field, value) in fill {
        let input: web_sys::HtmlInputElement =
            m.one(&format!("[data-testid={field}]")).dyn_into().unwrap();
        input.set_value(value);
        input
            .dispatch_event(&web_sys::Event::new("input").unwrap())
            .unwrap();
    }
    tick().await;
    m.one(&format!("[data-testid={button}]")).click();
    tick().await;
    tick().await;
    let sent = m.sent.borrow().clone();
    assert_eq!(sent.len(), 1, "one answer to {button}: {sent:?}");
    m.root.remove();
    serde_json::to_string(&sent[0]).unwrap()
}

#[wasm_bindgen_test]
async fn plan_elicitation_and_user_dialogs_send_the_protocol_builders_answers() {
    let ok = |response: &str| {
        format!(
            r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"req-a","response":{response}}}}}"#
        )
    };
    let plan = json!({"subtype": "can_use_tool", "tool_name": "ExitPlanMode",
        "input": {"plan": "1. do it"}, "tool_use_id": "toolu_p"});
    let ask = json!({"subtype": "elicitation", "mcp_server_name": "asker", "message": "Who?",
        "requested_schema": {"type": "object", "properties": {"name": {"type": "string"}}}});
    let dialog = json!({"subtype": "request_user_dialog", "dialog_kind": "notice",
        "payload": {"message": "Hello"}});
    let no_fill: &[(&str, &str)] = &[];
    for (request, fill, button, response) in [
        (
            &plan,
            no_fill,
            "plan-approve-accept-edits",
            r#"{"behavior":"allow","updatedInput":{"plan":"1. do it"},"updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}],"toolUseID":"toolu_p"}"#,
        ),
        (
            &ask,
            &[("elicitation-field-name", "Ada")][..],
            "permission-allow",
            r#"{"action":"accept","content":{"name":"Ada"}}"#,
        ),
        (&ask, no_fill, "permission-deny", r#"{"action":"decline"}"#),
        (
            &ask,
            no_fill,
            "elicitation-cancel",
            r#"{"action":"cancel"}"#,
        ),
        (
            &dialog,
            no_fill,
            "permission-allow",
            r#"{"behavior":"completed"}"#,
        ),
        (
            &dialog,
            no_fill,
            "permission-deny",
            r#"{"behavior":"cancelled"}"#,
        ),
    ] {
        assert_eq!(
            answer_with(request.clone(), fill, button).await,
            ok(response),
            "{request} → {button}"
        );
    }
}

#[wasm_bindgen_test]
async fn edited_permission_suggestions_are_sent_as_edited() {
    let m = mount(false, || view! { <PromptDock /> });
    m.store.apply_now(json!({"type": "control_request", "request_id": "req-s", "request": {"subtype": "can_use_tool",
        "tool_name": "Bash", "input": {"command": "npm test"}, "tool_use_id": "toolu_s",
        "permission_suggestions": [
            {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test"}], "behavior": "allow", "destination": "localSettings"},
            {"type": "addDirectories", "directories": ["/tmp/a"], "destination": "session"},
            {"type": "addRules", "rules": "not a list", "behavior": "allow", "destination": "session"}
        ]}}));
    tick().await;
    assert_eq!(
        m.all("[data-testid=permission-suggestion]").len(),
        2,
        "a malformed suggestion (the CLI would drop the whole answer) is not offered"
    );
    for check in m.all("[data-testid=permission-suggestion]") {
        let check: web_sys::HtmlInputElement = check.dyn_into().unwrap();
        check.set_checked(true);
        check
            .dispatch_event(&web_sys::Event::new("change").unwrap())
            .unwrap();
    }
    let set = |selector: &str, value: &str, event: &str| {
        let el = m.one(selector);
        js_sys::Reflect::set(&el, &"value".into(), &value.into()).unwrap();
        el.dispatch_event(&web_sys::Event::new(event).unwrap())
            .unwrap();
    };
    set(
        "[data-testid=permission-suggestion-rule]",
        "npm test:*",
        "input",
    );
    set(
        "[data-testid=permission-suggestion-destination]",
        "session",
        "change",
    );
    set(
        "[data-testid=permission-suggestion-directories]",
        "/tmp/a, /tmp/b",
        "input",
    );
    tick().await;
    m.one("[data-testid=permission-allow]").click();
    tick().await;
    tick().await;
    let sent = m.sent.borrow().clone();
    assert_eq!(sent.len(), 1, "one answer: {sent:?}");
    assert_eq!(
        serde_json::to_string(&sent[0]["response"]["response"]["updatedPermissions"]).unwrap(),
        r#"[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test:*"}],"behavior":"allow","destination":"session"},{"type":"addDirectories","directories":["/tmp/a","/tmp/b"],"destination":"session"}]"#
    );
    m.root.remove();
}
