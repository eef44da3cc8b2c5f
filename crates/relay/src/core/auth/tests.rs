use super::*;

const TOK: &str = "secret-token-1234567890abcdef";

#[test]
fn given_token_authenticates_only_hash_is_stored_and_the_link_gets_a_code() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.db");
    let auth = Auth::open(&path).unwrap();
    let boot = auth.bootstrap(Some(TOK), 600).unwrap();
    assert_ne!(
        boot.login_code, TOK,
        "the printed link never carries the token"
    );
    assert!(boot.generated_token.is_none());
    let p = auth.authenticate_token(TOK).unwrap();
    assert_eq!(p.role, Role::Controller);
    assert!(
        auth.authenticate_token("secret-token-1234567890abcdeX")
            .is_none()
    );
    assert!(auth.login(&boot.login_code).unwrap().is_some());
    assert!(
        auth.login(&boot.login_code).unwrap().is_none(),
        "single use"
    );
    drop(auth);
    let bytes = std::fs::read(&path).unwrap();
    let needle = TOK.as_bytes();
    assert!(
        !bytes.windows(needle.len()).any(|w| w == needle),
        "token stored in clear"
    );
}

#[test]
fn generated_token_then_one_time_code() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.db");
    let first = Auth::open(&path)
        .unwrap()
        .bootstrap(None, 600)
        .unwrap()
        .generated_token
        .unwrap();
    let auth = Auth::open(&path).unwrap();
    assert!(
        auth.authenticate_token(&first).is_some(),
        "controller token survives restart"
    );
    let boot = auth.bootstrap(None, 600).unwrap();
    assert!(boot.generated_token.is_none());
    let code = boot.login_code;
    assert!(
        auth.authenticate_token(&code).is_none(),
        "a login code is not a bearer token"
    );
    let l = auth.login(&code).unwrap().unwrap();
    assert_eq!(l.principal.role, Role::Controller);
    assert!(l.principal.login_id.as_deref().unwrap().starts_with("lgn_"));
    assert!(
        auth.login(&code).unwrap().is_none(),
        "one-time code is single use"
    );
    let p = auth
        .authenticate_cookie(&l.cookie, Some(&l.login_secret))
        .unwrap();
    assert_eq!(p.role, Role::Controller);
    assert_eq!(
        p.login_id, l.principal.login_id,
        "the audit names the login"
    );
    assert!(auth.is_live(&p));
    auth.logout(&l.cookie).unwrap();
    assert!(
        auth.authenticate_cookie(&l.cookie, Some(&l.login_secret))
            .is_none()
    );
    assert!(!auth.is_live(&p), "open streams see the logout");
}

#[test]
fn the_cookie_alone_is_not_enough() {
    let auth = Auth::open_in_memory().unwrap();
    auth.bootstrap(Some(TOK), 600).unwrap();
    let l = auth.login(TOK).unwrap().unwrap();
    assert!(auth.authenticate_cookie(&l.cookie, None).is_none());
    assert!(
        auth.authenticate_cookie(&l.cookie, Some("brk_wrong"))
            .is_none()
    );
    assert!(
        auth.authenticate_cookie(&l.cookie, Some(&l.login_secret))
            .is_some()
    );
    let other = auth.login(TOK).unwrap().unwrap();
    assert!(
        auth.authenticate_cookie(&l.cookie, Some(&other.login_secret))
            .is_none(),
        "a secret belongs to its own login"
    );
    assert_ne!(l.principal.login_id, other.principal.login_id);
}

#[test]
fn login_codes_expire() {
    let auth = Auth::open_in_memory().unwrap();
    let boot = auth.bootstrap(Some(TOK), 0).unwrap();
    assert!(auth.login(&boot.login_code).unwrap().is_none());
    let fresh = auth.mint_login_code(600);
    assert!(auth.login(&fresh).unwrap().is_some());
}

#[test]
fn a_changed_controller_token_logs_out_its_cookies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.db");
    let auth = Auth::open(&path).unwrap();
    auth.bootstrap(Some(TOK), 600).unwrap();
    let l = auth.login(TOK).unwrap().unwrap();
    drop(auth);
    // Same token again: the login survives the restart.
    let auth = Auth::open(&path).unwrap();
    auth.bootstrap(Some(TOK), 600).unwrap();
    assert!(
        auth.authenticate_cookie(&l.cookie, Some(&l.login_secret))
            .is_some()
    );
    drop(auth);
    let auth = Auth::open(&path).unwrap();
    auth.bootstrap(Some("another-token-1234567890abcdef"), 600)
        .unwrap();
    assert!(
        auth.authenticate_cookie(&l.cookie, Some(&l.login_secret))
            .is_none()
    );
    assert!(auth.authenticate_token(TOK).is_none());
}

#[test]
fn only_the_controller_row_is_loaded_and_every_credential_is_listed_and_revocable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.db");
    Auth::open(&path)
        .unwrap()
        .bootstrap(Some(TOK), 600)
        .unwrap();
    // Someone who can write relay.db plants a second controller.
    let planted = "planted-token-1234567890abcdef";
    Connection::open(&path)
        .unwrap()
        .execute(
            "INSERT INTO tokens (id, role, hash, session_scope, expires_at, created_at) VALUES ('evil', 'controller', ?1, NULL, NULL, 0)",
            params![sha256_hex(planted)],
        )
        .unwrap();
    let auth = Auth::open(&path).unwrap();
    auth.bootstrap(Some(TOK), 600).unwrap();
    assert!(
        auth.authenticate_token(planted).is_none(),
        "planted row ignored"
    );
    let m = auth.mint_observer(None, false, None).unwrap();
    let l = auth.login(TOK).unwrap().unwrap();
    let list = auth.list_credentials();
    let ids: Vec<&str> = list.iter().filter_map(|c| c["id"].as_str()).collect();
    assert!(ids.contains(&CONTROLLER_ID) && ids.contains(&m.id.as_str()));
    let lid = l.principal.login_id.clone().unwrap();
    assert!(ids.contains(&lid.as_str()));
    assert!(!ids.contains(&"evil"));
    let text = serde_json::to_string(&list).unwrap();
    assert!(
        !text.contains(&l.cookie) && !text.contains(&m.token) && !text.contains(&l.login_secret)
    );
    assert!(auth.revoke(&lid).unwrap());
    assert!(
        auth.authenticate_cookie(&l.cookie, Some(&l.login_secret))
            .is_none()
    );
    assert!(auth.revoke(CONTROLLER_ID).unwrap());
    assert!(auth.authenticate_token(TOK).is_none());
}

#[test]
fn token_checks() {
    assert!(
        check_token("short", "BRIDGE_RELAY_TOKEN")
            .unwrap_err()
            .contains("at least 24")
    );
    assert!(check_token(TOK, "x").is_ok());
}

#[test]
fn observers_scope_expiry_and_revocation() {
    let auth = Auth::open_in_memory().unwrap();
    auth.bootstrap(Some(TOK), 600).unwrap();
    let m = auth.mint_observer(Some("s1".into()), false, None).unwrap();
    let day = unix_now() + OBSERVER_DEFAULT_TTL_SECS as i64;
    assert!(
        m.expires_at.is_some_and(|t| (day - 5..=day).contains(&t)),
        "24 h by default"
    );
    let p = auth.authenticate_token(&m.token).unwrap();
    assert_eq!(p.role, Role::Observer);
    assert!(!p.can_write());
    assert!(p.can_see("s1") && !p.can_see("s2"));
    let l = auth.login(&m.token).unwrap().unwrap();
    assert!(
        auth.authenticate_cookie(&l.cookie, Some(&l.login_secret))
            .is_some()
    );
    assert_eq!(auth.list_observers().len(), 1);
    assert!(auth.revoke_observer(&m.id).unwrap());
    assert!(auth.authenticate_token(&m.token).is_none());
    assert!(!auth.is_live(&p));
    assert!(
        auth.authenticate_cookie(&l.cookie, Some(&l.login_secret))
            .is_none()
    );
    assert!(!auth.revoke_observer(&m.id).unwrap());
    let expired = auth.mint_observer(None, false, Some(0)).unwrap();
    assert!(auth.authenticate_token(&expired.token).is_none());
}

#[test]
fn rows_the_relay_did_not_write_do_not_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("relay.db");
    let (obs, ctl_login, obs_login) = {
        let auth = Auth::open(&path).unwrap();
        auth.bootstrap(Some(TOK), 600).unwrap();
        let obs = auth.mint_observer(None, false, None).unwrap();
        let ctl_login = auth.login(TOK).unwrap().unwrap();
        let obs_login = auth.login(&obs.token).unwrap().unwrap();
        (obs, ctl_login, obs_login)
    };
    use std::os::unix::fs::PermissionsExt as _;
    let key = std::fs::metadata(dir.path().join("relay.key")).unwrap();
    assert_eq!(key.permissions().mode() & 0o777, 0o600);
    assert_eq!(key.len(), 32);
    // What the relay wrote loads again.
    let auth = Auth::open(&path).unwrap();
    assert!(auth.authenticate_token(&obs.token).is_some());
    assert_eq!(
        auth.authenticate_cookie(&ctl_login.cookie, Some(&ctl_login.login_secret))
            .unwrap()
            .role,
        Role::Controller
    );
    drop(auth);
    // Someone who can write relay.db (not relay.key): a controller login of their own, an observer
    // token of their own, and the observer's login moved onto the controller.
    let conn = Connection::open(&path).unwrap();
    let planted_cookie = "brs_planted-cookie-0123456789";
    let planted_secret = "brk_planted-secret-0123456789";
    conn.execute(
        "INSERT INTO login_cookies (hash, token_id, expires_at, id, secret_hash, created_at, mac) VALUES (?1, 'controller', ?2, 'lgn_planted', ?3, 0, 'deadbeef')",
        params![sha256_hex(planted_cookie), unix_now() + 3600, sha256_hex(planted_secret)],
    )
    .unwrap();
    let planted_token = "bro_planted-observer-0123456789";
    conn.execute(
        "INSERT INTO tokens (id, role, hash, session_scope, expires_at, created_at, transcripts, mac) VALUES ('obs_planted', 'observer', ?1, NULL, NULL, 0, 1, NULL)",
        params![sha256_hex(planted_token)],
    )
    .unwrap();
    conn.execute(
        "UPDATE login_cookies SET token_id = 'controller' WHERE hash = ?1",
        params![sha256_hex(&obs_login.cookie)],
    )
    .unwrap();
    drop(conn);
    let auth = Auth::open(&path).unwrap();
    assert!(
        auth.authenticate_cookie(planted_cookie, Some(planted_secret))
            .is_none()
    );
    assert!(auth.authenticate_token(planted_token).is_none());
    assert!(
        auth.authenticate_cookie(&obs_login.cookie, Some(&obs_login.login_secret))
            .is_none(),
        "a login moved to the controller does not load"
    );
    assert!(auth.authenticate_token(&obs.token).is_some());
    assert!(auth.authenticate_token(TOK).is_some());
}

#[test]
fn transcripts_are_read_by_the_controller_and_observers_minted_for_them_only() {
    let auth = Auth::open_in_memory().unwrap();
    auth.bootstrap(Some(TOK), 600).unwrap();
    assert!(auth.authenticate_token(TOK).unwrap().transcripts);
    let plain = auth.mint_observer(None, false, None).unwrap();
    assert!(!auth.authenticate_token(&plain.token).unwrap().transcripts);
    let reader = auth.mint_observer(None, true, None).unwrap();
    assert!(auth.authenticate_token(&reader.token).unwrap().transcripts);
    let scoped = auth
        .mint_observer(Some("cse_1".into()), true, None)
        .unwrap();
    assert!(
        !auth.authenticate_token(&scoped.token).unwrap().transcripts,
        "a session-scoped token never reads transcripts"
    );
    let l = auth.login(&reader.token).unwrap().unwrap();
    assert!(
        auth.authenticate_cookie(&l.cookie, Some(&l.login_secret))
            .unwrap()
            .transcripts
    );
}

#[tokio::test]
async fn at_most_this_many_logins_per_credential_the_least_recently_used_go() {
    let auth = Auth::open_in_memory().unwrap();
    auth.bootstrap(Some(TOK), 600).unwrap();
    let mut rx = auth.revocations();
    rx.mark_unchanged();
    let logins: Vec<_> = (0..MAX_LOGINS_PER_CREDENTIAL + 3)
        .map(|_| auth.login(TOK).unwrap().unwrap())
        .collect();
    let live = logins
        .iter()
        .filter(|l| {
            auth.authenticate_cookie(&l.cookie, Some(&l.login_secret))
                .is_some()
        })
        .count();
    assert_eq!(live, MAX_LOGINS_PER_CREDENTIAL);
    assert!(
        rx.has_changed().unwrap(),
        "open streams of the evicted logins are told"
    );
    assert!(
        auth.authenticate_cookie(
            &logins.last().unwrap().cookie,
            Some(&logins.last().unwrap().login_secret)
        )
        .is_some()
    );
}
