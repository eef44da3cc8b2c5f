//! The REST shapes of signing in: `POST /v1/auth/login` (its body and answer) and the public
//! `GET /v1/embed/config`. One definition for the relay that writes them and the console that reads
//! them (`GET /v1/me` is [`super::Me`]).

use serde::{Deserialize, Serialize};

/// The body of `POST /v1/auth/login`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginRequest {
    /// A one-time login code (from a `#login=` link) or a token (trimmed by the relay).
    pub token: String,
}

/// The answer of `POST /v1/auth/login` (with the login cookie): what the console keeps beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginAnswer {
    /// The login secret: the cookie alone is not enough, the console keeps this in its origin's
    /// storage and sends it in `X-Bridge-Login` (and as a WebSocket's first frame).
    pub login_secret: String,
    /// The login's id (`null` when the relay keeps none for it).
    #[serde(default)]
    pub login_id: Option<String>,
    /// `controller` or `observer`.
    #[serde(default)]
    pub role: String,
    /// The one session a scoped login is limited to (`null`: none).
    #[serde(default)]
    pub session_id: Option<String>,
    /// The first screen's markup and boot data, when asked for with `X-Bridge-First-Screen`
    /// (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_screen: Option<String>,
}

/// `GET /v1/embed/config` (public, no secrets).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedConfig {
    /// The embedding protocol's version (1).
    pub bridge: u32,
    /// The origins allowed to embed the console (`--embed-origin`); it talks postMessage with
    /// those only.
    #[serde(default)]
    pub origins: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_login_answer_keeps_the_relays_layout() {
        let mut a = LoginAnswer {
            login_secret: "ls_1".into(),
            login_id: Some("login_1".into()),
            role: "controller".into(),
            session_id: None,
            first_screen: None,
        };
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"login_secret":"ls_1","login_id":"login_1","role":"controller","session_id":null}"#
        );
        a.first_screen = Some("<main>".into());
        a.login_id = None;
        let text = serde_json::to_string(&a).unwrap();
        assert_eq!(
            text,
            r#"{"login_secret":"ls_1","login_id":null,"role":"controller","session_id":null,"first_screen":"<main>"}"#
        );
        assert_eq!(serde_json::from_str::<LoginAnswer>(&text).unwrap(), a);
        let lean: LoginAnswer =
            serde_json::from_value(json!({"login_secret": "s", "later": 1})).unwrap();
        assert_eq!((lean.role.as_str(), lean.session_id), ("", None));
        assert!(serde_json::from_value::<LoginAnswer>(json!({"role": "observer"})).is_err());
    }

    #[test]
    fn the_login_body_and_the_embed_config() {
        assert_eq!(
            serde_json::to_string(&LoginRequest { token: "c".into() }).unwrap(),
            r#"{"token":"c"}"#
        );
        assert!(serde_json::from_value::<LoginRequest>(json!({})).is_err());
        let c = EmbedConfig {
            bridge: 1,
            origins: vec!["https://a.example".into()],
        };
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"bridge":1,"origins":["https://a.example"]}"#
        );
        let empty: EmbedConfig = serde_json::from_value(json!({"bridge": 1})).unwrap();
        assert!(empty.origins.is_empty());
    }
}
