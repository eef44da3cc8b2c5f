//! A NATS server with JetStream for the scale-out tests: `nats-server` from PATH (or
//! `NATS_SERVER_BIN`) on a free loopback port with a temporary store. Missing, it fails the test
//! and says how to install it; it is never skipped.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct NatsServer {
    child: Child,
    pub url: String,
    _store: tempfile::TempDir,
}

fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("NATS_SERVER_BIN").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path).chain(["/usr/sbin".into(), "/usr/local/sbin".into()]) {
        let p = dir.join("nats-server");
        if p.is_file() {
            return p;
        }
    }
    panic!(
        "nats-server (with JetStream) is not installed: the scale-out tests need it. Install it with \
         `scripts/setup.sh --test` (Debian's nats-server), or point NATS_SERVER_BIN at one"
    );
}

impl NatsServer {
    pub fn start() -> NatsServer {
        let bin = binary();
        let store = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(&bin)
            .args(["-a", "127.0.0.1", "-p", &port.to_string(), "-js", "-sd"])
            .arg(store.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let mut server = NatsServer {
            child,
            url: format!("nats://127.0.0.1:{port}"),
            _store: store,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("{} exited at start: {status}", bin.display());
            }
            assert!(
                Instant::now() < deadline,
                "nats-server did not listen on {port} within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
