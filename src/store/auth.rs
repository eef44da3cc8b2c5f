//! Signing in and out, and asking the relay who is signed in: the app shell and the embed host
//! call these actions; only the store talks to the network.

use leptos::prelude::*;

use super::Store;
use crate::net::{self, Me, NetError};

impl Store {
    /// Whether the signed-in person is a controller (observers cannot act, nor use push).
    pub fn is_controller(&self) -> bool {
        self.me
            .with(|m| m.as_ref().is_some_and(|m| !m.is_observer()))
    }

    /// Exchanges a login link's one-time code (or a token) for the session cookie
    /// (`POST /v1/auth/login`); the login secret the relay returns is kept.
    pub async fn sign_in(self, token: &str) -> Result<(), NetError> {
        net::login(token).await
    }

    /// The sign-in index.html's boot script made with the page's login code, if it took one
    /// (`net::login_from_page`).
    pub async fn sign_in_from_page(self) -> Option<Result<(), NetError>> {
        net::login_from_page().await
    }

    /// Signs in with a token an embedding host handed over (`auth` message). When the cookie does
    /// not come back (a cross-site iframe), the token is kept in memory and sent as a bearer token
    /// instead.
    pub async fn sign_in_from_host(self, token: String) -> Result<(), NetError> {
        net::login(&token).await?;
        if matches!(net::me().await, Err(NetError::Status(401, _))) {
            net::set_bearer(Some(token));
        }
        Ok(())
    }

    /// Signs out (`POST /v1/auth/logout`): the cookie, the login secret and any bearer token are
    /// forgotten, and so is who was signed in.
    pub async fn sign_out(self) -> Result<(), NetError> {
        net::set_bearer(None);
        let result = net::logout().await;
        self.me.try_set(None);
        result
    }

    /// Who is signed in, and with which role (`GET /v1/me`).
    pub async fn who_am_i(self) -> Result<Me, NetError> {
        net::me().await
    }

    /// The origins allowed to embed the console (`GET /v1/embed/config`, public).
    pub async fn embed_origins(self) -> Result<Vec<String>, NetError> {
        net::embed_origins().await
    }
}
