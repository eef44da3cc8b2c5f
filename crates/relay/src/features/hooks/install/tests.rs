use serde_json::{Value, json};

use super::*;

fn cfg(n: u32) -> HookConfig {
    HookConfig {
        url: "http://127.0.0.1:8787/".into(),
        token: format!("brh_secret{n}"),
        credential_id: format!("hk_{n}"),
    }
}

/// Settings files of every shape the CLI accepts.
fn shapes() -> Vec<Value> {
    vec![
        json!({}),
        json!({"model": "opus", "permissions": {"allow": ["Bash(ls:*)"]}}),
        json!({"hooks": {}}),
        json!({"hooks": {"Stop": []}}),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hi"}]}]}}),
        json!({"hooks": {"PermissionRequest": [{"matcher": "*", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 5}]}],
                          "Stop": [{"hooks": [{"type": "http", "url": "http://example.test/other"}]}]},
               "env": {"A": "1"}}),
        json!({"hooks": {"PostToolUse": [{"matcher": "Write", "hooks": []}]}}),
        json!({"a": 1, "hooks": {"Notification": [{"hooks": [{"type": "command", "command": "x"}]}]}, "z": 2}),
    ]
}

#[test]
fn install_adds_one_group_per_event_and_keeps_everything_else() {
    for s in shapes() {
        let out = install(Some(&s), &cfg(1)).unwrap();
        for (k, v) in s.as_object().unwrap() {
            if k != "hooks" {
                assert_eq!(&out[k], v, "{k} kept");
            }
        }
        // The person's own hooks are all still there, first.
        if let Some(h) = s.get("hooks").and_then(Value::as_object) {
            for (event, groups) in h {
                let groups = groups.as_array().unwrap();
                assert_eq!(
                    &out["hooks"][event].as_array().unwrap()[..groups.len()],
                    &groups[..]
                );
            }
        }
        let ours = installed(&out);
        assert_eq!(ours.len(), EVENTS.len(), "{s}");
        for e in &ours {
            assert_eq!(e.url, "http://127.0.0.1:8787");
            assert_eq!(
                (e.credential_id.as_str(), e.token.as_str()),
                ("hk_1", "brh_secret1")
            );
        }
        let pr = out["hooks"]["PermissionRequest"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(pr["matcher"], "*");
        assert_eq!(pr["hooks"][0]["url"], "http://127.0.0.1:8787/v1/hooks");
        assert_eq!(pr["hooks"][0]["timeout"], PERMISSION_TIMEOUT_SECS);
        assert_eq!(
            pr["hooks"][0]["headers"]["Authorization"],
            "Bearer brh_secret1"
        );
        let stop = out["hooks"]["Stop"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert!(stop.get("matcher").is_none());
        assert_eq!(stop["hooks"][0]["timeout"], EVENT_TIMEOUT_SECS);
    }
    assert_eq!(
        installed(&install(None, &cfg(1)).unwrap()).len(),
        EVENTS.len()
    );
}

#[test]
fn install_twice_keeps_one_entry_per_event_and_the_last_credential() {
    for s in shapes() {
        let once = install(Some(&s), &cfg(1)).unwrap();
        let twice = install(Some(&once), &cfg(2)).unwrap();
        let ours = installed(&twice);
        assert_eq!(ours.len(), EVENTS.len());
        assert!(ours.iter().all(|e| e.credential_id == "hk_2"));
        assert_eq!(twice, install(Some(&s), &cfg(2)).unwrap(), "idempotent");
    }
}

/// `v` without empty `hooks` / event lists (the CLI reads them as absent).
fn without_empty(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(h) = v.get_mut("hooks").and_then(Value::as_object_mut) {
        h.retain(|_, g| g.as_array().is_none_or(|a| !a.is_empty()));
    }
    if v["hooks"].as_object().is_some_and(|h| h.is_empty())
        && let Some(o) = v.as_object_mut()
    {
        o.remove("hooks");
    }
    v
}

#[test]
fn uninstall_restores_the_file_exactly() {
    for s in shapes() {
        let (back, removed) = uninstall(&install(Some(&s), &cfg(1)).unwrap());
        assert_eq!(removed, EVENTS.len());
        // Exactly, but for an empty `hooks` or event list the file had before install: an empty
        // container install filled is removed with what it added (the same settings to the CLI).
        if s == without_empty(&s) {
            // The text too: key order kept (`Value ==` ignores it).
            assert_eq!(back.to_string(), s.to_string());
        } else {
            assert_eq!(back, without_empty(&s), "{s}");
        }
        // Nothing of ours: nothing changes.
        assert_eq!(uninstall(&s), (s.clone(), 0));
    }
    let (back, _) = uninstall(&install(None, &cfg(1)).unwrap());
    assert_eq!(back, json!({}));
}

#[test]
fn shapes_the_cli_would_refuse_are_errors() {
    for (bad, says) in [
        (json!({"hooks": []}), "\"hooks\" must be an object"),
        (
            json!({"hooks": {"Stop": {"hooks": []}}}),
            "\"Stop\" must be a list",
        ),
        (json!([1, 2]), "JSON object"),
    ] {
        let e = install(Some(&bad), &cfg(1)).unwrap_err();
        assert!(e.contains(says), "{e}");
    }
}

#[test]
fn the_file_is_written_owner_only_with_a_backup_and_a_missing_directory_made() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/.claude/settings.json");
    assert!(read(&path).unwrap().is_none());
    let v = install(None, &cfg(1)).unwrap();
    assert_eq!(
        write(&path, &v).unwrap(),
        None,
        "no backup of a file that was not there"
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
    assert_eq!(read(&path).unwrap().unwrap(), v);
    let before = std::fs::read(&path).unwrap();
    let (v2, _) = uninstall(&v);
    let backup = write(&path, &v2).unwrap().unwrap();
    assert_eq!(std::fs::read(&backup).unwrap(), before);
    assert!(std::fs::read_to_string(&path).unwrap().ends_with("}\n"));
}

#[test]
fn a_read_only_or_invalid_file_is_refused_untouched() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    std::fs::write(&path, "{\"model\": \"opus\"}").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let e = write(&path, &json!({})).unwrap_err().to_string();
    assert!(e.contains("read-only"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{\"model\": \"opus\"}"
    );
    assert!(!dir.path().join("settings.json.bridge-backup").exists());

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\n  \"model\": \"opus\",\n}\n").unwrap();
    let e = read(&bad).unwrap_err().to_string();
    assert!(e.contains("line 3"), "{e}");
    assert!(e.contains("nothing was changed"), "{e}");
    std::fs::write(&bad, "[1]").unwrap();
    assert!(read(&bad).unwrap_err().to_string().contains("JSON object"));
}
