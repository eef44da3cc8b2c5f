//! Permission prompts as the package sees them: what a `can_use_tool` request asked, which requests
//! are settled, and the answers (allow/deny, edited suggestions, a mode change) made by
//! `bridge_protocol::build`.

use bridge_protocol::{
    PermissionBehavior, PermissionMode, PermissionRuleValue, PermissionUpdate,
    PermissionUpdateDestination, build,
};
use serde_json::Value;

use crate::options::{object, opt_string};

/// What this client saw of a `can_use_tool` request (to fill in `toolUseID` and a default
/// `updatedInput`).
#[derive(Debug, Clone, PartialEq)]
pub struct SeenPermission {
    /// The tool call the request is about.
    pub tool_use_id: Option<String>,
    /// The input as the CLI asked.
    pub input: Value,
}

/// If `message` is a `can_use_tool` request: its `request_id` and what the answer needs.
pub fn permission_request(message: &Value) -> Option<(String, SeenPermission)> {
    if message.get("type")?.as_str()? != "control_request" {
        return None;
    }
    let request = message.get("request")?;
    if request.get("subtype")?.as_str()? != "can_use_tool" {
        return None;
    }
    Some((
        message.get("request_id")?.as_str()?.to_owned(),
        SeenPermission {
            tool_use_id: request
                .get("tool_use_id")
                .and_then(Value::as_str)
                .map(str::to_owned),
            input: request.get("input").cloned().unwrap_or(Value::Null),
        },
    ))
}

/// The `request_id` a message settles: a `control_response` or a `control_cancel_request`.
pub fn settled_request(message: &Value) -> Option<&str> {
    match message.get("type")?.as_str()? {
        "control_response" => message.get("response")?.get("request_id")?.as_str(),
        "control_cancel_request" => message.get("request_id")?.as_str(),
        _ => None,
    }
}

/// Builds the `control_response` answering `can_use_tool` request `request_id` from the JS
/// decision (`{behavior:'allow', updatedInput?, updatedPermissions?}` or `{behavior:'deny',
/// message?, interrupt?}`) with `bridge_protocol::build`.
pub fn permission_answer(
    request_id: &str,
    decision: &Value,
    seen: Option<&SeenPermission>,
) -> Result<Value, String> {
    const WHAT: &str = "respondToPermission";
    if request_id.is_empty() {
        return Err(format!(
            "{WHAT}: the request id is required (the `request_id` of the can_use_tool message)"
        ));
    }
    let map = object(decision, WHAT)?;
    let tool_use_id = seen.and_then(|s| s.tool_use_id.as_deref());
    match opt_string(map, "behavior", WHAT)?.as_deref() {
        Some("allow") => {
            let updated_input = match map.get("updatedInput") {
                Some(Value::Object(input)) => Value::Object(input.clone()),
                Some(Value::Null) | None => match seen {
                    Some(seen) => seen.input.clone(),
                    None => {
                        return Err(format!(
                            "{WHAT}: `updatedInput` is required: this client has not seen can_use_tool \
                             request '{request_id}', so it cannot allow its input unchanged"
                        ));
                    }
                },
                Some(_) => return Err(format!("{WHAT}: `updatedInput` must be an object")),
            };
            let updated_permissions = match map.get("updatedPermissions") {
                None | Some(Value::Null) => Vec::new(),
                Some(v) => permission_updates(v).map_err(|e| format!("{WHAT}: {e}"))?,
            };
            Ok(build::value::allow(
                request_id,
                tool_use_id,
                updated_input,
                updated_permissions,
            ))
        }
        Some("deny") => {
            let message = opt_string(map, "message", WHAT)?.unwrap_or_default();
            let interrupt = match map.get("interrupt") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(format!("{WHAT}: `interrupt` must be true or false")),
            };
            Ok(build::value::deny(
                request_id,
                tool_use_id,
                &message,
                interrupt,
            ))
        }
        Some(other) => Err(format!(
            "{WHAT}: `behavior` must be 'allow' or 'deny', not '{other}'"
        )),
        None => Err(format!(
            "{WHAT}: `behavior` ('allow' or 'deny') is required"
        )),
    }
}

/// Reads `updatedPermissions` into the protocol crate's [`PermissionUpdate`]s through its
/// constructors. (Not with serde: its derived decoders would add a tenth to the package's
/// gzipped wasm.) An update of a type the protocol does not know is passed on whole.
pub fn permission_updates(value: &Value) -> Result<Vec<PermissionUpdate>, String> {
    let Value::Array(items) = value else {
        return Err("`updatedPermissions` must be a list of permission updates".into());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            permission_update(item).map_err(|e| format!("`updatedPermissions[{i}]`: {e}"))
        })
        .collect()
}

fn field<'a>(value: &'a Value, key: &str) -> Result<&'a str, String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("`{key}` must be a string"))
}

fn permission_update(update: &Value) -> Result<PermissionUpdate, String> {
    let kind = field(update, "type")?;
    let destination = || field(update, "destination").map(PermissionUpdateDestination::from);
    let list = |key: &str| {
        update
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| format!("`{key}` must be a list"))
    };
    match kind {
        "addRules" | "replaceRules" | "removeRules" => {
            let rules = list("rules")?
                .iter()
                .map(|rule| {
                    let tool = field(rule, "toolName")?;
                    match rule.get("ruleContent") {
                        None | Some(Value::Null) => Ok(PermissionRuleValue::tool(tool)),
                        Some(Value::String(content)) => {
                            Ok(PermissionRuleValue::with_content(tool, content.as_str()))
                        }
                        Some(_) => Err("`ruleContent` must be a string".to_owned()),
                    }
                })
                .collect::<Result<Vec<_>, String>>()?;
            let behavior = PermissionBehavior::from(field(update, "behavior")?);
            let destination = destination()?;
            Ok(match kind {
                "addRules" => PermissionUpdate::add_rules(rules, behavior, destination),
                "replaceRules" => PermissionUpdate::replace_rules(rules, behavior, destination),
                _ => PermissionUpdate::remove_rules(rules, behavior, destination),
            })
        }
        "setMode" => Ok(PermissionUpdate::set_mode(
            PermissionMode::from(field(update, "mode")?),
            destination()?,
        )),
        "addDirectories" | "removeDirectories" => {
            let directories = list("directories")?
                .iter()
                .map(|d| {
                    d.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| "`directories` must hold strings".to_owned())
                })
                .collect::<Result<Vec<_>, String>>()?;
            let destination = destination()?;
            Ok(if kind == "addDirectories" {
                PermissionUpdate::add_directories(directories, destination)
            } else {
                PermissionUpdate::remove_directories(directories, destination)
            })
        }
        _ => Ok(PermissionUpdate::Other(update.clone())),
    }
}

/// `set_permission_mode` for `mode` (any string: the set of modes is open).
pub fn set_permission_mode(request_id: &str, mode: &str) -> Result<Value, String> {
    if mode.is_empty() {
        return Err(
            "setPermissionMode: the mode is required (e.g. 'default', 'acceptEdits', 'plan')"
                .into(),
        );
    }
    Ok(build::value::set_permission_mode(
        request_id,
        PermissionMode::from(mode),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    #[test]
    fn permission_answers_come_from_the_builders() {
        let request = json!({"type":"control_request","request_id":"req-1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"rm -rf build"},"tool_use_id":"toolu_1"}});
        let (id, seen) = permission_request(&request).unwrap();
        assert_eq!(id, "req-1");
        let edited = permission_answer(
            &id,
            &json!({"behavior":"allow","updatedInput":{"command":"ls build"},"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"ls:*"}],"behavior":"allow","destination":"session"}]}),
            Some(&seen),
        )
        .unwrap();
        assert_eq!(
            edited,
            build::value::allow(
                "req-1",
                Some("toolu_1"),
                json!({"command":"ls build"}),
                vec![PermissionUpdate::add_rules(
                    vec![bridge_protocol::PermissionRuleValue::with_content(
                        "Bash", "ls:*"
                    )],
                    "allow".into(),
                    "session".into()
                )]
            )
        );
        // allow as asked: the input seen in the request
        let as_asked = permission_answer(&id, &json!({"behavior":"allow"}), Some(&seen)).unwrap();
        assert_eq!(
            as_asked["response"]["response"]["updatedInput"],
            json!({"command":"rm -rf build"})
        );
        let deny = permission_answer(
            &id,
            &json!({"behavior":"deny","message":"not that","interrupt":true}),
            Some(&seen),
        )
        .unwrap();
        assert_eq!(
            deny,
            build::value::deny("req-1", Some("toolu_1"), "not that", true)
        );
        // the typed client union accepts both
        for answer in [&edited, &as_asked, &deny] {
            let line = serde_json::to_string(answer).unwrap();
            assert!(
                bridge_protocol::parse_client_line(&line)
                    .unwrap()
                    .is_known()
            );
        }
        for (bad, says) in [
            (json!({"behavior":"allow"}), "`updatedInput` is required"),
            (json!({"behavior":"maybe"}), "'allow' or 'deny'"),
            (json!({}), "`behavior`"),
            (
                json!({"behavior":"allow","updatedInput":{},"updatedPermissions":[{"type":"addRules"}]}),
                "`updatedPermissions[0]`: `rules`",
            ),
            (json!({"behavior":"deny","interrupt":"yes"}), "`interrupt`"),
        ] {
            let err = permission_answer("req-2", &bad, None).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
        assert!(permission_answer("", &json!({"behavior":"deny"}), None).is_err());
    }

    #[test]
    fn permission_updates_read_like_the_typed_decoder() {
        let updates = json!([
            {"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test:*"},{"toolName":"Read"}],"behavior":"allow","destination":"localSettings"},
            {"type":"replaceRules","rules":[],"behavior":"deny","destination":"session"},
            {"type":"removeRules","rules":[{"toolName":"Edit"}],"behavior":"ask","destination":"userSettings"},
            {"type":"setMode","mode":"acceptEdits","destination":"session"},
            {"type":"addDirectories","directories":["/tmp/a"],"destination":"session"},
            {"type":"removeDirectories","directories":["/tmp/b"],"destination":"projectSettings"},
            {"type":"futureUpdate","x":1}
        ]);
        let ours = permission_updates(&updates).unwrap();
        let typed: Vec<PermissionUpdate> = serde_json::from_value(updates.clone()).unwrap();
        assert_eq!(ours, typed);
        assert_eq!(serde_json::to_value(&ours).unwrap(), updates);
        for (bad, says) in [
            (json!({}), "must be a list"),
            (json!([{"rules":[]}]), "[0]`: `type`"),
            (
                json!([{"type":"addRules","behavior":"allow","destination":"session"}]),
                "`rules` must be a list",
            ),
            (json!([{"type":"setMode","mode":"plan"}]), "`destination`"),
            (
                json!([{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":1}],"behavior":"allow","destination":"session"}]),
                "`ruleContent`",
            ),
            (
                json!([{"type":"addDirectories","directories":[1],"destination":"session"}]),
                "hold strings",
            ),
        ] {
            let err = permission_updates(&bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn settled_requests_are_recognised() {
        assert_eq!(
            settled_request(
                &json!({"type":"control_response","response":{"subtype":"success","request_id":"r1"}})
            ),
            Some("r1")
        );
        assert_eq!(
            settled_request(&json!({"type":"control_cancel_request","request_id":"r2"})),
            Some("r2")
        );
        assert_eq!(settled_request(&json!({"type":"user"})), None);
    }

    #[test]
    fn permission_modes_are_open() {
        let v = set_permission_mode("r", "someFutureMode").unwrap();
        assert_eq!(v["request"]["mode"], "someFutureMode");
        assert!(set_permission_mode("r", "").is_err());
    }
}
