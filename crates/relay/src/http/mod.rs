//! The HTTP surface: router, auth extractors, Host/Origin guard and CORS, REST handlers, static files.
//! Route modules: [`auth_api`] (login, logout, credentials, observers), [`sessions`] (the REST session
//! API); shared state and extractors live in [`crate::edge::extract`].

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, delete, get, post};
use axum::{Json, Router};
use serde_json::json;

use crate::edge::error::ApiError;
use crate::edge::external::External;

pub use crate::edge::extract::{AppState, Controller, JsonBody, PeerIp, SmallJsonBody, peer_ip};
pub use sessions::{EVENTS_PAGE_DEFAULT, EVENTS_PAGE_MAX};

mod auth_api;
pub mod first_screen;
mod sessions;

use auth_api::{
    embed_config, list_credentials, list_observers, login, logout, me, mint_login_code,
    mint_observer, revoke_credential, revoke_observer,
};
use sessions::{
    archive_session, create_session, delete_session, get_session, list_events, list_sessions,
    post_events,
};

pub fn app(state: AppState) -> Router {
    let api = Router::new()
        .route("/v1/auth/login", post(login))
        .route("/v1/auth/logout", post(logout))
        .route("/v1/me", get(me))
        .route("/v1/embed/config", get(embed_config))
        .route(
            "/v1/observer-tokens",
            post(mint_observer).get(list_observers),
        )
        .route("/v1/observer-tokens/{id}", delete(revoke_observer))
        .route("/v1/auth/login-codes", post(mint_login_code))
        .route("/v1/credentials", get(list_credentials))
        .route("/v1/credentials/{id}", delete(revoke_credential))
        .route("/v1/code/sessions", post(create_session).get(list_sessions))
        .route(
            "/v1/code/sessions/{id}",
            get(get_session).delete(delete_session),
        )
        .route("/v1/code/sessions/{id}/archive", post(archive_session))
        .route(
            "/v1/code/sessions/{id}/events",
            post(post_events).get(list_events),
        )
        .route(
            "/v1/code/sessions/{id}/events/stream",
            get(crate::edge::sse::stream),
        )
        .route("/v1/code/sessions/{id}/ws", get(crate::edge::ws::upgrade))
        .merge(crate::features::changes::routes())
        .merge(crate::features::push::routes())
        .merge(crate::features::transcripts::api::routes())
        .merge(crate::features::hooks::api::routes())
        .merge(crate::features::tls::routes())
        .route("/healthz", get(|| async { Json(json!({"ok": true})) }))
        .route("/v1/{*rest}", any(api_not_found));
    // Scale-out: a host runs the host-only requests gateways forward through these same routes
    // (and their caches).
    if let Some(c) = crate::cluster::Cluster::of(&state) {
        c.set_routes(api.clone().with_state(state.clone()));
    }
    // The console, read once (see assets.rs): --static-dir, else the one built into the binary.
    let console = match &state.config.static_dir {
        Some(dir) => crate::edge::assets::Console::from_dir(dir)
            .map_err(
                |e| tracing::warn!(dir = %dir.display(), error = %e, "cannot read the console"),
            )
            .ok(),
        None => crate::edge::assets::Console::embedded(),
    }
    .filter(|c| c.has_index());
    let index_html = console.as_ref().and_then(|c| c.index_html());
    let csp = HeaderValue::from_str(&crate::edge::headers::content_security_policy_embedded(
        index_html.as_deref(),
        &state.config.embed_origins,
    ))
    .expect("the policy is ASCII");
    let router = if let Some(console) = console {
        tracing::info!(from = %console.origin, "serving the console");
        let template = first_screen::Template::new(index_html);
        // A signed-in browser's page comes with its session list (see first_screen.rs); anything
        // else is a file of the console (or its index.html for the console's own routes).
        let app_state = state.clone();
        api.fallback(move |req: Request| {
            let (app, template, console) = (app_state.clone(), template.clone(), console.clone());
            async move {
                let (parts, _body) = req.into_parts();
                match first_screen::respond(&app, &template, &parts).await {
                    Some(res) => res,
                    None => console.respond(&parts.method, parts.uri.path(), &parts.headers),
                }
            }
        })
    } else {
        tracing::warn!(
            "no console to serve (this binary carries none and no --static-dir with an index.html \
             was given); serving a placeholder page"
        );
        api.fallback(placeholder_page)
    };
    router
        // Scale-out (--nats): a no-op without it; inside the guard (it reads the request's External).
        .layer(middleware::from_fn_with_state(
            state.clone(),
            crate::cluster::middleware,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            crate::edge::headers::add(csp.clone(), req, next)
        }))
        .with_state(state)
}

async fn api_not_found(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!("no API endpoint {method} {}", uri.path()))
}

async fn placeholder_page(method: Method) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let html = "<!doctype html><meta charset=utf-8><title>Bridge Console relay</title>\
        <h1>Bridge Console relay</h1><p>The relay is running, but no console build was found. \
        Install a relay that carries it with <code>scripts/install.sh</code> in the repository, or build it \
        with <code>scripts/build-console.sh</code> and pass <code>--static-dir dist</code>.</p>";
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

// ------------------------------------------------------------------ guard: Host, Origin, CORS

const CORS_ALLOW_HEADERS: &str =
    "authorization, anthropic-client-platform, content-type, last-event-id, x-bridge-login";
const CORS_ALLOW_METHODS: &str = "GET, POST, DELETE, OPTIONS";

async fn guard(State(app): State<AppState>, mut req: Request, next: Next) -> Response {
    let cfg = &app.config;
    // No ConnectInfo (a router driven without a socket): an unknown peer, trusted with nothing.
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let ext = External::of(
        cfg,
        req.headers(),
        req.uri().authority().map(|a| a.as_str()),
        peer,
    );
    let raw_host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.as_str().to_owned()))
        .unwrap_or_default()
        .to_ascii_lowercase();
    // The Host the connection carries, and the one a trusted proxy forwarded: both must be known.
    for host in std::iter::once(&raw_host).chain(ext.forwarded_host.as_ref()) {
        if !cfg.allowed_hosts.contains(host)
            && !crate::core::config::is_bare_loopback_host(host, cfg.addr)
        {
            return ApiError::forbidden(format!(
                "Host {host:?} is not allowed (DNS-rebinding protection); allowed: {}; add one with --allowed-host{}",
                cfg.allowed_hosts.join(", "),
                if cfg.tls { " or --tls-name" } else { "" }
            ))
            .into_response();
        }
    }
    let origin = req
        .headers()
        .get(header::ORIGIN)
        .and_then(|o| o.to_str().ok())
        .map(|o| o.trim_end_matches('/').to_ascii_lowercase());
    let mut cors_origin = None;
    if let Some(origin) = &origin {
        // Over TLS a page of this relay is only ever https://.
        let same_origin = cfg.allowed_hosts.iter().any(|h| {
            *origin == format!("https://{h}") || (!cfg.tls && *origin == format!("http://{h}"))
        });
        let configured = cfg.cors_origins.iter().any(|o| o == origin);
        if !same_origin && !configured {
            return ApiError::forbidden(format!(
                "Origin {origin:?} is not allowed; add it with --allowed-origin"
            ))
            .into_response();
        }
        if configured && !same_origin {
            cors_origin = req.headers().get(header::ORIGIN).cloned();
        }
    }
    if let Some(o) = &cors_origin
        && req.method() == Method::OPTIONS
    {
        let mut resp = StatusCode::NO_CONTENT.into_response();
        add_cors(resp.headers_mut(), o);
        let h = resp.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static(CORS_ALLOW_METHODS),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static(CORS_ALLOW_HEADERS),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
        return resp;
    }
    // Without credentials only tiny bodies: nothing unauthenticated needs more (a login is a token).
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let credentials = req.headers().contains_key(header::AUTHORIZATION)
        || req.headers().contains_key(header::COOKIE);
    if !credentials
        && declared.is_some_and(|n| n > crate::core::limits::UNAUTHENTICATED_BODY_BYTES as u64)
    {
        return ApiError::too_large(format!(
            "a request without credentials may carry at most {} bytes",
            crate::core::limits::UNAUTHENTICATED_BODY_BYTES
        ))
        .into_response();
    }
    req.extensions_mut().insert(ext);
    let mut resp = next.run(req).await;
    if let Some(o) = &cors_origin {
        add_cors(resp.headers_mut(), o);
    }
    resp
}

fn add_cors(h: &mut HeaderMap, origin: &HeaderValue) {
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("Retry-After"),
    );
    h.append(header::VARY, HeaderValue::from_static("Origin"));
}
