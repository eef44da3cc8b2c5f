//! The durable log of a session and its live fan-out: appending events (sequence numbers, the
//! recent-frames window, retention), subscribing, replaying pages from memory or the store, the
//! uuid memory that recognises retries, and delivery receipts.

use std::sync::Arc;

use tokio::sync::broadcast;

use crate::core::frames::{Delivery, Frame};
use crate::core::store::{Source, StoreError, StoredEvent};
use crate::core::util::now_rfc3339;

use super::{
    BROADCAST_CAPACITY, DeliveryTrack, Inner, RECENT_BYTES, RECENT_FRAMES, Session, SessionState,
    Subscription,
};

impl Session {
    pub fn subscribe(&self) -> Subscription {
        let g = self.lock();
        Subscription {
            rx: self
                .tx
                .get_or_init(|| broadcast::channel(BROADCAST_CAPACITY).0)
                .subscribe(),
            last_seq: g.last_seq,
            first_seq: g.first_seq,
            ended: g.meta.state == SessionState::Ended,
        }
    }

    pub fn last_seq(&self) -> u64 {
        self.lock().last_seq
    }

    /// `(last_seq, ended)` read together.
    pub fn tail(&self) -> (u64, bool) {
        let g = self.lock();
        (g.last_seq, g.meta.state == SessionState::Ended)
    }

    /// Durable frames with `seq > after`, ascending, at most `limit`: from memory when the recent
    /// window covers `after + 1`, otherwise rendered from the store.
    pub fn replay_after(&self, after: u64, limit: usize) -> Result<Vec<Arc<Frame>>, StoreError> {
        self.replay_page(after, limit, usize::MAX)
    }

    /// [`Self::replay_after`] bounded in bytes too: frames stop once their payloads pass
    /// `max_bytes` (the first frame always comes, however large). Replays read page by page with
    /// this, so a log of multi-megabyte events is never held in memory whole.
    pub fn replay_page(
        &self,
        after: u64,
        limit: usize,
        max_bytes: usize,
    ) -> Result<Vec<Arc<Frame>>, StoreError> {
        {
            let g = self.lock();
            if let Some(front) = g.recent.front().and_then(|f| f.seq)
                && front <= after.saturating_add(1)
            {
                let skip = usize::try_from(after.saturating_add(1) - front).unwrap_or(usize::MAX);
                let mut out = Vec::new();
                let mut bytes = 0usize;
                for f in g.recent.iter().skip(skip).take(limit) {
                    if !out.is_empty() && bytes.saturating_add(f.payload.len()) > max_bytes {
                        break;
                    }
                    bytes = bytes.saturating_add(f.payload.len());
                    out.push(f.clone());
                }
                return Ok(out);
            }
        }
        Ok(self
            .ctx
            .store
            .read_page(&self.id, after, limit, max_bytes)?
            .iter()
            .map(Frame::durable)
            .collect())
    }

    /// `(first retained, last)` sequence numbers.
    pub fn bounds(&self) -> (u64, u64) {
        let g = self.lock();
        (g.first_seq, g.last_seq)
    }

    pub fn read_after(&self, after: u64, limit: usize) -> Result<Vec<StoredEvent>, StoreError> {
        self.ctx.store.read_after(&self.id, after, limit)
    }

    pub fn subscriber_count(&self) -> usize {
        self.tx.get().map_or(0, broadcast::Sender::receiver_count)
    }

    /// Whether the live fan-out ring exists (someone subscribed since the relay started).
    pub fn has_fanout(&self) -> bool {
        self.tx.get().is_some()
    }

    pub(super) fn fan_out(&self, frame: Arc<Frame>) {
        self.hook_live(&frame);
        if let Some(tx) = self.tx.get() {
            let _ = tx.send(frame);
        }
    }

    /// Appends a durable event and fans it out. Caller holds the lock. `ends_session` marks the
    /// agent-exit event (streams close after it).
    pub(super) fn append(
        &self,
        g: &mut Inner,
        source: Source,
        event_type: &str,
        payload: String,
        client_uuid: Option<String>,
        ends_session: bool,
    ) -> Result<(u64, String), StoreError> {
        let ev = StoredEvent {
            session_id: self.id.clone(),
            seq: g.last_seq + 1,
            event_id: uuid::Uuid::new_v4().to_string(),
            event_type: event_type.to_owned(),
            source,
            created_at: now_rfc3339(),
            payload,
            client_uuid,
        };
        self.ctx.store.append(&ev)?;
        self.hook_durable(&ev, ends_session);
        g.last_seq = ev.seq;
        g.meta.last_activity_at.clone_from(&ev.created_at);
        if let Some(u) = &ev.client_uuid {
            remember_uuid(g, u, &ev.event_id, ev.seq);
        }
        let frame = Frame::durable_with(&ev, ends_session);
        g.recent_bytes += frame.sse.len();
        g.recent.push_back(frame.clone());
        while g.recent.len() > RECENT_FRAMES
            || (g.recent_bytes > RECENT_BYTES && g.recent.len() > 1)
        {
            if let Some(old) = g.recent.pop_front() {
                g.recent_bytes -= old.sse.len();
            }
        }
        self.fan_out(frame);
        self.maybe_prune(g);
        Ok((ev.seq, ev.event_id))
    }

    pub(super) fn maybe_prune(&self, g: &mut Inner) {
        let Some(keep) = self.ctx.retention_events else {
            return;
        };
        let keep = keep.max(1);
        let retained = g.last_seq + 1 - g.first_seq;
        let slack = (keep / 8).max(1);
        if retained <= keep + slack {
            return;
        }
        let mut first_kept = g.last_seq + 1 - keep;
        // A prompt still waiting for an answer must reach late joiners: never prune it.
        if let Some(oldest) = g.pending.iter().map(|p| p.seq).min() {
            first_kept = first_kept.min(oldest);
        }
        if first_kept > g.first_seq {
            match self.ctx.store.prune_before(&self.id, first_kept) {
                Ok(()) => {
                    g.first_seq = first_kept;
                    while g
                        .recent
                        .front()
                        .and_then(|f| f.seq)
                        .is_some_and(|s| s < first_kept)
                    {
                        if let Some(old) = g.recent.pop_front() {
                            g.recent_bytes -= old.sse.len();
                        }
                    }
                }
                Err(e) => tracing::error!(session = %self.id, error = %e, "retention prune failed"),
            }
        }
    }

    pub(super) fn lookup_uuid(
        &self,
        g: &Inner,
        uuid: &str,
    ) -> Result<Option<(String, u64)>, StoreError> {
        if let Some(hit) = g.uuids.get(uuid) {
            return Ok(Some(hit.clone()));
        }
        self.ctx.store.find_client_uuid(&self.id, uuid)
    }

    pub(super) fn broadcast_delivery(&self, event_id: &str, status: Delivery) {
        self.fan_out(Frame::delivery(event_id, status, &now_rfc3339()));
    }

    pub(super) fn set_delivery(
        &self,
        g: &mut Inner,
        pred: impl Fn(&DeliveryTrack) -> bool,
        status: Delivery,
    ) {
        let mut updated = Vec::new();
        for d in g.deliveries.iter_mut().filter(|d| pred(d)) {
            if (d.status as u8) < (status as u8) {
                d.status = status;
                updated.push(d.event_id.clone());
            }
        }
        for id in updated {
            self.broadcast_delivery(&id, status);
        }
        g.deliveries.retain(|d| d.status != Delivery::Processed);
    }
}

pub(super) fn remember_uuid(g: &mut Inner, uuid: &str, event_id: &str, seq: u64) {
    if let Some(old) = g.posted.insert(uuid.to_owned()).evicted() {
        g.uuids.remove(&old);
    }
    g.uuids.insert(uuid.to_owned(), (event_id.to_owned(), seq));
}
