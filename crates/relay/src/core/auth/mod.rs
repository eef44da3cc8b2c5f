//! Tokens and login cookies. Only SHA-256 hashes of secrets are stored (in the relay's SQLite file).
//!
//! * the **controller** token: `--token-file FILE` (recommended), `BRIDGE_RELAY_TOKEN` (tests and
//!   scripts), or generated on first start. Only the row with id `controller` is loaded; any other
//!   row claiming the controller role (planted by someone who can write `relay.db`) is ignored, and
//!   every row carries a MAC under the key in `relay.key` beside it: a row the relay did not write
//!   (a planted controller login, an observer token, a login moved to another token) does not load.
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

use crate::core::util::{random_secret, sha256_hex, unix_now};

mod credentials;
mod hook_tokens;
pub mod shared;

pub use hook_tokens::HOOK_ID_PREFIX;

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
/// The most logins (devices, browsers) one credential keeps; a new one beyond it logs out the least
/// recently used.
pub const MAX_LOGINS_PER_CREDENTIAL: usize = 32;
/// Login cookies live 30 days (or until their token expires or is revoked).
pub const COOKIE_MAX_AGE_SECS: i64 = 30 * 24 * 3600;
pub const CONTROLLER_ID: &str = "controller";
/// Observer tokens minted without `expires_in_secs` expire after a day.
pub const OBSERVER_DEFAULT_TTL_SECS: u64 = 24 * 3600;
pub use crate::core::config::token::{LOGIN_CODE_DEFAULT_TTL_SECS, MIN_TOKEN_LEN, check_token};

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
    /// May list and read Claude Code's own transcripts on this machine (`~/.claude/projects`): the
    /// controller, and an unscoped observer token minted with `transcripts: true`. Never a scoped one.
    pub transcripts: bool,
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
    /// Minted with the transcripts scope (observers; the controller reads them anyway).
    transcripts: bool,
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
            transcripts: self.role == Role::Controller
                || (self.transcripts && self.scope.is_none()),
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
    #[error("auth store key: {0}")]
    Key(String),
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
    /// Bumped whenever a credential is revoked, logged out or forgotten: open streams wake at once
    /// and check theirs, so none sends a frame after the revocation was answered.
    revocations: tokio::sync::watch::Sender<u64>,
    /// Binds the rows this relay writes ([`token_mac`], [`login_mac`]).
    row_key: [u8; 32],
    /// Hook-only credentials (`hk_…`), hash → record: kept apart from `tokens` so that no path
    /// that authenticates a person can ever accept one ([`hook_tokens`]).
    hook_tokens: RwLock<HashMap<String, hook_tokens::HookRec>>,
}

/// The row key at `path`, made (32 random bytes, owner-only) when missing.
fn row_key(path: &Path) -> Result<[u8; 32], AuthError> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let io = |e: std::io::Error| AuthError::Key(format!("{}: {e}", path.display()));
    match std::fs::read(path) {
        Ok(b) if b.len() == 32 => {
            let mut k = [0u8; 32];
            k.copy_from_slice(&b);
            return Ok(k);
        }
        Ok(_) => {
            return Err(AuthError::Key(format!(
                "{} is not a relay row key (32 bytes): move it away to start over (every login and observer token is then dropped)",
                path.display()
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    let k: [u8; 32] = rand::random();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    f.write_all(&k).map_err(io)?;
    f.sync_all().map_err(io)?;
    Ok(k)
}

/// HMAC-SHA256 under `key` of `fields`, each length-prefixed, as hex.
fn mac_of(key: &[u8; 32], fields: &[&str]) -> String {
    use hmac::Mac as _;
    let mut m = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).expect("any key length");
    for f in fields {
        m.update(&(f.len() as u64).to_be_bytes());
        m.update(f.as_bytes());
    }
    hex::encode(m.finalize().into_bytes())
}

pub(super) fn token_mac(
    key: &[u8; 32],
    id: &str,
    role: &str,
    hash: &str,
    scope: Option<&str>,
    expires_at: Option<i64>,
    transcripts: bool,
) -> String {
    let scope = scope.map_or_else(|| "-".to_owned(), |s| format!("s:{s}"));
    let exp = expires_at.map_or_else(|| "-".to_owned(), |t| t.to_string());
    mac_of(
        key,
        &[
            "token",
            id,
            role,
            hash,
            &scope,
            &exp,
            if transcripts { "t" } else { "-" },
        ],
    )
}

pub(super) fn login_mac(
    key: &[u8; 32],
    hash: &str,
    token_id: &str,
    expires_at: i64,
    id: &str,
    secret_hash: &str,
) -> String {
    mac_of(
        key,
        &[
            "login",
            hash,
            token_id,
            &expires_at.to_string(),
            id,
            secret_hash,
        ],
    )
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
    /// The store at `path`; its rows are bound with a key kept beside it in `<path>.key`
    /// (owner-only, made on first use): a row written into the database by anyone else (a planted
    /// controller login, say) does not load.
    pub fn open(path: &Path) -> Result<Self, AuthError> {
        let key = row_key(&path.with_extension("key"))?;
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        Self::from_conn(conn, key)
    }

    pub fn open_in_memory() -> Result<Self, AuthError> {
        Self::from_conn(Connection::open_in_memory()?, rand::random())
    }

    fn from_conn(conn: Connection, row_key: [u8; 32]) -> Result<Self, AuthError> {
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS tokens (id TEXT PRIMARY KEY, role TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
               session_scope TEXT, expires_at INTEGER, created_at INTEGER NOT NULL);
             CREATE TABLE IF NOT EXISTS login_cookies (hash TEXT PRIMARY KEY, token_id TEXT NOT NULL, expires_at INTEGER NOT NULL);",
        )?;
        // Observer tokens gained the transcripts scope (off for the tokens minted before it).
        let _ = conn.execute(
            "ALTER TABLE tokens ADD COLUMN transcripts INTEGER NOT NULL DEFAULT 0",
            [],
        );
        // Rows gained a MAC under the relay's row key: rows without one (from before it, or
        // planted) do not load.
        let _ = conn.execute("ALTER TABLE tokens ADD COLUMN mac TEXT", []);
        // Logins gained an id and a login secret: cookies from before that are not enough alone.
        for col in [
            "id TEXT",
            "secret_hash TEXT",
            "created_at INTEGER",
            "mac TEXT",
        ] {
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
        let mut hooks = HashMap::new();
        {
            let mut stmt = conn.prepare(
                "SELECT id, role, hash, session_scope, expires_at, created_at, transcripts, mac FROM tokens",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, i64>(6)? != 0,
                    r.get::<_, Option<String>>(7)?,
                ))
            })?;
            for row in rows {
                let (id, role, hash, scope, expires_at, created_at, transcripts, mac) = row?;
                let want = token_mac(
                    &row_key,
                    &id,
                    &role,
                    &hash,
                    scope.as_deref(),
                    expires_at,
                    transcripts,
                );
                if mac.is_none_or(|m| m != want) {
                    tracing::warn!(id = %id, role = %role, "ignoring a credential row the relay did not write (no valid MAC)");
                    continue;
                }
                let role = match (role.as_str(), id == CONTROLLER_ID) {
                    ("controller", true) => Role::Controller,
                    ("observer", false) => Role::Observer,
                    ("hook", false) if id.starts_with(HOOK_ID_PREFIX) => {
                        hooks.insert(hash, hook_tokens::HookRec { id, created_at });
                        continue;
                    }
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
                        transcripts,
                        expires_at,
                        created_at,
                    },
                );
            }
        }
        let mut cookies = HashMap::new();
        {
            let mut stmt = conn.prepare(
                "SELECT hash, token_id, expires_at, id, secret_hash, created_at, mac FROM login_cookies",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, Option<String>>(6)?,
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
                let (mac, hash, rec) = row?;
                let want = login_mac(
                    &row_key,
                    &hash,
                    &rec.token_id,
                    rec.expires_at,
                    &rec.id,
                    &rec.secret_hash,
                );
                if mac.is_none_or(|m| m != want) {
                    tracing::warn!(id = %rec.id, token = %rec.token_id, "ignoring a login row the relay did not write (no valid MAC)");
                    continue;
                }
                cookies.insert(hash, rec);
            }
        }
        Ok(Self {
            conn: Mutex::new(conn),
            tokens: RwLock::new(tokens),
            cookies: RwLock::new(cookies),
            one_time: Mutex::new(Vec::new()),
            token_used: Mutex::new(HashMap::new()),
            revocations: tokio::sync::watch::Sender::new(0),
            row_key,
            hook_tokens: RwLock::new(hooks),
        })
    }

    /// Tells every open stream to check its credential now.
    pub(crate) fn credentials_removed(&self) {
        self.revocations.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Wakes when a credential was revoked, logged out or forgotten ([`until_revoked`]).
    pub fn revocations(&self) -> tokio::sync::watch::Receiver<u64> {
        self.revocations.subscribe()
    }

    /// When `who`'s credential expires on its own (the token's or the login's end, the sooner);
    /// `None`: never, or it does not hold now.
    pub fn expiry(&self, who: &Principal) -> Option<i64> {
        let token = self
            .tokens
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .find(|t| t.id == who.token_id)
            .map(|t| t.expires_at)?;
        let login = match who.login_id.as_deref() {
            None => None,
            Some(lid) => Some(
                self.cookies
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .values()
                    .find(|c| c.id == lid)
                    .map(|c| c.expires_at)?,
            ),
        };
        match (token, login) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
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
                "INSERT INTO tokens (id, role, hash, session_scope, expires_at, created_at, transcripts, mac) VALUES (?1, 'controller', ?2, NULL, NULL, ?3, 1, ?4)",
                params![CONTROLLER_ID, hash, now, token_mac(&self.row_key, CONTROLLER_ID, "controller", &hash, None, None, true)],
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
                transcripts: true,
                expires_at: None,
                created_at: now,
            },
        );
        drop(tokens);
        self.credentials_removed();
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

#[cfg(test)]
mod tests;
