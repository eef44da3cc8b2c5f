//! The unmodified official browser SDK (`@anthropic-ai/claude-agent-sdk/browser`, `query({sse})`, from
//! npm, run by Node 20) completes a turn with a permission prompt against the relay and the demo agent.
//! Needs `node` on PATH; installs the pinned SDK into tests/sdk/node_modules with npm on first run.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::Value;

fn ensure_sdk(dir: &Path) -> bool {
    if Command::new("node").arg("--version").output().is_err() {
        eprintln!(
            "SKIPPED: `node` is not on PATH; the official-SDK compatibility test needs Node 20+"
        );
        return false;
    }
    if !dir
        .join("node_modules/@anthropic-ai/claude-agent-sdk/browser-sdk.js")
        .exists()
    {
        let status = Command::new("npm")
            .args([
                "ci",
                "--omit=optional",
                "--omit=peer",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
            ])
            .current_dir(dir)
            .status()
            .expect("run npm");
        assert!(status.success(), "npm ci failed in {}", dir.display());
    }
    true
}

#[tokio::test]
async fn official_browser_sdk_completes_a_turn_with_a_permission_prompt() {
    let sdk_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk");
    if !ensure_sdk(&sdk_dir) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let relay = RelayProc::start(Opts::demo(dir.path()));
    let created: Value = http()
        .post(relay.url("/v1/code/sessions"))
        .bearer_auth(TOKEN)
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let sid = created["session_id"].as_str().unwrap().to_owned();
    let out = tokio::process::Command::new("node")
        .arg("sdk-turn.mjs")
        .arg(created["stream_url"].as_str().unwrap())
        .arg(created["send_url"].as_str().unwrap())
        .arg(&sid)
        .arg(TOKEN)
        .current_dir(&sdk_dir)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| {
            panic!(
                "no summary; stdout:\n{stdout}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    assert_eq!(
        summary["ok"],
        true,
        "{summary:#}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(summary["asked"][0]["toolName"], "Bash", "{summary:#}");
    assert!(summary["asked"][0]["toolUseID"].is_string());
    let yielded: Vec<&str> = summary["yielded"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for want in [
        "user",
        "system/init",
        "stream_event",
        "assistant",
        "result/success",
    ] {
        assert!(yielded.contains(&want), "{want} not yielded: {yielded:?}");
    }
    assert!(
        summary["toolResult"]
            .as_str()
            .unwrap()
            .contains("edited-by-the-official-sdk"),
        "{summary:#}"
    );
    // The relay logged the SDK's traffic: its initialize and answer came in as client events.
    let events = relay.events(&sid, 0).await;
    let evs = events["events"].as_array().unwrap();
    assert!(
        evs.iter()
            .any(|e| e["source"] == "client" && e["payload"]["request"]["subtype"] == "initialize")
    );
    assert!(
        evs.iter()
            .any(|e| e["source"] == "client" && e["payload"]["type"] == "control_response")
    );
}
