//! Small conversions between JSON and JS values, Promises and handler checks.

use std::future::Future;
use std::pin::Pin;

use js_sys::{Function, JSON, Object, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::http::describe;

/// What every Promise of the API is made from (one instantiation of `future_to_promise`).
pub(super) type PromiseFuture = Pin<Box<dyn Future<Output = Result<JsValue, JsValue>>>>;

pub(super) fn future_to_promise(future: PromiseFuture) -> Promise {
    wasm_bindgen_futures::future_to_promise(future)
}

/// An `Error` with `message`.
pub(super) fn error(message: impl AsRef<str>) -> JsValue {
    js_sys::Error::new(message.as_ref()).into()
}

/// JSON → a plain JS object (through `JSON.parse`: no `Map`s, no class instances).
pub(super) fn to_js(value: &Value) -> JsValue {
    JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

/// A JS value → JSON (through `JSON.stringify`; `undefined` and functions become `null`).
pub(super) fn from_js(value: &JsValue, what: &str) -> Result<Value, JsValue> {
    if value.is_undefined() {
        return Ok(Value::Null);
    }
    let text = JSON::stringify(value).map_err(|e| {
        error(format!(
            "{what}: cannot be written as JSON: {}",
            describe(&e)
        ))
    })?;
    match text.as_string() {
        Some(text) => serde_json::from_str(&text)
            .map_err(|e| error(format!("{what}: cannot be read as JSON: {e}"))),
        None => Ok(Value::Null),
    }
}

pub(super) fn object(pairs: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o.into()
}

pub(super) fn opt_str(s: Option<&str>) -> JsValue {
    s.map_or(JsValue::NULL, JsValue::from_str)
}

pub(super) fn number(n: u64) -> JsValue {
    JsValue::from_f64(n as f64)
}

/// Reports an exception thrown by a handler the way an event listener's is reported (an
/// unhandled rejection), without stopping delivery to it.
pub(super) fn report(result: Result<JsValue, JsValue>) {
    if let Err(e) = result {
        let _ = Promise::reject(&e);
    }
}

pub(super) fn has_global(name: &str) -> bool {
    Reflect::get(&js_sys::global(), &JsValue::from_str(name))
        .map(|v| v.is_function())
        .unwrap_or(false)
}

pub(super) fn as_handler(value: JsValue, what: &str) -> Result<Option<Function>, JsError> {
    if value.is_null() || value.is_undefined() {
        return Ok(None);
    }
    value
        .dyn_into::<Function>()
        .map(Some)
        .map_err(|_| JsError::new(&format!("{what}: the handler must be a function (or null)")))
}
