//! The core's errors: what went wrong (a [`Fault`]), a machine-readable `kind` and a message saying
//! what failed and what to do. The core names no transport: the edge (`edge/error.rs`) answers each
//! fault with its HTTP status and the JSON error body.

/// What kind of failure an [`Error`] is, as a caller can act on it (the edge maps each to a status).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// The request is malformed or names something that cannot be (a bad field, a cursor past the end).
    Invalid,
    /// No credential, or one that is not valid.
    Unauthenticated,
    /// The credential may not do this (an observer writing, a mode the relay does not allow).
    Forbidden,
    /// No such session, request or file.
    NotFound,
    /// The request conflicts with the current state (a running session, a settled prompt).
    Conflict,
    /// The session has ended: nothing more can be sent to it.
    Gone,
    /// The request or its body is larger than allowed.
    TooLarge,
    /// A limit on how many (sessions, streams, attempts, waiting frames) is reached.
    TooMany,
    /// The relay itself failed (store, audit log, a broken invariant).
    Internal,
    /// Something the relay depends on failed: the agent could not start, another process answered badly.
    Upstream,
    /// Cannot be done now (the agent is not reading its input, a store cannot be reached); retry.
    Unavailable,
    /// Something the relay waited for did not answer in time.
    TimedOut,
}

/// A failure of the core, with a machine-readable `kind` and a message saying what failed and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub fault: Fault,
    pub kind: &'static str,
    pub message: String,
}

impl Error {
    pub fn new(fault: Fault, kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            fault,
            kind,
            message: message.into(),
        }
    }
    /// `invalid_request_error`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Fault::Invalid, "invalid_request_error", message)
    }
    /// `authentication_error`.
    pub fn unauthenticated(message: impl Into<String>) -> Self {
        Self::new(Fault::Unauthenticated, "authentication_error", message)
    }
    /// `permission_error`.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(Fault::Forbidden, "permission_error", message)
    }
    /// `not_found_error`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(Fault::NotFound, "not_found_error", message)
    }
    pub fn conflict(kind: &'static str, message: impl Into<String>) -> Self {
        Self::new(Fault::Conflict, kind, message)
    }
    /// `session_ended`.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(Fault::Gone, "session_ended", message)
    }
    /// `request_too_large`.
    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(Fault::TooLarge, "request_too_large", message)
    }
    /// `api_error`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Fault::Internal, "api_error", message)
    }
    pub fn unknown_session(id: &str) -> Self {
        Self::not_found(format!(
            "no session with id {id:?}; list sessions with GET /v1/code/sessions"
        ))
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} {}: {}", self.fault, self.kind, self.message)
    }
}

impl std::error::Error for Error {}

impl From<crate::core::store::StoreError> for Error {
    fn from(e: crate::core::store::StoreError) -> Self {
        tracing::error!(error = %e, "event store failure");
        Error::internal(format!("event store failure: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_name_their_fault_and_kind() {
        let e = Error::unknown_session("cse_x");
        assert_eq!((e.fault, e.kind), (Fault::NotFound, "not_found_error"));
        assert!(e.message.contains("GET /v1/code/sessions"));
        assert_eq!(Error::gone("x").kind, "session_ended");
        assert_eq!(
            Error::conflict("session_running", "m").to_string(),
            "Conflict session_running: m"
        );
    }
}
