//! The console's markdown renderer, its pure part (src/markdown.rs: `parse`, `split_blocks`,
//! `plain_text`, `safe_url`). Properties: never panics; the blocks are consecutive slices that put
//! back together give the input; every `href` in the tree passes `safe_url` (a `javascript:` link
//! can never become a link); attribute names come from the fixed set.

use super::super::markdown::{MdNode, parse, plain_text, safe_url, split_blocks};

const ATTRS: &[&str] = &[
    "href",
    "title",
    "class",
    "start",
    "rel",
    "target",
    "data-unsafe-href",
];

fn check(nodes: &[MdNode]) {
    for node in nodes {
        if let MdNode::El {
            attrs, children, ..
        } = node
        {
            for (name, value) in attrs {
                assert!(ATTRS.contains(name), "unexpected attribute {name}");
                if *name == "href" {
                    assert!(safe_url(value), "unsafe href {value:?} in the tree");
                }
            }
            check(children);
        }
    }
}

/// One input, as libFuzzer gives it (`fuzz_targets/markdown.rs`) and as the relay's test replays the
/// committed corpus (`crates/relay/tests/fuzz_corpus.rs`).
pub fn input(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let tree = parse(text);
    check(&tree);
    let _ = plain_text(&tree);

    let blocks = split_blocks(text);
    assert_eq!(blocks.concat(), text, "the blocks do not put back together");
    for block in blocks {
        check(&parse(block));
    }
    let _ = safe_url(text);
}
