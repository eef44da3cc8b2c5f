//! The outbox's tests: uuids, batching, retries, refused batches, echoes, frames, failures.

use super::*;
use serde_json::json;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

fn counter() -> impl FnMut() -> String {
    let mut n = 0;
    move || {
        n += 1;
        format!("u{n}")
    }
}

fn push(o: &mut Outbox, now: u64, v: Value, ids: &mut impl FnMut() -> String) -> String {
    o.push(now, v, ids).unwrap()
}

/// A default outbox and its uuid counter, with a message of each of `types` pushed at 0.
fn outbox_with(types: &[&str]) -> (Outbox, impl FnMut() -> String) {
    let mut o = Outbox::new(OutboxConfig::default());
    let mut ids = counter();
    for t in types {
        push(&mut o, 0, json!({ "type": t }), &mut ids);
    }
    (o, ids)
}

/// A retryable answer to a POST, without `Retry-After`.
fn retryable(error: &str) -> PostOutcome {
    PostOutcome::Retryable {
        error: error.into(),
        retry_after_ms: None,
    }
}

/// Answers the POST `p` with an acceptance that names no events.
fn accept(o: &mut Outbox, now: u64, p: &Outgoing) -> Vec<Outcome> {
    o.on_post_result(now, id(p), PostOutcome::Accepted(vec![]), 0.0)
}

fn uuids(p: &Outgoing) -> Vec<String> {
    match p {
        Outgoing::Post { payloads, .. } => payloads
            .iter()
            .map(|p| p["uuid"].as_str().unwrap().to_owned())
            .collect(),
        Outgoing::Frame { uuid, .. } => vec![uuid.clone()],
    }
}

fn id(p: &Outgoing) -> u64 {
    match p {
        Outgoing::Post { id, .. } => *id,
        Outgoing::Frame { .. } => panic!("frame"),
    }
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn uuid_assigned_once_and_kept_if_given() {
    let (mut o, mut ids) = outbox_with(&[]);
    assert_eq!(push(&mut o, 0, json!({"type":"user"}), &mut ids), "u1");
    assert_eq!(
        push(&mut o, 0, json!({"type":"user","uuid":"mine"}), &mut ids),
        "mine"
    );
    assert_eq!(
        push(&mut o, 0, json!({"type":"user","uuid":""}), &mut ids),
        "u2"
    );
    assert_eq!(o.push(0, json!([1]), &mut ids), Err(SendError::NotAMessage));
    assert_eq!(
        o.push(0, json!({"x":1}), &mut ids),
        Err(SendError::NotAMessage)
    );
    let p = o.poll_post(0, false).unwrap();
    assert_eq!(uuids(&p), vec!["u1", "mine", "u2"]);
    // a retry resends the same bytes
    let _ = o.on_post_result(0, id(&p), retryable("503"), 0.0);
    assert!(o.poll_post(100, false).is_none(), "retry waits 500 ms");
    let p2 = o.poll_post(500, false).unwrap();
    assert!(
        matches!((&p, &p2), (Outgoing::Post { payloads: a, .. }, Outgoing::Post { payloads: b, .. }) if a == b),
        "byte-identical retry"
    );
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn stream_events_wait_and_anything_else_flushes_in_order() {
    let (mut o, mut ids) = outbox_with(&["stream_event"]);
    push(&mut o, 30, json!({"type":"stream_event"}), &mut ids);
    assert!(o.poll_post(50, false).is_none());
    assert_eq!(o.next_deadline(), Some(100));
    push(&mut o, 60, json!({"type":"user"}), &mut ids);
    let p = o.poll_post(60, false).unwrap();
    assert_eq!(uuids(&p), vec!["u1", "u2", "u3"]);
    // stream events alone go out after 100 ms
    let _ = accept(&mut o, 61, &p);
    push(&mut o, 70, json!({"type":"stream_event"}), &mut ids);
    assert!(o.poll_post(169, false).is_none());
    assert_eq!(uuids(&o.poll_post(170, false).unwrap()), vec!["u4"]);
    // draining does not wait
    let mut o = Outbox::new(OutboxConfig::default());
    push(&mut o, 0, json!({"type":"stream_event"}), &mut ids);
    assert!(o.poll_post(0, true).is_some());
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn batches_of_at_most_500_one_in_flight_and_queue_cap() {
    let cfg = OutboxConfig {
        max_queued: 1_200,
        ..OutboxConfig::default()
    };
    let mut o = Outbox::new(cfg);
    let mut ids = counter();
    for _ in 0..1_200 {
        push(&mut o, 0, json!({"type":"user"}), &mut ids);
    }
    assert_eq!(
        o.push(0, json!({"type":"user"}), &mut ids),
        Err(SendError::QueueFull(1_200))
    );
    let p = o.poll_post(0, false).unwrap();
    assert_eq!(uuids(&p).len(), 500);
    assert!(o.poll_post(0, false).is_none(), "one request in flight");
    let out = o.on_post_result(
        1,
        id(&p),
        PostOutcome::Accepted(vec![(Some("e".into()), Some(7))]),
        0.0,
    );
    assert_eq!(out.len(), 500);
    assert_eq!(
        out[0],
        Outcome::Delivered {
            uuid: "u1".into(),
            event_id: Some("e".into()),
            seq: Some(7)
        }
    );
    let p = o.poll_post(1, false).unwrap();
    assert_eq!(uuids(&p)[0], "u501");
    let _ = accept(&mut o, 1, &p);
    assert_eq!(uuids(&o.poll_post(1, false).unwrap()).len(), 200);
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn retries_back_off_500ms_to_8s_then_fail_loudly() {
    let (mut o, _) = outbox_with(&["user"]);
    let mut now = 0;
    let mut delays = Vec::new();
    let mut failed = Vec::new();
    for _ in 0..8 {
        let p = o.poll_post(now, false).expect("ready");
        let out = o.on_post_result(now, id(&p), retryable("HTTP 503"), 0.0);
        failed.extend(out);
        if let Some(d) = o.next_deadline() {
            delays.push(d - now);
            now = d;
        }
    }
    assert_eq!(delays, vec![500, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    assert_eq!(
        failed,
        vec![Outcome::Failed {
            uuid: "u1".into(),
            error: SendError::Exhausted {
                attempts: 8,
                last_error: "HTTP 503".into()
            }
        }]
    );
    assert!(o.is_empty());
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_refused_batch_is_retried_one_by_one_so_only_the_offender_fails() {
    let (mut o, mut ids) = outbox_with(&[
        "control_response",
        "control_response",
        "control_response",
        "user",
    ]);
    let rejected = || PostOutcome::Rejected {
        status: 409,
        kind: "request_not_pending".into(),
        message: "m".into(),
    };
    let p = o.poll_post(0, false).unwrap();
    assert!(o.on_post_result(0, id(&p), rejected(), 0.0).is_empty());
    let p = o.poll_post(0, false).unwrap();
    assert_eq!(uuids(&p), vec!["u1"]);
    let out = accept(&mut o, 0, &p);
    assert!(matches!(&out[..], [Outcome::Delivered { uuid, .. }] if uuid == "u1"));
    let p = o.poll_post(0, false).unwrap();
    assert_eq!(uuids(&p), vec!["u2"]);
    let out = o.on_post_result(0, id(&p), rejected(), 0.0);
    assert!(
        matches!(&out[..], [Outcome::Failed { uuid, error: SendError::Rejected { status: 409, .. } }] if uuid == "u2")
    );
    let p = o.poll_post(0, false).unwrap();
    assert_eq!(uuids(&p), vec!["u3"]);
    let _ = accept(&mut o, 0, &p);
    // u4 was in the refused batch too: it goes alone, then batching resumes
    push(&mut o, 0, json!({"type":"user"}), &mut ids);
    let p = o.poll_post(0, false).unwrap();
    assert_eq!(uuids(&p), vec!["u4"]);
    let _ = accept(&mut o, 0, &p);
    push(&mut o, 0, json!({"type":"user"}), &mut ids);
    assert_eq!(uuids(&o.poll_post(0, false).unwrap()), vec!["u5", "u6"]);
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn echo_before_the_post_answer_confirms_once() {
    let (mut o, _) = outbox_with(&["user", "user"]);
    let p = o.poll_post(0, false).unwrap();
    let mut out = Vec::new();
    assert!(o.on_echo("u1", Some("e1"), 4, &mut out));
    assert!(o.on_echo("u1", Some("e1"), 4, &mut out));
    assert!(!o.on_echo("other", None, 5, &mut out));
    assert_eq!(out.len(), 1);
    // the POST answer was lost: the retry only resends u2
    let _ = o.on_post_result(0, id(&p), retryable("reset"), 0.0);
    assert_eq!(uuids(&o.poll_post(10_000, false).unwrap()), vec!["u2"]);
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn frames_one_in_flight_resent_after_disconnect_and_confirmed_by_echo() {
    let (mut o, _) = outbox_with(&["user", "keep_alive", "user"]);
    let mut out = Vec::new();
    let f = o.poll_frame(0, &mut out, |_| false).unwrap();
    assert_eq!(uuids(&f), vec!["u1"]);
    assert!(o.poll_frame(0, &mut out, |_| false).is_none());
    o.on_disconnect();
    let f = o.poll_frame(5, &mut out, |_| false).unwrap();
    assert_eq!(uuids(&f), vec!["u1"], "resent after reconnect");
    assert!(o.on_echo("u1", Some("e"), 3, &mut out));
    // keep_alive is fire-and-forget
    let f = o.poll_frame(6, &mut out, |_| false).unwrap();
    assert_eq!(uuids(&f), vec!["u2"]);
    let f = o.poll_frame(6, &mut out, |_| false).unwrap();
    assert_eq!(uuids(&f), vec!["u3"]);
    assert_eq!(o.check_frame_timeout(30_005), None);
    assert_eq!(
        o.check_frame_timeout(30_006),
        Some(Outcome::Failed {
            uuid: "u3".into(),
            error: SendError::Unconfirmed(30_000)
        })
    );
    assert_eq!(out.len(), 2);
    assert!(matches!(&out[0], Outcome::Delivered { uuid, seq: Some(3), .. } if uuid == "u1"));
    assert!(matches!(&out[1], Outcome::Delivered { uuid, seq: None, .. } if uuid == "u2"));
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn fail_all_reports_every_pending_message() {
    let (mut o, mut ids) = outbox_with(&["user", "user", "user"]);
    let _ = o.poll_post(0, false);
    push(&mut o, 0, json!({"type":"user"}), &mut ids);
    assert_eq!(o.pending_uuids(), vec!["u1", "u2", "u3", "u4"]);
    let out = o.fail_all("closed by the caller");
    assert_eq!(out.len(), 4);
    assert!(out.iter().all(|o| matches!(
        o,
        Outcome::Failed {
            error: SendError::Closed(_),
            ..
        }
    )));
    assert!(o.is_empty());
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn post_body_shape() {
    assert_eq!(
        post_body("s1", vec![json!({"type":"user"})]),
        json!({"session_id":"s1","events":[{"payload":{"type":"user"}}]})
    );
}
