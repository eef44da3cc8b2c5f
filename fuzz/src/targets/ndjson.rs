//! NDJSON framing + the typed decoders (crates/protocol).
//!
//! Input: one parameter byte (line cap and chunk sizes), then the byte stream. Properties:
//! * feeding the stream in fuzzer-chosen chunks yields exactly what feeding it whole yields;
//! * no line is longer than the cap, line numbers strictly increase;
//! * every line is decoded as a CLI message and as a client message without panicking; a message
//!   that decodes re-serializes to a line that decodes again to the same JSON (round trip).

use super::super::{chunks, line_cap, split_first};
use bridge_protocol::framing::{FrameError, Line, NdjsonDecoder};
use bridge_protocol::{
    CliMessage, ClientMessage, ParseError, parse_cli_line, parse_client_line, to_line,
};
use serde_json::Value;

fn run(decoder: &mut NdjsonDecoder, parts: &[&[u8]]) -> Vec<Result<Line, FrameError>> {
    let mut out = Vec::new();
    for part in parts {
        out.extend(decoder.feed(part));
    }
    out.extend(decoder.finish());
    out
}

/// Equal JSON, but for floats that differ in their last bit: serde_json (without its
/// `float_roundtrip` feature, which the workspace does not enable) may parse a float one ULP off
/// in rare cases — found by this target with a 91-digit number — so printing and parsing a float
/// again can move it by one ULP. Everything else must be identical.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => {
                    x == y || (x - y).abs() <= x.abs().max(y.abs()) * 4.0 * f64::EPSILON
                }
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, vx), (ky, vy))| kx == ky && same_json(vx, vy))
        }
        _ => a == b,
    }
}

/// A `whose` message that is `json`, written as `line`, is read back by `reparse` (to its JSON) as
/// the same JSON.
fn round_trip(
    whose: &str,
    line: &str,
    json: Value,
    reparse: impl FnOnce(&str) -> Result<Value, ParseError>,
) {
    let again = reparse(line.trim_end())
        .unwrap_or_else(|e| panic!("re-serialized {whose} message does not parse: {e}"));
    assert!(
        same_json(&json, &again),
        "{whose} message round trip changed the JSON: {json} != {again}"
    );
}

/// One input, as libFuzzer gives it (`fuzz_targets/ndjson.rs`) and as the relay's test replays the
/// committed corpus (`crates/relay/tests/fuzz_corpus.rs`).
pub fn input(data: &[u8]) {
    let (param, stream) = split_first(data);
    let cap = line_cap(param, bridge_protocol::framing::DEFAULT_MAX_LINE_BYTES);
    let sizes = [param % 7 + 1, param % 13 + 1, 1, param % 3 + 2];

    let whole = run(&mut NdjsonDecoder::new(cap), &[stream]);
    let split = run(&mut NdjsonDecoder::new(cap), &chunks(stream, &sizes));
    assert_eq!(whole, split, "chunking changed what the decoder produced");

    let mut last = 0;
    for item in whole {
        let line = match item {
            Ok(line) => line,
            Err(e) => {
                assert!(e.line() > last);
                last = e.line();
                continue;
            }
        };
        assert!(line.number > last);
        last = line.number;
        assert!(line.text.len() <= cap, "a line over the cap was delivered");
        assert!(!line.text.contains('\n'));
        assert!(
            !line.text.bytes().all(|b| b.is_ascii_whitespace()),
            "a blank line was delivered"
        );

        // Each line is parsed as JSON once and given to both typed decoders (what parse_cli_line
        // and parse_client_line do, without parsing it twice); a line that is not JSON goes through
        // parse_cli_line for its error.
        let Ok(value) = serde_json::from_str::<Value>(&line.text) else {
            assert!(parse_cli_line(&line.text).is_err());
            continue;
        };
        if let Ok(msg) = CliMessage::from_value(value.clone()) {
            let json = serde_json::to_value(&msg).unwrap();
            let reparse = |l: &str| parse_cli_line(l).map(|m| serde_json::to_value(m).unwrap());
            round_trip("CLI", &to_line(&msg), json, reparse);
        }
        if let Ok(msg) = ClientMessage::from_value(value) {
            let json = serde_json::to_value(&msg).unwrap();
            let reparse = |l: &str| parse_client_line(l).map(|m| serde_json::to_value(m).unwrap());
            round_trip("client", &to_line(&msg), json, reparse);
        }
    }
}
