//! Agent processes: how to launch one ([`AgentLauncher`]) and the child-process plumbing shared by
//! the real `claude` and the demo agent (stdin writer, NDJSON stdout reader, stderr tail, exit watch,
//! graceful shutdown).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot, watch};

use crate::proto::{DEFAULT_MAX_LINE_BYTES, NdjsonDecoder};
use crate::session::ExitInfo;
use crate::util::now_rfc3339;

/// After closing stdin, how long the agent gets to exit before SIGTERM.
pub const STDIN_CLOSE_GRACE: Duration = Duration::from_secs(5);
/// After SIGTERM, how long before SIGKILL.
pub const SIGTERM_GRACE: Duration = Duration::from_secs(30);
/// How much stderr is kept for the exit report.
pub const STDERR_TAIL_LINES: usize = 40;
pub const STDERR_TAIL_BYTES: usize = 4096;

/// What a session needs started.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    pub session_id: String,
    pub cwd: PathBuf,
    pub model: Option<String>,
    pub permission_mode: Option<String>,
}

/// Builds the command for an agent. The relay handles the process the same way whatever it is, so
/// tests point this at the demo agent (or a script) and exercise the real child-process path.
pub trait AgentLauncher: Send + Sync + 'static {
    fn command(&self, spec: &SpawnSpec) -> Command;
    /// For logs and errors: the program being run.
    fn describe(&self) -> String;
}

/// The stream-json flags every agent gets (the CLI's SDK mode), then `--model`, `--permission-mode`.
pub fn claude_flags(spec: &SpawnSpec) -> Vec<String> {
    let mut args: Vec<String> = [
        "--output-format",
        "stream-json",
        "--verbose",
        "--input-format",
        "stream-json",
        "--permission-prompt-tool",
        "stdio",
        "--include-partial-messages",
        "--replay-user-messages",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    if let Some(m) = &spec.model {
        args.extend(["--model".to_owned(), m.clone()]);
    }
    if let Some(p) = &spec.permission_mode {
        args.extend(["--permission-mode".to_owned(), p.clone()]);
    }
    args
}

/// `program [leading…] <claude flags> [extra…]`.
#[derive(Debug, Clone)]
pub struct CommandLauncher {
    pub program: PathBuf,
    pub leading: Vec<String>,
    pub extra: Vec<String>,
}

impl CommandLauncher {
    /// The real CLI (or anything speaking its protocol).
    pub fn claude(program: impl Into<PathBuf>, extra: Vec<String>) -> Self {
        Self {
            program: program.into(),
            leading: Vec::new(),
            extra,
        }
    }

    /// The relay binary itself as the demo agent: `<exe> demo-agent [--scenario S] <flags>`.
    pub fn demo(exe: impl Into<PathBuf>, scenario: Option<String>, extra: Vec<String>) -> Self {
        let mut leading = vec!["demo-agent".to_owned()];
        if let Some(s) = scenario {
            leading.extend(["--scenario".to_owned(), s]);
        }
        Self {
            program: exe.into(),
            leading,
            extra,
        }
    }
}

impl AgentLauncher for CommandLauncher {
    fn command(&self, spec: &SpawnSpec) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.leading)
            .args(claude_flags(spec))
            .args(&self.extra);
        cmd
    }
    fn describe(&self) -> String {
        let mut s = self.program.display().to_string();
        for a in &self.leading {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// Callbacks from the process to whoever owns it (the session).
pub trait AgentEvents: Send + Sync + 'static {
    /// One complete stdout line (without its terminator).
    fn on_line(&self, text: &str);
    /// A stdout line that could not be framed (too long, invalid UTF-8).
    fn on_undecodable(&self, error: &str, raw: &str);
    /// The process is gone; stdout has been drained (or given up on after a short wait).
    fn on_exit(&self, exit: ExitInfo);
}

/// Last lines of stderr, bounded in lines and bytes.
#[derive(Debug, Default)]
pub struct StderrTail {
    lines: VecDeque<String>,
    bytes: usize,
}

impl StderrTail {
    pub fn push(&mut self, line: &str) {
        let line = crate::util::truncate_utf8(line, STDERR_TAIL_BYTES).to_owned();
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > STDERR_TAIL_LINES || self.bytes > STDERR_TAIL_BYTES {
            match self.lines.pop_front() {
                Some(l) => self.bytes -= l.len(),
                None => break,
            }
        }
    }
    pub fn text(&self) -> String {
        self.lines
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Handle for stopping a running agent.
pub struct AgentControl {
    pub pid: Option<u32>,
    kill_tx: Mutex<Option<oneshot::Sender<()>>>,
    exited: watch::Receiver<bool>,
    /// Keeps `exited` open for detached controls.
    _detached: Option<watch::Sender<bool>>,
}

impl AgentControl {
    /// A control for an agent the relay did not spawn (tests, in-process agents): never exits by itself.
    pub fn detached() -> Arc<AgentControl> {
        let (tx, rx) = watch::channel(false);
        Arc::new(AgentControl {
            pid: None,
            kill_tx: Mutex::new(None),
            exited: rx,
            _detached: Some(tx),
        })
    }

    pub fn has_exited(&self) -> bool {
        *self.exited.borrow()
    }

    /// Waits up to `d` for the process to exit; `true` if it did.
    pub async fn wait_exit(&self, d: Duration) -> bool {
        let mut rx = self.exited.clone();
        tokio::time::timeout(d, rx.wait_for(|e| *e)).await.is_ok()
    }

    /// The second half of a graceful shutdown (the caller has closed stdin): wait, SIGTERM, wait, SIGKILL.
    pub async fn terminate(&self, stdin_grace: Duration, term_grace: Duration) {
        if self.wait_exit(stdin_grace).await {
            return;
        }
        if let Some(pid) = self.pid {
            tracing::info!(
                pid,
                "agent still running after stdin closed; sending SIGTERM"
            );
            send_sigterm(pid).await;
        }
        if self.wait_exit(term_grace).await {
            return;
        }
        tracing::warn!(pid = ?self.pid, "agent ignored SIGTERM; sending SIGKILL");
        self.kill();
        self.wait_exit(Duration::from_secs(5)).await;
    }

    /// SIGKILL now.
    pub fn kill(&self) {
        if let Some(tx) = self
            .kill_tx
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let _ = tx.send(());
        }
    }
}

async fn send_sigterm(pid: u32) {
    // `unsafe` is forbidden in this workspace, so no libc::kill: use the kill(1) utility.
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status()
        .await;
    if let Err(e) = status {
        tracing::warn!(pid, error = %e, "cannot run kill -TERM");
    }
}

/// A started agent: its stdin queue and its control handle.
pub struct AgentHandle {
    pub stdin: mpsc::UnboundedSender<Bytes>,
    pub control: Arc<AgentControl>,
}

/// Starts the agent and wires its pipes to `events`. The child inherits the relay's environment
/// (minus `BRIDGE_RELAY_TOKEN`), runs in its own process group and in `spec.cwd`.
pub fn spawn(
    launcher: &dyn AgentLauncher,
    spec: &SpawnSpec,
    events: Arc<dyn AgentEvents>,
) -> std::io::Result<AgentHandle> {
    let mut cmd = launcher.command(spec);
    cmd.current_dir(&spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("BRIDGE_RELAY_TOKEN")
        .kill_on_drop(true)
        .process_group(0);
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let session_id = spec.session_id.clone();
    tracing::info!(session = %session_id, pid, program = %launcher.describe(), "agent started");

    let mut stdin = child.stdin.take().expect("stdin is piped");
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");

    // stdin writer: one task, lines in order; dropping every sender closes stdin.
    let (stdin_tx, mut stdin_rx) = mpsc::unbounded_channel::<Bytes>();
    let sid = session_id.clone();
    tokio::spawn(async move {
        while let Some(line) = stdin_rx.recv().await {
            if let Err(e) = async {
                stdin.write_all(&line).await?;
                stdin.flush().await
            }
            .await
            {
                tracing::debug!(session = %sid, error = %e, "agent stdin closed");
                break;
            }
        }
        drop(stdin);
    });

    // stdout reader: NDJSON decoder, every line to the session.
    let ev = events.clone();
    let stdout_task = tokio::spawn(async move {
        let mut decoder = NdjsonDecoder::new(DEFAULT_MAX_LINE_BYTES);
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match stdout.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    for item in decoder.feed(&buf[..n]) {
                        match item {
                            Ok(line) => ev.on_line(&line.text),
                            Err(e) => ev.on_undecodable(&e.to_string(), ""),
                        }
                    }
                }
            }
        }
        match decoder.finish() {
            Some(Ok(line)) => ev.on_line(&line.text),
            Some(Err(e)) => ev.on_undecodable(&e.to_string(), ""),
            None => {}
        }
    });

    // stderr: to the log and the tail buffer.
    let tail = Arc::new(Mutex::new(StderrTail::default()));
    let tail_w = tail.clone();
    let sid = session_id.clone();
    let stderr_task = tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::info!(target: "bridge_relay::agent_stderr", session = %sid, "{line}");
            tail_w.lock().unwrap_or_else(|p| p.into_inner()).push(&line);
        }
    });

    // exit watcher.
    let (kill_tx, kill_rx) = oneshot::channel::<()>();
    let (exited_tx, exited_rx) = watch::channel(false);
    tokio::spawn(async move {
        let status = tokio::select! {
            s = child.wait() => s,
            _ = kill_rx => {
                let _ = child.start_kill();
                child.wait().await
            }
        };
        // Drain what the agent wrote before dying, but report within a second even if a grandchild
        // keeps the pipes open.
        let _ = tokio::time::timeout(Duration::from_millis(600), stdout_task).await;
        let _ = tokio::time::timeout(Duration::from_millis(200), stderr_task).await;
        let (exit_code, signal) = match &status {
            Ok(s) => {
                use std::os::unix::process::ExitStatusExt as _;
                (s.code(), s.signal())
            }
            Err(_) => (None, None),
        };
        let stderr_tail = tail.lock().unwrap_or_else(|p| p.into_inner()).text();
        tracing::info!(session = %session_id, ?exit_code, ?signal, "agent exited");
        events.on_exit(ExitInfo {
            exit_code,
            signal,
            stderr_tail,
            at: now_rfc3339(),
            reason: None,
        });
        let _ = exited_tx.send(true);
    });

    Ok(AgentHandle {
        stdin: stdin_tx,
        control: Arc::new(AgentControl {
            pid,
            kill_tx: Mutex::new(Some(kill_tx)),
            exited: exited_rx,
            _detached: None,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_is_bounded() {
        let mut t = StderrTail::default();
        for i in 0..100 {
            t.push(&format!("line {i}"));
        }
        let text = t.text();
        assert!(text.ends_with("line 99"));
        assert!(!text.contains("line 59\n"));
        assert_eq!(text.lines().count(), STDERR_TAIL_LINES);
        t.push(&"x".repeat(10_000));
        assert!(t.text().len() <= STDERR_TAIL_BYTES);
    }

    #[test]
    fn flags_match_the_sdk_invocation() {
        let spec = SpawnSpec {
            session_id: "s".into(),
            cwd: ".".into(),
            model: Some("m".into()),
            permission_mode: Some("plan".into()),
        };
        let f = claude_flags(&spec).join(" ");
        assert_eq!(
            f,
            "--output-format stream-json --verbose --input-format stream-json --permission-prompt-tool stdio \
             --include-partial-messages --replay-user-messages --model m --permission-mode plan"
        );
        let l = CommandLauncher::demo("/x/relay", Some("edit".into()), vec!["--extra".into()]);
        let cmd = l.command(&spec);
        let args: Vec<_> = cmd
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(&args[..3], ["demo-agent", "--scenario", "edit"]);
        assert_eq!(args.last().unwrap(), "--extra");
    }
}
