//! `NdjsonDecoder` behaviour on hand-picked inputs; every case is also fed one byte at a time and
//! split at every position. (Random chunkings: `framing_prop.rs`, native only.)

use bridge_protocol::framing::{
    DEFAULT_MAX_LINE_BYTES, FrameError, Line, NdjsonDecoder, decode_all,
};

type Item = Result<Line, FrameError>;

fn ok(number: u64, text: &str) -> Item {
    Ok(Line {
        number,
        text: text.to_owned(),
    })
}

/// Decodes `input` whole, byte by byte, and split at every position; all must agree.
fn decode(input: &[u8], max: usize) -> Vec<Item> {
    let whole = decode_all(input, max);
    let mut decoder = NdjsonDecoder::new(max);
    let mut bytewise = Vec::new();
    for byte in input {
        bytewise.extend(decoder.feed(std::slice::from_ref(byte)));
    }
    bytewise.extend(decoder.finish());
    assert_eq!(bytewise, whole, "byte-by-byte feeding differs");
    for split in 0..=input.len() {
        let mut decoder = NdjsonDecoder::new(max);
        let mut items = decoder.feed(&input[..split]);
        items.extend(decoder.feed(&input[split..]));
        items.extend(decoder.finish());
        assert_eq!(items, whole, "split at {split} differs");
    }
    whole
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn lines_crlf_blank_lines_and_trailing_partial() {
    let input = "{\"a\":1}\r\n\n  \r\n{\"b\":\"é€𝄞\"}\n\r\n{\"c\":3}".as_bytes();
    assert_eq!(
        decode(input, DEFAULT_MAX_LINE_BYTES),
        vec![
            ok(1, "{\"a\":1}"),
            ok(4, "{\"b\":\"é€𝄞\"}"),
            ok(6, "{\"c\":3}")
        ]
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn feed_returns_only_complete_lines() {
    let mut decoder = NdjsonDecoder::default();
    assert_eq!(decoder.feed(b"{\"a\""), vec![]);
    assert_eq!(decoder.buffered_len(), 4);
    assert_eq!(decoder.feed(b":1}\n{\"b\""), vec![ok(1, "{\"a\":1}")]);
    assert_eq!(decoder.finish(), Some(ok(2, "{\"b\"")));
    assert_eq!(decoder.finish(), None, "finish is idempotent");
    assert_eq!(
        decoder.feed(b"x\n"),
        vec![ok(3, "x")],
        "numbering continues after finish"
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn invalid_utf8_is_an_error_for_that_line_only() {
    let input = b"good\nbad \xff\xfe line\r\nalso good\n\xe2\x82\n";
    assert_eq!(
        decode(input, DEFAULT_MAX_LINE_BYTES),
        vec![
            ok(1, "good"),
            Err(FrameError::InvalidUtf8 {
                line: 2,
                valid_up_to: 4,
                len: 11
            }),
            ok(3, "also good"),
            Err(FrameError::InvalidUtf8 {
                line: 4,
                valid_up_to: 0,
                len: 2
            }),
        ]
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn over_long_lines_are_skipped_with_an_error() {
    let max = 8;
    let input = b"12345678\n123456789\n12345678\r\n1234567890123\r\nok\n123456789012";
    assert_eq!(
        decode(input, max),
        vec![
            ok(1, "12345678"),
            Err(FrameError::TooLong {
                line: 2,
                len: 9,
                max
            }),
            ok(3, "12345678"),
            Err(FrameError::TooLong {
                line: 4,
                len: 13,
                max
            }),
            ok(5, "ok"),
            Err(FrameError::TooLong {
                line: 6,
                len: 12,
                max
            }),
        ]
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn an_over_long_line_is_not_buffered() {
    let max = 1024;
    let mut decoder = NdjsonDecoder::new(max);
    let chunk = vec![b'x'; 4096];
    for _ in 0..100 {
        assert!(decoder.feed(&chunk).is_empty());
        assert!(
            decoder.buffered_len() <= max + 1,
            "buffer grew to {}",
            decoder.buffered_len()
        );
    }
    assert_eq!(
        decoder.feed(b"\r\n{}\n"),
        vec![
            Err(FrameError::TooLong {
                line: 1,
                len: 409_600,
                max
            }),
            ok(2, "{}")
        ]
    );
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn errors_name_the_line() {
    let too_long = FrameError::TooLong {
        line: 7,
        len: 20,
        max: 10,
    };
    assert_eq!(too_long.line(), 7);
    assert!(too_long.to_string().contains("line 7"), "{too_long}");
    let utf8 = FrameError::InvalidUtf8 {
        line: 3,
        valid_up_to: 1,
        len: 2,
    };
    assert!(utf8.to_string().starts_with("line 3:"), "{utf8}");
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn empty_input_and_only_blank_lines() {
    assert_eq!(decode(b"", 16), vec![]);
    assert_eq!(decode(b"\n\r\n \t\n", 16), vec![]);
    let mut decoder = NdjsonDecoder::new(16);
    assert_eq!(decoder.finish(), None);
}

#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn real_capture_frames_survive_any_two_way_split() {
    let capture =
        include_str!("../../../tests/fixtures/real-cli-2.1.332/live-capture-autoallowed.ndjson");
    let whole = decode_all(capture.as_bytes(), DEFAULT_MAX_LINE_BYTES);
    assert_eq!(
        whole.len(),
        capture
            .lines()
            .filter(|line| !line.trim().is_empty())
            .count()
    );
    // Splitting at every 97th byte keeps this fast in the browser while crossing many frames and
    // multi-byte characters.
    for split in (0..capture.len()).step_by(97) {
        let mut decoder = NdjsonDecoder::default();
        let mut items = decoder.feed(&capture.as_bytes()[..split]);
        items.extend(decoder.feed(&capture.as_bytes()[split..]));
        items.extend(decoder.finish());
        assert_eq!(items, whole, "split at {split}");
    }
}
