//! The durable event log behind a small trait ([`EventStore`]): per-session, dense, append-only,
//! plus the session records. [`SqliteStore`] (rusqlite, WAL) is the default; [`MemoryStore`] is for
//! tests. At scale this trait is what moves to a distributed log.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use crate::core::record::SessionMeta;

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("corrupt session record {id}: {source}")]
    Corrupt {
        id: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("sequence gap in session {session_id}: expected {expected}, got {got}")]
    Gap {
        session_id: String,
        expected: u64,
        got: u64,
    },
}

/// Who produced an event (worker, client, relay). The events the relay writes in the worker's place
/// (agent exit, undecodable line) are `Worker` with `relay_generated: true` in the payload.
pub use bridge_protocol::api::Source;

/// One durable event as stored. `payload` is the exact JSON text that was received/forwarded.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    pub session_id: String,
    pub seq: u64,
    pub event_id: String,
    pub event_type: String,
    pub source: Source,
    pub created_at: String,
    pub payload: String,
    /// `payload.uuid` of client events, for idempotent retries.
    pub client_uuid: Option<String>,
}

/// Retained range of a session's log: `(first, last)`, `(0, 0)` when empty.
pub type Bounds = (u64, u64);

/// The durable log. Implementations must keep `seq` dense per session (the caller assigns it).
pub trait EventStore: Send + Sync + 'static {
    fn save_session(&self, meta: &SessionMeta) -> Result<(), StoreError>;
    fn load_sessions(&self) -> Result<Vec<SessionMeta>, StoreError>;
    fn append(&self, event: &StoredEvent) -> Result<(), StoreError>;
    /// Events with `seq > after`, ascending, at most `limit`.
    fn read_after(
        &self,
        session_id: &str,
        after: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        // No byte budget: every event up to `limit`.
        self.read_page(session_id, after, limit, usize::MAX)
    }
    /// [`Self::read_after`] bounded in bytes too: events stop once their payloads pass `max_bytes`
    /// (the first one always comes; [`page_within`]). Replays page through a log with this.
    fn read_page(
        &self,
        session_id: &str,
        after: u64,
        limit: usize,
        max_bytes: usize,
    ) -> Result<Vec<StoredEvent>, StoreError>;
    /// Deletes a session: its record and every event.
    fn delete_session(&self, session_id: &str) -> Result<(), StoreError>;
    fn bounds(&self, session_id: &str) -> Result<Bounds, StoreError>;
    /// `(event_id, seq)` of the client event carrying `payload.uuid == uuid`.
    fn find_client_uuid(
        &self,
        session_id: &str,
        uuid: &str,
    ) -> Result<Option<(String, u64)>, StoreError>;
    /// Drops every event with `seq < first_kept`.
    fn prune_before(&self, session_id: &str, first_kept: u64) -> Result<(), StoreError>;
}

/// The events of `events`, in order, while their payloads stay within `max_bytes` in all (the
/// first one always comes, however large): one page of a replay. Reads no event past the budget.
fn page_within(
    events: impl Iterator<Item = Result<StoredEvent, StoreError>>,
    max_bytes: usize,
) -> Result<Vec<StoredEvent>, StoreError> {
    let mut page = Vec::new();
    let mut bytes = 0usize;
    for e in events {
        let e = e?;
        bytes = bytes.saturating_add(e.payload.len());
        if !page.is_empty() && bytes > max_bytes {
            break;
        }
        page.push(e);
    }
    Ok(page)
}

/// How much an acknowledged write survives (SQLite's `synchronous` in WAL mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// `synchronous=FULL`: each commit syncs the WAL; an event acknowledged to anyone (POST answer,
    /// SSE id, WebSocket frame) survives power loss. The default.
    Full,
    /// `synchronous=NORMAL`: survives a crash of the relay, not of the machine (benchmarks only).
    Normal,
}

/// SQLite in WAL mode; one connection behind a mutex (writes are short).
pub struct SqliteStore {
    conn: Mutex<Connection>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, meta TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
  session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_id TEXT NOT NULL, event_type TEXT NOT NULL,
  source TEXT NOT NULL, created_at TEXT NOT NULL, payload TEXT NOT NULL, client_uuid TEXT,
  PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_client_uuid ON events(session_id, client_uuid) WHERE client_uuid IS NOT NULL;
CREATE TABLE IF NOT EXISTS seq_floor (session_id TEXT PRIMARY KEY, last_seq INTEGER NOT NULL);
";

impl SqliteStore {
    /// Opens with [`Durability::Full`].
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(path, Durability::Full)
    }

    pub fn open_with(path: &Path, durability: Durability) -> Result<Self, StoreError> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        let sync = match durability {
            Durability::Full => "FULL",
            Durability::Normal => "NORMAL",
        };
        conn.pragma_update(None, "synchronous", sync)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    pub fn open_in_memory() -> Result<Self, StoreError> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn row_to_event(row: &rusqlite::Row<'_>) -> rusqlite::Result<StoredEvent> {
    let source: String = row.get(4)?;
    Ok(StoredEvent {
        session_id: row.get(0)?,
        seq: row.get::<_, i64>(1)? as u64,
        event_id: row.get(2)?,
        event_type: row.get(3)?,
        source: Source::from(source),
        created_at: row.get(5)?,
        payload: row.get(6)?,
        client_uuid: row.get(7)?,
    })
}

impl EventStore for SqliteStore {
    fn save_session(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        let text = serde_json::to_string(meta).expect("session meta serializes");
        self.conn().execute(
            "INSERT INTO sessions (id, meta) VALUES (?1, ?2) ON CONFLICT(id) DO UPDATE SET meta = excluded.meta",
            params![meta.id, text],
        )?;
        Ok(())
    }

    fn load_sessions(&self) -> Result<Vec<SessionMeta>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT id, meta FROM sessions")?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (id, text) = row?;
            let meta =
                serde_json::from_str(&text).map_err(|source| StoreError::Corrupt { id, source })?;
            out.push(meta);
        }
        Ok(out)
    }

    fn append(&self, e: &StoredEvent) -> Result<(), StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "INSERT INTO events (session_id, seq, event_id, event_type, source, created_at, payload, client_uuid)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?;
        stmt.execute(params![
            e.session_id,
            e.seq as i64,
            e.event_id,
            e.event_type,
            e.source.as_str(),
            e.created_at,
            e.payload,
            e.client_uuid
        ])?;
        Ok(())
    }

    fn read_page(
        &self,
        session_id: &str,
        after: u64,
        limit: usize,
        max_bytes: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT session_id, seq, event_id, event_type, source, created_at, payload, client_uuid
             FROM events WHERE session_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
        )?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // Rows are read one at a time: stopping at the budget reads no further payloads.
        let rows = stmt.query_map(params![session_id, after as i64, limit], row_to_event)?;
        page_within(rows.map(|r| r.map_err(StoreError::from)), max_bytes)
    }

    fn delete_session(&self, session_id: &str) -> Result<(), StoreError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "DELETE FROM events WHERE session_id = ?1",
            params![session_id],
        )?;
        tx.execute("DELETE FROM sessions WHERE id = ?1", params![session_id])?;
        tx.commit()?;
        Ok(())
    }

    fn bounds(&self, session_id: &str) -> Result<Bounds, StoreError> {
        let conn = self.conn();
        let (first, last): (Option<i64>, Option<i64>) = conn.query_row(
            "SELECT MIN(seq), MAX(seq) FROM events WHERE session_id = ?1",
            params![session_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        let floor: Option<i64> = conn
            .query_row(
                "SELECT last_seq FROM seq_floor WHERE session_id = ?1",
                params![session_id],
                |r| r.get(0),
            )
            .optional()?;
        Ok(with_floor(
            first.map(|f| f as u64),
            last.map(|l| l as u64),
            floor.map(|f| f as u64),
        ))
    }

    fn find_client_uuid(
        &self,
        session_id: &str,
        uuid: &str,
    ) -> Result<Option<(String, u64)>, StoreError> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT event_id, seq FROM events WHERE session_id = ?1 AND client_uuid = ?2 LIMIT 1",
        )?;
        Ok(stmt
            .query_row(params![session_id, uuid], |r| {
                Ok((r.get(0)?, r.get::<_, i64>(1)? as u64))
            })
            .optional()?)
    }

    fn prune_before(&self, session_id: &str, first_kept: u64) -> Result<(), StoreError> {
        // The highest pruned sequence number is kept, so a log pruned to nothing still continues
        // after it (sequence numbers are never reused, even across restarts).
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute(
            "INSERT INTO seq_floor (session_id, last_seq)
             SELECT ?1, MAX(seq) FROM events WHERE session_id = ?1 AND seq < ?2 HAVING MAX(seq) IS NOT NULL
             ON CONFLICT(session_id) DO UPDATE SET last_seq = MAX(last_seq, excluded.last_seq)",
            params![session_id, first_kept as i64],
        )?;
        tx.execute(
            "DELETE FROM events WHERE session_id = ?1 AND seq < ?2",
            params![session_id, first_kept as i64],
        )?;
        tx.commit()?;
        Ok(())
    }
}

/// Bounds from the retained range and the highest pruned sequence number: a log pruned to nothing
/// after `n` is `(n + 1, n)` (empty, continuing at `n + 1`); one never written is `(0, 0)`.
fn with_floor(first: Option<u64>, last: Option<u64>, floor: Option<u64>) -> Bounds {
    match (first, last, floor) {
        (Some(f), Some(l), _) => (f, l),
        (_, _, Some(n)) if n > 0 => (n + 1, n),
        _ => (0, 0),
    }
}

/// A volatile store for unit tests and experiments.
#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<MemoryInner>,
}

#[derive(Default)]
struct MemoryInner {
    sessions: HashMap<String, SessionMeta>,
    events: HashMap<String, BTreeMap<u64, StoredEvent>>,
    /// Highest pruned sequence number per session.
    floor: HashMap<String, u64>,
}

impl MemoryStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl EventStore for MemoryStore {
    fn save_session(&self, meta: &SessionMeta) -> Result<(), StoreError> {
        self.lock().sessions.insert(meta.id.clone(), meta.clone());
        Ok(())
    }
    fn load_sessions(&self) -> Result<Vec<SessionMeta>, StoreError> {
        Ok(self.lock().sessions.values().cloned().collect())
    }
    fn append(&self, e: &StoredEvent) -> Result<(), StoreError> {
        let mut g = self.lock();
        let log = g.events.entry(e.session_id.clone()).or_default();
        let expected = log.last_key_value().map(|(k, _)| k + 1).unwrap_or(e.seq);
        if e.seq != expected {
            return Err(StoreError::Gap {
                session_id: e.session_id.clone(),
                expected,
                got: e.seq,
            });
        }
        log.insert(e.seq, e.clone());
        Ok(())
    }
    fn read_page(
        &self,
        session_id: &str,
        after: u64,
        limit: usize,
        max_bytes: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let g = self.lock();
        let Some(log) = g.events.get(session_id) else {
            return Ok(Vec::new());
        };
        let events = log.range(after + 1..).take(limit);
        page_within(events.map(|(_, e)| Ok(e.clone())), max_bytes)
    }
    fn delete_session(&self, session_id: &str) -> Result<(), StoreError> {
        let mut g = self.lock();
        g.sessions.remove(session_id);
        g.events.remove(session_id);
        Ok(())
    }
    fn bounds(&self, session_id: &str) -> Result<Bounds, StoreError> {
        let g = self.lock();
        let log = g.events.get(session_id);
        Ok(with_floor(
            log.and_then(|l| l.first_key_value()).map(|(k, _)| *k),
            log.and_then(|l| l.last_key_value()).map(|(k, _)| *k),
            g.floor.get(session_id).copied(),
        ))
    }
    fn find_client_uuid(
        &self,
        session_id: &str,
        uuid: &str,
    ) -> Result<Option<(String, u64)>, StoreError> {
        let g = self.lock();
        Ok(g.events.get(session_id).and_then(|log| {
            log.values()
                .find(|e| e.client_uuid.as_deref() == Some(uuid))
                .map(|e| (e.event_id.clone(), e.seq))
        }))
    }
    fn prune_before(&self, session_id: &str, first_kept: u64) -> Result<(), StoreError> {
        let mut g = self.lock();
        let inner = &mut *g;
        if let Some(log) = inner.events.get_mut(session_id) {
            let kept = log.split_off(&first_kept);
            if let Some((&last, _)) = log.last_key_value() {
                let f = inner.floor.entry(session_id.to_owned()).or_default();
                *f = (*f).max(last);
            }
            *log = kept;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(sid: &str, seq: u64, uuid: Option<&str>) -> StoredEvent {
        StoredEvent {
            session_id: sid.into(),
            seq,
            event_id: format!("e{seq}"),
            event_type: "user".into(),
            source: if uuid.is_some() {
                Source::Client
            } else {
                Source::Worker
            },
            created_at: "2026-01-01T00:00:00.000Z".into(),
            payload: format!("{{\"type\":\"user\",\"n\":{seq}}}"),
            client_uuid: uuid.map(str::to_owned),
        }
    }

    fn exercise(store: &dyn EventStore) {
        assert_eq!(store.bounds("a").unwrap(), (0, 0));
        for seq in 1..=10 {
            let uuid = format!("u{seq}");
            store
                .append(&ev("a", seq, (seq % 2 == 0).then_some(uuid.as_str())))
                .unwrap();
        }
        store.append(&ev("b", 1, None)).unwrap();
        assert_eq!(store.bounds("a").unwrap(), (1, 10));
        let got = store.read_after("a", 3, 4).unwrap();
        assert_eq!(
            got.iter().map(|e| e.seq).collect::<Vec<_>>(),
            vec![4, 5, 6, 7]
        );
        assert_eq!(got[0], ev("a", 4, Some("u4")));
        assert_eq!(
            store.find_client_uuid("a", "u6").unwrap(),
            Some(("e6".into(), 6))
        );
        assert_eq!(store.find_client_uuid("b", "u6").unwrap(), None);
        store.prune_before("a", 8).unwrap();
        assert_eq!(store.bounds("a").unwrap(), (8, 10));
        assert_eq!(store.read_after("a", 0, 100).unwrap().len(), 3);
        assert_eq!(store.bounds("b").unwrap(), (1, 1));
        // Pages bounded in bytes: each payload here is 21-22 bytes.
        let page = store.read_page("a", 0, 100, 45).unwrap();
        assert_eq!(page.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![8, 9]);
        let page = store.read_page("a", 0, 100, 1).unwrap();
        assert_eq!(page.len(), 1, "the first event comes whatever its size");
        assert_eq!(store.read_page("a", 8, 1, usize::MAX).unwrap().len(), 1);
        let meta = SessionMeta::new("a".into(), "/tmp".into(), None, None, None);
        store.save_session(&meta).unwrap();
        store.delete_session("a").unwrap();
        assert!(store.read_after("a", 0, 100).unwrap().is_empty());
        assert!(store.load_sessions().unwrap().is_empty());
        assert_eq!(store.bounds("b").unwrap(), (1, 1), "other sessions stay");
    }

    #[test]
    fn sqlite_store_contract() {
        exercise(&SqliteStore::open_in_memory().unwrap());
    }

    #[test]
    fn memory_store_contract() {
        exercise(&MemoryStore::default());
    }

    #[test]
    fn sequence_numbers_continue_after_everything_was_pruned() {
        for store in [
            &SqliteStore::open_in_memory().unwrap() as &dyn EventStore,
            &MemoryStore::default(),
        ] {
            for seq in 1..=3 {
                store.append(&ev("a", seq, None)).unwrap();
            }
            store.prune_before("a", 4).unwrap();
            assert_eq!(store.bounds("a").unwrap(), (4, 3), "empty, continuing at 4");
            store.prune_before("a", 2).unwrap();
            assert_eq!(
                store.bounds("a").unwrap(),
                (4, 3),
                "the floor never goes down"
            );
            store.append(&ev("a", 4, None)).unwrap();
            assert_eq!(store.bounds("a").unwrap(), (4, 4));
            assert_eq!(store.bounds("b").unwrap(), (0, 0));
        }
    }

    /// A crash (no clean close: the connection is leaked, nothing is checkpointed) and a restart
    /// after retention pruned the whole log: the next sequence number is still the next one.
    #[test]
    fn sqlite_keeps_the_sequence_across_a_crash_after_pruning_everything() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let s = SqliteStore::open(&path).unwrap();
        for seq in 1..=5 {
            s.append(&ev("a", seq, None)).unwrap();
        }
        s.prune_before("a", 6).unwrap();
        std::mem::forget(s);
        let s = SqliteStore::open(&path).unwrap();
        let (_, last) = s.bounds("a").unwrap();
        assert_eq!(last, 5, "no sequence number is reused");
        s.append(&ev("a", last + 1, None)).unwrap();
        std::mem::forget(s);
        let s = SqliteStore::open(&path).unwrap();
        assert_eq!(s.bounds("a").unwrap(), (6, 6));
        let sync: i64 = s
            .conn()
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(sync, 2, "synchronous=FULL");
    }

    #[test]
    fn sqlite_persists_across_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        {
            let s = SqliteStore::open(&path).unwrap();
            s.append(&ev("a", 1, Some("x"))).unwrap();
            s.append(&ev("a", 2, None)).unwrap();
        }
        let s = SqliteStore::open(&path).unwrap();
        assert_eq!(s.bounds("a").unwrap(), (1, 2));
        assert_eq!(
            s.find_client_uuid("a", "x").unwrap(),
            Some(("e1".into(), 1))
        );
    }
}
