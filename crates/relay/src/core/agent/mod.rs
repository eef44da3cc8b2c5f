//! Agent processes: how to launch one ([`AgentLauncher`]) and the child-process plumbing shared by
//! the real `claude` and the demo agent (stdin writer, NDJSON stdout reader, stderr tail, exit watch,
//! graceful shutdown).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::{mpsc, oneshot, watch};

use crate::core::proto::{DEFAULT_MAX_LINE_BYTES, FrameError, Line, NdjsonDecoder};
use crate::core::record::ExitInfo;
pub use crate::core::record::ProcId;
use crate::core::util::now_rfc3339;

/// After closing stdin, how long the agent gets to exit before SIGTERM.
pub const STDIN_CLOSE_GRACE: Duration = Duration::from_secs(5);
/// After SIGTERM, how long before SIGKILL.
pub const SIGTERM_GRACE: Duration = Duration::from_secs(30);
/// How much stderr is kept for the exit report.
pub const STDERR_TAIL_LINES: usize = 40;
pub const STDERR_TAIL_BYTES: usize = 4096;
/// Longest stderr line kept (the rest of the line is skipped, marked `…`).
pub const STDERR_LINE_BYTES: usize = 8192;

/// While an agent writes faster than one line every two of these, how long its stdout reader lets
/// lines gather in the pipe before the next read: a burst of stream deltas (thousands a second from
/// a fast model or a replaying agent) is read a millisecond's worth at a time instead of one wake-up
/// per line — measured by `examples/delta_cpu`, the relay's CPU per delta at 20,000/s. A line after
/// a pause is read at once, and the CLI's usual pace (tens of lines a second) is never held back.
pub const READ_GATHER: Duration = Duration::from_millis(1);

/// When the stdout reader waits before its next read (see [`READ_GATHER`]).
#[derive(Debug, Default)]
pub(crate) struct ReadPacer {
    last: Option<std::time::Instant>,
}

impl ReadPacer {
    /// After a read of `n` bytes into a buffer of `cap` at `now`: how long to wait before reading
    /// again. Nothing unless this read came within two windows of the last one (a burst); nothing
    /// either when the read filled the buffer (more is waiting: the pipe must drain or the agent
    /// blocks).
    pub(crate) fn after_read(
        &mut self,
        now: std::time::Instant,
        n: usize,
        cap: usize,
    ) -> Option<Duration> {
        let burst = self
            .last
            .is_some_and(|t| now.saturating_duration_since(t) < 2 * READ_GATHER);
        self.last = Some(now);
        (burst && n < cap).then_some(READ_GATHER)
    }
}

/// Reads the agent's stdout to its end and hands every line to `ev`, on a thread of its own with a
/// blocking descriptor. Not a runtime task: the runtime watches a pipe with edge-triggered epoll, and
/// every line the agent writes woke it even while the reader was letting a burst gather
/// ([`READ_GATHER`]); a thread that sleeps between reads is woken by nothing. It ends at EOF — when
/// the agent and its process group are gone — or on a read error.
fn read_stdout(mut pipe: impl std::io::Read, ev: &dyn AgentEvents) {
    let mut decoder = NdjsonDecoder::new(DEFAULT_MAX_LINE_BYTES);
    let mut buf = vec![0u8; 64 * 1024];
    let mut pacer = ReadPacer::default();
    let hand_over = |item: Result<Line, FrameError>| match item {
        Ok(line) => ev.on_line(&line.text),
        Err(e) => ev.on_undecodable(&e.to_string(), ""),
    };
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
            Ok(n) => {
                decoder.feed(&buf[..n]).into_iter().for_each(hand_over);
                let wait = pacer.after_read(std::time::Instant::now(), n, buf.len());
                if let Some(wait) = wait.or_else(|| ev.backlogged().then_some(READ_GATHER)) {
                    std::thread::sleep(wait);
                }
            }
        }
    }
    decoder.finish().into_iter().for_each(hand_over);
}

/// Makes the CLI keep file checkpoints in SDK mode (needed by `rewind_files`).
pub const CHECKPOINTING_ENV: &str = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING";

/// What a session needs started.
#[derive(Debug, Clone)]
pub struct SpawnSpec {
    pub session_id: String,
    pub cwd: PathBuf,
    pub model: Option<String>,
    pub permission_mode: Option<String>,
    /// Messages the stdin queue holds (--max-stdin-queue).
    pub stdin_queue: usize,
    /// `--resume <id>` [`--fork-session`] [`--resume-session-at <uuid>`].
    pub resume: Option<Resume>,
    /// `CLAUDE_CONFIG_DIR` for the agent: the --claude-config-dir the relay lists, when it is not the
    /// default (so a resumed session's transcript is found, and new ones land where they are listed).
    pub claude_config_dir: Option<PathBuf>,
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
    let mut args: Vec<String> = bridge_protocol::build::STREAM_JSON_FLAGS
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    if let Some(m) = &spec.model {
        args.extend(["--model".to_owned(), m.clone()]);
    }
    if let Some(p) = &spec.permission_mode {
        args.extend(["--permission-mode".to_owned(), p.clone()]);
    }
    if let Some(r) = &spec.resume {
        args.extend(r.flags());
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
        // File checkpoints, so `rewind_files` can restore files (the SDK's enableFileCheckpointing).
        if std::env::var_os(CHECKPOINTING_ENV).is_none() {
            cmd.env(CHECKPOINTING_ENV, "true");
        }
        if let Some(dir) = &spec.claude_config_dir {
            cmd.env("CLAUDE_CONFIG_DIR", dir);
        }
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
    /// Whether the lines already handed over are far from delivered (a subscriber is half its
    /// queue behind): the stdout reader then waits [`READ_GATHER`] before reading on, so an agent
    /// writing faster than the relay delivers is slowed through its pipe, at most to 64 KB a
    /// millisecond, instead of outrunning its live readers.
    fn backlogged(&self) -> bool {
        false
    }
}

/// Last lines of stderr, bounded in lines and bytes.
#[derive(Debug, Default)]
pub struct StderrTail {
    lines: VecDeque<String>,
    bytes: usize,
}

impl StderrTail {
    pub fn push(&mut self, line: &str) {
        let line = crate::core::util::truncate_utf8(line, STDERR_TAIL_BYTES).to_owned();
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

/// Splits stderr bytes into lines: any bytes (invalid UTF-8 is replaced), each line capped at
/// [`STDERR_LINE_BYTES`] (the rest skipped and marked `…`). Sans-IO: fed chunks split anywhere.
#[derive(Debug, Default)]
pub struct StderrLines {
    line: Vec<u8>,
    /// The current line passed the cap: skip to its end.
    overlong: bool,
}

impl StderrLines {
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut impl FnMut(String)) {
        while !bytes.is_empty() {
            let (part, end) = match bytes.iter().position(|&b| b == b'\n') {
                Some(i) => (&bytes[..i], Some(i + 1)),
                None => (bytes, None),
            };
            let room = STDERR_LINE_BYTES.saturating_sub(self.line.len());
            self.line.extend_from_slice(&part[..part.len().min(room)]);
            self.overlong |= part.len() > room;
            match end {
                Some(i) => {
                    out(self.take());
                    bytes = &bytes[i..];
                }
                None => break,
            }
        }
    }

    /// The last line if it had no newline.
    pub fn finish(&mut self) -> Option<String> {
        (!self.line.is_empty() || self.overlong).then(|| self.take())
    }

    fn take(&mut self) -> String {
        let mut bytes = std::mem::take(&mut self.line);
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        let mut s = String::from_utf8_lossy(&bytes).into_owned();
        if std::mem::take(&mut self.overlong) {
            s.push('…');
        }
        s
    }
}

impl ProcId {
    /// The process `pid` as it runs now (`None`: gone, or no /proc).
    pub fn of(pid: u32) -> Option<ProcId> {
        let (_, start_time, _) = proc_stat(pid)?;
        Some(ProcId { pid, start_time })
    }
}

/// `(pgrp, start_time, state)` from `/proc/<pid>/stat`.
fn proc_stat(pid: u32) -> Option<(u32, u64, char)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp …`: comm may hold spaces and parentheses, so split after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // fields[0] is field 3 (state); field N is fields[N - 3].
    let state = fields.first()?.chars().next()?;
    let pgrp = fields.get(2)?.parse().ok()?;
    let start_time = fields.get(19)?.parse().ok()?;
    Some((pgrp, start_time, state))
}

/// Live (non-zombie) processes in process group `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| proc_stat(pid).is_some_and(|(pgrp, _, state)| pgrp == pgid && state != 'Z'))
        .collect()
}

/// `kill -<sig> -- -<pgid>`. `unsafe` is forbidden in this workspace, so no libc::kill: kill(1).
fn signal_group(pgid: u32, sig: &str) {
    // Only a group with members: a pgid cannot be reused while any member lives, so this never
    // reaches another program's group.
    if pgid <= 1 || group_members(pgid).is_empty() {
        return;
    }
    let status = std::process::Command::new("kill")
        .arg(format!("-{sig}"))
        .arg("--")
        .arg(format!("-{pgid}"))
        .stderr(Stdio::null())
        .status();
    if let Err(e) = status {
        tracing::warn!(pgid, error = %e, "cannot run kill -{sig}");
    }
}

/// Stops what is left of an agent's process group (background processes its tools started):
/// SIGTERM to the group, up to `grace` for it to empty, then SIGKILL to the group.
pub async fn stop_group(pgid: u32, grace: Duration) {
    if group_members(pgid).is_empty() {
        return;
    }
    tracing::info!(pgid, "stopping the agent's process group");
    signal_group(pgid, "TERM");
    let deadline = tokio::time::Instant::now() + grace;
    while tokio::time::Instant::now() < deadline {
        if group_members(pgid).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tracing::warn!(
        pgid,
        "the agent's process group ignored SIGTERM; sending SIGKILL"
    );
    signal_group(pgid, "KILL");
}

/// At startup, for an agent a previous run of the relay left behind (it crashed): stops its process
/// group, if it is still that process (same start time) or its leader is gone and members remain.
/// A pid now held by another process is never signalled.
pub fn stop_leftover(agent: ProcId, grace: Duration) -> bool {
    match proc_stat(agent.pid) {
        Some((_, start, _)) if start != agent.start_time => return false,
        _ => {}
    }
    if group_members(agent.pid).is_empty() {
        return false;
    }
    tracing::warn!(
        pid = agent.pid,
        "stopping an agent left running by a previous relay"
    );
    signal_group(agent.pid, "TERM");
    let deadline = std::time::Instant::now() + grace;
    while std::time::Instant::now() < deadline {
        if group_members(agent.pid).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    signal_group(agent.pid, "KILL");
    true
}

/// After a leftover or an exit: how long the rest of the group gets between SIGTERM and SIGKILL.
pub const GROUP_GRACE: Duration = Duration::from_secs(2);

/// Handle for stopping a running agent.
pub struct AgentControl {
    pub pid: Option<u32>,
    /// `pid` with its start time, recorded at spawn (persisted so a restart can find it).
    pub proc_id: Option<ProcId>,
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
            proc_id: None,
            kill_tx: Mutex::new(None),
            exited: rx,
            _detached: Some(tx),
        })
    }

    /// An in-process agent (a control made by [`Self::detached`]) is done: waiters wake, and the
    /// session no longer counts as running.
    pub fn mark_exited(&self) {
        if let Some(tx) = &self._detached {
            let _ = tx.send(true);
        }
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
                "agent still running after stdin closed; sending SIGTERM to its process group"
            );
            // The agent leads its own group (process_group(0)): the tools it started go too.
            signal_group(pid, "TERM");
        }
        if self.wait_exit(term_grace).await {
            return;
        }
        tracing::warn!(pid = ?self.pid, "agent ignored SIGTERM; sending SIGKILL to its process group");
        if let Some(pid) = self.pid {
            signal_group(pid, "KILL");
        }
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

/// A started agent: its stdin queue (bounded: see [`SpawnSpec::stdin_queue`]) and its control handle.
pub struct AgentHandle {
    pub stdin: mpsc::Sender<Bytes>,
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
    // A blocking descriptor: read by a thread, so a burst can gather in the pipe without waking the
    // runtime (see [`read_stdout`]).
    let stdout = child
        .stdout
        .take()
        .expect("stdout is piped")
        .into_owned_fd()?;
    let stderr = child.stderr.take().expect("stderr is piped");

    // stdin writer: one task, lines in order; dropping every sender closes stdin.
    let (stdin_tx, mut stdin_rx) = mpsc::channel::<Bytes>(spec.stdin_queue.max(1));
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

    // stdout reader: NDJSON decoder, every line to the session, on a thread of its own (see
    // [`read_stdout`]); `stdout_done` closes when it has read to the end.
    let (done_tx, stdout_done) = oneshot::channel::<()>();
    let ev = events.clone();
    let runtime = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("agent-stdout".into())
        .spawn(move || {
            let _runtime = runtime.enter();
            read_stdout(std::fs::File::from(stdout), &*ev);
            drop(done_tx);
        })?;

    // stderr: to the log and the tail buffer.
    let tail = Arc::new(Mutex::new(StderrTail::default()));
    let tail_w = tail.clone();
    let sid = session_id.clone();
    // Read to the end whatever the bytes are: a reader that stopped would close the pipe, and the
    // agent's next write to stderr would kill it (SIGPIPE).
    let stderr_task = tokio::spawn(async move {
        let mut stderr = stderr;
        let mut lines = StderrLines::default();
        let mut buf = vec![0u8; 8192];
        let mut emit = |line: String| {
            tracing::debug!(target: "bridge_relay::agent_stderr", session = %sid, "{line}");
            tail_w.lock().unwrap_or_else(|p| p.into_inner()).push(&line);
        };
        loop {
            match stderr.read(&mut buf).await {
                Ok(0) => break,
                Ok(n) => lines.feed(&buf[..n], &mut emit),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        if let Some(last) = lines.finish() {
            emit(last);
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
        // Whatever the agent started in the background dies with it (same process group).
        if let Some(pgid) = pid {
            stop_group(pgid, GROUP_GRACE).await;
        }
        // Drain what the agent wrote before dying, but report within a second even if a grandchild
        // keeps the pipes open.
        let _ = tokio::time::timeout(Duration::from_millis(600), stdout_done).await;
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
            proc_id: pid.and_then(ProcId::of),
            kill_tx: Mutex::new(Some(kill_tx)),
            exited: exited_rx,
            _detached: None,
        }),
    })
}

#[cfg(test)]
mod tests;

/// What a relay session must be started with to continue a CLI session (the agent's arguments).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    pub session_id: String,
    /// `--fork-session`: a new session id, the original transcript stays as it is.
    pub fork: bool,
    /// `--resume-session-at`: keep the conversation up to and including this message.
    pub at: Option<String>,
}

impl Resume {
    /// The CLI's flags for it.
    pub fn flags(&self) -> Vec<String> {
        let mut v = vec!["--resume".to_owned(), self.session_id.clone()];
        if self.fork {
            v.push("--fork-session".to_owned());
        }
        if let Some(at) = &self.at {
            v.extend(["--resume-session-at".to_owned(), at.clone()]);
        }
        v
    }
}
