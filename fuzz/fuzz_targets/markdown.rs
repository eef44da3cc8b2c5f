//! The console's markdown renderer, its pure part (src/markdown.rs: `parse`, `split_blocks`,
//! `plain_text`, `safe_url`). Properties: never panics; the blocks are consecutive slices that put
//! back together give the input; every `href` in the tree passes `safe_url` (a `javascript:` link
//! can never become a link); attribute names come from the fixed set.
//! (The body is `bridge_fuzz::targets::markdown::input`, shared with the corpus replay in CI.)
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bridge_fuzz::targets::markdown::input(data));
