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
    let m = auth.mint_observer(None, None).unwrap();
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
    let m = auth.mint_observer(Some("s1".into()), None).unwrap();
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
    let expired = auth.mint_observer(None, Some(0)).unwrap();
    assert!(auth.authenticate_token(&expired.token).is_none());
}
