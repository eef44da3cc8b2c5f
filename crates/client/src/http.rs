//! The one REST call the package makes itself: `POST /v1/code/sessions` (everything else is the
//! transport's). `fetch` comes from the global scope, so it works in pages, workers and Node.

use bridge_transport::endpoint::{LOGIN_SECRET_HEADER, error_type};
use js_sys::Promise;
use serde_json::Value;
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Headers, RequestCredentials, RequestInit, Response};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = fetch, catch)]
    fn global_fetch(input: &str, init: &RequestInit) -> Result<Promise, JsValue>;
}

/// A JS exception as text (with Node's `cause`, which holds the real reason of "fetch failed").
pub fn describe(e: &JsValue) -> String {
    if let Some(s) = e.as_string() {
        return s;
    }
    match e.dyn_ref::<js_sys::Error>() {
        Some(err) => {
            let message = String::from(err.message());
            match err.cause().dyn_ref::<js_sys::Error>() {
                Some(cause) => format!("{message} ({})", String::from(cause.message())),
                None => message,
            }
        }
        None => "an exception that is not an Error".to_owned(),
    }
}

/// POSTs `body` as JSON to `url` and returns the JSON answer (`null` for an empty one); errors say
/// what the relay said. `login_secret` goes in `X-Bridge-Login`, beside the login cookie.
pub async fn post_json(
    url: &str,
    token: Option<&str>,
    login_secret: Option<&str>,
    body: &Value,
) -> Result<Value, String> {
    let net = |e: JsValue| format!("could not reach the relay at {url}: {}", describe(&e));
    let headers = Headers::new().map_err(net)?;
    headers.set("Accept", "application/json").map_err(net)?;
    headers
        .set("Content-Type", "application/json")
        .map_err(net)?;
    if let Some(t) = token {
        headers
            .set("Authorization", &format!("Bearer {t}"))
            .map_err(net)?;
    }
    if let Some(s) = login_secret {
        headers.set(LOGIN_SECRET_HEADER, s).map_err(net)?;
    }
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_credentials(RequestCredentials::SameOrigin);
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(&body.to_string()));
    let resp = JsFuture::from(global_fetch(url, &init).map_err(net)?)
        .await
        .map_err(net)?;
    let resp: Response = resp.dyn_into().map_err(net)?;
    let text = JsFuture::from(resp.text().map_err(net)?)
        .await
        .map_err(net)?
        .as_string()
        .unwrap_or_default();
    let status = resp.status();
    if !(200..300).contains(&status) {
        let (kind, message) = error_type(&text);
        let detail = match (kind.is_empty(), message.is_empty()) {
            (true, true) => String::new(),
            (false, true) => format!(" ({kind})"),
            (_, false) => format!(" ({kind}): {message}"),
        };
        let hint = match status {
            401 => " (check the token, or log in first when relying on the cookie)",
            403 => " (an observer token cannot do this, or the Origin is not allowed)",
            _ => "",
        };
        return Err(format!("the relay answered HTTP {status}{detail}{hint}"));
    }
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(&text).map_err(|e| format!("unreadable answer from the relay: {e}"))
}
