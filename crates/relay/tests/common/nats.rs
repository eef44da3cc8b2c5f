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
    port: u16,
    store: tempfile::TempDir,
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

/// A loopback port free right now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl NatsServer {
    /// The server `child` just started on `port` with `store`, once it accepts connections.
    fn listening(child: Child, port: u16, store: tempfile::TempDir) -> NatsServer {
        let mut server = NatsServer {
            child,
            url: format!("nats://127.0.0.1:{port}"),
            port,
            store,
        };
        server.wait_listening();
        server
    }

    pub fn start() -> NatsServer {
        let store = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = Self::spawn(port, store.path());
        Self::listening(child, port, store)
    }

    /// A server with `config` (nats-server's configuration language; `{port}` and `{store}` are
    /// filled in): users, accounts and permissions, as the README's *NATS accounts* gives them.
    pub fn with_config(config: &str) -> NatsServer {
        let store = tempfile::tempdir().unwrap();
        let port = free_port();
        let conf = store.path().join("nats.conf");
        let js = store.path().join("js");
        std::fs::write(
            &conf,
            config
                .replace("{port}", &port.to_string())
                .replace("{store}", &js.display().to_string()),
        )
        .unwrap();
        let bin = binary();
        let child = Command::new(&bin)
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        Self::listening(child, port, store)
    }

    /// Kills the server (what an outage looks like to the relays).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again on the same port with the same store.
    pub fn restart(&mut self) {
        self.stop();
        self.child = Self::spawn(self.port, self.store.path());
        self.wait_listening();
    }

    fn spawn(port: u16, store: &std::path::Path) -> Child {
        let bin = binary();
        Command::new(&bin)
            .args(["-a", "127.0.0.1", "-p", &port.to_string(), "-js", "-sd"])
            .arg(store)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()))
    }

    fn wait_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("nats-server exited at start: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "nats-server did not listen on {} within 10 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // Something listens: ours, unless another process took the port while it was free (a
        // restart then finds it in use and exits).
        std::thread::sleep(Duration::from_millis(100));
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!(
                "nats-server exited at start ({status}): port {} was taken while it was down",
                self.port
            );
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
