//! Inbound ordering: decoding frames, holding live events while a gap is fetched from the REST list,
//! dropping duplicates and echoes, and delivering durable events strictly in sequence.

use bridge_dedup::Seen;

use super::{
    Action, CloseReason, Core, EventsPage, Failure, GapFill, Inbound, Phase, TransportEvent,
};
use crate::envelope::{self, DecodeError, Durable, Frame};

impl Core {
    /// A page of the REST event list (asked for by [`Action::FetchEvents`]).
    pub fn on_events_page(&mut self, now: u64, page: Result<EventsPage, Failure>) {
        let Some(gap) = &mut self.gap else { return };
        gap.fetching = false;
        let page = match page {
            Ok(p) => p,
            Err(failure) => {
                // Start over from the cursor: the stream replays what it can
                // and the gap is detected again.
                self.gap = None;
                self.held.clear();
                if matches!(self.phase, Phase::Open | Phase::Connecting { .. }) {
                    self.fail_connection(now, failure);
                } else if failure.is_permanent() {
                    self.close_with(CloseReason::Permanent(format!("event list: {failure}")));
                }
                self.pump(now);
                return;
            }
        };
        let got_any = !page.events.is_empty();
        for raw in page.events {
            let decoded = envelope::decode_envelope(raw);
            let decoded = match self.config.payload_check {
                Some(check) => {
                    decoded.and_then(|d| match check.apply(Frame::Durable(Box::new(d)))? {
                        Frame::Durable(d) => Ok(*d),
                        _ => unreachable!("a checked durable frame stays durable"),
                    })
                }
                None => decoded,
            };
            match decoded {
                Ok(d) if d.seq <= self.cursor => {}
                Ok(d) => {
                    // The relay no longer has cursor+1 .. seq-1 (retention).
                    self.report_gap(d.seq);
                    self.apply_durable(d);
                }
                Err(e) => self.on_malformed(e),
            }
        }
        if !got_any && page.truncated && page.last_sequence_num > self.cursor {
            // Everything after the cursor is gone and nothing newer exists yet.
            self.report_gap(page.last_sequence_num + 1);
        }
        let until = self.gap.as_ref().and_then(|g| g.until);
        let done = !got_any
            || self.cursor >= page.last_sequence_num
            || until.is_some_and(|u| self.cursor >= u);
        if done {
            self.gap = None;
            self.release_held();
        } else if let Some(g) = &mut self.gap {
            g.fetching = true;
            self.actions.push_back(Action::FetchEvents {
                after: self.cursor,
                limit: self.config.gap_page_limit,
            });
        }
        self.pump(now);
    }

    pub(super) fn on_decoded(&mut self, decoded: Result<Frame, DecodeError>) {
        let decoded = match self.config.payload_check {
            Some(check) => decoded.and_then(|f| check.apply(f)),
            None => decoded,
        };
        match decoded {
            Ok(frame) => self.on_frame(frame, false),
            Err(e) => {
                // A durable frame whose payload is bad still has its place in
                // the sequence: hold or apply it like any other.
                // (The REST fetch returns it again and reports it then.)
                if let Some(seq) = e.seq()
                    && (self.gap.is_some() || seq > self.cursor + 1)
                {
                    if seq > self.cursor {
                        self.start_gap(Some(seq));
                    }
                    return;
                }
                self.on_malformed(e);
            }
        }
    }

    pub(super) fn on_malformed(&mut self, e: DecodeError) {
        self.counters.malformed += 1;
        if let Some(seq) = e.seq()
            && seq == self.cursor + 1
        {
            self.cursor = seq;
        }
        self.events.push_back(TransportEvent::Malformed {
            seq: e.seq(),
            error: e.to_string(),
        });
    }

    /// A live frame. `front`: it is being re-played from the held queue.
    pub(super) fn on_frame(&mut self, frame: Frame, front: bool) {
        if let Frame::WsError {
            status,
            kind,
            message,
        } = &frame
        {
            match self.outbox.on_frame_error(*status, kind, message) {
                Some(o) => self.report(vec![o]),
                None => {
                    self.counters.dropped += 1;
                }
            }
            return;
        }
        if let Frame::Ignored(name) = &frame {
            // A keepalive frame (browsers cannot see WebSocket pings) only
            // proves liveness; anything else unknown is counted.
            if name != "keepalive" {
                self.counters.dropped += 1;
            }
            return;
        }
        if self.gap.is_some() {
            if front {
                self.held.push_front(frame);
            } else {
                self.held.push_back(frame);
            }
            return;
        }
        match frame {
            Frame::Durable(d) => {
                if d.seq <= self.cursor {
                    self.counters.duplicates += 1;
                } else if d.seq > self.cursor + 1 {
                    let until = d.seq - 1;
                    self.held.push_front(Frame::Durable(d));
                    self.start_gap(Some(until));
                } else {
                    self.apply_durable(*d);
                }
            }
            Frame::Ephemeral(m) => self.deliver(Inbound {
                seq: None,
                event_id: None,
                source: None,
                created_at: None,
                message: m,
            }),
            Frame::CatchUpTruncated => self.start_gap(None),
            Frame::DeliveryUpdate(u) => self.events.push_back(TransportEvent::DeliveryUpdate(u)),
            Frame::WsError { .. } | Frame::Ignored(_) => unreachable!("handled above"),
        }
    }

    pub(super) fn start_gap(&mut self, until: Option<u64>) {
        match &mut self.gap {
            Some(g) => {
                if let (Some(a), Some(b)) = (g.until, until) {
                    g.until = Some(a.max(b));
                }
            }
            None => {
                self.counters.gap_fetches += 1;
                self.gap = Some(GapFill {
                    until,
                    fetching: true,
                });
                self.actions.push_back(Action::FetchEvents {
                    after: self.cursor,
                    limit: self.config.gap_page_limit,
                });
            }
        }
    }

    pub(super) fn release_held(&mut self) {
        while self.gap.is_none() {
            let Some(frame) = self.held.pop_front() else {
                break;
            };
            self.on_frame(frame, true);
        }
    }

    pub(super) fn report_gap(&mut self, next: u64) {
        if next > self.cursor + 1 {
            self.counters.lost += next - self.cursor - 1;
            self.events.push_back(TransportEvent::Gap {
                after: self.cursor,
                next,
            });
            self.cursor = next - 1;
        }
    }

    /// Applies the durable event `cursor + 1`.
    pub(super) fn apply_durable(&mut self, d: Durable) {
        debug_assert_eq!(d.seq, self.cursor + 1);
        self.cursor = d.seq;
        if let Some(uuid) = d.uuid {
            let mut outcomes = Vec::new();
            self.outbox
                .on_echo(&uuid, d.event_id.as_deref(), d.seq, &mut outcomes);
            self.report(outcomes);
            match self.dedup.observe(uuid) {
                Seen::Fresh => {}
                Seen::Echo => {
                    self.counters.echoes += 1;
                    return;
                }
                Seen::Redelivery => {
                    self.counters.duplicates += 1;
                    return;
                }
            }
        }
        self.counters.durable += 1;
        self.deliver(Inbound {
            seq: Some(d.seq),
            event_id: d.event_id,
            source: Some(d.source),
            created_at: d.created_at,
            message: d.message,
        });
    }

    pub(super) fn deliver(&mut self, inbound: Inbound) {
        self.counters.delivered += 1;
        self.events
            .push_back(TransportEvent::Message(Box::new(inbound)));
    }
}
