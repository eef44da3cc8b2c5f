//! HTTPS: the real `bridge-relay` binary with `--tls-self-signed` on 127.0.0.1:0, reached by clients
//! that trust exactly the local CA it made (`<data-dir>/tls/ca.pem`), as a phone that installed it
//! does; the CA served at `/tls/ca.crt`; `--behind-proxy`; and the flags the relay refuses.

use std::sync::Arc;

use crate::common::*;
use futures::{SinkExt as _, StreamExt as _};
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use tokio_rustls::rustls;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;

const FINGERPRINT_LINE: &str = "TLS SHA-256 fingerprint: ";
const CA_FINGERPRINT_LINE: &str = "TLS local CA SHA-256 fingerprint: ";
const CA_URL_LINE: &str = "Install the local CA on a phone from: ";

fn start_tls(dir: &std::path::Path, extra: &[&str]) -> RelayProc {
    let mut o = Opts::demo(dir).arg("--tls-self-signed");
    for a in extra {
        o = o.arg(a);
    }
    RelayProc::start(o)
}

/// `<data-dir>/tls/cert.pem`: the server certificate, then the CA.
fn cert_pem(relay: &RelayProc) -> Vec<u8> {
    std::fs::read(relay.data_dir.join("tls/cert.pem"))
        .expect("the certificate is kept in <data-dir>/tls")
}

/// `<data-dir>/tls/ca.pem`: the local CA's certificate.
fn ca_pem(relay: &RelayProc) -> Vec<u8> {
    std::fs::read(relay.data_dir.join("tls/ca.pem"))
        .expect("the local CA is kept in <data-dir>/tls")
}

/// The banner line starting with `prefix`, without it.
fn banner_line(relay: &RelayProc, prefix: &str) -> String {
    relay
        .banner
        .iter()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} in the banner: {:#?}", relay.banner))
        .to_owned()
}

/// The server certificate's fingerprint, as printed.
fn printed_fingerprint(relay: &RelayProc) -> String {
    banner_line(relay, FINGERPRINT_LINE)
}

/// The local CA's fingerprint, as printed.
fn printed_ca_fingerprint(relay: &RelayProc) -> String {
    banner_line(relay, CA_FINGERPRINT_LINE)
}

fn fingerprint_of(pem: &[u8]) -> String {
    let der = CertificateDer::from_pem_slice(pem).unwrap();
    Sha256::digest(der.as_ref())
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// A client that trusts the relay's local CA (`ca_pem`) and nothing else, as a phone with it
/// installed.
fn https(ca_pem: &[u8]) -> reqwest::Client {
    https_builder(ca_pem).build().unwrap()
}

fn https_builder(ca_pem: &[u8]) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .use_rustls_tls()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca_pem).unwrap())
        .timeout(T)
}

fn base(relay: &RelayProc) -> String {
    format!("https://{}", relay.addr)
}

#[tokio::test]
async fn https_login_cookie_urls_and_host_names() {
    let dir = tempfile::tempdir().unwrap();
    let relay = start_tls(dir.path(), &["--tls-name", "mybox.lan"]);
    let port = relay.addr.port();
    assert_eq!(
        printed_fingerprint(&relay),
        fingerprint_of(&cert_pem(&relay))
    );
    let pem = ca_pem(&relay);
    assert!(
        relay
            .console_url
            .starts_with(&format!("https://mybox.lan:{port}/#login=")),
        "the login URL names the first --tls-name: {}",
        relay.console_url
    );
    assert!(
        relay.banner.last().unwrap().starts_with("listening on "),
        "{:#?}",
        relay.banner
    );
    let c = https(&pem);
    let r = c
        .get(format!("{}/healthz", base(&relay)))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), json!({"ok": true}));
    // Plain HTTP on the TLS port gets nowhere.
    assert!(
        http()
            .get(relay.url("/healthz"))
            .send()
            .await
            .is_err_and(|e| !e.is_status())
    );

    // Login: a __Host- cookie, Secure, HttpOnly, SameSite=Strict, Path=/, no Domain.
    let (set, secret) = token_login(c.post(format!("{}/v1/auth/login", base(&relay)))).await;
    assert!(set.starts_with("__Host-bridge_session="), "{set}");
    for attr in ["Secure", "HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(set.split("; ").any(|a| a == attr), "{attr} missing: {set}");
    }
    assert!(!set.to_ascii_lowercase().contains("domain="), "{set}");
    let cookie = set.split(';').next().unwrap().to_owned();
    let me = |cookie: String| {
        let req = c
            .get(format!("{}/v1/me", base(&relay)))
            .header("cookie", cookie)
            .header("x-bridge-login", &secret);
        async move { req.send().await.unwrap() }
    };
    let r = me(cookie.clone()).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["role"], "controller");
    // Over HTTPS the unprefixed name is not read.
    let value = cookie.split_once('=').unwrap().1;
    assert_eq!(me(format!("bridge_session={value}")).await.status(), 401);

    // Absolute URLs the relay hands out are https / wss.
    let s = created(
        c.post(format!("{}/v1/code/sessions", base(&relay)))
            .bearer_auth(TOKEN),
    )
    .await;
    let sid = s["session_id"].as_str().unwrap().to_owned();
    let prefix = format!("https://127.0.0.1:{port}/v1/code/sessions/{sid}");
    assert_eq!(s["stream_url"], format!("{prefix}/events/stream"));
    assert_eq!(s["send_url"], format!("{prefix}/events"));
    assert_eq!(
        s["ws_url"],
        format!("wss://127.0.0.1:{port}/v1/code/sessions/{sid}/ws")
    );
    let minted = created(
        c.post(format!("{}/v1/observer-tokens", base(&relay)))
            .header("cookie", &cookie)
            .header("x-bridge-login", &secret),
    )
    .await;
    assert!(
        minted["console_url"]
            .as_str()
            .unwrap()
            .starts_with(&format!("https://127.0.0.1:{port}/#login=")),
        "{minted}"
    );

    // Host follows --tls-name; Origin must be the https:// one.
    let status = |host: String, origin: Option<String>| {
        let mut req = c
            .get(format!("{}/v1/me", base(&relay)))
            .bearer_auth(TOKEN)
            .header("host", host);
        if let Some(o) = origin {
            req = req.header("origin", o);
        }
        async move { req.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(status(format!("mybox.lan:{port}"), None).await, 200);
    assert_eq!(status(format!("MyBox.lan:{port}"), None).await, 200);
    assert_eq!(status(format!("other.lan:{port}"), None).await, 403);
    let mybox = format!("mybox.lan:{port}");
    assert_eq!(
        status(mybox.clone(), Some(format!("https://{mybox}"))).await,
        200
    );
    assert_eq!(
        status(mybox.clone(), Some(format!("http://{mybox}"))).await,
        403
    );

    // Logout clears the __Host- cookie.
    let r = c
        .post(format!("{}/v1/auth/logout", base(&relay)))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let cleared = r.headers()["set-cookie"].to_str().unwrap();
    assert!(
        cleared.starts_with("__Host-bridge_session=;")
            && cleared.contains("Secure")
            && cleared.contains("Max-Age=0"),
        "{cleared}"
    );
    assert_eq!(me(cookie).await.status(), 401);
}

type Wss =
    tokio_tungstenite::WebSocketStream<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>;

/// A WebSocket over TLS to the relay, trusting only the CA in `pem`, with extra request headers.
async fn wss(relay: &RelayProc, pem: &[u8], path: &str, headers: &[(&'static str, &str)]) -> Wss {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(pem).unwrap())
        .unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(relay.addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::IpAddress(relay.addr.ip().into()), tcp)
        .await
        .expect("TLS handshake with the relay's certificate");
    let mut req = format!("wss://{}{path}", relay.addr)
        .into_client_request()
        .unwrap();
    for (k, v) in headers {
        req.headers_mut().insert(*k, v.parse().unwrap());
    }
    tokio_tungstenite::client_async(req, tls)
        .await
        .expect("WebSocket upgrade over TLS")
        .0
}

async fn ws_until(ws: &mut Wss, what: &str, stop: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut out = Vec::new();
    loop {
        let msg = match tokio::time::timeout(T, ws.next()).await {
            Ok(Some(msg)) => msg.unwrap(),
            Ok(None) => panic!("socket ended waiting for {what}: {out:#?}"),
            Err(_) => panic!("timed out waiting for {what}: {out:#?}"),
        };
        if let Message::Text(t) = msg {
            for line in t.as_str().lines().filter(|l| !l.is_empty()) {
                let v: Value = serde_json::from_str(line).unwrap();
                let done = stop(&v);
                out.push(v);
                if done {
                    return out;
                }
            }
        }
    }
}

#[tokio::test]
async fn a_turn_over_wss_with_the_secure_cookie() {
    let dir = tempfile::tempdir().unwrap();
    let relay = start_tls(dir.path(), &[]);
    let pem = ca_pem(&relay);
    let c = https(&pem);
    let (set, secret) = token_login(c.post(format!("{}/v1/auth/login", base(&relay)))).await;
    let cookie = set.split(';').next().unwrap().to_owned();
    let s = created(
        c.post(format!("{}/v1/code/sessions", base(&relay)))
            .header("cookie", &cookie)
            .header("x-bridge-login", &secret),
    )
    .await;
    let sid = s["session_id"].as_str().unwrap();
    let path = format!("/v1/code/sessions/{sid}/ws");
    assert_eq!(s["ws_url"], format!("wss://{}{path}", relay.addr));
    // The browser's same-origin socket: the login cookie and an https Origin.
    let origin = base(&relay);
    let mut ws = wss(
        &relay,
        &pem,
        &path,
        &[("cookie", &cookie), ("origin", &origin)],
    )
    .await;
    let send = |v: Value| Message::text(format!("{v}\n"));
    // The cookie alone is not enough: the login secret comes first.
    ws.send(send(json!({"type":"auth","login_secret":secret})))
        .await
        .unwrap();
    ws.send(send(json!({"type":"user","message":{"role":"user","content":"hi over wss"},"parent_tool_use_id":null,"session_id":""})))
        .await
        .unwrap();
    let got = ws_until(&mut ws, "can_use_tool", |v| {
        v["type"] == "control_request" && v["request"]["subtype"] == "can_use_tool"
    })
    .await;
    let ask = got.last().unwrap();
    let answer = json!({"type":"control_response","response":{"subtype":"success","request_id":ask["request_id"],
        "response":{"behavior":"allow","updatedInput":{"command":"echo via-wss"},"toolUseID":ask["request"]["tool_use_id"]}}});
    ws.send(send(answer)).await.unwrap();
    let rest = ws_until(&mut ws, "result", |v| v["type"] == "result").await;
    assert!(rest.iter().any(|v| v.to_string().contains("via-wss")));

    // And SSE over TLS replays the same turn.
    let r = with_login(
        c.get(format!(
            "{}/v1/code/sessions/{sid}/events/stream",
            base(&relay)
        ))
        .header("accept", "text/event-stream"),
        &cookie,
        &secret,
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut body = r.bytes_stream();
    let mut seen = String::new();
    while !seen.contains("\"type\":\"result\"") {
        let chunk = tokio::time::timeout(T, body.next())
            .await
            .expect("SSE frames over TLS")
            .expect("stream open")
            .unwrap();
        seen.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

#[tokio::test]
async fn the_ca_is_kept_and_a_new_name_gets_a_new_ca() {
    let dir = tempfile::tempdir().unwrap();
    let first = start_tls(dir.path(), &[]);
    let fp = printed_fingerprint(&first);
    let ca_fp = printed_ca_fingerprint(&first);
    let has = |relay: &RelayProc, line: &str| {
        assert!(
            relay.banner.iter().any(|l| l.ends_with(line)),
            "{line:?} not in {:#?}",
            relay.banner
        );
    };
    has(&first, "(issued now by the local CA)");
    has(&first, "tls/ca.pem (made now)");
    let ca = ca_pem(&first);
    drop(first);

    let second = start_tls(dir.path(), &[]);
    assert_eq!(printed_fingerprint(&second), fp, "a second start reuses it");
    assert_eq!(printed_ca_fingerprint(&second), ca_fp, "and the CA");
    has(
        &second,
        "(issued by the local CA, kept from an earlier start)",
    );
    has(&second, "tls/ca.pem (kept from an earlier start)");
    assert_eq!(ca_pem(&second), ca);
    let r = https(&ca)
        .get(format!("{}/healthz", base(&second)))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    drop(second);

    // A new name: the CA vouches for exactly the names it was made for, so a new CA (devices
    // install it again) and a new server certificate from it.
    let third = start_tls(dir.path(), &["--tls-name", "new.lan"]);
    assert_ne!(
        printed_fingerprint(&third),
        fp,
        "a new name needs a new certificate"
    );
    assert_eq!(
        printed_fingerprint(&third),
        fingerprint_of(&cert_pem(&third))
    );
    assert_ne!(printed_ca_fingerprint(&third), ca_fp, "a new CA");
    has(&third, "(issued now by the local CA)");
    has(&third, "tls/ca.pem (made now)");
    let ca = ca_pem(&third);
    let port = third.addr.port();
    let r = https_builder(&ca)
        .resolve("new.lan", third.addr)
        .build()
        .unwrap()
        .get(format!("https://new.lan:{port}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn the_local_ca_is_served_for_phones_and_is_all_a_client_must_trust() {
    let dir = tempfile::tempdir().unwrap();
    let relay = start_tls(dir.path(), &["--tls-name", "mybox.lan"]);
    let port = relay.addr.port();
    let ca = ca_pem(&relay);
    let ca_der = CertificateDer::from_pem_slice(&ca).unwrap();
    let ca_fp = printed_ca_fingerprint(&relay);
    assert_eq!(ca_fp, fingerprint_of(&ca));
    assert_ne!(ca_fp, printed_fingerprint(&relay));
    assert_eq!(
        banner_line(&relay, CA_URL_LINE),
        format!("https://mybox.lan:{port}/tls/ca.crt")
    );
    // Trusting only the CA: the chain is complete, by IP and by the configured name.
    let c = https_builder(&ca)
        .resolve("mybox.lan", relay.addr)
        .build()
        .unwrap();
    for url in [
        format!("{}/healthz", base(&relay)),
        format!("https://mybox.lan:{port}/healthz"),
    ] {
        let r = c.get(&url).send().await.unwrap();
        assert_eq!(r.status(), 200, "{url}");
    }

    // `url` answered 200 with `content_type`: the body.
    let served = async |url: String, content_type: &str| {
        let r = c.get(&url).send().await.unwrap();
        assert_eq!(r.status(), 200, "{url}");
        assert_eq!(r.headers()["content-type"], content_type, "{url}");
        r.bytes().await.unwrap()
    };
    // GET /tls/ca.crt: DER a phone offers to install; no login needed.
    let crt = format!("https://mybox.lan:{port}/tls/ca.crt");
    let body = served(crt, "application/x-x509-ca-cert").await;
    assert_eq!(body.as_ref(), ca_der.as_ref());
    let digest = Sha256::digest(&body)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":");
    assert_eq!(digest, ca_fp, "the served CA is the printed one");
    // GET /tls/ca.pem: the same certificate as PEM.
    let pem = format!("{}/tls/ca.pem", base(&relay));
    let body = served(pem, "application/x-pem-file").await;
    assert_eq!(body.as_ref(), ca.as_slice());
    // The Host guard still applies.
    let r = c
        .get(format!("{}/tls/ca.crt", base(&relay)))
        .header("host", format!("evil.example:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);

    // The server certificate is not a CA: signed with its key, a certificate for another local
    // name does not verify, while the same one signed by the CA does.
    let tls_dir = relay.data_dir.join("tls");
    let leaf = CertificateDer::from_pem_slice(&cert_pem(&relay)).unwrap();
    let leaf_key =
        rcgen::KeyPair::from_pem(&std::fs::read_to_string(tls_dir.join("key.pem")).unwrap())
            .unwrap();
    let ca_key =
        rcgen::KeyPair::from_pem(&std::fs::read_to_string(tls_dir.join("ca-key.pem")).unwrap())
            .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    for f in ["ca-key.pem", "key.pem"] {
        let mode = std::fs::metadata(tls_dir.join(f))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{f}");
    }
    let forge = |issuer_cert: &CertificateDer<'static>, issuer_key: &rcgen::KeyPair| {
        let issuer = rcgen::Issuer::from_ca_cert_der(issuer_cert, issuer_key).unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["other.lan".to_owned()]).unwrap();
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let key = rcgen::KeyPair::generate().unwrap();
        params.signed_by(&key, &issuer).unwrap().der().clone()
    };
    let verify = |end: &CertificateDer<'static>, intermediates: &[CertificateDer<'static>]| {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca_der.clone()).unwrap();
        let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()
        .unwrap();
        use rustls::client::danger::ServerCertVerifier as _;
        verifier.verify_server_cert(
            end,
            intermediates,
            &ServerName::try_from("other.lan").unwrap(),
            &[],
            rustls_pki_types::UnixTime::now(),
        )
    };
    let by_leaf = forge(&leaf, &leaf_key);
    let err = verify(&by_leaf, std::slice::from_ref(&leaf)).unwrap_err();
    assert!(format!("{err:?}").contains("EndEntityUsedAsCa"), "{err:?}");
    // The CA vouches for exactly the names it was made for: a certificate it signs for another
    // local name (its key stolen) is refused by its name constraints.
    let by_ca = forge(&ca_der, &ca_key);
    let err = verify(&by_ca, &[]).unwrap_err();
    assert!(
        format!("{err:?}").contains("NameConstraintViolation"),
        "{err:?}"
    );
}

#[tokio::test]
async fn without_the_local_ca_there_is_no_ca_to_download() {
    let (_dir, relay) = demo_relay(&[]);
    for path in ["/tls/ca.crt", "/tls/ca.pem"] {
        let r = http().get(relay.url(path)).send().await.unwrap();
        assert_eq!(r.status(), 404, "{path}");
    }
    // No "TLS local CA …" or "Install the local CA …" line (the login link's random code may hold
    // the letters "CA": failed once when it did).
    assert!(
        !relay.banner.iter().any(|l| l.contains("local CA")),
        "{:#?}",
        relay.banner
    );
}

#[tokio::test]
async fn behind_a_proxy_forwarded_headers_name_scheme_and_host() {
    let (_dir, relay) = demo_relay(&["--behind-proxy", "--allowed-host", "box.tail1234.ts.net"]);
    assert!(
        relay
            .console_url
            .starts_with("https://box.tail1234.ts.net/#login="),
        "{}",
        relay.console_url
    );
    let c = http();
    let direct = relay.addr.to_string();
    // What a proxy on this machine sends from 127.0.0.1: Caddy keeps the client's Host, others put
    // their upstream's there; both forward the original one.
    let proxied = |req: reqwest::RequestBuilder, host: &str, forwarded: &str| {
        req.header("host", host)
            .header("x-forwarded-proto", "https")
            .header("x-forwarded-host", forwarded)
            .header("x-forwarded-for", "100.64.0.7")
    };
    let public = "box.tail1234.ts.net";
    let s = created(
        proxied(c.post(relay.url("/v1/code/sessions")), &direct, public)
            .bearer_auth(TOKEN)
            .header("origin", "https://box.tail1234.ts.net"),
    )
    .await;
    assert!(
        s["ws_url"]
            .as_str()
            .unwrap()
            .starts_with("wss://box.tail1234.ts.net/v1/code/sessions/"),
        "{s}"
    );
    let (set, _) = token_login(proxied(c.post(relay.url("/v1/auth/login")), public, public)).await;
    assert!(
        set.starts_with("__Host-bridge_session=") && set.contains("Secure"),
        "{set}"
    );
    // A forwarded host not on the list is refused, even from the proxy.
    let r = proxied(c.get(relay.url("/v1/me")), &direct, "evil.example")
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = proxied(c.get(relay.url("/v1/me")), public, public)
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // Without forwarded headers the relay is plain HTTP on loopback, as before.
    let (set, _) = token_login(c.post(relay.url("/v1/auth/login"))).await;
    assert!(
        set.starts_with("bridge_session=") && !set.contains("Secure"),
        "{set}"
    );
}

/// Runs the relay with `args` and returns its exit status and stderr; it must exit by itself.
fn refused(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = refused_start(dir.path(), args, None);
    assert!(
        out.stdout.is_empty(),
        "nothing printed on stdout for {args:?}"
    );
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_remote_bind_needs_tls_or_a_proxy_and_says_what_to_add() {
    let e = refused(&["--bind", "0.0.0.0:0"]);
    for flag in ["--allow-remote", "--tls-self-signed", "--behind-proxy"] {
        assert!(e.contains(flag), "{flag} not named: {e}");
    }
    let e = refused(&["--bind", "0.0.0.0:0", "--allow-remote"]);
    for flag in ["--tls-self-signed", "--tls-cert", "--behind-proxy"] {
        assert!(e.contains(flag), "{flag} not named: {e}");
    }
    let e = refused(&["--tls-cert", "/nonexistent/cert.pem"]);
    assert!(e.contains("--tls-key"), "{e}");
    let e = refused(&["--tls-self-signed", "--behind-proxy"]);
    assert!(e.contains("pick one"), "{e}");
    let e = refused(&["--tls-name", "mybox.lan"]);
    assert!(e.contains("--tls-self-signed"), "{e}");
    let e = refused(&["--tls-self-signed", "--tls-name", "not a name"]);
    assert!(e.contains("neither a DNS name nor an IP"), "{e}");
}
