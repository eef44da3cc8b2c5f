//! The durable log: retention, retries recognised by uuid, replays, followers, sequence numbers.

use super::*;

#[tokio::test]
async fn retention_prunes_but_keeps_pending_prompts() {
    let r = rig(None, Some(10));
    r.session.on_line(&can_use_tool("keep-me"));
    for i in 0..100 {
        r.session
            .on_line(&format!(r#"{{"type":"assistant","n":{i}}}"#));
    }
    let (first, last) = r.session.bounds();
    assert_eq!(last, 101);
    assert_eq!(first, 1, "the pending prompt at seq 1 pins the log");
    r.session
        .ingest(&controller(), vec![answer("keep-me", "u", "ls")])
        .unwrap();
    for i in 0..20 {
        r.session
            .on_line(&format!(r#"{{"type":"assistant","m":{i}}}"#));
    }
    let (first, last) = r.session.bounds();
    assert_eq!(last, 122);
    assert!(first > 100 && last + 1 - first >= 10, "first={first}");
    assert_eq!(r.store.bounds("cse_t").unwrap(), (first, last));
}

#[tokio::test]
async fn a_retry_is_recognised_after_its_event_was_pruned() {
    let mut r = rig(None, Some(10));
    drain(&mut r.stdin);
    let who = controller();
    let first = r.session.ingest(&who, vec![user_msg("u-0")]).unwrap();
    for i in 1..50 {
        r.session
            .ingest(&who, vec![user_msg(&format!("u-{i}"))])
            .unwrap();
    }
    let (first_kept, last) = r.session.bounds();
    assert!(
        first_kept > 1,
        "u-0's event was pruned (first kept {first_kept})"
    );
    assert_eq!(r.store.find_client_uuid("cse_t", "u-0").unwrap(), None);
    assert_eq!(drain(&mut r.stdin).len(), 50);
    let retry = r.session.ingest(&who, vec![user_msg("u-0")]).unwrap();
    assert_eq!(retry, first, "the original result");
    assert_eq!(r.session.last_seq(), last, "nothing appended");
    assert!(drain(&mut r.stdin).is_empty(), "nothing forwarded twice");
}

#[tokio::test]
async fn uuid_memory_is_bounded() {
    let mut r = rig(None, Some(10));
    let who = controller();
    for i in 0..=UUID_MEMORY {
        r.session
            .ingest(&who, vec![user_msg(&format!("u-{i}"))])
            .unwrap();
    }
    drain(&mut r.stdin);
    {
        let g = r.session.lock();
        assert_eq!(g.posted.len(), UUID_MEMORY);
        assert_eq!(g.uuids.len(), UUID_MEMORY, "map and set evict together");
        assert!(!g.uuids.contains_key("u-0"));
    }
    let last = r.session.last_seq();
    // The newest is still known; the oldest (pruned and forgotten) is treated as new.
    r.session
        .ingest(&who, vec![user_msg(&format!("u-{UUID_MEMORY}"))])
        .unwrap();
    assert_eq!(r.session.last_seq(), last);
    r.session.ingest(&who, vec![user_msg("u-0")]).unwrap();
    assert_eq!(r.session.last_seq(), last + 1);
}

#[tokio::test]
async fn replays_come_from_memory_and_match_the_store() {
    let r = rig(None, Some(100));
    for i in 0..300 {
        r.session
            .on_line(&format!(r#"{{"type":"assistant","n":{i}}}"#));
    }
    let (first, last) = r.session.bounds();
    assert_eq!(last, 300);
    let from_memory = r.session.replay_after(first + 4, 7).unwrap();
    let from_store: Vec<Arc<Frame>> = r
        .store
        .read_after("cse_t", first + 4, 7)
        .unwrap()
        .iter()
        .map(Frame::durable)
        .collect();
    assert_eq!(from_memory.len(), 7);
    for (m, s) in from_memory.iter().zip(&from_store) {
        assert_eq!((m.seq, &m.sse), (s.seq, &s.sse));
    }
    {
        let g = r.session.lock();
        assert_eq!(
            g.recent.front().and_then(|f| f.seq),
            Some(first),
            "pruned frames left memory too"
        );
        assert_eq!(g.recent.len() as u64, last + 1 - first);
    }
    // Below the retained window: whatever the store still has (nothing older than `first`).
    let older = r.session.replay_after(0, 3).unwrap();
    assert_eq!(older.first().and_then(|f| f.seq), Some(first));
}

#[tokio::test]
async fn followers_finish_after_the_exit_event() {
    let r = rig(None, None);
    r.session.on_line(r#"{"type":"assistant","n":1}"#);
    let (mut live, _) = crate::core::follow::Follower::new(r.session.clone(), 0);
    assert!(!live.finished());
    let batch = live.next_batch().await.unwrap();
    assert_eq!(batch.len(), 1);
    r.session.on_exit(ExitInfo {
        exit_code: Some(1),
        signal: None,
        stderr_tail: String::new(),
        at: now_rfc3339(),
        reason: None,
    });
    let batch = live.next_batch().await.unwrap();
    assert!(batch.last().unwrap().ends_session);
    assert!(live.finished(), "the exit event is the last durable event");
    // Joining an ended session: at the end → finished at once; from 0 → after the replay.
    let (at_end, _) = crate::core::follow::Follower::new(r.session.clone(), 2);
    assert!(at_end.finished());
    let (mut fresh, _) = crate::core::follow::Follower::new(r.session.clone(), 0);
    assert!(!fresh.finished());
    let all = fresh.next_batch().await.unwrap();
    assert_eq!(
        all.iter().map(|f| f.seq).collect::<Vec<_>>(),
        vec![Some(1), Some(2)]
    );
    assert!(fresh.finished());
}

/// Append, prune everything, crash (no clean close), restart: the next event's sequence number
/// is still past every number ever handed out.
#[tokio::test]
async fn sequence_numbers_are_never_reused_after_a_crash_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("relay.db");
    let ctx = |store: Arc<dyn EventStore>| Arc::new(SessionCtx::for_tests(store));
    let store = Arc::new(crate::core::store::SqliteStore::open(&db).unwrap());
    let meta = SessionMeta::new("cse_r".into(), "/tmp".into(), None, None, None);
    let s = Session::create(meta, ctx(store.clone())).unwrap();
    for n in 0..5 {
        s.on_line(&format!(r#"{{"type":"assistant","n":{n}}}"#));
    }
    assert_eq!(s.last_seq(), 5);
    store.prune_before("cse_r", 6).unwrap();
    let meta = s.meta();
    std::mem::forget(s);
    std::mem::forget(store);
    let store = Arc::new(crate::core::store::SqliteStore::open(&db).unwrap());
    let s = Session::restore(meta, ctx(store.clone())).unwrap();
    // The restart's own exit event is the first new one.
    assert_eq!(
        s.last_seq(),
        6,
        "strictly after every earlier sequence number"
    );
    assert_eq!(store.bounds("cse_r").unwrap(), (6, 6));
}
