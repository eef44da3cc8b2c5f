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
        let nodes = match into_paragraph(nodes) {
            Ok(inline) => inline,
            Err(blocks) if self.chunks.is_empty() => blocks,
            Err(_) => {
                // The whole is a paragraph but the text after the cuts is not on its own: a `|`
                // came later on the first line after a cut, over a delimiter row (a table there,
                // not in the whole). The chunks go; the paragraph is parsed whole, not cut again.
                self.chunks.clear();
                self.tail_from = self.start;
                self.next_try = usize::MAX;
                let Some(whole) = lazy::md_parse(&text[self.start..]) else {
                    return false;
                };
                into_paragraph(whole).unwrap_or_else(|n| n)
            }
        };
        self.tail = Tail {
            rev: self.tail.rev + 1,
            nodes: Arc::new(nodes),
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
mod tests;
