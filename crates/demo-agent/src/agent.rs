//! The agent engine: reads client frames from a channel, plays scenario turns, writes CLI frames.

mod control;
mod models;
mod output;
mod permission;
mod result;
mod stream;
mod tool_run;
mod turn;

use std::collections::VecDeque;
use std::io::{self, BufRead, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

use crate::AgentOptions;
use crate::scenario::{Condition, Scenario};
use crate::tools::Rule;
use serde_json::{Map, Value, json};

pub use control::describe_images;
use models::new_uuid;
pub use models::{
    DEMO_VERSION, MODELS, ModelDef, PERMISSION_MODES, cost_usd, normalize_mode, resolve_model,
};

/// What the stdin reader thread hands to the engine.
pub(crate) enum Inbound {
    Frame(Value),
    Malformed(String),
    Eof,
}

/// Reads NDJSON lines from `input` until EOF (or a read error), sending each to `tx`.
pub(crate) fn read_loop(mut input: impl BufRead, tx: Sender<Inbound>) {
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf);
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                let msg = match serde_json::from_str::<Value>(line) {
                    Ok(v) if v.is_object() => Inbound::Frame(v),
                    Ok(_) => Inbound::Malformed("not a JSON object".into()),
                    Err(e) => Inbound::Malformed(e.to_string()),
                };
                if tx.send(msg).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let _ = tx.send(Inbound::Eof);
}

/// Why a turn stopped early.
pub(crate) enum Abort {
    /// `interrupt` control request while streaming (or between steps).
    Interrupted,
    /// Stopped at a tool: interrupted prompt, or a deny with `interrupt: true`.
    InterruptedTools,
    /// stdin closed while the agent needed an answer.
    StdinClosed,
    /// Output failed, or the scenario crashed the agent.
    Fatal(anyhow::Error),
}

impl From<io::Error> for Abort {
    fn from(e: io::Error) -> Self {
        Abort::Fatal(e.into())
    }
}

type Flow<T> = Result<T, Abort>;

/// Something the running turn has to react to.
enum Event {
    Interrupt,
    Response { request_id: String, response: Value },
    Eof,
}

/// A `user` message waiting for its turn.
struct UserMsg {
    uuid: Option<String>,
    message: Value,
    parent_tool_use_id: Value,
    text: String,
    /// Its image blocks, described ("image/png, 12 KB").
    images: Vec<String>,
}

/// The API message being streamed.
struct OpenMsg {
    id: String,
    request_id: String,
    next_index: u32,
    out_chars: usize,
    input_tokens: u64,
    /// The last block was a tool_use: the next content block starts a new message.
    after_tool: bool,
    /// Allowed tools to run after `message_stop`.
    to_run: Vec<ToRun>,
    /// message_delta/message_stop already written.
    closed: bool,
}

struct ToRun {
    id: String,
    name: String,
    input: Value,
    output: Option<String>,
    is_error: bool,
    run_ms: u64,
    elicit: Option<Value>,
    source: &'static str,
    reason_type: Option<&'static str>,
}

/// A block being streamed (for interrupt clean-up).
struct OpenBlock {
    index: u32,
    kind: &'static str,
    partial: String,
}

struct Turn {
    uuids: Vec<String>,
    start: Instant,
    waited: Duration,
    context_chars: usize,
    input_tokens: u64,
    output_tokens: u64,
    thinking_tokens: u64,
    num_msgs: u32,
    denials: Vec<Value>,
    last_text: String,
    last_stop_reason: Value,
    last_outcome: Option<Condition>,
    last_tool_result: String,
    msg: Option<OpenMsg>,
    block: Option<OpenBlock>,
    first_assistant_sent: bool,
    model: String,
    ttft_ms: Option<u64>,
    message_ids: Vec<String>,
}

impl Turn {
    fn new(uuids: Vec<String>, model: String, context_chars: usize) -> Self {
        Turn {
            uuids,
            start: Instant::now(),
            waited: Duration::ZERO,
            context_chars,
            input_tokens: 0,
            output_tokens: 0,
            thinking_tokens: 0,
            num_msgs: 0,
            denials: Vec::new(),
            last_text: String::new(),
            last_stop_reason: Value::Null,
            last_outcome: None,
            last_tool_result: String::new(),
            msg: None,
            block: None,
            first_assistant_sent: false,
            model,
            ttft_ms: None,
            message_ids: Vec::new(),
        }
    }

    fn uuid_fields(&self, v: &mut Map<String, Value>, single: bool) {
        if let Some(first) = self.uuids.first() {
            if single {
                v.insert("user_message_uuid".into(), json!(first));
            }
            v.insert("user_message_uuids".into(), json!(self.uuids));
        }
    }
}

/// The agent: session state plus I/O.
pub(crate) struct Agent<W: Write> {
    out: W,
    rx: Receiver<Inbound>,
    scenario: Scenario,
    opts: AgentOptions,
    session_id: String,
    model: String,
    mode: String,
    rules: Vec<Rule>,
    queue: VecDeque<UserMsg>,
    stdin_closed: bool,
    in_turn: bool,
    result_index: u64,
    /// uuid of the last `assistant` / `user` frame written.
    last_message_uuid: Option<String>,
    /// Cost of every turn so far: like the real CLI, `result.total_cost_usd` is the process's running total.
    total_cost_usd: f64,
    /// The `can_use_tool` frame awaiting an answer (reported by a later `initialize`).
    pending_permission: Option<Value>,
    /// Context usage, MCP status and the task list (see [`crate::info`]).
    info: crate::info::Info,
}

impl<W: Write> Agent<W> {
    pub(crate) fn new(
        scenario: Scenario,
        opts: AgentOptions,
        rx: Receiver<Inbound>,
        out: W,
    ) -> Self {
        let session_id = opts.session_id.clone().unwrap_or_else(new_uuid);
        let model = resolve_model(opts.model.as_deref());
        let mode = normalize_mode(&opts.permission_mode)
            .unwrap_or("default")
            .to_owned();
        Agent {
            out,
            rx,
            scenario,
            opts,
            session_id,
            model,
            mode,
            rules: Vec::new(),
            queue: VecDeque::new(),
            stdin_closed: false,
            in_turn: false,
            result_index: 0,
            last_message_uuid: None,
            total_cost_usd: 0.0,
            pending_permission: None,
            info: crate::info::Info::default(),
        }
    }

    /// Serves until stdin closes and every queued turn is done.
    pub(crate) fn serve(mut self) -> anyhow::Result<()> {
        loop {
            if !self.queue.is_empty() {
                let batch: Vec<UserMsg> = self.queue.drain(..).collect();
                match self.run_turn(batch) {
                    Ok(()) => {}
                    Err(Abort::Fatal(e)) => return Err(e),
                    // run_turn handles these itself; nothing left to do.
                    Err(_) => {}
                }
                continue;
            }
            if self.stdin_closed {
                break;
            }
            let msg = match self.rx.recv() {
                Ok(m) => m,
                Err(_) => Inbound::Eof,
            };
            match self.handle(msg) {
                Ok(_) => {}
                Err(Abort::Fatal(e)) => return Err(e),
                Err(_) => {}
            }
        }
        self.out.flush()?;
        Ok(())
    }

    /// Waits `ms` (scaled by the speed factor) while answering control traffic. Returns early on
    /// interrupt. With speed 0 it only drains what is already waiting.
    fn pause(&mut self, ms: u64) -> Flow<()> {
        let dur = Duration::from_secs_f64((ms as f64 / 1000.0) * self.opts.speed.max(0.0));
        let deadline = Instant::now() + dur;
        loop {
            if self.stdin_closed {
                let now = Instant::now();
                if deadline > now {
                    std::thread::sleep(deadline - now);
                }
                return Ok(());
            }
            let now = Instant::now();
            let msg = if deadline <= now {
                match self.rx.try_recv() {
                    Ok(m) => m,
                    Err(TryRecvError::Empty) => return Ok(()),
                    Err(TryRecvError::Disconnected) => Inbound::Eof,
                }
            } else {
                match self.rx.recv_timeout(deadline - now) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => return Ok(()),
                    Err(RecvTimeoutError::Disconnected) => Inbound::Eof,
                }
            };
            if let Some(Event::Interrupt) = self.handle(msg)? {
                return Err(Abort::Interrupted);
            }
        }
    }

    /// Blocks until the answer to `request_id` arrives.
    fn await_answer(&mut self, request_id: &str) -> Flow<Value> {
        loop {
            if self.stdin_closed {
                return Err(Abort::StdinClosed);
            }
            let msg = self.rx.recv().unwrap_or(Inbound::Eof);
            match self.handle(msg)? {
                Some(Event::Interrupt) => return Err(Abort::Interrupted),
                Some(Event::Eof) => return Err(Abort::StdinClosed),
                Some(Event::Response {
                    request_id: rid,
                    response,
                }) if rid == request_id => return Ok(response),
                _ => {}
            }
        }
    }
}
