//! Checks on what clients ask the agent to run with: `permission_mode` and `model`, at session
//! creation and in `set_permission_mode` / `set_model` control requests.

use bridge_protocol::ControlRequestBody;

use crate::core::error::Error;

/// The modes CLI 2.1.332 accepts (`PermissionMode`, plus `manual`, its input alias for `default`).
pub const PERMISSION_MODES: &[&str] = &[
    "default",
    "acceptEdits",
    "plan",
    "bypassPermissions",
    "dontAsk",
    "auto",
    "manual",
];

/// The agent flag that lets a session run with `bypassPermissions`.
pub const ALLOW_BYPASS_FLAG: &str = "--allow-dangerously-skip-permissions";

/// Longest accepted model name.
pub const MAX_MODEL_CHARS: usize = 200;

/// A known mode; `bypassPermissions` only when the relay was started allowing it.
pub fn permission_mode(mode: &str, allow_bypass: bool) -> Result<(), Error> {
    if !PERMISSION_MODES.contains(&mode) {
        return Err(Error::invalid(format!(
            "unknown permission_mode {:?}; use one of {}",
            crate::core::util::truncate_utf8(mode, 64),
            PERMISSION_MODES.join(", ")
        )));
    }
    if mode == "bypassPermissions" && !allow_bypass {
        return Err(Error::forbidden(
            "permission_mode bypassPermissions lets the agent run every tool without asking; this relay \
             does not allow it. Restart the relay with --allow-bypass-permissions to allow it",
        ));
    }
    Ok(())
}

/// Non-empty, at most [`MAX_MODEL_CHARS`], only `A-Z a-z 0-9 . _ : - [ ] /` (model ids, aliases
/// such as `opus[1m]`, provider paths): never something the agent could read as a flag or a path trick.
pub fn model(model: &str) -> Result<(), Error> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || "._:-[]/".contains(c);
    if model.is_empty()
        || model.chars().count() > MAX_MODEL_CHARS
        || !model.chars().all(ok_char)
        || model.starts_with('-')
    {
        return Err(Error::invalid(format!(
            "model {:?} is not a model name: 1 to {MAX_MODEL_CHARS} characters of A-Z a-z 0-9 . _ : - [ ] /, \
             not starting with '-'",
            crate::core::util::truncate_utf8(model, 64)
        )));
    }
    Ok(())
}

/// A client's `control_request` (decoded): `set_permission_mode.mode` and `set_model.model` (when
/// a string; `null` or absent is the default model).
pub fn control_request(request: &ControlRequestBody, allow_bypass: bool) -> Result<(), Error> {
    match request {
        ControlRequestBody::SetPermissionMode(r) => permission_mode(r.mode.as_str(), allow_bypass),
        ControlRequestBody::SetModel(r) => match &r.model {
            Some(Some(m)) => model(m),
            Some(None) | None => Ok(()),
        },
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::error::Fault;
    use serde_json::json;

    #[test]
    fn modes() {
        for m in [
            "default",
            "acceptEdits",
            "plan",
            "dontAsk",
            "auto",
            "manual",
        ] {
            permission_mode(m, false).unwrap();
        }
        assert_eq!(
            permission_mode("bypassPermissions", false)
                .unwrap_err()
                .fault,
            Fault::Forbidden
        );
        permission_mode("bypassPermissions", true).unwrap();
        for m in ["", "yolo", "Default", "plan --dangerously-skip-permissions"] {
            assert_eq!(
                permission_mode(m, true).unwrap_err().fault,
                Fault::Invalid,
                "{m:?}"
            );
        }
    }

    #[test]
    fn models() {
        for m in [
            "claude-sonnet-4-5",
            "opus[1m]",
            "us.anthropic.claude-3-7:0",
            "a/b",
        ] {
            model(m).unwrap();
        }
        let long = "m".repeat(MAX_MODEL_CHARS + 1);
        for m in [
            "",
            "--dangerously-skip-permissions",
            "a b",
            "x;rm",
            "é",
            &long,
        ] {
            assert!(model(m).is_err(), "{m:?}");
        }
    }

    #[test]
    fn control_requests() {
        let req = |r: serde_json::Value| ControlRequestBody::from_value(r).unwrap();
        assert!(
            control_request(
                &req(json!({"subtype": "set_permission_mode", "mode": "bypassPermissions"})),
                false
            )
            .is_err()
        );
        assert!(
            control_request(
                &req(json!({"subtype": "set_permission_mode", "mode": "plan"})),
                false
            )
            .is_ok()
        );
        assert!(
            control_request(
                &req(json!({"subtype": "set_permission_mode", "mode": "yolo"})),
                true
            )
            .is_err(),
            "an unknown mode decodes (an open value) and is refused here"
        );
        // Without a mode the request does not decode: ingest refuses it as an invalid message.
        assert!(ControlRequestBody::from_value(json!({"subtype": "set_permission_mode"})).is_err());
        assert!(
            control_request(&req(json!({"subtype": "set_model", "model": "-x"})), true).is_err()
        );
        assert!(control_request(&req(json!({"subtype": "set_model"})), true).is_ok());
        assert!(
            control_request(&req(json!({"subtype": "set_model", "model": null})), true).is_ok()
        );
        assert!(control_request(&req(json!({"subtype": "interrupt"})), false).is_ok());
    }
}
