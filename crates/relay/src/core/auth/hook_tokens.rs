//! Hook-only credentials (`hk_…` / secret `brh_…`), minted by the controller for
//! `bridge-relay hooks install`: Claude Code sessions started in a terminal post their hook events
//! with one (`POST /v1/hooks`) and wait there for the answer to a permission prompt. That is all it
//! can do: these credentials live in their own map, never in the one every other route
//! authenticates against, so no route that serves a person accepts one (and a login with one is
//! refused). Listed with the other credentials (`kind: "token"`, `role: "hook"`), revoked by id.

use rusqlite::params;
use serde_json::{Value, json};

use super::{Auth, AuthError, Minted, token_mac};
use crate::core::util::{random_secret, sha256_hex, unix_now};

/// Ids of hook credentials start with this.
pub const HOOK_ID_PREFIX: &str = "hk_";

#[derive(Debug, Clone)]
pub(super) struct HookRec {
    pub(super) id: String,
    pub(super) created_at: i64,
}

impl Auth {
    /// A new hook-only credential (no expiry: it sits in the user's Claude Code settings until
    /// `hooks uninstall` or a revocation). The secret is returned once and stored hashed.
    pub fn mint_hook(&self) -> Result<Minted, AuthError> {
        let id = format!("{HOOK_ID_PREFIX}{}", uuid::Uuid::new_v4().simple());
        let token = random_secret("brh_");
        let hash = sha256_hex(&token);
        let now = unix_now();
        self.conn().execute(
            "INSERT INTO tokens (id, role, hash, session_scope, expires_at, created_at, transcripts, mac) VALUES (?1, 'hook', ?2, NULL, NULL, ?3, 0, ?4)",
            params![
                id,
                hash,
                now,
                token_mac(&self.row_key, &id, "hook", &hash, None, None, false)
            ],
        )?;
        self.hook_tokens
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                hash,
                HookRec {
                    id: id.clone(),
                    created_at: now,
                },
            );
        Ok(Minted {
            id,
            token,
            expires_at: None,
        })
    }

    /// A hook credential's secret → its id; `None` for anything else (a controller or observer
    /// token is not a hook credential either).
    pub fn authenticate_hook(&self, secret: &str) -> Option<String> {
        let hash = sha256_hex(secret);
        let id = self
            .hook_tokens
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&hash)
            .map(|h| h.id.clone())?;
        self.token_used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.clone(), unix_now());
        Some(id)
    }

    /// Revokes a hook credential; `false`: no such one.
    pub(super) fn revoke_hook(&self, id: &str) -> Result<bool, AuthError> {
        let n = self.conn().execute(
            "DELETE FROM tokens WHERE id = ?1 AND role = 'hook'",
            params![id],
        )?;
        let mut hooks = self.hook_tokens.write().unwrap_or_else(|p| p.into_inner());
        let before = hooks.len();
        hooks.retain(|_, h| h.id != id);
        Ok(n > 0 || hooks.len() < before)
    }

    /// The hook credentials as [`Auth::list_credentials`] lists them, with their creation time.
    pub(super) fn list_hooks(&self) -> Vec<(i64, Value)> {
        let used = self
            .token_used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        self.hook_tokens
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .map(|h| {
                (
                    h.created_at,
                    json!({"id": h.id, "kind": "token", "role": "hook", "session_id": null, "transcripts": false,
                           "created_at": h.created_at, "expires_at": null, "last_used_at": used.get(&h.id)}),
                )
            })
            .collect()
    }
}
