//! The local CA certificate over HTTP (`/tls/ca.pem`, `/tls/ca.crt`).

use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::edge::error::ApiError;
use crate::edge::extract::AppState;

use super::pem_certificate;

/// `GET /tls/ca.pem` and `GET /tls/ca.crt`: the local CA certificate, public (no login: a phone
/// fetches it before it can trust the relay), 404 without `--tls-self-signed`.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/tls/ca.pem", get(ca_pem))
        .route("/tls/ca.crt", get(ca_crt))
}

fn no_ca() -> Response {
    ApiError::not_found("no local CA: the relay runs without --tls-self-signed").into_response()
}

async fn ca_pem(State(app): State<AppState>) -> Response {
    match &app.config.tls_ca {
        Some(der) => ca_response(
            "application/x-pem-file",
            "bridge-console-ca.pem",
            pem_certificate(der).into_bytes(),
        ),
        None => no_ca(),
    }
}

async fn ca_crt(State(app): State<AppState>) -> Response {
    match &app.config.tls_ca {
        // DER with this type: Android and iOS offer to install it.
        Some(der) => ca_response(
            "application/x-x509-ca-cert",
            "bridge-console-ca.crt",
            der.to_vec(),
        ),
        None => no_ca(),
    }
}

fn ca_response(content_type: &'static str, filename: &str, body: Vec<u8>) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type.to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{filename}\""),
            ),
            (header::CACHE_CONTROL, "no-cache".to_owned()),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
        ],
        body,
    )
        .into_response()
}
