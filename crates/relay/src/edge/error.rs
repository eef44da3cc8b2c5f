//! JSON errors: every 4xx/5xx answer is `{"type":"error","error":{"type","message"}}`. The core's
//! [`Error`](crate::core::error::Error) becomes an [`ApiError`] here, each [`Fault`] with its status.

use std::time::Duration;

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::core::error::{Error, Fault};

/// An HTTP error with a machine-readable `type` and a message saying what failed and what to do.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub kind: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            kind,
            message: message.into(),
        }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Error::invalid(message).into()
    }
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Error::unauthenticated(message).into()
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Error::forbidden(message).into()
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Error::not_found(message).into()
    }
    pub fn conflict(kind: &'static str, message: impl Into<String>) -> Self {
        Error::conflict(kind, message).into()
    }
    pub fn gone(message: impl Into<String>) -> Self {
        Error::gone(message).into()
    }
    pub fn too_large(message: impl Into<String>) -> Self {
        Error::too_large(message).into()
    }
    /// 503 `cluster_unavailable`: scale-out's store (NATS) cannot be reached now; retry.
    pub fn cluster_unavailable(message: impl Into<String>) -> Self {
        Error::new(Fault::Unavailable, "cluster_unavailable", message).into()
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Error::internal(message).into()
    }
    pub fn unknown_session(id: &str) -> Self {
        Error::unknown_session(id).into()
    }
}

/// The HTTP status the edge answers a core fault with.
pub fn status_of(fault: Fault) -> StatusCode {
    match fault {
        Fault::Invalid => StatusCode::BAD_REQUEST,
        Fault::Unauthenticated => StatusCode::UNAUTHORIZED,
        Fault::Forbidden => StatusCode::FORBIDDEN,
        Fault::NotFound => StatusCode::NOT_FOUND,
        Fault::Conflict => StatusCode::CONFLICT,
        Fault::Gone => StatusCode::GONE,
        Fault::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        Fault::TooMany => StatusCode::TOO_MANY_REQUESTS,
        Fault::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        Fault::Upstream => StatusCode::BAD_GATEWAY,
        Fault::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Fault::TimedOut => StatusCode::GATEWAY_TIMEOUT,
    }
}

/// The fault an HTTP error status stands for (the inverse of [`status_of`]); a status no fault
/// maps to is [`Fault::Upstream`] (502), as an answer with no valid status was before.
pub fn fault_of(status: StatusCode) -> Fault {
    match status {
        StatusCode::BAD_REQUEST => Fault::Invalid,
        StatusCode::UNAUTHORIZED => Fault::Unauthenticated,
        StatusCode::FORBIDDEN => Fault::Forbidden,
        StatusCode::NOT_FOUND => Fault::NotFound,
        StatusCode::CONFLICT => Fault::Conflict,
        StatusCode::GONE => Fault::Gone,
        StatusCode::PAYLOAD_TOO_LARGE => Fault::TooLarge,
        StatusCode::TOO_MANY_REQUESTS => Fault::TooMany,
        StatusCode::INTERNAL_SERVER_ERROR => Fault::Internal,
        StatusCode::SERVICE_UNAVAILABLE => Fault::Unavailable,
        StatusCode::GATEWAY_TIMEOUT => Fault::TimedOut,
        _ => Fault::Upstream,
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        Self {
            status: status_of(e.fault),
            kind: e.kind,
            message: e.message,
        }
    }
}

/// An HTTP error handed back through the core (a session's host refused a mirror's input): its
/// status as a fault (see [`fault_of`]).
impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        Error::new(fault_of(e.status), e.kind, e.message)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.kind,
            self.message
        )
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"type": "error", "error": {"type": self.kind, "message": self.message}});
        let mut resp = (self.status, Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        resp
    }
}

impl From<crate::core::store::StoreError> for ApiError {
    fn from(e: crate::core::store::StoreError) -> Self {
        Error::from(e).into()
    }
}

/// The 429 of an exhausted login bucket, with `Retry-After`.
pub fn too_many_login_attempts(wait: Duration) -> Response {
    let secs = (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1);
    let mut resp = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limit_error",
        format!(
            "too many login attempts from this address ({} per minute); try again in {secs} s",
            crate::core::limits::LOGIN_PER_MINUTE
        ),
    )
    .into_response();
    resp.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAULTS: [Fault; 12] = [
        Fault::Invalid,
        Fault::Unauthenticated,
        Fault::Forbidden,
        Fault::NotFound,
        Fault::Conflict,
        Fault::Gone,
        Fault::TooLarge,
        Fault::TooMany,
        Fault::Internal,
        Fault::Upstream,
        Fault::Unavailable,
        Fault::TimedOut,
    ];

    #[test]
    fn every_fault_has_its_own_status_and_comes_back_from_it() {
        for f in FAULTS {
            assert!(status_of(f).is_client_error() || status_of(f).is_server_error());
            assert_eq!(fault_of(status_of(f)), f, "{f:?}");
        }
        assert_eq!(fault_of(StatusCode::IM_A_TEAPOT), Fault::Upstream);
    }

    #[test]
    fn a_core_error_answers_as_the_core_helpers_did() {
        let cases = [
            (Error::invalid("m"), 400, "invalid_request_error"),
            (Error::forbidden("m"), 403, "permission_error"),
            (Error::not_found("m"), 404, "not_found_error"),
            (
                Error::conflict("session_running", "m"),
                409,
                "session_running",
            ),
            (Error::gone("m"), 410, "session_ended"),
            (Error::too_large("m"), 413, "request_too_large"),
            (Error::internal("m"), 500, "api_error"),
        ];
        for (e, status, kind) in cases {
            let a = ApiError::from(e);
            assert_eq!(
                (a.status.as_u16(), a.kind, a.message.as_str()),
                (status, kind, "m")
            );
        }
        let a = ApiError::from(Error::unauthenticated("who?"));
        let resp = a.into_response();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(resp.headers()[header::WWW_AUTHENTICATE], "Bearer");
    }

    #[test]
    fn login_refusal_says_when_to_retry() {
        let resp = too_many_login_attempts(Duration::from_millis(1500));
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(resp.headers()[header::RETRY_AFTER], "2");
    }
}
