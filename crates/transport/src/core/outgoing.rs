//! The send side: what the outbox may send now (one POST, or WebSocket frames), a close that waits
//! for it to drain, and the delivered/failed outcomes it reports.

use super::{Action, CloseReason, Core, Phase, TransportEvent, WriteMode};
use crate::outbox::{Outcome, Outgoing, post_body};

impl Core {
    pub(super) fn report(&mut self, outcomes: Vec<Outcome>) {
        for o in outcomes {
            match o {
                Outcome::Delivered {
                    uuid,
                    event_id,
                    seq,
                } => {
                    self.counters.sends_delivered += 1;
                    self.events.push_back(TransportEvent::Delivered {
                        uuid,
                        event_id,
                        seq,
                    });
                }
                Outcome::Failed { uuid, error } => {
                    self.counters.send_failures += 1;
                    self.events
                        .push_back(TransportEvent::SendFailed { uuid, error });
                }
            }
        }
    }

    /// Emits what the outbox can send now, and finishes a drain.
    pub(super) fn pump(&mut self, now: u64) {
        if self.phase == Phase::Open {
            let draining = self.closing_deadline.is_some();
            match self.config.kind.write_mode() {
                WriteMode::Post => {
                    if let Some(Outgoing::Post { id, payloads }) =
                        self.outbox.poll_post(now, draining)
                    {
                        let body = post_body(&self.config.session_id, payloads);
                        self.actions.push_back(Action::Post { id, body });
                    }
                }
                WriteMode::WebSocket => {
                    let mut outcomes = Vec::new();
                    let dedup = &self.dedup;
                    while let Some(Outgoing::Frame { text, .. }) =
                        self.outbox
                            .poll_frame(now, &mut outcomes, |u| dedup.was_received(u))
                    {
                        self.actions.push_back(Action::SendFrame {
                            conn: self.conn,
                            text,
                        });
                    }
                    self.report(outcomes);
                }
            }
        }
        if self.phase != Phase::Closed && self.closing_deadline.is_some() && self.outbox.is_empty()
        {
            self.close_with(CloseReason::Client);
        }
    }
}
