//! The console's markdown renderer, its pure part (src/markdown.rs: `parse`, `split_blocks`,
//! `plain_text`, `safe_url`, `paragraph_cut`). Properties: never panics; the blocks are consecutive
//! slices that put back together give the input; every `href` in the tree passes `safe_url` (a
//! `javascript:` link can never become a link); attribute names come from the fixed set; where a
//! growing paragraph is cut for good, the part before the cut and the text after it render as the
//! whole paragraph does — now, and after any of a set of closers is appended (`*`, `_`, `~`, a
//! backtick, `](url)`, `>`, an entity's `;`).

use super::super::markdown::{
    MdNode, into_paragraph, joined_text, paragraph_cut, parse, plain_text, safe_url, split_blocks,
};

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
    cuts(text);
}

/// Text appended after a cut that would pair with an opener left before it, if the cut were wrong.
const CLOSERS: &[&str] = &[
    "",
    " x* y",
    " x** y",
    " x_ y",
    " x__ y",
    " x~~ y",
    " x` y",
    " x](https://e.x) y",
    " x> y",
    "; y",
];

fn cuts(text: &str) {
    let Ok(_) = into_paragraph(parse(text)) else {
        return;
    };
    let Some((cut, head)) = paragraph_cut(text) else {
        return;
    };
    for closer in CLOSERS {
        let grown = format!("{text}{closer}");
        let Ok(whole) = into_paragraph(parse(&grown)) else {
            continue;
        };
        let mut parts = head.clone();
        parts.extend(into_paragraph(parse(&grown[cut..])).unwrap_or_else(|n| n));
        assert_eq!(
            joined_text(parts),
            joined_text(whole),
            "cut at {cut} of {grown:?} renders differently"
        );
    }
}
