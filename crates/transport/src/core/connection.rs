//! The connection lifecycle: connecting, dropping a connection, failing over to a backoff retry or
//! giving up, and closing for good.

use super::{Action, CloseReason, ConnectionState, Core, Failure, Phase, TransportEvent};
use crate::backoff::Retry;

impl Core {
    pub(super) fn set_state(&mut self, state: ConnectionState) {
        if self.state != state {
            self.state = state.clone();
            self.events.push_back(TransportEvent::State(state));
        }
    }

    pub(super) fn start_connect(&mut self, now: u64) {
        self.conn += 1;
        self.phase = Phase::Connecting {
            deadline: now + self.config.connect_timeout_ms,
        };
        self.parser.reset();
        self.actions.push_back(Action::Connect {
            conn: self.conn,
            from_sequence_num: self.cursor,
        });
        self.set_state(ConnectionState::Connecting {
            attempt: self.backoff.attempt(),
        });
    }

    /// Tears the current connection down on our side.
    pub(super) fn drop_connection(&mut self) {
        if matches!(self.phase, Phase::Connecting { .. } | Phase::Open) {
            self.actions
                .push_back(Action::Disconnect { conn: self.conn });
        }
        self.parser.reset();
        self.outbox.on_disconnect();
        // Held live frames come again with the replay from the cursor.
        self.held.clear();
    }

    pub(super) fn fail_connection(&mut self, now: u64, failure: Failure) {
        self.drop_connection();
        if self.closing_deadline.is_some() {
            self.close_with(CloseReason::Client);
            return;
        }
        if failure.is_permanent() {
            self.close_with(CloseReason::Permanent(failure.to_string()));
            return;
        }
        let rand = (self.entropy.random)();
        match self.backoff.on_failure(now, failure.retry_after_ms(), rand) {
            Retry::After { delay_ms, attempt } => {
                self.counters.reconnects += 1;
                self.phase = Phase::Waiting {
                    retry_at: now + delay_ms,
                };
                self.set_state(ConnectionState::Reconnecting {
                    attempt,
                    next_retry_ms: delay_ms,
                    last_error: failure.to_string(),
                });
            }
            Retry::GiveUp => self.close_with(CloseReason::GaveUp(failure.to_string())),
        }
    }

    pub(super) fn close_with(&mut self, reason: CloseReason) {
        if self.phase == Phase::Closed {
            return;
        }
        self.drop_connection();
        self.phase = Phase::Closed;
        self.gap = None;
        let outcomes = self.outbox.fail_all(&reason.to_string());
        self.report(outcomes);
        self.set_state(ConnectionState::Closed { reason });
        self.actions.push_back(Action::Shutdown);
    }
}
