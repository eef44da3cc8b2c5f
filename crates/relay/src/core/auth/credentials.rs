//! Issuing and revoking credentials: login codes, logging in and out (cookies), observer tokens,
//! revocation, and the lists the console shows.

use super::*;

impl Auth {
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
                        transcripts: true,
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
        self.new_login(principal, token_expiry).map(Some)
    }

    /// A new login (cookie + login secret) for `principal`, expiring no later than its token.
    pub(super) fn new_login(
        &self,
        mut principal: Principal,
        token_expiry: Option<i64>,
    ) -> Result<LoggedIn, AuthError> {
        let now = unix_now();
        let cookie = random_secret("brs_");
        let login_secret = random_secret("brk_");
        let id = format!("lgn_{}", uuid::Uuid::new_v4().simple());
        let expires_at = token_expiry.map_or(now + COOKIE_MAX_AGE_SECS, |t| {
            t.min(now + COOKIE_MAX_AGE_SECS)
        });
        let cookie_hash = sha256_hex(&cookie);
        let secret_hash = sha256_hex(&login_secret);
        self.conn().execute(
            "INSERT INTO login_cookies (hash, token_id, expires_at, id, secret_hash, created_at, mac) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                cookie_hash,
                principal.token_id,
                expires_at,
                id,
                secret_hash,
                now,
                login_mac(&self.row_key, &cookie_hash, &principal.token_id, expires_at, &id, &secret_hash)
            ],
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
        self.cap_logins(&principal.token_id, &id);
        principal.login_id = Some(id);
        Ok(LoggedIn {
            cookie,
            login_secret,
            principal,
            max_age: expires_at - now,
        })
    }

    /// Keeps at most [`MAX_LOGINS_PER_CREDENTIAL`] logins of token `token_id`: the least recently
    /// used beyond it are logged out (their streams end).
    fn cap_logins(&self, token_id: &str, new_id: &str) {
        let evicted: Vec<(String, String)> = {
            let mut cookies = self.cookies.write().unwrap_or_else(|p| p.into_inner());
            let mut mine: Vec<(i64, i64, String, String)> = cookies
                .iter()
                .filter(|(_, c)| c.token_id == token_id && c.id != new_id)
                .map(|(h, c)| {
                    (
                        c.last_used.load(Ordering::Relaxed),
                        c.created_at,
                        h.clone(),
                        c.id.clone(),
                    )
                })
                .collect();
            // The new login is one of the allowed.
            if mine.len() < MAX_LOGINS_PER_CREDENTIAL {
                return;
            }
            mine.sort();
            let extra = mine.len() + 1 - MAX_LOGINS_PER_CREDENTIAL;
            mine.truncate(extra);
            for (_, _, h, _) in &mine {
                cookies.remove(h);
            }
            mine.into_iter().map(|(_, _, h, id)| (h, id)).collect()
        };
        let conn = self.conn();
        for (h, id) in &evicted {
            let _ = conn.execute("DELETE FROM login_cookies WHERE hash = ?1", params![h]);
            tracing::info!(login = %id, token = %token_id, "oldest login logged out: at most {MAX_LOGINS_PER_CREDENTIAL} per credential");
        }
        drop(conn);
        self.credentials_removed();
    }

    pub fn logout(&self, cookie_secret: &str) -> Result<(), AuthError> {
        let r = self.logout_inner(cookie_secret);
        self.credentials_removed();
        r
    }

    fn logout_inner(&self, cookie_secret: &str) -> Result<(), AuthError> {
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
    /// `transcripts`: it may also read Claude Code's own transcripts (only without a session scope).
    pub fn mint_observer(
        &self,
        scope: Option<String>,
        transcripts: bool,
        expires_in_secs: Option<u64>,
    ) -> Result<Minted, AuthError> {
        let transcripts = transcripts && scope.is_none();
        let id = format!("obs_{}", uuid::Uuid::new_v4().simple());
        let token = random_secret("bro_");
        let hash = sha256_hex(&token);
        let now = unix_now();
        let ttl = expires_in_secs.unwrap_or(OBSERVER_DEFAULT_TTL_SECS);
        let expires_at = Some(now.saturating_add(i64::try_from(ttl).unwrap_or(i64::MAX)));
        self.conn().execute(
            "INSERT INTO tokens (id, role, hash, session_scope, expires_at, created_at, transcripts, mac) VALUES (?1, 'observer', ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                id,
                hash,
                scope,
                expires_at,
                now,
                i64::from(transcripts),
                token_mac(&self.row_key, &id, "observer", &hash, scope.as_deref(), expires_at, transcripts)
            ],
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
                    transcripts,
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
        let r = self.revoke_observer_inner(id);
        self.credentials_removed();
        r
    }

    fn revoke_observer_inner(&self, id: &str) -> Result<bool, AuthError> {
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
        // With --nats a token minted through another relay is known in memory only.
        let known = {
            let mut tokens = self.tokens.write().unwrap_or_else(|p| p.into_inner());
            let before = tokens.len();
            tokens.retain(|_, t| t.id != id || t.role != Role::Observer);
            tokens.len() < before
        };
        self.cookies
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, c| c.token_id != id);
        Ok(n > 0 || known)
    }

    /// Revokes any credential by id: an observer token (with its logins), a login (that device is
    /// logged out) or the controller token (every bearer client and login of the controller stops
    /// working until the relay is restarted with a token). `false`: no such credential.
    pub fn revoke(&self, id: &str) -> Result<bool, AuthError> {
        let r = self.revoke_inner(id);
        self.credentials_removed();
        r
    }

    fn revoke_inner(&self, id: &str) -> Result<bool, AuthError> {
        if id.starts_with(super::HOOK_ID_PREFIX) {
            return self.revoke_hook(id);
        }
        if id.starts_with("lgn_") {
            let n = self
                .conn()
                .execute("DELETE FROM login_cookies WHERE id = ?1", params![id])?;
            let mut cookies = self.cookies.write().unwrap_or_else(|p| p.into_inner());
            let before = cookies.len();
            cookies.retain(|_, c| c.id != id);
            return Ok(n > 0 || cookies.len() < before);
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
            .map(|t| json!({"id": t.id, "session_id": t.scope, "transcripts": t.transcripts, "expires_at": t.expires_at, "created_at": t.created_at}))
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
                json!({"id": t.id, "kind": "token", "role": t.role.as_str(), "session_id": t.scope, "transcripts": t.role == Role::Controller || t.transcripts,
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
        out.extend(self.list_hooks());
        out.sort_by_key(|(t, _)| *t);
        out.into_iter().map(|(_, v)| v).collect()
    }
}
