//! Inert markdown rendering.

use std::sync::Arc;

use leptos::prelude::*;

use crate::lazy::{self, Part};
use crate::markdown::{MdNode, MdTag, into_paragraph};

/// A reader of a text in place: calls its argument with the text.
pub type ReadText = Arc<dyn Fn(&mut dyn FnMut(&str)) + Send + Sync>;

/// Where a [`Markdown`] reads its source: a signal, or a reader that lends the text where it lives
/// (a streaming message's text is read in place, never copied per delta).
#[derive(Clone)]
pub enum MdSource {
    /// A string signal.
    Signal(Signal<String>),
    /// Calls its argument with the text (tracking whatever the text depends on).
    Reader(ReadText),
}

impl MdSource {
    /// A source read in place: `read` calls its argument with the text.
    pub fn reader(read: impl Fn(&mut dyn FnMut(&str)) + Send + Sync + 'static) -> Self {
        Self::Reader(Arc::new(read))
    }

    fn with<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        match self {
            Self::Signal(s) => s.with(|t| f(t)),
            Self::Reader(read) => {
                let mut f = Some(f);
                let mut out = None;
                read(&mut |t| out = f.take().map(|f| f(t)));
                out.unwrap_or_else(|| (f.take().expect("called once"))(""))
            }
        }
    }
}

impl<T: Into<Signal<String>>> From<T> for MdSource {
    fn from(s: T) -> Self {
        Self::Signal(s.into())
    }
}

/// Renders markdown as DOM built from a fixed set of elements (see [`crate::markdown`]): raw HTML
/// shows as text, unsafe links are plain text, images show their alt text. Never uses `inner_html`.
/// Top-level blocks are keyed by their position and source, so while text streams in only the block
/// that changed (the last one) is rebuilt — and only the text's last blocks are split again
/// ([`BlockSplit`]). A paragraph that is still growing at the end is kept as chunks rendered once
/// and a short tail parsed again per update: a frame's cost follows what arrived, not the message's
/// length. Until the markdown part is loaded ([`crate::lazy`], split build only) the source shows
/// as plain text, then re-renders as markdown.
#[component]
pub fn Markdown(
    /// The markdown source (a `String`, a string signal, or [`MdSource::reader`]).
    #[prop(into)]
    text: MdSource,
) -> impl IntoView {
    let split = StoredValue::new(BlockSplit::default());
    let out = Memo::new(move |_| {
        let ready = lazy::ready(Part::Markdown);
        text.with(|t| {
            split
                .try_update_value(|s| s.update(t, ready))
                .unwrap_or_default()
        })
    });
    let blocks = Memo::new(move |_| out.with(|o| o.blocks.clone()));
    let chunks = Memo::new(move |_| out.with(|o| o.chunks.clone()));
    let tail = Memo::new(move |_| out.with(|o| o.tail.clone()));
    view! {
        <div class="md">
            <For each=move || blocks.get() key=|b| (b.ready, b.index, b.hash, b.live) let:b>
                {if b.live {
                    view! {
                        <p>
                            <For each=move || chunks.get() key=|c| c.id let:c>
                                {render_nodes((*c.nodes).clone())}
                            </For>
                            {move || render_nodes(tail.with(|t| (*t.nodes).clone()))}
                        </p>
                    }
                    .into_any()
                } else {
                    match b.ready.then(|| lazy::md_parse(&b.text)).flatten() {
                        Some(nodes) => render_nodes(nodes).into_any(),
                        None => view! { <p class="md-plain">{b.text.to_string()}</p> }.into_any(),
                    }
                }}
            </For>
        </div>
    }
}

/// One top-level block of a markdown text: its position, its source and a hash of it (the key).
/// Compared field by field, the hash before the source (a kept block's shared `Arc<str>` compares
/// by pointer first).
#[derive(Clone, Debug, PartialEq)]
pub struct MdBlock {
    /// False while the markdown part is not loaded: the whole text, shown plain.
    pub ready: bool,
    /// Position among the text's blocks.
    pub index: usize,
    /// Hash of the source (with `index`, `ready` and `live`, the block's key; 0 while live).
    pub hash: u64,
    /// The block's source (empty while live: the chunks and the tail render it).
    pub text: Arc<str>,
    /// The growing paragraph at the end, rendered from [`Rendered::chunks`] and [`Rendered::tail`].
    pub live: bool,
    /// Where it starts in the text.
    start: usize,
}

/// A part of the growing paragraph that no later text can change, parsed once.
#[derive(Clone, Debug)]
pub struct Chunk {
    /// Its key: never given to another chunk (a chunk cut again from replaced text at the same
    /// place is another chunk, and must be rendered again).
    pub id: u64,
    /// Where it starts in the text.
    pub start: usize,
    /// Its inline nodes.
    pub nodes: Arc<Vec<MdNode>>,
}

impl PartialEq for Chunk {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

/// The next chunk's id.
fn chunk_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The growing paragraph's text after its last chunk, parsed again at each update.
#[derive(Clone, Debug, Default)]
pub struct Tail {
    rev: u64,
    /// Its inline nodes.
    pub nodes: Arc<Vec<MdNode>>,
}

impl PartialEq for Tail {
    fn eq(&self, other: &Self) -> bool {
        self.rev == other.rev
    }
}

/// What a text renders as: its blocks, and (when the last block is a growing paragraph) that
/// paragraph's chunks and tail.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rendered {
    /// The top-level blocks.
    pub blocks: Vec<MdBlock>,
    /// The live paragraph's chunks (empty without one).
    pub chunks: Vec<Chunk>,
    /// The live paragraph's tail.
    pub tail: Tail,
}

/// The last paragraph while it grows.
struct Live {
    /// Where the paragraph starts in the text.
    start: usize,
    chunks: Vec<Chunk>,
    /// Where its tail starts in the text.
    tail_from: usize,
    tail: Tail,
    /// The tail's length at which to look for a cut again.
    next_try: usize,
    /// The paragraph's last line cannot become anything else by text appended to it.
    settled: bool,
}

/// Tail length at which a cut is looked for (then again every half of it).
const CUT_AT: usize = 384;

/// The last split of a text into top-level blocks. When the text grew at its end (streaming), the
/// blocks before its last two are kept and only the rest is split again: appending cannot change a
/// block that a later block already followed (CommonMark closes it), while the last one (a
/// paragraph that becomes a setext heading, a list that gains an item, an open code fence) and the
/// one before it are split again. Anything else — replaced text, the part just loaded — splits the
/// whole text. When the last block is a paragraph whose last line cannot turn into anything else
/// ([`settled`]), text appended without a line break only grows that paragraph: nothing is split
/// again, and the paragraph is cut ([`crate::markdown::paragraph_cut`]) into chunks parsed once and
/// a tail parsed again.
#[derive(Default)]
pub struct BlockSplit {
    /// The text of the last split.
    source: String,
    ready: bool,
    blocks: Vec<MdBlock>,
    live: Option<Live>,
}

impl BlockSplit {
    /// The blocks of `text` (one plain block while `ready` is false, or the markdown part is not
    /// loaded).
    pub fn update(&mut self, text: &str, ready: bool) -> Rendered {
        let appended = ready && self.ready && text.starts_with(self.source.as_str());
        if appended && text.len() == self.source.len() {
            return self.rendered();
        }
        if appended
            && let Some(live) = &mut self.live
            && live.settled
            && !text[self.source.len()..].contains(['\n', '\r'])
        {
            self.source.push_str(&text[self.source.len()..]);
            if live.grow(&self.source) {
                return self.rendered();
            }
        }
        let mut keep = if appended {
            self.blocks.len().saturating_sub(2)
        } else {
            0
        };
        // Split again from the start of a line (an indented code block's range starts after its
        // indentation, which the block before it holds).
        while keep > 0 && !text[..self.blocks[keep].start].ends_with('\n') {
            keep -= 1;
        }
        self.blocks.truncate(keep);
        let from = self.blocks.last().map_or(0, |b| b.start + b.text.len());
        let tail = match ready.then(|| lazy::md_blocks(&text[from..])).flatten() {
            Some(tail) => tail,
            None => {
                // Shown plain until the markdown part is in: split again then.
                self.source.clear();
                self.ready = false;
                self.blocks.clear();
                self.live = None;
                return Rendered {
                    blocks: vec![block(false, 0, 0, text)],
                    ..Rendered::default()
                };
            }
        };
        let mut start = from;
        for source in tail {
            let b = block(true, self.blocks.len(), start, &source);
            start += source.len();
            self.blocks.push(b);
        }
        if appended {
            self.source.push_str(&text[self.source.len()..]);
        } else {
            self.source = text.to_owned();
        }
        self.ready = true;
        self.go_live(appended);
        self.rendered()
    }

    /// Makes the last block live if it is a paragraph (keeping the chunks of the one that was live
    /// if it is the same paragraph, grown).
    fn go_live(&mut self, appended: bool) {
        let old = self.live.take().filter(|_| appended);
        let Some(last) = self.blocks.last_mut() else {
            return;
        };
        let Some(nodes) = lazy::md_parse(&last.text) else {
            return;
        };
        if into_paragraph(nodes).is_err() {
            return;
        }
        let end = last.start + last.text.len();
        let mut live = match old {
            Some(old) if old.start == last.start && old.tail_from <= end => old,
            _ => Live {
                start: last.start,
                chunks: Vec::new(),
                tail_from: last.start,
                tail: Tail::default(),
                next_try: CUT_AT,
                settled: false,
            },
        };
        if !live.grow(&self.source[..end]) {
            return;
        }
        last.live = true;
        last.hash = 0;
        last.text = Arc::from("");
        self.live = Some(live);
    }

    fn rendered(&self) -> Rendered {
        let (chunks, tail) = self
            .live
            .as_ref()
            .map(|l| (l.chunks.clone(), l.tail.clone()))
            .unwrap_or_default();
        Rendered {
            blocks: self.blocks.clone(),
            chunks,
            tail,
        }
    }

    /// The blocks' sources (a live block's from the text).
    #[cfg(test)]
    fn texts(&self) -> Vec<(usize, String)> {
        self.blocks
            .iter()
            .map(|b| {
                let text = if b.live {
                    self.source[b.start..].to_string()
                } else {
                    b.text.to_string()
                };
                (b.index, text)
            })
            .collect()
    }
}

impl Live {
    /// The paragraph now ends `text`: cuts a chunk off its tail when the tail is long enough and
    /// parses the tail again. False if the markdown part is not loaded.
    fn grow(&mut self, text: &str) -> bool {
        let tail = &text[self.tail_from..];
        if tail.len() >= self.next_try {
            match lazy::md_cut(tail) {
                None => return false,
                Some(Some((cut, nodes))) => {
                    self.chunks.push(Chunk {
                        id: chunk_id(),
                        start: self.tail_from,
                        nodes: Arc::new(nodes),
                    });
                    self.tail_from += cut;
                    self.next_try = CUT_AT;
                }
                Some(None) => self.next_try = tail.len() + CUT_AT / 2,
            }
        }
        let Some(nodes) = lazy::md_parse(&text[self.tail_from..]) else {
            return false;
        };
        self.tail = Tail {
            rev: self.tail.rev + 1,
            nodes: Arc::new(into_paragraph(nodes).unwrap_or_else(|n| n)),
        };
        let line = &text[self.start..];
        self.settled = settled(&line[line.rfind('\n').map_or(0, |i| i + 1)..]);
        true
    }
}

/// True if `line`, the last line of a paragraph, stays a line of that paragraph whatever is
/// appended to it without a line break: it cannot become a heading, a list item, a quote, a fence,
/// HTML, a thematic break, a setext underline, a table's delimiter row or a definition — it
/// already holds a character that rules each of them out.
pub fn settled(line: &str) -> bool {
    let Some(first) = line.chars().next() else {
        return false;
    };
    let rest = &line[first.len_utf8()..];
    let only = |allowed: &[char]| line.chars().all(|c| allowed.contains(&c));
    match first {
        // Indentation (code, or a list item's content) and lines whose meaning a later character
        // decides: not settled.
        ' ' | '\t' | '>' | '<' => false,
        // A link reference or footnote definition needs `]:`.
        '[' => line
            .find(']')
            .is_some_and(|i| line[i + 1..].starts_with(|c: char| c != ':')),
        '#' => {
            let hashes = line.len() - line.trim_start_matches('#').len();
            hashes > 6 || line[hashes..].starts_with(|c: char| !c.is_whitespace())
        }
        '`' | '~' => {
            let run = line.len() - line.trim_start_matches(first).len();
            run < 3 && !line[run..].is_empty()
        }
        '*' | '+' | '-' | '_' => {
            let marker = rest.is_empty() || rest.starts_with([' ', '\t']);
            let rule = only(&[first, ' ', '\t']);
            let delimiter_row = first == '-' && only(&['-', ':', '|', ' ', '\t']);
            !(marker || rule || delimiter_row)
        }
        '=' => !only(&['=', ' ', '\t']),
        '|' | ':' => !only(&['-', ':', '|', ' ', '\t']),
        c if c.is_ascii_digit() => {
            let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let after = &line[digits..];
            digits > 9
                || match after.chars().next() {
                    None => false,
                    // An ordered list's marker is followed by a space (or nothing).
                    Some('.' | ')') => after[1..].starts_with(|c: char| !c.is_whitespace()),
                    Some(_) => true,
                }
        }
        _ => true,
    }
}

fn block(ready: bool, index: usize, start: usize, text: &str) -> MdBlock {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    MdBlock {
        ready,
        index,
        hash: h.finish(),
        text: Arc::from(text),
        live: false,
        start,
    }
}

/// Renders a parsed tree.
pub fn render_nodes(nodes: Vec<MdNode>) -> Vec<AnyView> {
    nodes.into_iter().map(render_node).collect()
}

fn render_node(node: MdNode) -> AnyView {
    let (tag, attrs, children) = match node {
        MdNode::Text(t) => return t.into_any(),
        MdNode::El {
            tag,
            attrs,
            children,
        } => (tag, attrs, children),
    };
    let a = |k: &str| attrs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
    let c = render_nodes(children);
    match tag {
        MdTag::P => view! { <p class=a("class")>{c}</p> }.into_any(),
        MdTag::H(1) => view! { <h1>{c}</h1> }.into_any(),
        MdTag::H(2) => view! { <h2>{c}</h2> }.into_any(),
        MdTag::H(3) => view! { <h3>{c}</h3> }.into_any(),
        MdTag::H(4) => view! { <h4>{c}</h4> }.into_any(),
        MdTag::H(5) => view! { <h5>{c}</h5> }.into_any(),
        MdTag::H(_) => view! { <h6>{c}</h6> }.into_any(),
        MdTag::Blockquote => view! { <blockquote>{c}</blockquote> }.into_any(),
        MdTag::Pre => view! { <pre class="code">{c}</pre> }.into_any(),
        MdTag::Code => view! { <code class=a("class")>{c}</code> }.into_any(),
        MdTag::Ul => view! { <ul>{c}</ul> }.into_any(),
        MdTag::Ol => view! { <ol start=a("start")>{c}</ol> }.into_any(),
        MdTag::Li => view! { <li>{c}</li> }.into_any(),
        MdTag::Em => view! { <em>{c}</em> }.into_any(),
        MdTag::Strong => view! { <strong>{c}</strong> }.into_any(),
        MdTag::Del => view! { <del>{c}</del> }.into_any(),
        MdTag::A => view! {
            <a href=a("href") rel=a("rel") target=a("target") title=a("title")>{c}</a>
        }
        .into_any(),
        MdTag::Span => view! {
            <span class=a("class") title=a("title") data-unsafe-href=a("data-unsafe-href")>{c}</span>
        }
        .into_any(),
        MdTag::Table => view! { <div class="table-wrap"><table>{c}</table></div> }.into_any(),
        MdTag::Thead => view! { <thead>{c}</thead> }.into_any(),
        MdTag::Tbody => view! { <tbody>{c}</tbody> }.into_any(),
        MdTag::Tr => view! { <tr>{c}</tr> }.into_any(),
        MdTag::Th => view! { <th>{c}</th> }.into_any(),
        MdTag::Td => view! { <td>{c}</td> }.into_any(),
        MdTag::Hr => view! { <hr /> }.into_any(),
        MdTag::Br => view! { <br /> }.into_any(),
        MdTag::Sup => view! { <sup>{c}</sup> }.into_any(),
        MdTag::Sub => view! { <sub>{c}</sub> }.into_any(),
        MdTag::Div => view! { <div class=a("class")>{c}</div> }.into_any(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::{joined_text, split_blocks};

    /// Texts whose later lines change how earlier ones split: setext headings, lazy
    /// continuation, lists gaining items after blank lines, fences, tables, quotes, HTML, indented
    /// code after a paragraph.
    const DOCS: &[&str] = &[
        "First paragraph\nstill first\n\nSecond\n===\n\n- one\n- two\n\n- three after a blank\n\n  continued item\n\nAfter the list\n",
        "```rust\nfn main() {}\n\n\nlet x = 1;\n```\n\nText `code` **bold**\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nend",
        "> quote\nlazy line\n\n> another\n\n    indented code\n\n    more code\npara\n---\n\n<div>\nhtml\n</div>\n\n1. a\n2. b\n\n   para in item\n3. c\n",
        "para\n    not code (lazy)\n\n* a\n\n  * nested\n\n\n* b\n\n[ref]: https://example.com\n\nuse [ref]\n\n~~~\nopen fence to the end\n\nstill code",
        "Heading\n-\n\ntext\n\n---\n\n# ATX\n\nline  \nbreak\n\n- [ ] task\n- [x] done\n\nfoot[^1]\n\n[^1]: note\n",
    ];

    fn full(text: &str) -> Vec<(usize, String)> {
        split_blocks(text)
            .into_iter()
            .enumerate()
            .map(|(i, b)| (i, b.to_string()))
            .collect()
    }

    /// The blocks after an update (a live block's source read from the text).
    fn got(split: &mut BlockSplit, text: &str) -> Vec<(usize, String)> {
        split.update(text, true);
        split.texts()
    }

    #[test]
    fn a_growing_text_splits_as_the_whole_text_would_at_every_step() {
        for doc in DOCS {
            for step in [1, 2, 3, 7, 13] {
                let mut split = BlockSplit::default();
                let mut end = 0;
                while end < doc.len() {
                    end = (end + step).min(doc.len());
                    while !doc.is_char_boundary(end) {
                        end += 1;
                    }
                    let text = &doc[..end];
                    assert_eq!(got(&mut split, text), full(text), "step {step}, {text:?}");
                }
            }
        }
    }

    /// Every text of three line fragments (block openers, continuations, blank lines), grown a
    /// character at a time.
    #[test]
    fn every_three_fragment_text_splits_as_the_whole_text_would() {
        const PARTS: &[&str] = &[
            "para\n",
            "\n",
            "- item\n",
            "  cont\n",
            "    code\n",
            "> q\n",
            "===\n",
            "---\n",
            "```\n",
            "| a |\n|---|\n",
            "1. x\n",
            "<div>\n",
            "text",
            "* b\n",
            "[r]: /u\n",
        ];
        for a in PARTS {
            for b in PARTS {
                for c in PARTS {
                    let doc = format!("{a}{b}{c}");
                    let mut split = BlockSplit::default();
                    for end in 1..=doc.len() {
                        let text = &doc[..end];
                        assert_eq!(got(&mut split, text), full(text), "{text:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn kept_blocks_are_the_same_values_and_replaced_text_splits_again() {
        let mut split = BlockSplit::default();
        let a = split.update("one\n\ntwo\n\nthree\n\n- four", true).blocks;
        let b = split
            .update("one\n\ntwo\n\nthree\n\n- four five", true)
            .blocks;
        // The blocks before the last two were not split again: the same shared text.
        assert!(Arc::ptr_eq(&a[0].text, &b[0].text) && Arc::ptr_eq(&a[1].text, &b[1].text));
        assert_eq!(a[..2], b[..2]);
        assert_ne!(a[3], b[3]);
        // Not an append (a durable frame replaced the streamed text): split from the start.
        assert_eq!(got(&mut split, "one\n\nTWO"), full("one\n\nTWO"));
        // Not ready: the whole text, plain, one block; then markdown once ready.
        let d = split.update("one\n\nTWO", false).blocks;
        assert_eq!(d.len(), 1);
        assert!(!d[0].ready && &*d[0].text == "one\n\nTWO");
        assert_eq!(got(&mut split, "one\n\nTWO"), full("one\n\nTWO"));
    }

    /// What a text renders as, as one tree: each block parsed on its own, the live paragraph as a
    /// `<p>` of its chunks and tail; adjacent text joined (the DOM shows it the same).
    fn tree(r: &Rendered) -> Vec<MdNode> {
        let mut out = Vec::new();
        for b in &r.blocks {
            if b.live {
                let mut children = Vec::new();
                for c in &r.chunks {
                    children.extend(c.nodes.iter().cloned());
                }
                children.extend(r.tail.nodes.iter().cloned());
                out.push(MdNode::El {
                    tag: MdTag::P,
                    attrs: vec![],
                    children,
                });
            } else {
                out.extend(crate::markdown::parse(&b.text));
            }
        }
        joined_text(out)
    }

    /// The same text split and parsed whole, block by block.
    fn whole(text: &str) -> Vec<MdNode> {
        joined_text(
            split_blocks(text)
                .into_iter()
                .flat_map(crate::markdown::parse)
                .collect(),
        )
    }

    /// Paragraphs as models write them, and the constructs that pair across a cut: emphasis opened
    /// and closed later, snake_case, a lone `*`, unclosed code and links, entities, escapes, hard
    /// and soft breaks, lines that start like blocks.
    const PROSE: &[&str] = &[
        "The relay keeps every frame in **SQLite** so a reload shows `the same` history; see [the docs](https://example.com) and session_id values. ",
        "Start *emphasis that goes on for a while and closes much later* here. Then 2 * 3 is six and a_b_c stays. ",
        "**Note:** an opener *that never closes, followed by words and words and more words ",
        "`code that spans a long way before it closes` and [a link text that is long](https://x.y/z) done. ",
        "&amp; entities &copy; and \\*escaped\\* stars, <span>inline html</span> and <https://auto.link> too. ",
        "1990 was a year. 1.5 million people. #hashtag and -5 degrees, +1 from me, ~~struck~~ text. ",
        "line one  \nline two after a hard break\nand a soft one ",
        "[Docs](https://docs.example) explain it; ~tilde~ and _under_ too, plus __strong__ words. ",
        "A para that becomes a heading\n===\n\nthen more words and words and words ",
        "- a list item that goes on and on and on with **bold** and words\n- another ",
    ];

    #[test]
    fn a_growing_paragraph_renders_as_the_whole_text_would_at_every_step() {
        for i in 0..PROSE.len() {
            // Each fragment several times over (long enough to be cut), then the next one.
            let doc: String = (0..12).map(|k| PROSE[(i + k / 4) % PROSE.len()]).collect();
            for step in [1, 3, 7, 16] {
                let mut split = BlockSplit::default();
                let mut end = 0;
                let mut cut = false;
                while end < doc.len() {
                    end = (end + step).min(doc.len());
                    while !doc.is_char_boundary(end) {
                        end += 1;
                    }
                    let text = &doc[..end];
                    let r = split.update(text, true);
                    assert_eq!(tree(&r), whole(text), "doc {i}, step {step}, {text:?}");
                    cut |= !r.chunks.is_empty();
                }
                if i == 0 {
                    assert!(cut, "the plain paragraph is cut into chunks");
                }
            }
        }
    }

    #[test]
    fn a_long_paragraph_parses_only_its_tail_again() {
        let mut split = BlockSplit::default();
        let mut text = String::new();
        let mut chunks = 0;
        let mut longest_tail = 0;
        while text.len() < 30_000 {
            text.push_str(PROSE[0]);
            let r = split.update(&text, true);
            assert!(
                r.blocks.last().is_some_and(|b| b.live),
                "the paragraph stays live"
            );
            chunks = r.chunks.len();
            let tail: usize = r
                .tail
                .nodes
                .iter()
                .map(|n| crate::markdown::plain_text(std::slice::from_ref(n)).len())
                .sum();
            longest_tail = longest_tail.max(tail);
        }
        assert!(chunks > 30, "{chunks} chunks");
        assert!(longest_tail < 1_000, "the tail stays short: {longest_tail}");
        // A blank line ends it: the paragraph is one ordinary block again, the new one live.
        text.push_str("\n\nNext");
        let r = split.update(&text, true);
        assert_eq!(r.blocks.len(), 2);
        assert!(!r.blocks[0].live && r.blocks[1].live);
        assert_eq!(tree(&r), whole(&text));
    }

    /// Eighty lines of one paragraph (soft breaks), as flow 09 streams them: grown by 49
    /// characters, then a frame that skips ahead (a reconnect), then the whole text at once.
    #[test]
    fn a_paragraph_of_lines_renders_whole_however_it_grows() {
        let doc: String = (1..=80)
            .map(|i| format!("L{i:03} the quick brown fox jumps over the lazy dog\n"))
            .collect::<String>()
            + "E2E-LINES-DONE";
        for (step, skip) in [
            (49, None),
            (49, Some((400, 2_000))),
            (7, Some((1_000, 3_900))),
        ] {
            let mut split = BlockSplit::default();
            let mut end = 0;
            while end < doc.len() {
                end = match skip {
                    Some((from, to)) if end >= from && end < to => to,
                    _ => (end + step).min(doc.len()),
                };
                let text = &doc[..end];
                let r = split.update(text, true);
                assert_eq!(
                    tree(&r),
                    whole(text),
                    "step {step}, skip {skip:?}, at {end}"
                );
            }
        }
    }

    /// The DOM keeps a chunk whose key it has seen: a key must never stand for other content,
    /// also when the text is replaced (a durable frame, a reconnect) and cut again at the same places.
    #[test]
    fn a_chunk_key_never_stands_for_other_content() {
        let mut by_id: std::collections::HashMap<u64, Vec<MdNode>> = Default::default();
        let mut by_start: std::collections::HashMap<usize, Vec<MdNode>> = Default::default();
        let mut start_reused = false;
        let mut split = BlockSplit::default();
        let a = PROSE[0].repeat(20);
        let b = PROSE[1].repeat(20);
        for text in [&a[..1_000], &a[..], &b[..700], &a[..900], &b[..]] {
            for c in split.update(text, true).chunks {
                let nodes = (*c.nodes).clone();
                assert_eq!(
                    by_id.entry(c.id).or_insert_with(|| nodes.clone()),
                    &nodes,
                    "key {} reused",
                    c.id
                );
                start_reused |= by_start.entry(c.start).or_insert_with(|| nodes.clone()) != &nodes;
            }
        }
        // The case the key is for: the same place cut again holds other text.
        assert!(start_reused, "a place was cut again with other content");
    }

    #[test]
    fn a_last_line_is_settled_once_nothing_can_change_what_it_is() {
        for line in [
            "word",
            "**Note:** x",
            "1990 ",
            "1.5 m",
            "#tag",
            "`c` d",
            "-5",
            "[a](b) c",
            "| a |",
            "==x",
            "é",
        ] {
            assert!(settled(line), "{line:?}");
        }
        for line in [
            "", " x", "#", "# h", "1", "1.", "1. x", "- x", "*", "**", "***", "---", "--", "=",
            "==", "```", "``", "> q", "<div", "[a]", "[a]: /u", "|-", ":-:", "\tx",
        ] {
            assert!(!settled(line), "{line:?}");
        }
    }
}
