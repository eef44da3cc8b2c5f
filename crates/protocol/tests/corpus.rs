//! Golden corpus: the real CLI 2.1.332 captures (the shared ones and our own `bridge-capture-*`) plus the hand-made lines under `tests/fixtures/`.
//!
//! * every record parses to a known variant (unless preceded by `## expect: unknown`) and
//!   re-serializes to the same `serde_json::Value`;
//! * the corpus covers every type, subtype, block, event, delta and permission update modelled;
//! * every malformed line fails with an error containing its `## expect-error:` text and quoting
//!   the line;
//! * `tests/fixtures/handmade/kinds.golden` lists the classification of every record
//!   (`UPDATE_GOLDEN=1 cargo test -p bridge-protocol --test integration corpus` regenerates it).
//!
//! Fixtures are embedded with `include_str!`, so the same tests run in the browser.

use std::collections::BTreeSet;

use bridge_protocol::{
    CliMessage, ClientMessage, ContentBlock, ContentDelta, ControlRequestBody, ParseError,
    PermissionUpdate, ResultSubtype, StreamEvent, SystemMessage, parse_cli_line, parse_client_line,
};
use serde_json::Value;

macro_rules! fixture {
    ($path:literal) => {
        (
            $path,
            include_str!(concat!("../../../tests/fixtures/", $path)),
        )
    };
}

const FIXTURES: &[(&str, &str)] = &[
    fixture!("real-cli-2.1.332/live-capture-allow-updatedInput-replay.ndjson"),
    fixture!("real-cli-2.1.332/live-capture-autoallowed.ndjson"),
    fixture!("real-cli-2.1.332/live-capture-deny-interrupt.ndjson"),
    // Captured by us: an MCP tool (tests/e2e/support/mcp-asker.mjs) asking through elicitation.
    fixture!("real-cli-2.1.332/bridge-capture-mcp-elicitation.ndjson"),
    // Captured by us: two turns, then `/compact` (status compacting, compact_boundary, replayed command).
    fixture!("real-cli-2.1.332/bridge-capture-compact.ndjson"),
    fixture!("handmade/cli-messages.ndjson"),
    fixture!("handmade/client-messages.ndjson"),
];

const MALFORMED: &str = include_str!("../../../tests/fixtures/handmade/malformed.ndjson");
const GOLDEN: &str = include_str!("../../../tests/fixtures/handmade/kinds.golden");
const GOLDEN_PATH: &str = "tests/fixtures/handmade/kinds.golden";

/// Which side wrote a record.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    /// `<< ` or unprefixed: CLI → client.
    Cli,
    /// `>> `: client → CLI.
    Client,
}

/// One record of a fixture file.
struct Record<'a> {
    file: &'a str,
    line: usize,
    direction: Direction,
    json: &'a str,
    /// The `## ` annotation just above the record, if any.
    annotation: Option<&'a str>,
}

fn records<'a>(file: &'a str, text: &'a str) -> Vec<Record<'a>> {
    let mut out = Vec::new();
    let mut annotation = None;
    for (index, raw) in text.lines().enumerate() {
        let raw = raw.trim_end_matches('\r');
        if raw.trim().is_empty() {
            continue;
        }
        if let Some(note) = raw.strip_prefix("## ") {
            annotation = Some(note);
            continue;
        }
        if raw.starts_with('#') {
            continue;
        }
        let (direction, json) = if let Some(rest) = raw.strip_prefix(">> ") {
            (Direction::Client, rest)
        } else if let Some(rest) = raw.strip_prefix("<< ") {
            (Direction::Cli, rest)
        } else {
            (Direction::Cli, raw)
        };
        out.push(Record {
            file,
            line: index + 1,
            direction,
            json,
            annotation: annotation.take(),
        });
    }
    out
}

/// A parsed record, either direction.
enum Parsed {
    Cli(CliMessage),
    Client(ClientMessage),
}

impl Parsed {
    fn is_known(&self) -> bool {
        match self {
            Self::Cli(message) => message.is_known(),
            Self::Client(message) => message.is_known(),
        }
    }
    fn kind(&self) -> String {
        match self {
            Self::Cli(message) => message.kind(),
            Self::Client(message) => message.kind(),
        }
    }
    fn to_value(&self) -> Value {
        match self {
            Self::Cli(message) => serde_json::to_value(message).expect("serializes"),
            Self::Client(message) => serde_json::to_value(message).expect("serializes"),
        }
    }
}

fn parse(record: &Record<'_>) -> Result<Parsed, ParseError> {
    match record.direction {
        Direction::Cli => parse_cli_line(record.json).map(Parsed::Cli),
        Direction::Client => parse_client_line(record.json).map(Parsed::Client),
    }
}

fn all_records() -> Vec<Record<'static>> {
    FIXTURES
        .iter()
        .flat_map(|(file, text)| records(file, text))
        .collect()
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn every_record_parses_as_expected_and_round_trips() {
    let records = all_records();
    assert!(
        records.len() > 300,
        "corpus unexpectedly small: {} records",
        records.len()
    );
    let mut failures = Vec::new();
    for record in &records {
        let at = format!("{}:{}", record.file, record.line);
        let parsed = match parse(record) {
            Ok(parsed) => parsed,
            Err(err) => {
                failures.push(format!("{at}: {err}"));
                continue;
            }
        };
        let expect_unknown = record.annotation == Some("expect: unknown");
        if parsed.is_known() == expect_unknown {
            failures.push(format!(
                "{at}: expected {} but got {} ({})",
                if expect_unknown {
                    "Unknown"
                } else {
                    "a known variant"
                },
                if parsed.is_known() {
                    "known"
                } else {
                    "Unknown"
                },
                parsed.kind()
            ));
        }
        let original: Value = serde_json::from_str(record.json).expect("fixture line is JSON");
        let again = parsed.to_value();
        if again != original {
            failures.push(format!(
                "{at}: re-serialized JSON differs\n  was: {original}\n  now: {again}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} corpus failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn real_captures_are_fully_known() {
    for (file, text) in FIXTURES
        .iter()
        .filter(|(file, _)| file.starts_with("real-cli"))
    {
        let records = records(file, text);
        assert!(records.len() > 30, "{file}: too few records");
        for record in records {
            let parsed =
                parse(&record).unwrap_or_else(|err| panic!("{file}:{}: {err}", record.line));
            assert!(
                parsed.is_known(),
                "{file}:{}: unknown {}",
                record.line,
                parsed.kind()
            );
        }
    }
}

/// Collects the tags of every nested union in a parsed CLI / client message.
#[derive(Default)]
struct Coverage {
    kinds: BTreeSet<String>,
    blocks: BTreeSet<String>,
    events: BTreeSet<String>,
    deltas: BTreeSet<String>,
    requests: BTreeSet<String>,
    updates: BTreeSet<String>,
    result_subtypes: BTreeSet<String>,
}

impl Coverage {
    fn blocks(&mut self, blocks: &[ContentBlock]) {
        for block in blocks {
            self.blocks.insert(block.block_type().to_owned());
            if let ContentBlock::ToolResult(result) = block
                && let Some(content) = &result.content
            {
                self.blocks(content.blocks());
            }
        }
    }

    fn updates(&mut self, updates: &[PermissionUpdate]) {
        for update in updates {
            self.updates.insert(update.tag().to_owned());
        }
    }

    fn request(&mut self, body: &ControlRequestBody) {
        self.requests.insert(body.subtype().to_owned());
        if let ControlRequestBody::CanUseTool(request) = body {
            self.updates(
                request
                    .permission_suggestions
                    .as_deref()
                    .unwrap_or_default(),
            );
        }
    }

    fn cli(&mut self, message: &CliMessage) {
        self.kinds.insert(message.kind());
        match message {
            CliMessage::Assistant(assistant) => self.blocks(&assistant.message.content),
            CliMessage::User(user) => self.blocks(user.message.content.blocks()),
            CliMessage::Result(result) => {
                self.result_subtypes.insert(result.subtype.to_string());
            }
            CliMessage::StreamEvent(frame) => {
                self.events.insert(frame.event.event_type().to_owned());
                match &frame.event {
                    StreamEvent::ContentBlockStart(start) => {
                        self.blocks(std::slice::from_ref(&start.content_block));
                    }
                    StreamEvent::ContentBlockDelta(delta) => {
                        self.deltas.insert(delta.delta.tag().to_owned());
                    }
                    _ => {}
                }
            }
            CliMessage::ControlRequest(request) => self.request(&request.request),
            _ => {}
        }
    }

    fn client(&mut self, message: &ClientMessage) {
        self.kinds.insert(message.kind());
        match message {
            ClientMessage::User(user) => self.blocks(user.message.content.blocks()),
            ClientMessage::ControlRequest(request) => self.request(&request.request),
            ClientMessage::ControlResponse(response) => {
                if let bridge_protocol::ControlResponseBody::Success(success) = &response.response
                    && let Some(Ok(bridge_protocol::PermissionResult::Allow(allow))) =
                        success.permission_result()
                {
                    self.updates(allow.updated_permissions.as_deref().unwrap_or_default());
                }
            }
            _ => {}
        }
    }
}

fn missing(known: &[&str], seen: &BTreeSet<String>) -> Vec<String> {
    known
        .iter()
        .filter(|tag| !seen.contains(**tag))
        .map(|tag| (*tag).to_owned())
        .collect()
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn corpus_covers_every_modelled_type_and_subtype() {
    let mut coverage = Coverage::default();
    for record in all_records() {
        match parse(&record) {
            Ok(Parsed::Cli(message)) => coverage.cli(&message),
            Ok(Parsed::Client(message)) => coverage.client(&message),
            Err(err) => panic!("{}:{}: {err}", record.file, record.line),
        }
    }
    let cli_types: Vec<String> = CliMessage::KNOWN_TYPES
        .iter()
        .filter(|kind| !matches!(**kind, "system" | "result" | "control_request"))
        .map(|kind| (*kind).to_owned())
        .collect();
    let cli_types: Vec<&str> = cli_types.iter().map(String::as_str).collect();
    let system: Vec<String> = SystemMessage::KNOWN_TAGS
        .iter()
        .chain(SystemMessage::INTERNAL_SUBTYPES)
        .map(|subtype| format!("system/{subtype}"))
        .collect();
    let system: Vec<&str> = system.iter().map(String::as_str).collect();
    let client_types: Vec<&str> = ClientMessage::KNOWN_TYPES
        .iter()
        .copied()
        .filter(|kind| *kind != "control_request")
        .collect();

    // What the corpus must cover, each list of known tags with the tags it saw of that kind.
    let known: [(&str, &[&str], &BTreeSet<String>); 10] = [
        ("top-level types", &cli_types, &coverage.kinds),
        ("client types", &client_types, &coverage.kinds),
        ("system subtypes", &system, &coverage.kinds),
        (
            "internal types",
            CliMessage::INTERNAL_TYPES,
            &coverage.kinds,
        ),
        (
            "result subtypes",
            ResultSubtype::KNOWN,
            &coverage.result_subtypes,
        ),
        ("content blocks", ContentBlock::KNOWN_TAGS, &coverage.blocks),
        ("stream events", StreamEvent::KNOWN_TAGS, &coverage.events),
        ("content deltas", ContentDelta::KNOWN_TAGS, &coverage.deltas),
        (
            "control request subtypes",
            ControlRequestBody::KNOWN_TAGS,
            &coverage.requests,
        ),
        (
            "permission updates",
            PermissionUpdate::KNOWN_TAGS,
            &coverage.updates,
        ),
    ];
    let gaps: Vec<String> = known
        .into_iter()
        .map(|(what, known, seen)| (what, missing(known, seen)))
        .filter(|(_, missing)| !missing.is_empty())
        .map(|(what, missing)| format!("{what}: {}", missing.join(", ")))
        .collect();
    assert!(gaps.is_empty(), "the corpus lacks:\n{}", gaps.join("\n"));
}

fn golden_listing() -> String {
    let mut out = String::from(
        "# file:line direction kind known|unknown — regenerate with UPDATE_GOLDEN=1\n",
    );
    for record in all_records() {
        let parsed =
            parse(&record).unwrap_or_else(|err| panic!("{}:{}: {err}", record.file, record.line));
        let direction = match record.direction {
            Direction::Cli => "<<",
            Direction::Client => ">>",
        };
        let known = if parsed.is_known() {
            "known"
        } else {
            "unknown"
        };
        out.push_str(&format!(
            "{}:{} {direction} {} {known}\n",
            record.file,
            record.line,
            parsed.kind()
        ));
    }
    out
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn classification_matches_golden_file() {
    let listing = golden_listing();
    #[cfg(not(target_arch = "wasm32"))]
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(GOLDEN_PATH);
        std::fs::write(&path, &listing).expect("write the golden file");
        return;
    }
    if listing != GOLDEN {
        let diff: Vec<String> = listing
            .lines()
            .zip(GOLDEN.lines().chain(std::iter::repeat("<missing>")))
            .filter(|(now, was)| now != was)
            .take(10)
            .map(|(now, was)| format!("  golden: {was}\n  now:    {now}"))
            .collect();
        panic!(
            "classification differs from {GOLDEN_PATH} ({} vs {} lines); run \
             UPDATE_GOLDEN=1 cargo test -p bridge-protocol --test integration corpus if intended\n{}",
            listing.lines().count(),
            GOLDEN.lines().count(),
            diff.join("\n")
        );
    }
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn malformed_lines_fail_with_the_expected_error_and_quote_the_line() {
    let records = records("handmade/malformed.ndjson", MALFORMED);
    assert!(
        records.len() >= 30,
        "too few malformed lines: {}",
        records.len()
    );
    for record in records {
        let at = format!("malformed.ndjson:{}", record.line);
        let expected = record
            .annotation
            .and_then(|note| note.strip_prefix("expect-error: "))
            .unwrap_or_else(|| panic!("{at}: record without `## expect-error:`"));
        let err = match parse(&record) {
            Ok(parsed) => panic!(
                "{at}: parsed as {} but should fail with {expected:?}",
                parsed.kind()
            ),
            Err(err) => err,
        };
        let message = err.to_string();
        assert!(
            message.contains(expected),
            "{at}: error {message:?} does not contain {expected:?}"
        );
        let excerpt = err.line_excerpt().trim_end_matches('…');
        assert!(!excerpt.is_empty(), "{at}: error does not quote the line");
        assert!(
            record.json.starts_with(excerpt),
            "{at}: excerpt {excerpt:?} is not the line"
        );
        assert!(
            message.contains(excerpt),
            "{at}: message does not show the line"
        );
    }
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn serialized_lines_parse_back_to_the_same_message() {
    for record in all_records() {
        match parse(&record).expect("corpus parses") {
            Parsed::Cli(message) => {
                let line = bridge_protocol::to_line(&message);
                assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
                let again = parse_cli_line(line.trim_end()).expect("own output parses");
                assert_eq!(again, message, "{}:{}", record.file, record.line);
            }
            Parsed::Client(message) => {
                let line = bridge_protocol::to_line(&message);
                let again = parse_client_line(line.trim_end()).expect("own output parses");
                assert_eq!(again, message, "{}:{}", record.file, record.line);
            }
        }
    }
}
