//! The transport policy, driven by hand: no sockets, a fake clock, fixed
//! randomness. Each test plays the relay's part through the `Core` inputs.

use bridge_transport::outbox::SendError;
use bridge_transport::{
    Action, CloseReason, Config, ConnectionState, Core, Entropy, EventsPage, Failure, PayloadCheck,
    PostOutcome, Resume, TransportEvent, TransportKind,
};
use serde_json::{Value, json};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

fn entropy() -> Entropy {
    let mut n = 0;
    Entropy {
        random: Box::new(|| 0.0),
        uuid: Box::new(move || {
            n += 1;
            format!("out-{n}")
        }),
    }
}

fn core(kind: TransportKind) -> Core {
    core_from(kind, Resume::default())
}

fn core_from(kind: TransportKind, resume: Resume) -> Core {
    let mut config = Config::new(kind, "cse_test");
    config.payload_check = Some(PayloadCheck::TYPED);
    Core::new(config, resume, entropy(), 0)
}

/// A core of `kind` whose first connection opened at 0.
fn connected(kind: TransportKind) -> Core {
    let mut c = core(kind);
    connect(&mut c, 0);
    c
}

/// A core of `kind` that has taken its first `Connect` action, not yet open.
fn connecting(kind: TransportKind) -> Core {
    let mut c = core(kind);
    let _ = actions(&mut c);
    c
}

/// An HTTP failure with no `Retry-After`.
fn http(status: u16, reason: &str) -> Failure {
    Failure::Http {
        status,
        retry_after_ms: None,
        reason: reason.into(),
    }
}

/// A WebSocket close.
fn ws_closed(code: u16, reason: &str) -> Failure {
    Failure::WsClosed {
        code,
        reason: reason.into(),
    }
}

fn user(uuid: &str, text: &str) -> Value {
    json!({"type":"user","message":{"role":"user","content":text},"parent_tool_use_id":null,"session_id":"cse_test","uuid":uuid})
}

fn envelope(seq: u64, source: &str, payload: &Value) -> Value {
    json!({"event_id":format!("ev-{seq}"),"sequence_num":seq,"event_type":payload["type"],"source":source,"created_at":"2026-01-01T00:00:00Z","payload":payload})
}

fn sse_durable(seq: u64, source: &str, payload: &Value) -> String {
    format!(
        "id: {seq}\nevent: client_event\ndata: {}\n\n",
        envelope(seq, source, payload)
    )
}

fn sse_ephemeral(payload: &Value) -> String {
    format!(
        "event: ephemeral_event\ndata: {}\n\n",
        json!({"event_type":"stream_event","payload":payload})
    )
}

fn ws_durable(seq: u64, source: &str, payload: &Value) -> String {
    json!({"event":"client_event","id":seq,"data":envelope(seq, source, payload)}).to_string()
}

fn actions(c: &mut Core) -> Vec<Action> {
    std::iter::from_fn(|| c.poll_action()).collect()
}

fn events(c: &mut Core) -> Vec<TransportEvent> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

/// The sequence numbers and texts of delivered messages.
fn delivered(evs: &[TransportEvent]) -> Vec<(Option<u64>, String)> {
    evs.iter()
        .filter_map(|e| match e {
            TransportEvent::Message(m) => {
                let v = serde_json::to_value(&m.message).unwrap();
                let text = v["message"]["content"]
                    .as_str()
                    .or_else(|| v["event"]["type"].as_str())
                    .unwrap_or_default()
                    .to_owned();
                Some((m.seq, text))
            }
            _ => None,
        })
        .collect()
}

/// What [`delivered`] reads for durable messages only: `(seq, text)` each.
fn durable(msgs: &[(u64, &str)]) -> Vec<(Option<u64>, String)> {
    msgs.iter()
        .map(|&(seq, text)| (Some(seq), text.to_owned()))
        .collect()
}

fn connect(c: &mut Core, now: u64) -> u64 {
    let conn = actions(c)
        .into_iter()
        .find_map(|a| match a {
            Action::Connect { conn, .. } => Some(conn),
            _ => None,
        })
        .expect("a Connect action");
    assert!(c.on_connected(now, conn));
    conn
}

/// Asserts that the one thing to do now is to connect again (`conn`) from `from`.
#[track_caller]
fn expect_connect(c: &mut Core, conn: u64, from: u64) {
    assert_eq!(
        actions(c),
        vec![Action::Connect {
            conn,
            from_sequence_num: from
        }]
    );
}

/// Asserts that the one thing to do now is to fetch the REST page after `after`.
#[track_caller]
fn expect_fetch(c: &mut Core, after: u64) {
    assert_eq!(actions(c), vec![Action::FetchEvents { after, limit: 1000 }]);
}

/// A page of the REST log, as the relay answers it, of the worker's user messages `(seq, uuid)`,
/// each saying its sequence number.
fn page(msgs: &[(u64, &str)], truncated: bool, last: u64) -> Result<EventsPage, Failure> {
    Ok(EventsPage {
        events: msgs
            .iter()
            .map(|&(seq, uuid)| envelope(seq, "worker", &user(uuid, &seq.to_string())))
            .collect(),
        truncated,
        last_sequence_num: last,
    })
}

fn post_ids(acts: &[Action]) -> Vec<(u64, Vec<String>)> {
    acts.iter()
        .filter_map(|a| match a {
            Action::Post { id, body } => Some((
                *id,
                body["events"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| e["payload"]["uuid"].as_str().unwrap().to_owned())
                    .collect(),
            )),
            _ => None,
        })
        .collect()
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn connects_and_streams_in_order_split_at_every_byte() {
    let mut stream = String::new();
    stream.push_str(": keepalive\n\n");
    stream.push_str(&sse_durable(1, "client", &user("a", "one")));
    stream.push_str(&sse_ephemeral(&json!({"type":"stream_event","event":{"type":"message_stop"},"session_id":"s","parent_tool_use_id":null,"uuid":"e1"})));
    stream.push_str(&sse_durable(2, "worker", &user("b", "two")));
    stream.push_str("event: delivery_update\ndata: {\"event_id\":\"ev-1\",\"status\":\"DELIVERY_STATUS_RECEIVED\"}\n\n");
    let bytes = stream.as_bytes();
    let expected = vec![
        (Some(1), "one".to_owned()),
        (None, "message_stop".to_owned()),
        (Some(2), "two".to_owned()),
    ];
    for cut in 0..=bytes.len() {
        let mut c = core(TransportKind::SsePost);
        let acts = actions(&mut c);
        assert_eq!(
            acts,
            vec![Action::Connect {
                conn: 1,
                from_sequence_num: 0
            }]
        );
        assert!(c.on_connected(10, 1));
        c.on_bytes(11, 1, &bytes[..cut]);
        c.on_bytes(12, 1, &bytes[cut..]);
        let evs = events(&mut c);
        assert_eq!(delivered(&evs), expected, "cut at {cut}");
        assert!(evs.contains(&TransportEvent::State(ConnectionState::Open)));
        assert!(
            evs.iter()
                .any(|e| matches!(e, TransportEvent::DeliveryUpdate(u) if u.event_id == "ev-1"))
        );
        assert_eq!(c.cursor(), 2);
    }
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn replayed_sequence_numbers_and_uuids_are_dropped() {
    let mut c = connected(TransportKind::SsePost);
    let mut s = sse_durable(1, "client", &user("a", "one"));
    s.push_str(&sse_durable(2, "worker", &user("b", "two")));
    s.push_str(&sse_durable(1, "client", &user("a", "one"))); // stale replay
    s.push_str(&sse_durable(2, "worker", &user("b", "two")));
    // the CLI's --replay-user-messages echo: same uuid, new seq
    s.push_str(&sse_durable(3, "worker", &user("a", "one")));
    s.push_str(&sse_durable(4, "worker", &user("c", "three")));
    c.on_bytes(1, 1, s.as_bytes());
    let evs = events(&mut c);
    assert_eq!(
        delivered(&evs),
        durable(&[(1, "one"), (2, "two"), (4, "three")])
    );
    assert_eq!(c.counters().duplicates, 3);
    assert_eq!(c.cursor(), 4);
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn prefill_on_resume_drops_what_the_client_already_shows() {
    let resume = Resume {
        from_sequence_num: 7,
        received_uuids: vec!["seen".into()],
        sent_uuids: vec!["mine".into()],
    };
    let mut c = core_from(TransportKind::SsePost, resume);
    expect_connect(&mut c, 1, 7);
    assert!(c.on_connected(0, 1));
    let mut s = sse_durable(8, "worker", &user("seen", "dup"));
    s.push_str(&sse_durable(9, "client", &user("mine", "echo")));
    s.push_str(&sse_durable(10, "worker", &user("new", "fresh")));
    c.on_bytes(1, 1, s.as_bytes());
    assert_eq!(delivered(&events(&mut c)), durable(&[(10, "fresh")]));
    assert_eq!((c.counters().duplicates, c.counters().echoes), (1, 1));
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_sequence_jump_fetches_the_gap_before_going_on() {
    let mut c = connected(TransportKind::SsePost);
    let mut s = sse_durable(1, "worker", &user("a", "1"));
    s.push_str(&sse_durable(4, "worker", &user("d", "4")));
    s.push_str(&sse_ephemeral(&json!({"type":"stream_event","event":{"type":"message_stop"},"session_id":"s","parent_tool_use_id":null,"uuid":"x"})));
    c.on_bytes(1, 1, s.as_bytes());
    assert_eq!(delivered(&events(&mut c)), durable(&[(1, "1")]));
    expect_fetch(&mut c, 1);
    // more live frames while fetching are held
    c.on_bytes(2, 1, sse_durable(5, "worker", &user("e", "5")).as_bytes());
    assert!(delivered(&events(&mut c)).is_empty());
    c.on_events_page(3, page(&[(2, "b"), (3, "c"), (4, "d")], false, 5));
    assert_eq!(
        delivered(&events(&mut c)),
        vec![
            (Some(2), "2".into()),
            (Some(3), "3".into()),
            (Some(4), "4".into()),
            (None, "message_stop".into()),
            (Some(5), "5".into()),
        ]
    );
    assert_eq!(c.cursor(), 5);
    assert_eq!(
        c.counters().duplicates,
        1,
        "the held seq 4 was already fetched"
    );
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn catch_up_truncated_pages_through_rest_and_reports_what_is_gone() {
    let mut c = core_from(
        TransportKind::SsePost,
        Resume {
            from_sequence_num: 2,
            ..Resume::default()
        },
    );
    connect(&mut c, 0);
    let mut s = "event: catch_up_truncated\ndata: {}\n\n".to_owned();
    s.push_str(&sse_durable(9, "worker", &user("i", "9")));
    c.on_bytes(1, 1, s.as_bytes());
    expect_fetch(&mut c, 2);
    // the relay pruned 3..=5
    c.on_events_page(2, page(&[(6, "f"), (7, "g")], true, 9));
    expect_fetch(&mut c, 7);
    c.on_events_page(3, page(&[(8, "h"), (9, "i")], false, 9));
    let evs = events(&mut c);
    assert!(evs.contains(&TransportEvent::Gap { after: 2, next: 6 }));
    assert_eq!(
        delivered(&evs),
        durable(&[(6, "6"), (7, "7"), (8, "8"), (9, "9")])
    );
    assert_eq!(c.counters().lost, 3);
    assert_eq!(c.cursor(), 9);
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_failed_gap_fetch_reconnects_from_the_cursor() {
    let mut c = connected(TransportKind::SsePost);
    c.on_bytes(1, 1, sse_durable(3, "worker", &user("c", "3")).as_bytes());
    expect_fetch(&mut c, 0);
    c.on_events_page(2, Err(http(503, "")));
    assert_eq!(actions(&mut c), vec![Action::Disconnect { conn: 1 }]);
    c.on_timer(1_002);
    expect_connect(&mut c, 2, 0);
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn own_echo_confirms_the_send_and_is_not_delivered() {
    let mut c = connected(TransportKind::SsePost);
    let uuid = c.send(1, user("", "hello")).unwrap();
    assert_eq!(uuid, "out-1");
    let acts = actions(&mut c);
    assert_eq!(post_ids(&acts), vec![(1, vec!["out-1".to_owned()])]);
    let Action::Post { body, .. } = &acts[0] else {
        panic!()
    };
    assert_eq!(body["session_id"], "cse_test");
    // the echo arrives before the POST answer
    c.on_bytes(
        2,
        1,
        sse_durable(1, "client", &user("out-1", "hello")).as_bytes(),
    );
    c.on_post_result(
        3,
        1,
        PostOutcome::Accepted(vec![(Some("ev-1".into()), Some(1))]),
    );
    let evs = events(&mut c);
    assert!(delivered(&evs).is_empty());
    let confirmations: Vec<_> = evs
        .iter()
        .filter(|e| matches!(e, TransportEvent::Delivered { .. }))
        .collect();
    assert_eq!(
        confirmations,
        vec![&TransportEvent::Delivered {
            uuid: "out-1".into(),
            event_id: Some("ev-1".into()),
            seq: Some(1)
        }]
    );
    assert_eq!(c.counters().echoes, 1);
    assert_eq!(c.pending_sends(), 0);
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn sends_while_disconnected_wait_and_go_out_in_order_after_reconnect() {
    let mut c = connecting(TransportKind::SsePost);
    // still connecting: nothing is posted
    let a = c.send(0, user("", "1")).unwrap();
    let b = c.send(0, user("", "2")).unwrap();
    assert!(post_ids(&actions(&mut c)).is_empty());
    c.on_failure(5, 1, Failure::Network("refused".into()));
    assert!(post_ids(&actions(&mut c)).is_empty());
    let d = c.send(6, user("", "3")).unwrap();
    c.on_timer(1_005);
    expect_connect(&mut c, 2, 0);
    assert!(c.on_connected(1_010, 2));
    assert_eq!(post_ids(&actions(&mut c)), vec![(1, vec![a, b, d])]);
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn reconnect_backs_off_and_resumes_from_the_cursor() {
    let mut c = connected(TransportKind::SsePost);
    c.on_bytes(1, 1, sse_durable(1, "worker", &user("a", "1")).as_bytes());
    c.on_failure(2, 1, Failure::Ended);
    let evs = events(&mut c);
    assert!(
        evs.contains(&TransportEvent::State(ConnectionState::Reconnecting {
            attempt: 1,
            next_retry_ms: 1_000,
            last_error: "the server ended the stream".into(),
        }))
    );
    assert_eq!(actions(&mut c), vec![Action::Disconnect { conn: 1 }]);
    assert_eq!(c.next_deadline(), Some(1_002));
    c.on_timer(1_001);
    assert!(actions(&mut c).is_empty(), "not before the delay");
    c.on_timer(1_002);
    expect_connect(&mut c, 2, 1);
    // the next failure without a healthy period doubles, Retry-After raises it
    c.on_failure(
        1_100,
        2,
        Failure::Http {
            status: 503,
            retry_after_ms: Some(7_000),
            reason: String::new(),
        },
    );
    assert!(matches!(
        c.state(),
        ConnectionState::Reconnecting {
            attempt: 2,
            next_retry_ms: 7_000,
            ..
        }
    ));
    assert_eq!(c.counters().reconnects, 2);
    // events of the dead connection are ignored
    c.on_bytes(
        1_200,
        1,
        sse_durable(2, "worker", &user("b", "2")).as_bytes(),
    );
    assert!(delivered(&events(&mut c)).is_empty());
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn liveness_45s_without_a_byte_reconnects_and_comments_count() {
    let mut c = connected(TransportKind::SsePost);
    assert_eq!(c.next_deadline(), Some(45_000));
    c.on_bytes(30_000, 1, b": keepalive\n\n");
    c.on_timer(45_000);
    assert_eq!(c.state(), &ConnectionState::Open);
    assert_eq!(c.next_deadline(), Some(75_000));
    c.on_timer(75_000);
    assert_eq!(actions(&mut c), vec![Action::Disconnect { conn: 1 }]);
    assert!(
        matches!(c.state(), ConnectionState::Reconnecting { attempt: 1, last_error, .. } if last_error.contains("liveness"))
    );
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn connect_timeout_retries() {
    let mut c = connecting(TransportKind::WebSocket);
    assert_eq!(c.next_deadline(), Some(15_000));
    c.on_timer(15_000);
    assert_eq!(actions(&mut c), vec![Action::Disconnect { conn: 1 }]);
    assert!(matches!(
        c.state(),
        ConnectionState::Reconnecting { attempt: 1, .. }
    ));
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn permanent_failures_close_and_fail_pending_sends() {
    for (failure, permanent) in [
        (http(400, "cursor_beyond_end"), true),
        (ws_closed(4400, "cursor_beyond_end"), true),
        (http(401, "authentication_error"), true),
        (http(403, ""), true),
        (http(404, ""), true),
        (http(409, ""), false),
        (http(503, ""), false),
        (ws_closed(1002, ""), true),
        (ws_closed(4001, ""), true),
        (ws_closed(4003, ""), true),
        (
            ws_closed(4404, "session_ended: nothing after sequence number 9"),
            true,
        ),
        (ws_closed(1006, ""), false),
        (ws_closed(1001, ""), false),
    ] {
        let mut c = connecting(TransportKind::SsePost);
        let uuid = c.send(0, user("", "x")).unwrap();
        c.on_failure(1, 1, failure.clone());
        let evs = events(&mut c);
        if permanent {
            assert!(
                matches!(
                    c.state(),
                    ConnectionState::Closed {
                        reason: CloseReason::Permanent(_)
                    }
                ),
                "{failure:?}"
            );
            assert!(evs.iter().any(|e| matches!(e, TransportEvent::SendFailed { uuid: u, error: SendError::Closed(_) } if *u == uuid)));
            assert!(actions(&mut c).contains(&Action::Shutdown));
            assert!(matches!(
                c.send(2, user("", "y")),
                Err(SendError::Closed(_))
            ));
        } else {
            assert!(
                matches!(c.state(), ConnectionState::Reconnecting { .. }),
                "{failure:?}"
            );
            assert_eq!(c.pending_sends(), 1);
        }
    }
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn gives_up_after_ten_minutes_without_a_healthy_connection() {
    let mut c = connecting(TransportKind::SsePost);
    let mut now = 0;
    let mut conn = 1;
    loop {
        c.on_failure(now, conn, Failure::Network("refused".into()));
        if c.is_closed() {
            break;
        }
        now = c.next_deadline().unwrap();
        c.on_timer(now);
        conn = c.conn();
        assert!(now < 700_000);
    }
    assert!(now >= 600_000, "gave up at {now}");
    assert!(matches!(
        c.state(),
        ConnectionState::Closed {
            reason: CloseReason::GaveUp(_)
        }
    ));
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn suspend_and_resume_lose_nothing() {
    let mut c = connected(TransportKind::SsePost);
    c.on_bytes(1, 1, sse_durable(1, "worker", &user("a", "1")).as_bytes());
    c.suspend(2);
    assert_eq!(actions(&mut c), vec![Action::Disconnect { conn: 1 }]);
    assert_eq!(c.state(), &ConnectionState::Suspended);
    assert_eq!(
        c.next_deadline(),
        None,
        "no liveness, no retries while suspended"
    );
    let u = c.send(3, user("", "later")).unwrap();
    assert!(actions(&mut c).is_empty(), "sends wait");
    c.on_bytes(4, 1, sse_durable(2, "worker", &user("b", "2")).as_bytes());
    c.resume(100_000);
    expect_connect(&mut c, 2, 1);
    assert!(c.on_connected(100_001, 2));
    assert_eq!(post_ids(&actions(&mut c)), vec![(1, vec![u])]);
    c.on_bytes(
        100_002,
        2,
        sse_durable(2, "worker", &user("b", "2")).as_bytes(),
    );
    assert_eq!(delivered(&events(&mut c)), durable(&[(1, "1"), (2, "2")]));
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn close_drains_for_three_seconds_then_reports_what_is_left() {
    let mut c = connected(TransportKind::Hybrid);
    let a = c.send(1, user("", "1")).unwrap();
    let _ = actions(&mut c);
    let b = c.send(2, user("", "2")).unwrap(); // queued behind the one in flight
    c.close(10);
    assert!(!c.is_closed());
    c.on_post_result(20, 1, PostOutcome::Accepted(vec![(None, Some(1))]));
    assert_eq!(post_ids(&actions(&mut c)), vec![(2, vec![b.clone()])]);
    c.on_timer(3_010);
    let evs = events(&mut c);
    assert!(evs.contains(&TransportEvent::Delivered {
        uuid: a,
        event_id: None,
        seq: Some(1)
    }));
    assert!(evs.iter().any(|e| matches!(e, TransportEvent::SendFailed { uuid, error: SendError::Closed(_) } if *uuid == b)));
    assert_eq!(
        c.state(),
        &ConnectionState::Closed {
            reason: CloseReason::Client
        }
    );
    // and a close with nothing pending is immediate
    let mut c = connected(TransportKind::SsePost);
    c.close(5);
    assert!(c.is_closed());
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn post_refusals_fail_the_event_and_401_closes() {
    let mut c = connected(TransportKind::SsePost);
    let a = c
        .send(
            1,
            json!({"type":"control_response","response":{"subtype":"success","request_id":"r1"}}),
        )
        .unwrap();
    let _ = actions(&mut c);
    c.on_post_result(
        2,
        1,
        PostOutcome::Rejected {
            status: 409,
            kind: "request_not_pending".into(),
            message: "already answered".into(),
        },
    );
    let evs = events(&mut c);
    assert!(evs.iter().any(|e| matches!(e, TransportEvent::SendFailed { uuid, error: SendError::Rejected { status: 409, .. } } if *uuid == a)));
    assert_eq!(c.state(), &ConnectionState::Open);
    let _b = c.send(3, user("", "x")).unwrap();
    let _ = actions(&mut c);
    c.on_post_result(
        4,
        2,
        PostOutcome::Rejected {
            status: 401,
            kind: "authentication_error".into(),
            message: String::new(),
        },
    );
    assert!(matches!(
        c.state(),
        ConnectionState::Closed {
            reason: CloseReason::Permanent(_)
        }
    ));
    assert_eq!(c.counters().send_failures, 2);
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn websocket_writes_are_resent_after_a_cut_and_confirmed_by_echo() {
    let mut c = connected(TransportKind::WebSocket);
    let a = c.send(1, user("", "1")).unwrap();
    let b = c.send(1, user("", "2")).unwrap();
    let frames: Vec<_> = actions(&mut c)
        .into_iter()
        .filter_map(|a| match a {
            Action::SendFrame { conn, text } => Some((
                conn,
                serde_json::from_str::<Value>(&text).unwrap()["uuid"].clone(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(frames, vec![(1, json!(a))], "one frame in flight");
    c.on_failure(2, 1, ws_closed(1006, ""));
    c.on_timer(1_002);
    let _ = actions(&mut c);
    assert!(c.on_connected(1_003, 2));
    let acts = actions(&mut c);
    assert!(matches!(&acts[..], [Action::SendFrame { conn: 2, text }] if text.contains(&a)));
    c.on_text(1_004, 2, &ws_durable(1, "client", &user(&a, "1")));
    let acts = actions(&mut c);
    assert!(matches!(&acts[..], [Action::SendFrame { conn: 2, text }] if text.contains(&b)));
    // the relay refuses b
    c.on_text(1_005, 2, r#"{"event":"error","id":null,"data":{"type":"error","status":410,"error":{"type":"gone","message":"session ended"}}}"#);
    let evs = events(&mut c);
    assert!(evs.contains(&TransportEvent::Delivered {
        uuid: a,
        event_id: Some("ev-1".into()),
        seq: Some(1)
    }));
    assert!(evs.iter().any(|e| matches!(e, TransportEvent::SendFailed { uuid, error: SendError::Rejected { status: 410, .. } } if *uuid == b)));
    assert!(delivered(&evs).is_empty());
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn without_a_payload_check_payloads_are_delivered_raw() {
    let mut c = Core::new(
        Config::new(TransportKind::SsePost, "cse_test"),
        Resume::default(),
        entropy(),
        0,
    );
    connect(&mut c, 0);
    let mut s = sse_durable(1, "worker", &user("a", "1"));
    s.push_str("id: 2\nevent: client_event\ndata: {\"sequence_num\":2,\"payload\":{\"type\":\"assistant\",\"message\":7}}\n\n");
    s.push_str("id: 3\nevent: client_event\ndata: {\"sequence_num\":3,\"payload\":{\"x\":1}}\n\n");
    c.on_bytes(1, 1, s.as_bytes());
    let evs = events(&mut c);
    let msgs: Vec<_> = evs
        .iter()
        .filter_map(|e| match e {
            TransportEvent::Message(m) => Some(m),
            _ => None,
        })
        .collect();
    assert_eq!(msgs.len(), 2, "{evs:?}");
    assert_eq!(msgs[0].kind(), "user");
    assert_eq!(msgs[0].decode().unwrap().uuid(), Some("a"));
    assert_eq!(
        msgs[1].message.value(),
        json!({"type":"assistant","message":7})
    );
    assert!(
        msgs[1].decode().is_err(),
        "the typed decode still refuses it"
    );
    // a payload without a string `type` is malformed either way
    assert_eq!(c.counters().malformed, 1);
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn malformed_frames_are_counted_reported_and_skipped() {
    let mut c = connected(TransportKind::SsePost);
    let mut s = sse_durable(1, "worker", &user("a", "1"));
    s.push_str("id: 2\nevent: client_event\ndata: {\"sequence_num\":2,\"payload\":{\"type\":\"assistant\",\"message\":7}}\n\n");
    s.push_str("event: client_event\ndata: not json\n\n");
    s.push_str("event: session_update\ndata: {}\n\n");
    s.push_str("event: keepalive\ndata: {}\n\n");
    s.push_str(&sse_durable(3, "worker", &user("c", "3")));
    c.on_bytes(1, 1, s.as_bytes());
    let evs = events(&mut c);
    assert_eq!(delivered(&evs), durable(&[(1, "1"), (3, "3")]));
    assert_eq!(c.counters().malformed, 2);
    assert_eq!(c.counters().dropped, 1);
    assert!(
        evs.iter()
            .any(|e| matches!(e, TransportEvent::Malformed { seq: Some(2), .. }))
    );
    assert!(
        actions(&mut c).is_empty(),
        "no gap fetch: seq 2 was accounted for"
    );
}
