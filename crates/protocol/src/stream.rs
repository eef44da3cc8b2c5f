//! `stream_event.event`: the Messages-API stream (`BetaRawMessageStreamEvent`), passed through by
//! the CLI one event per frame (only with `--include-partial-messages`).

use serde_json::Value;

use crate::content::{BetaMessage, ContentBlock};
use crate::extra::open_struct;
use crate::util::{present, tagged_union};
use crate::values::StopReason;

tagged_union! {
    /// One Messages-API stream event. Unknown event types are kept whole in [`StreamEvent::Unknown`].
    pub enum StreamEvent (tag = "type") {
        "message_start" => MessageStart(MessageStartEvent),
        "message_delta" => MessageDelta(MessageDeltaEvent),
        "message_stop" => MessageStop(MessageStopEvent),
        "content_block_start" => ContentBlockStart(ContentBlockStartEvent),
        "content_block_delta" => ContentBlockDelta(ContentBlockDeltaEvent),
        "content_block_stop" => ContentBlockStop(ContentBlockStopEvent),
        "ping" => Ping(PingEvent),
        "error" => Error(StreamErrorEvent),
        _ => Unknown,
    }
}

impl StreamEvent {
    /// The event's `type` string.
    pub fn event_type(&self) -> &str {
        self.tag()
    }

    /// The content-block index of `content_block_*` events.
    pub fn index(&self) -> Option<u64> {
        match self {
            Self::ContentBlockStart(event) => Some(event.index),
            Self::ContentBlockDelta(event) => Some(event.index),
            Self::ContentBlockStop(event) => Some(event.index),
            _ => None,
        }
    }
}

open_struct! {
    /// `message_start`.
    pub struct MessageStartEvent {
        pub message: BetaMessage,
    }

    /// `message_delta`: the final `stop_reason` and output usage of a response.
    pub struct MessageDeltaEvent {
        pub delta: MessageDelta,
        pub usage: DeltaUsage,
    }

    /// `message_delta.delta`. `stop_reason` is `null` on the delta the CLI synthesizes after an
    /// interrupt.
    pub struct MessageDelta {
        #[serialize_always]
        pub stop_reason: Option<StopReason>,
        #[serde(default, deserialize_with = "present")]
        pub stop_sequence: Option<Option<String>>,
    }

    /// `BetaMessageDeltaUsage` (the other counters stay in `extra`).
    pub struct DeltaUsage {
        pub output_tokens: u64,
        #[serde(default, deserialize_with = "present")]
        pub input_tokens: Option<Option<u64>>,
    }

    /// `message_stop`. A CLI-synthesized stop after a cut-short stream may say which blocks were
    /// abandoned (the CLI puts `abandoned_blocks` on the frame; it is accepted here too).
    #[derive(Default)]
    pub struct MessageStopEvent {
        pub abandoned_blocks: Option<AbandonedBlocks>,
    }

    /// `abandoned_blocks{api_message_id, from_block_index}`: blocks from this index on will never get
    /// an `assistant` frame; a console drops what it streamed for them.
    pub struct AbandonedBlocks {
        pub api_message_id: String,
        pub from_block_index: u64,
    }

    /// `content_block_start`.
    pub struct ContentBlockStartEvent {
        pub index: u64,
        pub content_block: ContentBlock,
    }

    /// `content_block_delta`.
    pub struct ContentBlockDeltaEvent {
        pub index: u64,
        pub delta: ContentDelta,
    }

    /// `content_block_stop`.
    pub struct ContentBlockStopEvent {
        pub index: u64,
    }

    /// `ping` (the CLI drops these upstream; accepted for completeness).
    #[derive(Default)]
    pub struct PingEvent {
    }

    /// An SSE `error` event: `{"type":"error","error":{"type","message"}}`.
    pub struct StreamErrorEvent {
        pub error: Value,
    }
}

tagged_union! {
    /// `BetaRawContentBlockDelta`. Unknown delta types are kept whole in [`ContentDelta::Unknown`].
    pub enum ContentDelta (tag = "type") {
        "text_delta" => Text(TextDelta),
        "input_json_delta" => InputJson(InputJsonDelta),
        "thinking_delta" => Thinking(ThinkingDelta),
        "signature_delta" => Signature(SignatureDelta),
        "citations_delta" => Citations(CitationsDelta),
        "compaction_delta" => Compaction(CompactionDelta),
        _ => Unknown,
    }
}

open_struct! {
    /// `text_delta`.
    pub struct TextDelta {
        pub text: String,
    }

    /// `input_json_delta`: a fragment of the tool input JSON (fragments concatenate; not valid JSON
    /// on their own).
    pub struct InputJsonDelta {
        pub partial_json: String,
    }

    /// `thinking_delta`.
    pub struct ThinkingDelta {
        pub thinking: String,
        #[serde(default, deserialize_with = "present")]
        pub estimated_tokens: Option<Option<u64>>,
    }

    /// `signature_delta`.
    pub struct SignatureDelta {
        pub signature: String,
    }

    /// `citations_delta`: one citation (char / page / content-block / web-search / search-result
    /// location) to append to the text block.
    pub struct CitationsDelta {
        pub citation: Value,
    }

    /// `compaction_delta`.
    pub struct CompactionDelta {
        #[serde(default, deserialize_with = "present")]
        pub content: Option<Option<String>>,
        #[serde(default, deserialize_with = "present")]
        pub encrypted_content: Option<Option<String>>,
    }
}
