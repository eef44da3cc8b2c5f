//! Tokens and login cookies. Only SHA-256 hashes of secrets are stored (in the relay's SQLite file).
//!
//! * the **controller** token: `--token-file FILE` (recommended), `BRIDGE_RELAY_TOKEN` (tests and
//!   scripts), or generated on first start. Only the row with id `controller` is loaded; any other
//!   row claiming the controller role (planted by someone who can write `relay.db`) is ignored.
//! * **observer** tokens minted by a controller: read-only, optionally scoped to one session, expiring
//!   (24 h unless asked otherwise);
//! * **login cookies** (`bridge_session`, or `__Host-bridge_session` over HTTPS): a separate random secret
//!   per login, tied to the token it was exchanged for (revoking an observer token logs its cookies out).
//!   The cookie alone is not enough: each login also returns a **login secret** (only its hash is kept
//!   beside the cookie's) that the console sends in the `X-Bridge-Login` header, or as the first
//!   WebSocket frame. Browsers send cookies to every port of a host; they do not share an origin's
//!   storage, so another local server that receives the cookie cannot replay it.
//! * **one-time login codes**, printed in the console URL at start (never the permanent token) and minted
//!   by `POST /v1/auth/login-codes`; each expires (10 min by default) and works once.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, RwLock};

use rusqlite::{Connection, params};
use serde_json::{Value, json};

use crate::util::{random_secret, sha256_hex, unix_now};

pub const COOKIE_NAME: &str = "bridge_session";
/// The login cookie's name over HTTPS: the `__Host-` prefix makes browsers insist on `Secure`,
/// `Path=/` and no `Domain`, so no other host (a sibling subdomain) can set or shadow it.
pub const SECURE_COOKIE_NAME: &str = "__Host-bridge_session";
/// The header carrying the per-login secret beside the login cookie.
pub const LOGIN_SECRET_HEADER: &str = "x-bridge-login";

/// The login cookie's name for a request that arrived over HTTPS (`https`) or plain HTTP.
pub fn cookie_name(https: bool) -> &'static str {
    if https {
        SECURE_COOKIE_NAME
    } else {
        COOKIE_NAME
    }
}
/// Login cookies live 30 days (or until their token expires or is revoked).
pub const COOKIE_MAX_AGE_SECS: i64 = 30 * 24 * 3600;
pub const CONTROLLER_ID: &str = "controller";
/// Observer tokens minted without `expires_in_secs` expire after a day.
pub const OBSERVER_DEFAULT_TTL_SECS: u64 = 24 * 3600;
/// One-time login codes expire after 10 minutes unless `--login-code-ttl-secs` says otherwise.
pub const LOGIN_CODE_DEFAULT_TTL_SECS: u64 = 600;
/// The shortest controller token accepted from `--token-file` or `BRIDGE_RELAY_TOKEN`.
pub const MIN_TOKEN_LEN: usize = 24;

/// Checks a controller token given by the operator: long enough, no whitespace inside.
pub fn check_token(token: &str, from: &str) -> Result<(), String> {
    if token.chars().count() < MIN_TOKEN_LEN {
        return Err(format!(
            "the controller token from {from} is {} characters long; use at least {MIN_TOKEN_LEN} \
             (e.g. `openssl rand -hex 24`)",
            token.chars().count()
        ));
    }
    if token.chars().any(char::is_whitespace) {
        return Err(format!(
            "the controller token from {from} contains whitespace"
        ));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Controller,
    Observer,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Controller => "controller",
            Role::Observer => "observer",
        }
    }
}

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub role: Role,
    /// `"controller"` or the observer token's id. Never the secret.
    pub token_id: String,
    pub session_scope: Option<String>,
    /// The login (cookie) this request came through, `lgn_…`; `None` for a bearer token.
    pub login_id: Option<String>,
}

impl Principal {
    pub fn can_write(&self) -> bool {
        self.role == Role::Controller
    }
    pub fn can_see(&self, session_id: &str) -> bool {
        self.session_scope
            .as_deref()
            .is_none_or(|s| s == session_id)
    }
    pub fn audit_json(&self) -> Value {
        json!({"role": self.role.as_str(), "token_id": self.token_id, "login_id": self.login_id})
    }
}

#[derive(Debug, Clone)]
struct TokenRec {
    id: String,
    role: Role,
    scope: Option<String>,
    expires_at: Option<i64>,
    created_at: i64,
}

impl TokenRec {
    fn live(&self, now: i64) -> bool {
        self.expires_at.is_none_or(|t| now < t)
    }
    fn principal(&self) -> Principal {
        Principal {
            role: self.role,
            token_id: self.id.clone(),
            session_scope: self.scope.clone(),
            login_id: None,
        }
    }
}

#[derive(Debug)]
struct CookieRec {
    id: String,
    token_id: String,
    expires_at: i64,
    created_at: i64,
    /// SHA-256 of the login secret the console must send beside the cookie.
    secret_hash: String,
    last_used: AtomicI64,
}

/// Why an auth operation failed.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("auth store: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

pub struct Auth {
    conn: Mutex<Connection>,
    /// hash → token
    tokens: RwLock<HashMap<String, TokenRec>>,
    /// hash → cookie
    cookies: RwLock<HashMap<String, CookieRec>>,
    /// hashes of unused one-time login codes → when they expire
    one_time: Mutex<Vec<(String, i64)>>,
    /// token id → last use (unix seconds), in memory only
    token_used: Mutex<HashMap<String, i64>>,
}

/// A freshly minted observer token (the secret is returned once, never stored).
#[derive(Debug, Clone)]
pub struct Minted {
    pub id: String,
    pub token: String,
    pub expires_at: Option<i64>,
}

/// What a successful login returns: the cookie, the login secret to send beside it, who it is and
/// the cookie's lifetime in seconds.
#[derive(Debug, Clone)]
pub struct LoggedIn {
    pub cookie: String,
    pub login_secret: String,
    pub principal: Principal,
    pub max_age: i64,
}

/// What [`Auth::bootstrap`] set up.
#[derive(Debug, Clone)]
pub struct Bootstrap {
    /// A one-time code for the printed login URL.
    pub login_code: String,
    /// A controller token generated now (first start without a given token): shown once.
    pub generated_token: Option<String>,
}

impl Auth {
    pub fn open(path: &Path) -> Result<Self, AuthError> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        Self::from_conn(conn)
    }

    pub fn open_in_memory() -> Result<Self, AuthError> {
        Self::from_conn(Connection::open_in_memory()?)
    }

    fn from_conn(conn: Connection) -> Result<Self, AuthError> {
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS tokens (id TEXT PRIMARY KEY, role TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
               session_scope TEXT, expires_at INTEGER, created_at INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS login_cookies (hash TEXT PRIMARY KEY, token_id TEXT NOT NULL, expires_at INTEGER NOT NULL);",
        )?;
        // Logins gained an id and a login secret: cookies from before that are not enough alone.
        for col in ["id TEXT", "secret_hash TEXT", "created_at INTEGER"] {
            let _ = conn.execute(&format!("ALTER TABLE login_cookies ADD COLUMN {col}"), []);
        }
        let now = unix_now();
        conn.execute(
            "DELETE FROM login_cookies WHERE expires_at <= ?1 OR secret_hash IS NULL OR id IS NULL",
            params![now],
        )?;
        conn.execute(
            "DELETE FROM tokens WHERE expires_at IS NOT NULL AND expires_at <= ?1",
            params![now],
        )?;
        let mut tokens = HashMap::new();
        {
            let mut stmt = conn.prepare(
                "SELECT id, role, hash, session_scope, expires_at, created_at FROM tokens",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                    r.get::<_, i64>(5)?,
                ))
            })?;
            for row in rows {
                let (id, role, hash, scope, expires_at, created_at) = row?;
                let role = match (role.as_str(), id == CONTROLLER_ID) {
                    ("controller", true) => Role::Controller,
                    ("observer", false) => Role::Observer,
                    _ => {
                        // Only the one controller credential is loaded: anything else claiming the
                        // role (or the controller's id with another role) was not written by the relay.
                        tracing::warn!(id = %id, role = %role, "ignoring an unexpected credential in the auth store");
                        continue;
                    }
                };
                tokens.insert(
                    hash,
                    TokenRec {
                        id,
                        role,
                        scope,
                        expires_at,
                        created_at,
                    },
                );
            }
        }
        let mut cookies = HashMap::new();
        {
            let mut stmt = conn.prepare(
                "SELECT hash, token_id, expires_at, id, secret_hash, created_at FROM login_cookies",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    CookieRec {
                        token_id: r.get(1)?,
                        expires_at: r.get(2)?,
                        id: r.get(3)?,
                        secret_hash: r.get(4)?,
                        created_at: r.get::<_, Option<i64>>(5)?.unwrap_or(0),
                        last_used: AtomicI64::new(0),
                    },
                ))
            })?;
            for row in rows {
                let (hash, rec) = row?;
                cookies.insert(hash, rec);
            }
        }
        Ok(Self {
            conn: Mutex::new(conn),
            tokens: RwLock::new(tokens),
            cookies: RwLock::new(cookies),
            one_time: Mutex::new(Vec::new()),
            token_used: Mutex::new(HashMap::new()),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn has_controller(&self) -> bool {
        self.tokens
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .any(|t| t.role == Role::Controller)
    }

    /// Sets up the controller credential (the given token, or a generated one on first start) and
    /// mints a one-time code for the printed login URL (valid `code_ttl_secs`): the URL never
    /// carries the permanent token.
    pub fn bootstrap(
        &self,
        given_token: Option<&str>,
        code_ttl_secs: u64,
    ) -> Result<Bootstrap, AuthError> {
        let mut generated_token = None;
        if let Some(token) = given_token.filter(|t| !t.is_empty()) {
            self.set_controller(token)?;
        } else if !self.has_controller() {
            let token = random_secret("brc_");
            self.set_controller(&token)?;
            generated_token = Some(token);
        }
        Ok(Bootstrap {
            login_code: self.mint_login_code(code_ttl_secs),
            generated_token,
        })
    }

    /// A one-time login code for the controller, valid `ttl_secs` (kept in memory: a restart
    /// forgets unused codes).
    pub fn mint_login_code(&self, ttl_secs: u64) -> String {
        let code = random_secret("brl_");
        let now = unix_now();
        let expires = now.saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX));
        let mut codes = self.one_time.lock().unwrap_or_else(|p| p.into_inner());
        codes.retain(|(_, t)| *t > now);
        codes.push((sha256_hex(&code), expires));
        code
    }

    /// Replaces the controller token (only its hash is kept). A different token than before logs
    /// out every login made with the old one.
    pub fn set_controller(&self, token: &str) -> Result<(), AuthError> {
        let hash = sha256_hex(token);
        let now = unix_now();
        let same = self
            .tokens
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&hash)
            .is_some_and(|t| t.id == CONTROLLER_ID);
        if same {
            return Ok(());
        }
        {
            let conn = self.conn();
            conn.execute("DELETE FROM tokens WHERE id = ?1", params![CONTROLLER_ID])?;
            conn.execute(
                "DELETE FROM login_cookies WHERE token_id = ?1",
                params![CONTROLLER_ID],
            )?;
            conn.execute(
                "INSERT INTO tokens (id, role, hash, session_scope, expires_at, created_at) VALUES (?1, 'controller', ?2, NULL, NULL, ?3)",
                params![CONTROLLER_ID, hash, now],
            )?;
        }
        self.cookies
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, c| c.token_id != CONTROLLER_ID);
        let mut tokens = self.tokens.write().unwrap_or_else(|p| p.into_inner());
        tokens.retain(|_, t| t.id != CONTROLLER_ID);
        tokens.insert(
            hash,
            TokenRec {
                id: CONTROLLER_ID.into(),
                role: Role::Controller,
                scope: None,
                expires_at: None,
                created_at: now,
            },
        );
        Ok(())
    }

    /// A bearer token (controller or observer) → who it is.
    pub fn authenticate_token(&self, secret: &str) -> Option<Principal> {
        let hash = sha256_hex(secret);
        let now = unix_now();
        let tokens = self.tokens.read().unwrap_or_else(|p| p.into_inner());
        let p = tokens
            .get(&hash)
            .filter(|t| t.live(now))
            .map(TokenRec::principal)?;
        self.token_used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(p.token_id.clone(), now);
        Some(p)
    }

    /// A login cookie value and the login secret sent beside it → who it is. Without the matching
    /// secret the cookie is worth nothing.
    pub fn authenticate_cookie(
        &self,
        secret: &str,
        login_secret: Option<&str>,
    ) -> Option<Principal> {
        let login_secret = login_secret?;
        let hash = sha256_hex(secret);
        let now = unix_now();
        let (token_id, login_id) = {
            let cookies = self.cookies.read().unwrap_or_else(|p| p.into_inner());
            let c = cookies.get(&hash)?;
            if c.expires_at <= now || c.secret_hash != sha256_hex(login_secret) {
                return None;
            }
            c.last_used.store(now, Ordering::Relaxed);
            (c.token_id.clone(), c.id.clone())
        };
        let tokens = self.tokens.read().unwrap_or_else(|p| p.into_inner());
        tokens
            .values()
            .find(|t| t.id == token_id && t.live(now))
            .map(|t| Principal {
                login_id: Some(login_id),
                ..t.principal()
            })
    }

    /// Whether a login cookie exists at all (whatever the login secret): the WebSocket then waits
    /// for the secret in its first frame.
    pub fn cookie_known(&self, secret: &str) -> bool {
        let hash = sha256_hex(secret);
        self.cookies
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&hash)
            .is_some_and(|c| c.expires_at > unix_now())
    }

    /// Whether the credential a principal authenticated with still holds (not revoked, expired or
    /// logged out). Open streams check this to end when it no longer does.
    pub fn is_live(&self, who: &Principal) -> bool {
        let now = unix_now();
        let token_live = self
            .tokens
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .any(|t| t.id == who.token_id && t.live(now));
        token_live
            && who.login_id.as_deref().is_none_or(|lid| {
                self.cookies
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .values()
                    .any(|c| c.id == lid && c.expires_at > now)
            })
    }

    /// Exchanges a token or one-time code for a new login (cookie + login secret). `None`: not a
    /// valid credential.
    pub fn login(&self, secret: &str) -> Result<Option<LoggedIn>, AuthError> {
        let hash = sha256_hex(secret);
        let now = unix_now();
        let principal_and_expiry = {
            let mut one_time = self.one_time.lock().unwrap_or_else(|p| p.into_inner());
            one_time.retain(|(_, t)| *t > now);
            if let Some(pos) = one_time.iter().position(|(h, _)| *h == hash) {
                one_time.remove(pos);
                Some((
                    Principal {
                        role: Role::Controller,
                        token_id: CONTROLLER_ID.into(),
                        session_scope: None,
                        login_id: None,
                    },
                    None,
                ))
            } else {
                let tokens = self.tokens.read().unwrap_or_else(|p| p.into_inner());
                tokens
                    .get(&hash)
                    .filter(|t| t.live(now))
                    .map(|t| (t.principal(), t.expires_at))
            }
        };
        let Some((mut principal, token_expiry)) = principal_and_expiry else {
            return Ok(None);
        };
        let cookie = random_secret("brs_");
        let login_secret = random_secret("brk_");
        let id = format!("lgn_{}", uuid::Uuid::new_v4().simple());
        let expires_at = token_expiry.map_or(now + COOKIE_MAX_AGE_SECS, |t| {
            t.min(now + COOKIE_MAX_AGE_SECS)
        });
        let cookie_hash = sha256_hex(&cookie);
        let secret_hash = sha256_hex(&login_secret);
        self.conn().execute(
            "INSERT INTO login_cookies (hash, token_id, expires_at, id, secret_hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![cookie_hash, principal.token_id, expires_at, id, secret_hash, now],
        )?;
        self.cookies
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                cookie_hash,
                CookieRec {
                    id: id.clone(),
                    token_id: principal.token_id.clone(),
                    expires_at,
                    created_at: now,
                    secret_hash,
                    last_used: AtomicI64::new(now),
                },
            );
        principal.login_id = Some(id);
        Ok(Some(LoggedIn {
            cookie,
            login_secret,
            principal,
            max_age: expires_at - now,
        }))
    }

    pub fn logout(&self, cookie_secret: &str) -> Result<(), AuthError> {
        let hash = sha256_hex(cookie_secret);
        self.conn()
            .execute("DELETE FROM login_cookies WHERE hash = ?1", params![hash])?;
        self.cookies
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&hash);
        Ok(())
    }

    /// Mints an observer token; without `expires_in_secs` it lives [`OBSERVER_DEFAULT_TTL_SECS`].
    pub fn mint_observer(
        &self,
        scope: Option<String>,
        expires_in_secs: Option<u64>,
    ) -> Result<Minted, AuthError> {
        let id = format!("obs_{}", uuid::Uuid::new_v4().simple());
        let token = random_secret("bro_");
        let hash = sha256_hex(&token);
        let now = unix_now();
        let ttl = expires_in_secs.unwrap_or(OBSERVER_DEFAULT_TTL_SECS);
        let expires_at = Some(now.saturating_add(i64::try_from(ttl).unwrap_or(i64::MAX)));
        self.conn().execute(
            "INSERT INTO tokens (id, role, hash, session_scope, expires_at, created_at) VALUES (?1, 'observer', ?2, ?3, ?4, ?5)",
            params![id, hash, scope, expires_at, now],
        )?;
        self.tokens
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                hash,
                TokenRec {
                    id: id.clone(),
                    role: Role::Observer,
                    scope,
                    expires_at,
                    created_at: now,
                },
            );
        Ok(Minted {
            id,
            token,
            expires_at,
        })
    }

    /// Revokes an observer token and every cookie obtained with it. `false`: no such observer token.
    pub fn revoke_observer(&self, id: &str) -> Result<bool, AuthError> {
        if id == CONTROLLER_ID {
            return Ok(false);
        }
        let n = {
            let conn = self.conn();
            conn.execute("DELETE FROM login_cookies WHERE token_id = ?1", params![id])?;
            conn.execute(
                "DELETE FROM tokens WHERE id = ?1 AND role = 'observer'",
                params![id],
            )?
        };
        self.tokens
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, t| t.id != id);
        self.cookies
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, c| c.token_id != id);
        Ok(n > 0)
    }

    /// Revokes any credential by id: an observer token (with its logins), a login (that device is
    /// logged out) or the controller token (every bearer client and login of the controller stops
    /// working until the relay is restarted with a token). `false`: no such credential.
    pub fn revoke(&self, id: &str) -> Result<bool, AuthError> {
        if id.starts_with("lgn_") {
            let n = self
                .conn()
                .execute("DELETE FROM login_cookies WHERE id = ?1", params![id])?;
            self.cookies
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|_, c| c.id != id);
            return Ok(n > 0);
        }
        if id == CONTROLLER_ID {
            let n = {
                let conn = self.conn();
                conn.execute("DELETE FROM login_cookies WHERE token_id = ?1", params![id])?;
                conn.execute("DELETE FROM tokens WHERE id = ?1", params![id])?
            };
            self.tokens
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|_, t| t.id != id);
            self.cookies
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|_, c| c.token_id != id);
            self.one_time
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clear();
            return Ok(n > 0);
        }
        self.revoke_observer(id)
    }

    /// Observer tokens, without secrets.
    pub fn list_observers(&self) -> Vec<Value> {
        let now = unix_now();
        let tokens = self.tokens.read().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<&TokenRec> = tokens
            .values()
            .filter(|t| t.role == Role::Observer && t.live(now))
            .collect();
        out.sort_by_key(|t| t.created_at);
        out.iter()
            .map(|t| json!({"id": t.id, "session_id": t.scope, "expires_at": t.expires_at, "created_at": t.created_at}))
            .collect()
    }

    /// Every live credential, without secrets: the controller token, observer tokens and logins
    /// (`kind`: `token` or `login`; a login names the token it was made with).
    pub fn list_credentials(&self) -> Vec<Value> {
        let now = unix_now();
        let used = self
            .token_used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let mut out: Vec<(i64, Value)> = Vec::new();
        for t in self
            .tokens
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|t| t.live(now))
        {
            out.push((
                t.created_at,
                json!({"id": t.id, "kind": "token", "role": t.role.as_str(), "session_id": t.scope,
                       "created_at": t.created_at, "expires_at": t.expires_at, "last_used_at": used.get(&t.id)}),
            ));
        }
        for c in self
            .cookies
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|c| c.expires_at > now)
        {
            let last = c.last_used.load(Ordering::Relaxed);
            out.push((
                c.created_at,
                json!({"id": c.id, "kind": "login", "token_id": c.token_id, "created_at": c.created_at,
                       "expires_at": c.expires_at, "last_used_at": (last > 0).then_some(last)}),
            ));
        }
        out.sort_by_key(|(t, _)| *t);
        out.into_iter().map(|(_, v)| v).collect()
    }
}

/// How often an open stream checks that its credential still holds.
pub const REVOCATION_CHECK: std::time::Duration = std::time::Duration::from_millis(250);

/// Resolves once `who`'s credential is revoked, expires or is logged out (checked every
/// [`REVOCATION_CHECK`]): SSE streams end and WebSockets close when it does.
pub async fn until_revoked(app: std::sync::Arc<crate::relay::Relay>, who: Principal) {
    let mut tick = tokio::time::interval(REVOCATION_CHECK);
    loop {
        tick.tick().await;
        if !app.auth.is_live(&who) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
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
            !text.contains(&l.cookie)
                && !text.contains(&m.token)
                && !text.contains(&l.login_secret)
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
}
