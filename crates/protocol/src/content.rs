//! Messages-API content: `BetaMessage`, its usage, content blocks and `MessageParam`.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::extra::open_struct;
use crate::util::{present, tagged_union};
use crate::values::StopReason;

open_struct! {
    /// `BetaMessage`: the `message` of an `assistant` frame and of a `message_start` stream event.
    ///
    /// Live frames carry only `id, type, role, model, content, stop_reason, stop_sequence, usage,
    /// context_management`; `type`, `context_management`, `container`, `stop_details`, `diagnostics`
    /// and anything newer are kept in `extra`.
    pub struct BetaMessage {
        /// `msg_…`, shared by every per-block `assistant` frame of one API response.
        pub id: String,
        /// Model name (`<synthetic>` on CLI-made error frames).
        pub model: String,
        /// Always `assistant`.
        pub role: String,
        /// The content blocks; an `assistant` frame holds exactly one completed block.
        pub content: Vec<ContentBlock>,
        /// `null` on streamed per-block frames; set on non-streamed retries and synthetic frames.
        #[serialize_always]
        pub stop_reason: Option<StopReason>,
        /// Matching stop sequence, usually `null`.
        #[serialize_always]
        pub stop_sequence: Option<String>,
        /// Token usage (not final on per-block frames).
        pub usage: Usage,
    }

    /// `BetaUsage` (also the `NonNullableUsage` of `result`). Rarely used fields stay in `extra`
    /// (`output_tokens_details`, `server_tool_use`, `service_tier`, `cache_creation`, `inference_geo`,
    /// `iterations`, `speed`, `fallback_credit`, …).
    #[derive(Default)]
    pub struct Usage {
        pub input_tokens: u64,
        pub output_tokens: u64,
        /// `number | null`, may be absent.
        #[serde(default, deserialize_with = "present")]
        pub cache_creation_input_tokens: Option<Option<u64>>,
        /// `number | null`, may be absent.
        #[serde(default, deserialize_with = "present")]
        pub cache_read_input_tokens: Option<Option<u64>>,
    }
}

impl Usage {
    /// Cache-creation input tokens, 0 when absent or `null`.
    pub fn cache_creation(&self) -> u64 {
        self.cache_creation_input_tokens.flatten().unwrap_or(0)
    }
    /// Cache-read input tokens, 0 when absent or `null`.
    pub fn cache_read(&self) -> u64 {
        self.cache_read_input_tokens.flatten().unwrap_or(0)
    }
}

/// `MessageParam.content` and `tool_result.content`: a plain string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MessageContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl MessageContent {
    /// The text of the content: the string itself, or the `text` blocks joined by `\n`.
    pub fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Blocks(blocks) => blocks
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text(text) => Some(text.text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// The blocks (empty for plain text).
    pub fn blocks(&self) -> &[ContentBlock] {
        match self {
            Self::Text(_) => &[],
            Self::Blocks(blocks) => blocks,
        }
    }
}

/// Read as it comes (a block list is not buffered into a `Value` first).
impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ContentVisitor)
    }
}

struct ContentVisitor;

impl ContentVisitor {
    fn found<E: serde::de::Error>(kind: &str) -> E {
        E::custom(format_args!(
            "content must be a string or an array of blocks, found {kind}"
        ))
    }
}

impl<'de> serde::de::Visitor<'de> for ContentVisitor {
    type Value = MessageContent;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string or an array of blocks")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<MessageContent, E> {
        Ok(MessageContent::Text(text.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, text: String) -> Result<MessageContent, E> {
        Ok(MessageContent::Text(text))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<MessageContent, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(block) = seq.next_element::<ContentBlock>()? {
            blocks.push(block);
        }
        Ok(MessageContent::Blocks(blocks))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<MessageContent, E> {
        Err(Self::found("null"))
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<MessageContent, E> {
        Err(Self::found("null"))
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<MessageContent, E> {
        Err(Self::found("a boolean"))
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<MessageContent, E> {
        Err(Self::found("a number"))
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<MessageContent, E> {
        Err(Self::found("a number"))
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<MessageContent, E> {
        Err(Self::found("a number"))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<MessageContent, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Err(Self::found("an object"))
    }
}

open_struct! {
    /// `MessageParam` of a `user` frame.
    pub struct MessageParam {
        /// `user` (or `assistant` for a prefilled turn).
        pub role: String,
        pub content: MessageContent,
    }
}

tagged_union! {
    /// A content block (`BetaContentBlock` / `ContentBlockParam`). Block types this crate does not
    /// model are kept whole in [`ContentBlock::Unknown`].
    pub enum ContentBlock (tag = "type") {
        "text" => Text(TextBlock),
        "thinking" => Thinking(ThinkingBlock),
        "redacted_thinking" => RedactedThinking(RedactedThinkingBlock),
        "tool_use" => ToolUse(ToolUseBlock),
        "tool_result" => ToolResult(ToolResultBlock),
        "server_tool_use" => ServerToolUse(ServerToolUseBlock),
        "web_search_tool_result" => WebSearchToolResult(ServerToolResultBlock),
        "web_fetch_tool_result" => WebFetchToolResult(ServerToolResultBlock),
        "advisor_tool_result" => AdvisorToolResult(ServerToolResultBlock),
        "code_execution_tool_result" => CodeExecutionToolResult(ServerToolResultBlock),
        "bash_code_execution_tool_result" => BashCodeExecutionToolResult(ServerToolResultBlock),
        "text_editor_code_execution_tool_result" => TextEditorCodeExecutionToolResult(ServerToolResultBlock),
        "tool_search_tool_result" => ToolSearchToolResult(ServerToolResultBlock),
        "mcp_tool_use" => McpToolUse(McpToolUseBlock),
        "mcp_tool_result" => McpToolResult(McpToolResultBlock),
        "container_upload" => ContainerUpload(OpaqueBlock),
        "compaction" => Compaction(OpaqueBlock),
        "fallback" => Fallback(OpaqueBlock),
        "mcp_tool_listing" => McpToolListing(OpaqueBlock),
        "image" => Image(SourceBlock),
        "document" => Document(SourceBlock),
        "search_result" => SearchResult(OpaqueBlock),
        "tool_reference" => ToolReference(ToolReferenceBlock),
        _ => Unknown,
    }
}

impl ContentBlock {
    /// The block's `type` string.
    pub fn block_type(&self) -> &str {
        self.tag()
    }
}

open_struct! {
    /// `text` block.
    pub struct TextBlock {
        pub text: String,
        /// `citations: Array | null`, absent on live frames.
        #[serde(default, deserialize_with = "present")]
        pub citations: Option<Option<Vec<Value>>>,
    }
}

impl TextBlock {
    /// A plain text block.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            citations: None,
            extra: Map::new(),
        }
    }
}

open_struct! {
    /// `thinking` block.
    pub struct ThinkingBlock {
        pub thinking: String,
        pub signature: Option<String>,
    }

    /// `redacted_thinking` block.
    pub struct RedactedThinkingBlock {
        pub data: String,
    }

    /// `tool_use` block. `input` is the JSON the CLI applied defaults to; a tool call truncated by
    /// `max_tokens` shows `{"__unparsedToolInput":{…}}`.
    pub struct ToolUseBlock {
        pub id: String,
        pub name: String,
        pub input: Value,
    }

    /// `tool_result` block (in `user` frames).
    pub struct ToolResultBlock {
        pub tool_use_id: String,
        #[serde(default)]
        pub content: Option<MessageContent>,
        pub is_error: Option<bool>,
    }
}

impl ToolResultBlock {
    /// `true` when `is_error` is set.
    pub fn is_error(&self) -> bool {
        self.is_error.unwrap_or(false)
    }
    /// The result text (string content, or its text blocks joined).
    pub fn text(&self) -> String {
        self.content
            .as_ref()
            .map(MessageContent::text)
            .unwrap_or_default()
    }
}

open_struct! {
    /// `server_tool_use` block (web search, web fetch, code execution, … run by the API).
    pub struct ServerToolUseBlock {
        pub id: String,
        pub name: String,
        pub input: Value,
    }

    /// The result of a server tool (`web_search_tool_result`, `web_fetch_tool_result`, …); `content` is
    /// the tool-specific result or error object.
    pub struct ServerToolResultBlock {
        pub tool_use_id: String,
        pub content: Value,
    }

    /// `mcp_tool_use` block.
    pub struct McpToolUseBlock {
        pub id: String,
        pub name: String,
        pub server_name: String,
        pub input: Value,
    }

    /// `mcp_tool_result` block.
    pub struct McpToolResultBlock {
        pub tool_use_id: String,
        #[serde(default, deserialize_with = "present")]
        pub content: Option<Value>,
        pub is_error: Option<bool>,
    }

    /// `image` / `document` block: a `source` (`base64`, `url`, `file`, …).
    pub struct SourceBlock {
        pub source: Value,
    }

    /// `tool_reference` block (content of a `ToolSearch` tool_result).
    pub struct ToolReferenceBlock {
        pub tool_name: String,
    }
}

/// A recognised block whose fields are not modelled individually (`container_upload`,
/// `compaction`, `fallback`, `mcp_tool_listing`, `search_result`); every field is kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpaqueBlock {
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}
