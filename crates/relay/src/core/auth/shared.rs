//! Credentials shared by the relays of a cluster (`--nats`; see `crate::cluster::creds`): observer
//! tokens, logins and one-time login codes live in a key-value bucket keyed by the SHA-256 of their
//! secret (hashes only, as in SQLite), and every relay keeps the entries in the same in-memory maps
//! it authenticates from. The controller token is never shared: each relay is given it.

use serde::{Deserialize, Serialize};

use super::*;

/// Key prefixes in the bucket; the rest of a key is the hex SHA-256 of the secret.
pub const OBSERVER_KEY: &str = "tok.";
pub const LOGIN_KEY: &str = "lgn.";
pub const CODE_KEY: &str = "code.";

/// One bucket entry (JSON). Never a secret: hashes, ids and times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shared {
    Observer {
        id: String,
        session_id: Option<String>,
        /// Minted with the transcripts scope (absent in entries from before it: off).
        #[serde(default)]
        transcripts: bool,
        expires_at: Option<i64>,
        created_at: i64,
    },
    Login {
        id: String,
        token_id: String,
        expires_at: i64,
        created_at: i64,
        secret_hash: String,
    },
    /// An unused one-time login code for the controller; redeeming deletes it (once, by revision).
    Code { expires_at: i64 },
}

/// The bucket key of a login cookie's secret.
pub fn login_key(cookie_secret: &str) -> String {
    format!("{LOGIN_KEY}{}", sha256_hex(cookie_secret))
}

/// The bucket key of a one-time login code.
pub fn code_key(code: &str) -> String {
    format!("{CODE_KEY}{}", sha256_hex(code))
}

/// Whether a secret is shaped like a one-time login code.
pub fn is_login_code(secret: &str) -> bool {
    secret.starts_with("brl_")
}

/// A fresh one-time login code valid `ttl_secs`, kept only in the bucket (not in this relay's
/// memory, so no relay can redeem it but through the bucket): the code, its key and entry.
pub fn new_shared_code(ttl_secs: u64) -> (String, String, Shared) {
    let code = random_secret("brl_");
    let expires_at = unix_now().saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX));
    let key = code_key(&code);
    (code, key, Shared::Code { expires_at })
}

fn hash_of<'a>(key: &'a str, prefix: &str) -> Option<&'a str> {
    key.strip_prefix(prefix)
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The hash in `key` (under `prefix`) of a bucket entry whose `id` is of the kind it claims
/// (`id_prefix`); None, and a warning for an odd id, when the entry is not to be taken.
fn taken<'a>(key: &'a str, prefix: &str, id: &str, id_prefix: &str, what: &str) -> Option<&'a str> {
    let hash = hash_of(key, prefix)?;
    if !id.starts_with(id_prefix) {
        tracing::warn!(id = %id, "ignoring a shared {what} with an odd id");
        return None;
    }
    Some(hash)
}

impl Auth {
    /// The bucket entry of observer token `id`.
    pub fn shared_observer(&self, id: &str) -> Option<(String, Shared)> {
        let tokens = self.tokens.read().unwrap_or_else(|p| p.into_inner());
        tokens
            .iter()
            .find(|(_, t)| t.id == id && t.role == Role::Observer)
            .map(|(h, t)| {
                (
                    format!("{OBSERVER_KEY}{h}"),
                    Shared::Observer {
                        id: t.id.clone(),
                        session_id: t.scope.clone(),
                        transcripts: t.transcripts,
                        expires_at: t.expires_at,
                        created_at: t.created_at,
                    },
                )
            })
    }

    /// The bucket entry of login `login_id` (`lgn_…`).
    pub fn shared_login(&self, login_id: &str) -> Option<(String, Shared)> {
        let cookies = self.cookies.read().unwrap_or_else(|p| p.into_inner());
        cookies
            .iter()
            .find(|(_, c)| c.id == login_id)
            .map(|(h, c)| {
                (
                    format!("{LOGIN_KEY}{h}"),
                    Shared::Login {
                        id: c.id.clone(),
                        token_id: c.token_id.clone(),
                        expires_at: c.expires_at,
                        created_at: c.created_at,
                        secret_hash: c.secret_hash.clone(),
                    },
                )
            })
    }

    /// The bucket keys revoking credential `id` removes: an observer token and its logins, or one
    /// login (the controller token is not shared: nothing).
    pub fn shared_keys_of(&self, id: &str) -> Vec<String> {
        let mut keys = Vec::new();
        if id != CONTROLLER_ID && !id.starts_with("lgn_") {
            let tokens = self.tokens.read().unwrap_or_else(|p| p.into_inner());
            keys.extend(
                tokens
                    .iter()
                    .filter(|(_, t)| t.id == id && t.role == Role::Observer)
                    .map(|(h, _)| format!("{OBSERVER_KEY}{h}")),
            );
        }
        let cookies = self.cookies.read().unwrap_or_else(|p| p.into_inner());
        keys.extend(
            cookies
                .iter()
                .filter(|(_, c)| c.id == id || (id != CONTROLLER_ID && c.token_id == id))
                .map(|(h, _)| format!("{LOGIN_KEY}{h}")),
        );
        keys
    }

    /// Takes in an entry written to the bucket (by any relay, this one included). Only observer
    /// tokens (`obs_…`) and logins (`lgn_…`) are taken: nothing from the bucket can become or
    /// replace the controller token.
    pub fn apply_shared(&self, key: &str, entry: Shared) {
        match entry {
            Shared::Observer {
                id,
                session_id,
                transcripts,
                expires_at,
                created_at,
            } => {
                let Some(hash) = taken(key, OBSERVER_KEY, &id, "obs_", "observer token") else {
                    return;
                };
                let mut tokens = self.tokens.write().unwrap_or_else(|p| p.into_inner());
                if tokens.get(hash).is_some_and(|t| t.role == Role::Controller) {
                    return;
                }
                tokens.insert(
                    hash.to_owned(),
                    TokenRec {
                        id,
                        role: Role::Observer,
                        transcripts: transcripts && session_id.is_none(),
                        scope: session_id,
                        expires_at,
                        created_at,
                    },
                );
            }
            Shared::Login {
                id,
                token_id,
                expires_at,
                created_at,
                secret_hash,
            } => {
                let Some(hash) = taken(key, LOGIN_KEY, &id, "lgn_", "login") else {
                    return;
                };
                let mut cookies = self.cookies.write().unwrap_or_else(|p| p.into_inner());
                if cookies.get(hash).is_some_and(|c| c.id == id) {
                    return;
                }
                cookies.insert(
                    hash.to_owned(),
                    CookieRec {
                        id,
                        token_id,
                        expires_at,
                        created_at,
                        secret_hash,
                        last_used: AtomicI64::new(0),
                    },
                );
            }
            Shared::Code { .. } => {}
        }
    }

    /// Forgets an entry deleted from the bucket (revoked or logged out somewhere): open streams of
    /// it end at once (`crate::edge::extract::until_revoked`).
    pub fn forget_shared(&self, key: &str) {
        self.forget_shared_inner(key);
        self.credentials_removed();
    }

    fn forget_shared_inner(&self, key: &str) {
        if let Some(hash) = hash_of(key, OBSERVER_KEY) {
            let id = {
                let mut tokens = self.tokens.write().unwrap_or_else(|p| p.into_inner());
                match tokens.get(hash) {
                    Some(t) if t.role == Role::Observer => tokens.remove(hash).map(|t| t.id),
                    _ => None,
                }
            };
            if let Some(id) = id {
                self.cookies
                    .write()
                    .unwrap_or_else(|p| p.into_inner())
                    .retain(|_, c| c.token_id != id);
                let _ = self.conn().execute(
                    "DELETE FROM tokens WHERE id = ?1 AND role = 'observer'",
                    params![id],
                );
            }
        } else if let Some(hash) = hash_of(key, LOGIN_KEY) {
            self.cookies
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .remove(hash);
            let _ = self
                .conn()
                .execute("DELETE FROM login_cookies WHERE hash = ?1", params![hash]);
        }
    }

    /// Forgets the observer tokens and logins that have expired (they are refused from the moment
    /// they expire; the bucket's sweep removes them there without telling every relay).
    pub fn forget_expired_shared(&self) {
        let now = unix_now();
        self.tokens
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, t| t.role == Role::Controller || t.live(now));
        self.cookies
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, c| c.expires_at > now);
    }

    /// Forgets every observer token and login (not the controller token): with `--nats` the bucket
    /// holds them, and following it brings back those that still hold.
    pub fn forget_all_shared(&self) {
        self.tokens
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, t| t.role == Role::Controller);
        self.cookies
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// A login for the controller after its one-time code was redeemed in the bucket (`None`: this
    /// relay has no controller token).
    pub fn login_with_redeemed_code(&self) -> Result<Option<LoggedIn>, AuthError> {
        if !self.has_controller() {
            return Ok(None);
        }
        let controller = Principal {
            role: Role::Controller,
            token_id: CONTROLLER_ID.into(),
            session_scope: None,
            login_id: None,
            transcripts: true,
        };
        self.new_login(controller, None).map(Some)
    }

    /// Whether `code` is one of this relay's own unused login codes (the one printed at start):
    /// those are redeemed here only.
    pub fn has_local_code(&self, code: &str) -> bool {
        let hash = sha256_hex(code);
        let now = unix_now();
        self.one_time
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|(h, t)| *h == hash && *t > now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_entries_round_trip_and_never_make_a_controller() {
        let a = Auth::open_in_memory().unwrap();
        a.bootstrap(Some("controller-token-0123456789abcdef"), 60)
            .unwrap();
        let m = a.mint_observer(Some("cse_x".into()), false, None).unwrap();
        let (key, entry) = a.shared_observer(&m.id).unwrap();
        let logged = a.login(&m.token).unwrap().unwrap();
        let login_id = logged.principal.login_id.clone().unwrap();
        let (lkey, lentry) = a.shared_login(&login_id).unwrap();
        assert_eq!(lkey, login_key(&logged.cookie));

        let b = Auth::open_in_memory().unwrap();
        b.bootstrap(Some("controller-token-0123456789abcdef"), 60)
            .unwrap();
        assert!(b.authenticate_token(&m.token).is_none());
        b.apply_shared(&key, entry.clone());
        b.apply_shared(&lkey, lentry);
        let p = b.authenticate_token(&m.token).unwrap();
        assert_eq!(
            (p.role, p.token_id.as_str()),
            (Role::Observer, m.id.as_str())
        );
        let pc = b
            .authenticate_cookie(&logged.cookie, Some(&logged.login_secret))
            .unwrap();
        assert!(b.is_live(&pc));
        let mut keys = b.shared_keys_of(&m.id);
        keys.sort();
        let mut want = vec![key.clone(), lkey.clone()];
        want.sort();
        assert_eq!(keys, want);
        b.forget_shared(&key);
        assert!(b.authenticate_token(&m.token).is_none());
        assert!(!b.is_live(&pc), "its logins go with the token");

        // An entry claiming the controller's hash or id is not taken.
        let ctl = format!(
            "{OBSERVER_KEY}{}",
            sha256_hex("controller-token-0123456789abcdef")
        );
        b.apply_shared(&ctl, entry);
        assert_eq!(
            b.authenticate_token("controller-token-0123456789abcdef")
                .unwrap()
                .role,
            Role::Controller
        );
        b.forget_shared(&ctl);
        assert!(
            b.authenticate_token("controller-token-0123456789abcdef")
                .is_some()
        );
        let odd = Shared::Observer {
            id: CONTROLLER_ID.into(),
            session_id: None,
            transcripts: true,
            expires_at: None,
            created_at: 0,
        };
        b.apply_shared(&format!("{OBSERVER_KEY}{}", sha256_hex("x")), odd);
        assert!(b.authenticate_token("x").is_none());
    }
}
