//! Tokens and login cookies. Only SHA-256 hashes of secrets are stored (in the relay's SQLite file).
//!
//! * the **controller** token: `BRIDGE_RELAY_TOKEN`, or generated on first start;
//! * **observer** tokens minted by a controller: read-only, optionally scoped to one session and expiring;
//! * **login cookies** (`bridge_session`, or `__Host-bridge_session` over HTTPS): a separate random secret
//!   per login, tied to the token it was exchanged for (revoking an observer token logs its cookies out);
//! * a **one-time login code**, printed in the console URL when the controller token already exists and
//!   is not given in the environment (the token itself cannot be printed: only its hash is kept).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, RwLock};

use rusqlite::{Connection, params};
use serde_json::{Value, json};

use crate::util::{random_secret, sha256_hex, unix_now};

pub const COOKIE_NAME: &str = "bridge_session";
/// The login cookie's name over HTTPS: the `__Host-` prefix makes browsers insist on `Secure`,
/// `Path=/` and no `Domain`, so no other host (a sibling subdomain) can set or shadow it.
pub const SECURE_COOKIE_NAME: &str = "__Host-bridge_session";

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
        json!({"role": self.role.as_str(), "token_id": self.token_id})
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
        }
    }
}

#[derive(Debug, Clone)]
struct CookieRec {
    token_id: String,
    expires_at: i64,
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
    /// hashes of unused one-time login codes
    one_time: Mutex<Vec<String>>,
}

/// A freshly minted observer token (the secret is returned once, never stored).
#[derive(Debug, Clone)]
pub struct Minted {
    pub id: String,
    pub token: String,
    pub expires_at: Option<i64>,
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
        let now = unix_now();
        conn.execute(
            "DELETE FROM login_cookies WHERE expires_at <= ?1",
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
                let role: String = r.get(1)?;
                Ok((
                    r.get::<_, String>(2)?,
                    TokenRec {
                        id: r.get(0)?,
                        role: if role == "controller" {
                            Role::Controller
                        } else {
                            Role::Observer
                        },
                        scope: r.get(3)?,
                        expires_at: r.get(4)?,
                        created_at: r.get(5)?,
                    },
                ))
            })?;
            for row in rows {
                let (hash, rec) = row?;
                tokens.insert(hash, rec);
            }
        }
        let mut cookies = HashMap::new();
        {
            let mut stmt = conn.prepare("SELECT hash, token_id, expires_at FROM login_cookies")?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    CookieRec {
                        token_id: r.get(1)?,
                        expires_at: r.get(2)?,
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
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets up the controller credential and returns the secret to put in the printed login URL:
    /// the environment token, a newly generated controller token (first start), or a one-time code.
    pub fn bootstrap(&self, env_token: Option<&str>) -> Result<String, AuthError> {
        let has_controller = self
            .tokens
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .any(|t| t.role == Role::Controller);
        if let Some(token) = env_token.filter(|t| !t.is_empty()) {
            self.set_controller(token)?;
            return Ok(token.to_owned());
        }
        if has_controller {
            let code = random_secret("brl_");
            self.one_time
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(sha256_hex(&code));
            return Ok(code);
        }
        let token = random_secret("brc_");
        self.set_controller(&token)?;
        Ok(token)
    }

    /// Replaces the controller token (only its hash is kept).
    pub fn set_controller(&self, token: &str) -> Result<(), AuthError> {
        let hash = sha256_hex(token);
        let now = unix_now();
        {
            let conn = self.conn();
            conn.execute("DELETE FROM tokens WHERE id = ?1", params![CONTROLLER_ID])?;
            conn.execute(
                "INSERT INTO tokens (id, role, hash, session_scope, expires_at, created_at) VALUES (?1, 'controller', ?2, NULL, NULL, ?3)",
                params![CONTROLLER_ID, hash, now],
            )?;
        }
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
        let tokens = self.tokens.read().unwrap_or_else(|p| p.into_inner());
        tokens
            .get(&hash)
            .filter(|t| t.live(unix_now()))
            .map(TokenRec::principal)
    }

    /// A login cookie value → who it is.
    pub fn authenticate_cookie(&self, secret: &str) -> Option<Principal> {
        let hash = sha256_hex(secret);
        let now = unix_now();
        let token_id = {
            let cookies = self.cookies.read().unwrap_or_else(|p| p.into_inner());
            let c = cookies.get(&hash)?;
            if c.expires_at <= now {
                return None;
            }
            c.token_id.clone()
        };
        let tokens = self.tokens.read().unwrap_or_else(|p| p.into_inner());
        tokens
            .values()
            .find(|t| t.id == token_id && t.live(now))
            .map(TokenRec::principal)
    }

    /// Exchanges a token or one-time code for a new cookie secret. `None`: not a valid credential.
    pub fn login(&self, secret: &str) -> Result<Option<(String, Principal, i64)>, AuthError> {
        let hash = sha256_hex(secret);
        let now = unix_now();
        let principal_and_expiry = {
            let mut one_time = self.one_time.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(pos) = one_time.iter().position(|h| *h == hash) {
                one_time.remove(pos);
                Some((
                    Principal {
                        role: Role::Controller,
                        token_id: CONTROLLER_ID.into(),
                        session_scope: None,
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
        let Some((principal, token_expiry)) = principal_and_expiry else {
            return Ok(None);
        };
        let cookie = random_secret("brs_");
        let expires_at = token_expiry.map_or(now + COOKIE_MAX_AGE_SECS, |t| {
            t.min(now + COOKIE_MAX_AGE_SECS)
        });
        let cookie_hash = sha256_hex(&cookie);
        self.conn().execute(
            "INSERT INTO login_cookies (hash, token_id, expires_at) VALUES (?1, ?2, ?3)",
            params![cookie_hash, principal.token_id, expires_at],
        )?;
        self.cookies
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                cookie_hash,
                CookieRec {
                    token_id: principal.token_id.clone(),
                    expires_at,
                },
            );
        Ok(Some((cookie, principal, expires_at - now)))
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

    pub fn mint_observer(
        &self,
        scope: Option<String>,
        expires_in_secs: Option<u64>,
    ) -> Result<Minted, AuthError> {
        let id = format!("obs_{}", uuid::Uuid::new_v4().simple());
        let token = random_secret("bro_");
        let hash = sha256_hex(&token);
        let now = unix_now();
        let expires_at =
            expires_in_secs.map(|s| now.saturating_add(i64::try_from(s).unwrap_or(i64::MAX)));
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_token_authenticates_and_only_hash_is_stored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.db");
        let auth = Auth::open(&path).unwrap();
        assert_eq!(
            auth.bootstrap(Some("secret-token-123")).unwrap(),
            "secret-token-123"
        );
        let p = auth.authenticate_token("secret-token-123").unwrap();
        assert_eq!(p.role, Role::Controller);
        assert!(auth.authenticate_token("secret-token-124").is_none());
        drop(auth);
        let bytes = std::fs::read(&path).unwrap();
        let needle = b"secret-token-123";
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle),
            "token stored in clear"
        );
    }

    #[test]
    fn generated_token_then_one_time_code() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.db");
        let first = Auth::open(&path).unwrap().bootstrap(None).unwrap();
        let auth = Auth::open(&path).unwrap();
        assert!(
            auth.authenticate_token(&first).is_some(),
            "controller token survives restart"
        );
        let code = auth.bootstrap(None).unwrap();
        assert_ne!(code, first);
        assert!(
            auth.authenticate_token(&code).is_none(),
            "a login code is not a bearer token"
        );
        let (cookie, p, _) = auth.login(&code).unwrap().unwrap();
        assert_eq!(p.role, Role::Controller);
        assert!(
            auth.login(&code).unwrap().is_none(),
            "one-time code is single use"
        );
        assert_eq!(
            auth.authenticate_cookie(&cookie).unwrap().role,
            Role::Controller
        );
        auth.logout(&cookie).unwrap();
        assert!(auth.authenticate_cookie(&cookie).is_none());
    }

    #[test]
    fn observers_scope_expiry_and_revocation() {
        let auth = Auth::open_in_memory().unwrap();
        auth.bootstrap(Some("c")).unwrap();
        let m = auth.mint_observer(Some("s1".into()), None).unwrap();
        let p = auth.authenticate_token(&m.token).unwrap();
        assert_eq!(p.role, Role::Observer);
        assert!(!p.can_write());
        assert!(p.can_see("s1") && !p.can_see("s2"));
        let (cookie, _, _) = auth.login(&m.token).unwrap().unwrap();
        assert!(auth.authenticate_cookie(&cookie).is_some());
        assert_eq!(auth.list_observers().len(), 1);
        assert!(auth.revoke_observer(&m.id).unwrap());
        assert!(auth.authenticate_token(&m.token).is_none());
        assert!(auth.authenticate_cookie(&cookie).is_none());
        assert!(!auth.revoke_observer(&m.id).unwrap());
        let expired = auth.mint_observer(None, Some(0)).unwrap();
        assert!(auth.authenticate_token(&expired.token).is_none());
    }
}
