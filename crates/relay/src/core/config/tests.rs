use super::*;

#[test]
fn the_console_is_never_taken_from_the_start_dir_and_never_from_inside_the_cwd() {
    let start = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let exe = bin.path().join("bridge-relay");
    // A dist/ in the directory the relay is started in is not a candidate at all.
    std::fs::create_dir_all(start.path().join("dist")).unwrap();
    std::fs::write(
        start.path().join("dist/index.html"),
        "<script>evil()</script>",
    )
    .unwrap();
    assert_eq!(console_beside(Some(&exe)), None);
    // Beside the binary (a copied relay without a built-in console).
    std::fs::create_dir_all(bin.path().join("dist")).unwrap();
    std::fs::write(bin.path().join("dist/index.html"), "<html>").unwrap();
    assert_eq!(console_beside(Some(&exe)), Some(bin.path().join("dist")));
    // An explicit --static-dir inside the sessions' cwd is refused, naming both.
    let cwd = std::fs::canonicalize(start.path()).unwrap();
    let err = check_static_dir(&start.path().join("dist"), &cwd)
        .unwrap_err()
        .to_string();
    assert!(err.contains("refusing") && err.contains("--cwd"), "{err}");
    // ... and through the arguments, as the binary reads them.
    let args = Args::try_parse_from([
        "bridge-relay",
        "--static-dir",
        start.path().join("dist").to_str().unwrap(),
        "--cwd",
        start.path().to_str().unwrap(),
    ])
    .unwrap();
    let err = args
        .into_config("127.0.0.1:0".parse().unwrap())
        .err()
        .unwrap();
    assert!(err.to_string().contains("refusing"), "{err}");
    // Elsewhere it is fine.
    assert!(check_static_dir(&bin.path().join("dist"), &cwd).is_ok());
}

#[test]
fn parses_the_documented_command_line() {
    let a = Args::try_parse_from([
        "bridge-relay",
        "--demo",
        "--bind",
        "127.0.0.1:0",
        "--spawn-mode",
        "worktree",
        "--allowed-origin",
        "http://a:1",
        "--allowed-origin",
        "http://b:2/",
        "--permission-timeout-secs",
        "12",
        "--",
        "--foo",
        "bar",
    ])
    .unwrap();
    assert!(a.demo);
    assert_eq!(a.spawn_mode, SpawnMode::Worktree);
    assert_eq!(a.extra, ["--foo", "bar"]);
    a.validate().unwrap();
    let c = a.into_config("127.0.0.1:4321".parse().unwrap()).unwrap();
    assert_eq!(c.cors_origins, ["http://a:1", "http://b:2"]);
    assert!(c.embed_origins.is_empty());
    assert_eq!(c.allowed_hosts, ["localhost:4321", "127.0.0.1:4321"]);
    assert_eq!(c.permission_timeout, Some(Duration::from_secs(12)));
}

fn parse(flags: &[&str]) -> Args {
    let mut argv = vec!["bridge-relay"];
    argv.extend_from_slice(flags);
    Args::try_parse_from(argv).unwrap()
}

fn refusal(flags: &[&str]) -> String {
    format!("{:#}", parse(flags).validate().unwrap_err())
}

#[test]
fn remote_bind_needs_the_flag_and_tls_or_a_proxy() {
    let e = refusal(&["--bind", "0.0.0.0:80"]);
    for flag in [
        "--allow-remote",
        "--tls-self-signed",
        "--tls-cert",
        "--behind-proxy",
    ] {
        assert!(e.contains(flag), "{flag}: {e}");
    }
    let e = refusal(&["--bind", "0.0.0.0:80", "--allow-remote"]);
    assert!(e.contains("plain HTTP"), "{e}");
    for flag in ["--tls-self-signed", "--tls-cert", "--behind-proxy"] {
        assert!(e.contains(flag), "{flag}: {e}");
    }
    let e = refusal(&["--bind", "192.168.1.20:8787", "--tls-self-signed"]);
    assert!(e.contains("--allow-remote"), "{e}");
    // Behind a proxy, only on loopback: never plain HTTP on the network.
    let e = refusal(&["--bind", "0.0.0.0:80", "--allow-remote", "--behind-proxy"]);
    assert!(e.contains("plain HTTP") && e.contains("127.0.0.1"), "{e}");
    parse(&["--bind", "127.0.0.1:8080", "--behind-proxy"])
        .validate()
        .unwrap();
    for ok in [
        &["--tls-self-signed"][..],
        &["--tls-cert", "c.pem", "--tls-key", "k.pem"],
    ] {
        let mut flags = vec!["--bind", "0.0.0.0:80", "--allow-remote"];
        flags.extend_from_slice(ok);
        parse(&flags).validate().unwrap();
    }
    // Loopback needs none of it.
    parse(&["--bind", "[::1]:0"]).validate().unwrap();
    assert!(
        default_allowed_hosts("0.0.0.0:80".parse().unwrap()).contains(&"127.0.0.1:80".to_owned())
    );
}

#[test]
fn tls_flags_come_in_consistent_sets() {
    assert!(refusal(&["--tls-cert", "c.pem"]).contains("--tls-key FILE"));
    assert!(refusal(&["--tls-key", "k.pem"]).contains("--tls-cert FILE"));
    let e = refusal(&[
        "--tls-cert",
        "c.pem",
        "--tls-key",
        "k.pem",
        "--tls-self-signed",
    ]);
    assert!(e.contains("pick one"), "{e}");
    let e = refusal(&["--tls-self-signed", "--behind-proxy"]);
    assert!(e.contains("pick one"), "{e}");
    let e = refusal(&["--tls-name", "mybox.lan"]);
    assert!(
        e.contains("--tls-self-signed") && e.contains("--allowed-host"),
        "{e}"
    );
    let e = refusal(&["--tls-self-signed", "--tls-name", "bad name!"]);
    assert!(e.contains("neither a DNS name nor an IP"), "{e}");
    parse(&[
        "--tls-self-signed",
        "--tls-name",
        "MyBox.local",
        "--tls-name",
        "192.168.1.20",
        "--tls-name",
        "[fd00::1]",
    ])
    .validate()
    .unwrap();
}

#[test]
fn tls_names_feed_the_certificate_the_host_list_and_the_login_url() {
    let a = parse(&[
        "--demo",
        "--bind",
        "0.0.0.0:8787",
        "--allow-remote",
        "--tls-self-signed",
        "--tls-name",
        "192.168.1.20",
        "--tls-name",
        "MyBox.local",
        "--tls-name",
        "fd00::1",
    ]);
    a.validate().unwrap();
    assert!(a.tls_source() == Some(super::tls::CertSource::SelfSigned));
    let c = a.into_config("0.0.0.0:8787".parse().unwrap()).unwrap();
    assert!(c.tls && !c.behind_proxy);
    assert_eq!(
        c.tls_names,
        [
            "192.168.1.20",
            "mybox.local",
            "fd00::1",
            "localhost",
            "127.0.0.1"
        ]
    );
    for h in [
        "localhost:8787",
        "127.0.0.1:8787",
        "192.168.1.20:8787",
        "mybox.local:8787",
        "[fd00::1]:8787",
    ] {
        assert!(
            c.allowed_hosts.contains(&h.to_owned()),
            "{h}: {:?}",
            c.allowed_hosts
        );
    }
    assert!(!c.allowed_hosts.contains(&"mybox.local".to_owned()));
    // The first DNS name, with the port.
    assert_eq!(c.public_url, "https://mybox.local:8787");

    // On 443 the portless names are accepted too, and the URL has no port.
    let a = parse(&[
        "--demo",
        "--tls-cert",
        "c.pem",
        "--tls-key",
        "k.pem",
        "--tls-name",
        "relay.example.org",
    ]);
    let c = a.into_config("127.0.0.1:443".parse().unwrap()).unwrap();
    assert!(c.allowed_hosts.contains(&"relay.example.org".to_owned()));
    assert!(
        c.allowed_hosts
            .contains(&"relay.example.org:443".to_owned())
    );
    assert_eq!(c.public_url, "https://relay.example.org");

    // Without a name: the bound IP; bound everywhere: 127.0.0.1 (both are in the certificate).
    assert_eq!(
        public_url(true, &[], false, &[], "127.0.0.1:9".parse().unwrap()),
        "https://127.0.0.1:9"
    );
    assert_eq!(
        public_url(true, &[], false, &[], "0.0.0.0:9".parse().unwrap()),
        "https://127.0.0.1:9"
    );
    assert_eq!(
        tls_names(&[], "0.0.0.0:9".parse().unwrap()),
        ["localhost", "127.0.0.1"]
    );
    assert_eq!(
        public_url(
            true,
            &["10.0.0.2".into()],
            false,
            &[],
            "0.0.0.0:9".parse().unwrap()
        ),
        "https://10.0.0.2:9"
    );
    // Plain: as before. Behind a proxy: https and the public name.
    assert_eq!(
        public_url(false, &[], false, &[], "127.0.0.1:9".parse().unwrap()),
        "http://127.0.0.1:9"
    );
    assert_eq!(
        public_url(
            false,
            &[],
            true,
            &["Box.tail1234.ts.net".into()],
            "127.0.0.1:9".parse().unwrap()
        ),
        "https://box.tail1234.ts.net"
    );
    let c = parse(&["--demo"])
        .into_config("127.0.0.1:9".parse().unwrap())
        .unwrap();
    assert!(!c.tls && c.tls_names.is_empty());
    assert_eq!(c.public_url, "http://127.0.0.1:9");
}

#[test]
fn bare_loopback_hosts_only_on_a_loopback_relay() {
    let lo: SocketAddr = "127.0.0.1:8787".parse().unwrap();
    for h in ["localhost", "127.0.0.1", "[::1]"] {
        assert!(is_bare_loopback_host(h, lo), "{h}");
    }
    for h in [
        "localhost.evil.example",
        "127.0.0.2",
        "evil.example",
        "127.0.0.1:9",
    ] {
        assert!(!is_bare_loopback_host(h, lo), "{h}");
    }
    assert!(!is_bare_loopback_host(
        "127.0.0.1",
        "192.168.1.5:8787".parse().unwrap()
    ));
}

#[test]
fn embed_origins_are_plain_origins() {
    let c = parse(&[
        "--demo",
        "--embed-origin",
        "https://App.example.com/",
        "--embed-origin",
        "http://127.0.0.1:5173",
    ]);
    c.validate().unwrap();
    let c = c.into_config("127.0.0.1:9".parse().unwrap()).unwrap();
    assert_eq!(
        c.embed_origins,
        ["https://app.example.com", "http://127.0.0.1:5173"]
    );
    for bad in [
        "app.example.com",
        "https://a.example/path",
        "https://*.example.com",
        "https://a.example 'unsafe-inline'",
        "https://a.example;script-src *",
        "javascript://x",
        "https://",
    ] {
        assert!(
            parse(&["--demo", "--embed-origin", bad])
                .validate()
                .is_err(),
            "{bad}"
        );
    }
}
