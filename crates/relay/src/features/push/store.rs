//! Push subscriptions, in the `push_subscriptions` table of the relay's SQLite file (`relay.db`).
//! One row per endpoint: registering the same endpoint again updates its keys, label and filters and
//! keeps its id.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension as _, params};
use serde::{Deserialize, Serialize};

use crate::core::util::now_rfc3339;

/// Most subscriptions kept at once (each is a device).
pub const MAX_SUBSCRIPTIONS: usize = 100;

/// What a notification is about; a subscription picks the kinds it wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    NeedsYou,
    Resolved,
    TurnDone,
    AgentExited,
}

impl EventKind {
    pub const ALL: [EventKind; 4] = [
        EventKind::NeedsYou,
        EventKind::Resolved,
        EventKind::TurnDone,
        EventKind::AgentExited,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::NeedsYou => "needs_you",
            EventKind::Resolved => "resolved",
            EventKind::TurnDone => "turn_done",
            EventKind::AgentExited => "agent_exited",
        }
    }

    pub fn parse(s: &str) -> Option<EventKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// A stored subscription: its registration (keys included; the API never shows them), its id and
/// its delivery record. In a cluster it is the value of its entry in the subscriptions bucket
/// ([`super::cluster`]), as JSON (the registration's fields beside the others).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Subscription {
    pub id: String,
    #[serde(flatten)]
    pub registration: NewSubscription,
    pub created_at: String,
    pub updated_at: String,
    pub last_success_at: Option<String>,
    pub last_error: Option<String>,
    pub last_error_at: Option<String>,
}

impl Subscription {
    /// Whether this device wants `kind` for `session_id`.
    pub fn wants(&self, kind: EventKind, session_id: &str) -> bool {
        self.registration.events.contains(&kind)
            && self
                .registration
                .session_ids
                .as_ref()
                .is_none_or(|ids| ids.iter().any(|s| s == session_id))
    }
}

/// What a registration sets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NewSubscription {
    pub endpoint: String,
    /// base64url, as the browser gave them.
    pub p256dh: String,
    pub auth: String,
    pub label: Option<String>,
    pub events: Vec<EventKind>,
    /// `None`: every session.
    pub session_ids: Option<Vec<String>>,
    /// The browser's `expirationTime` (ms since the epoch), if any.
    pub expiration_time: Option<i64>,
}

impl NewSubscription {
    /// The subscription this registration makes: `id`, registered `now`, nothing delivered yet.
    pub fn subscription(&self, id: String, now: String) -> Subscription {
        Subscription {
            id,
            registration: self.clone(),
            created_at: now.clone(),
            updated_at: now,
            ..Subscription::default()
        }
    }

    /// `old` with what this registration sets, updated `now` (its id, endpoint, creation time and
    /// delivery record kept).
    pub fn applied_to(&self, old: Subscription, now: String) -> Subscription {
        Subscription {
            registration: NewSubscription {
                endpoint: old.registration.endpoint.clone(),
                ..self.clone()
            },
            updated_at: now,
            ..old
        }
    }
}

/// Why the subscription store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("push subscription store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error(
        "there are already {MAX_SUBSCRIPTIONS} push subscriptions; remove unused devices first (DELETE /v1/push/subscriptions/{{id}})"
    )]
    Full,
    /// Scale-out: the subscriptions bucket on NATS could not be read or written (503).
    #[error("{0}")]
    Cluster(String),
}

pub struct PushStore {
    conn: Mutex<Connection>,
}

const COLUMNS: &str = "id, endpoint, p256dh, auth, label, events, session_ids, expiration_time, created_at, \
                       updated_at, last_success_at, last_error, last_error_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Subscription> {
    let events: String = r.get(5)?;
    let session_ids: Option<String> = r.get(6)?;
    Ok(Subscription {
        id: r.get(0)?,
        registration: NewSubscription {
            endpoint: r.get(1)?,
            p256dh: r.get(2)?,
            auth: r.get(3)?,
            label: r.get(4)?,
            events: serde_json::from_str::<Vec<String>>(&events)
                .unwrap_or_default()
                .iter()
                .filter_map(|e| EventKind::parse(e))
                .collect(),
            session_ids: session_ids.and_then(|s| serde_json::from_str(&s).ok()),
            expiration_time: r.get(7)?,
        },
        created_at: r.get(8)?,
        updated_at: r.get(9)?,
        last_success_at: r.get(10)?,
        last_error: r.get(11)?,
        last_error_at: r.get(12)?,
    })
}

fn events_json(events: &[EventKind]) -> String {
    serde_json::to_string(&events.iter().map(|e| e.as_str()).collect::<Vec<_>>())
        .expect("strings serialize")
}

impl PushStore {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        Self::from_conn(conn)
    }

    pub fn open_in_memory() -> Result<Self, StoreError> {
        Self::from_conn(Connection::open_in_memory()?)
    }

    fn from_conn(conn: Connection) -> Result<Self, StoreError> {
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS push_subscriptions (
               id TEXT PRIMARY KEY, endpoint TEXT NOT NULL UNIQUE, p256dh TEXT NOT NULL, auth TEXT NOT NULL,
               label TEXT, events TEXT NOT NULL, session_ids TEXT, expiration_time INTEGER,
               created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
               last_success_at TEXT, last_error TEXT, last_error_at TEXT);",
        )?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `s`: `(id, true)` for a new endpoint, `(id, false)` when the endpoint was known (its
    /// keys, label and filters are replaced; its id and history stay).
    pub fn upsert(&self, s: &NewSubscription) -> Result<(String, bool), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let now = now_rfc3339();
        let session_ids = s
            .session_ids
            .as_ref()
            .map(|ids| serde_json::to_string(ids).expect("strings serialize"));
        let existing: Option<String> = tx
            .query_row(
                "SELECT id FROM push_subscriptions WHERE endpoint = ?1",
                params![s.endpoint],
                |r| r.get(0),
            )
            .optional()?;
        // Both statements take the same parameters: id, endpoint, the registration, now.
        let (sql, id, created) = if let Some(id) = existing {
            (
                "UPDATE push_subscriptions SET p256dh = ?3, auth = ?4, label = ?5, events = ?6, session_ids = ?7,
                   expiration_time = ?8, updated_at = ?9 WHERE id = ?1 AND endpoint = ?2",
                id,
                false,
            )
        } else {
            let count: i64 =
                tx.query_row("SELECT COUNT(*) FROM push_subscriptions", [], |r| r.get(0))?;
            if count >= MAX_SUBSCRIPTIONS as i64 {
                return Err(StoreError::Full);
            }
            (
                "INSERT INTO push_subscriptions (id, endpoint, p256dh, auth, label, events, session_ids,
                   expiration_time, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
                format!("psub_{}", uuid::Uuid::new_v4().simple()),
                true,
            )
        };
        tx.execute(
            sql,
            params![
                id,
                s.endpoint,
                s.p256dh,
                s.auth,
                s.label,
                events_json(&s.events),
                session_ids,
                s.expiration_time,
                now
            ],
        )?;
        tx.commit()?;
        Ok((id, created))
    }

    /// All subscriptions, oldest first.
    pub fn list(&self) -> Result<Vec<Subscription>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {COLUMNS} FROM push_subscriptions ORDER BY created_at, id"
        ))?;
        let rows = stmt.query_map([], row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    pub fn get(&self, id: &str) -> Result<Option<Subscription>, StoreError> {
        let conn = self.conn();
        Ok(conn
            .query_row(
                &format!("SELECT {COLUMNS} FROM push_subscriptions WHERE id = ?1"),
                params![id],
                row,
            )
            .optional()?)
    }

    /// Removes a subscription; `false` if there was none.
    pub fn delete(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn()
            .execute("DELETE FROM push_subscriptions WHERE id = ?1", params![id])?
            > 0)
    }

    /// The push service accepted a message.
    pub fn record_success(&self, id: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE push_subscriptions SET last_success_at = ?2, last_error = NULL, last_error_at = NULL WHERE id = ?1",
            params![id, now_rfc3339()],
        )?;
        Ok(())
    }

    /// A message could not be delivered (kept for the device list).
    pub fn record_error(&self, id: &str, error: &str) -> Result<(), StoreError> {
        self.conn().execute(
            "UPDATE push_subscriptions SET last_error = ?2, last_error_at = ?3 WHERE id = ?1",
            params![id, error, now_rfc3339()],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(endpoint: &str) -> NewSubscription {
        NewSubscription {
            endpoint: endpoint.into(),
            p256dh: "k".into(),
            auth: "a".into(),
            label: Some("Phone".into()),
            events: EventKind::ALL.to_vec(),
            session_ids: None,
            expiration_time: None,
        }
    }

    #[test]
    fn same_endpoint_keeps_its_id_and_updates() {
        let s = PushStore::open_in_memory().unwrap();
        let (id, created) = s.upsert(&new("https://x/1")).unwrap();
        assert!(created);
        let mut again = new("https://x/1");
        again.p256dh = "k2".into();
        again.events = vec![EventKind::NeedsYou];
        again.session_ids = Some(vec!["cse_a".into()]);
        let (id2, created) = s.upsert(&again).unwrap();
        assert_eq!((id2.as_str(), created), (id.as_str(), false));
        let got = s.get(&id).unwrap().unwrap();
        assert_eq!(got.registration.p256dh, "k2");
        assert!(got.wants(EventKind::NeedsYou, "cse_a"));
        assert!(!got.wants(EventKind::NeedsYou, "cse_b"));
        assert!(!got.wants(EventKind::TurnDone, "cse_a"));
        let (other, created) = s.upsert(&new("https://x/2")).unwrap();
        assert!(created && other != id);
        assert_eq!(s.list().unwrap().len(), 2);
        s.record_error(&id, "boom").unwrap();
        assert_eq!(
            s.get(&id).unwrap().unwrap().last_error.as_deref(),
            Some("boom")
        );
        s.record_success(&id).unwrap();
        let got = s.get(&id).unwrap().unwrap();
        assert!(got.last_error.is_none() && got.last_success_at.is_some());
        assert!(s.delete(&id).unwrap());
        assert!(!s.delete(&id).unwrap());
        assert!(s.get(&id).unwrap().is_none());
    }

    #[test]
    fn the_table_is_bounded() {
        let s = PushStore::open_in_memory().unwrap();
        for i in 0..MAX_SUBSCRIPTIONS {
            s.upsert(&new(&format!("https://x/{i}"))).unwrap();
        }
        assert!(matches!(
            s.upsert(&new("https://x/one-more")),
            Err(StoreError::Full)
        ));
        // Updating a known endpoint still works.
        s.upsert(&new("https://x/0")).unwrap();
    }
}
