//! The scenario the Playwright suite runs the real CLI with (`tests/e2e/scenarios/fake-model.json`) parses
//! and answers each flow's keyword with the intended turn.

use bridge_fake_model::{Block, Scenario, Served};
use serde_json::{Value, json};

fn e2e_scenario() -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/e2e/scenarios/fake-model.json");
    Scenario::load(&path).expect("the e2e scenario parses")
}

fn first_tool_command(s: &Scenario, index: usize) -> Option<String> {
    s.turns[index].blocks.iter().find_map(|b| match b {
        Block::ToolUse { input, .. } => input["command"].as_str().map(str::to_string),
        _ => None,
    })
}

async fn served(fm: &bridge_fake_model::RunningFakeModel, content: Value) -> Served {
    let body = json!({"model": "m", "max_tokens": 10, "stream": false,
                      "messages": [{"role": "user", "content": content}]});
    let r = crate::common::post_messages(&fm.base_url(), &body).await;
    assert_eq!(r.status(), 200);
    fm.model.requests().last().unwrap().served.clone()
}

#[tokio::test]
async fn each_flow_keyword_selects_its_turn_every_time() {
    let scenario = e2e_scenario();
    let index_of = |m: &str| {
        scenario
            .turns
            .iter()
            .position(|t| t.matches.as_deref() == Some(m))
            .unwrap_or_else(|| panic!("no turn for {m}"))
    };
    assert_eq!(
        first_tool_command(&scenario, index_of("e2e-bash")).as_deref(),
        Some("touch e2e-original.txt")
    );
    assert_eq!(
        first_tool_command(&scenario, index_of("e2e-crash")).as_deref(),
        Some("kill -9 $PPID")
    );
    assert!(
        scenario.turns.iter().all(|t| t.reuse),
        "turns are shared by parallel tests"
    );

    let fm = crate::common::start_with(scenario.clone()).await;
    for round in 0..2 {
        for key in [
            "e2e-basic",
            "e2e-bash",
            "e2e-deny",
            "e2e-rule",
            "e2e-long",
            "e2e-lines",
            "e2e-hostile",
            "e2e-crash",
            "e2e-ask",
            "e2e-plan",
        ] {
            let got = served(&fm, json!(format!("{key} abc{round}"))).await;
            assert_eq!(
                got,
                Served::Turn {
                    index: index_of(key)
                },
                "{key}"
            );
        }
    }
    // The deny message (in a tool_result) selects the acknowledgement, not the deny turn again.
    let got = served(
        &fm,
        json!([{"type": "tool_result", "tool_use_id": "t", "is_error": true,
                "content": "The user doesn't want to proceed. Please use ls instead e2e-deny-reason-1234"}]),
    )
    .await;
    assert_eq!(
        got,
        Served::Turn {
            index: index_of("e2e-deny-reason")
        }
    );
    // A plain tool result gets the default answer.
    let got = served(
        &fm,
        json!([{"type": "tool_result", "tool_use_id": "t", "content": "(Bash completed with no output)"}]),
    )
    .await;
    assert_eq!(got, Served::Default);
}
