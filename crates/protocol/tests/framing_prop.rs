//! Property test: the decoder's output does not depend on how the input is chunked, and equals a
//! naive reference (split on `\n`, strip one `\r`, skip blank lines, check length then UTF-8).

use bridge_protocol::framing::{FrameError, Line, NdjsonDecoder};
use proptest::prelude::*;

fn reference(input: &[u8], max: usize) -> Vec<Result<Line, FrameError>> {
    let mut out = Vec::new();
    let pieces: Vec<&[u8]> = input.split(|&byte| byte == b'\n').collect();
    for (index, piece) in pieces.iter().enumerate() {
        let number = index as u64 + 1;
        let line = piece.strip_suffix(b"\r").unwrap_or(piece);
        if line.len() > max {
            out.push(Err(FrameError::TooLong {
                line: number,
                len: line.len(),
                max,
            }));
        } else if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        } else {
            match std::str::from_utf8(line) {
                Ok(text) => out.push(Ok(Line {
                    number,
                    text: text.to_owned(),
                })),
                Err(err) => out.push(Err(FrameError::InvalidUtf8 {
                    line: number,
                    valid_up_to: err.valid_up_to(),
                    len: line.len(),
                })),
            }
        }
    }
    out
}

/// Lines made of JSON-ish text, multi-byte characters, invalid bytes, `\r` and spaces.
fn input() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        6 => prop::sample::select(b"{}\":ab ,".to_vec()),
        1 => Just(b'\r'),
        2 => Just(b'\n'),
        1 => Just(0xff_u8),
        1 => Just(0xe2_u8),
        1 => Just(0x82_u8),
        1 => Just(0xac_u8),
    ];
    prop::collection::vec(byte, 0..400)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_chunking_matches_the_reference(
        input in input(),
        max in 0usize..40,
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(input.len() + 1)).collect();
        cuts.sort_unstable();
        let mut decoder = NdjsonDecoder::new(max);
        let mut items = Vec::new();
        let mut start = 0;
        for cut in cuts.into_iter().chain(std::iter::once(input.len())) {
            items.extend(decoder.feed(&input[start..cut]));
            start = cut;
        }
        items.extend(decoder.finish());
        prop_assert_eq!(items, reference(&input, max));
        prop_assert!(decoder.buffered_len() == 0);
    }
}
