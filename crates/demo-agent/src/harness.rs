//! Drive the agent in-process (no child process): stdin is a channel, stdout lines come back on another.
//! Used by this crate's tests; handy for other crates' tests too.

use std::io::{self, BufReader, Read, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{AgentOptions, Scenario, run};

/// A `Read` fed by a channel of byte chunks; EOF when every sender is gone.
pub struct ChannelReader {
    rx: Receiver<Vec<u8>>,
    buf: Vec<u8>,
    pos: usize,
}

impl ChannelReader {
    pub fn new(rx: Receiver<Vec<u8>>) -> Self {
        ChannelReader {
            rx,
            buf: Vec::new(),
            pos: 0,
        }
    }
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos >= self.buf.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    self.buf = chunk;
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// A `Write` that sends each complete line (without its `\n`) to a channel.
pub struct LineSender {
    tx: Sender<String>,
    buf: Vec<u8>,
}

impl LineSender {
    pub fn new(tx: Sender<String>) -> Self {
        LineSender {
            tx,
            buf: Vec::new(),
        }
    }
}

impl Write for LineSender {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        while let Some(nl) = self.buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=nl).collect();
            let line = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
            self.tx.send(line).map_err(|_| {
                io::Error::new(io::ErrorKind::BrokenPipe, "output receiver dropped")
            })?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A running in-process agent.
pub struct InProcess {
    stdin: Option<Sender<Vec<u8>>>,
    stdout: Receiver<String>,
    handle: Option<JoinHandle<anyhow::Result<()>>>,
    /// Every line received so far, in order.
    pub lines: Vec<String>,
}

impl InProcess {
    /// Starts `run(scenario, opts, …)` on a thread.
    pub fn start(scenario: Scenario, opts: AgentOptions) -> Self {
        let (in_tx, in_rx) = channel::<Vec<u8>>();
        let (out_tx, out_rx) = channel::<String>();
        let handle = std::thread::spawn(move || {
            run(
                scenario,
                opts,
                BufReader::new(ChannelReader::new(in_rx)),
                LineSender::new(out_tx),
            )
        });
        InProcess {
            stdin: Some(in_tx),
            stdout: out_rx,
            handle: Some(handle),
            lines: Vec::new(),
        }
    }

    /// Writes one frame (plus `\n`) to the agent's stdin.
    pub fn send(&self, frame: &Value) {
        self.send_raw(&format!("{frame}\n"));
    }

    /// Writes raw text to the agent's stdin.
    pub fn send_raw(&self, text: &str) {
        if let Some(tx) = &self.stdin {
            let _ = tx.send(text.as_bytes().to_vec());
        }
    }

    /// Closes the agent's stdin (EOF).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next stdout line, parsed; `None` on timeout or when the agent has finished.
    pub fn next(&mut self, timeout: Duration) -> Option<Value> {
        match self.stdout.recv_timeout(timeout) {
            Ok(line) => {
                let v = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("agent wrote invalid JSON ({e}): {line}"));
                self.lines.push(line);
                Some(v)
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Reads frames until one satisfies `pred`; returns it and everything read before it.
    /// Panics (naming what was seen) if none comes within `timeout`.
    pub fn until(
        &mut self,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> (Value, Vec<Value>) {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left) {
                Some(v) if pred(&v) => return (v, seen),
                Some(v) => seen.push(v),
                None => panic!(
                    "no matching frame within {timeout:?}; saw {} frames: {:?}",
                    seen.len(),
                    seen.iter().map(kind).collect::<Vec<_>>()
                ),
            }
        }
    }

    /// Closes stdin, collects the remaining output and joins the agent thread.
    pub fn finish(mut self, timeout: Duration) -> (anyhow::Result<()>, Vec<Value>) {
        self.close_stdin();
        let deadline = Instant::now() + timeout;
        let mut rest = Vec::new();
        while let Some(v) = self.next(deadline.saturating_duration_since(Instant::now())) {
            rest.push(v);
        }
        let handle = self.handle.take().expect("not joined yet");
        let res = if handle.is_finished() || Instant::now() < deadline {
            handle
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("agent thread panicked")))
        } else {
            Err(anyhow::anyhow!("agent did not finish within {timeout:?}"))
        };
        (res, rest)
    }
}

/// A short description of a frame for assertions and messages: `type[/subtype|/event type|/state]`.
pub fn kind(v: &Value) -> String {
    let t = v.get("type").and_then(Value::as_str).unwrap_or("?");
    let sub = match t {
        "system" => v.get("subtype").and_then(Value::as_str),
        "stream_event" => v.pointer("/event/type").and_then(Value::as_str),
        "control_request" => v.pointer("/request/subtype").and_then(Value::as_str),
        "control_response" => v.pointer("/response/subtype").and_then(Value::as_str),
        "command_lifecycle" => v.get("state").and_then(Value::as_str),
        "result" => v.get("subtype").and_then(Value::as_str),
        _ => None,
    };
    match sub {
        Some(s) => format!("{t}/{s}"),
        None => t.to_owned(),
    }
}
