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

mod credentials;
pub mod shared;

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
mod tests;
