//! The pure transcript model: no I/O, no clock, no browser. Compiles and is tested natively.
//!
//! [`Session`] takes every frame of a session in order (`apply_text(source, text)` for the
//! stream's payloads, decoded from their JSON text; `apply_from(source, &value)` for a `Value`),
//! assembles streamed messages, tool cards, prompts and the turn footer, and exposes them to the
//! components.

pub mod agent_info;
pub mod attachment;
pub mod item;
pub mod partial_json;
pub mod prompt;
pub mod queue;
pub mod session;
pub mod tasks;

pub use agent_info::{AgentInfo, ContextUsage, Fill, InfoKind, McpServer, McpSummary};
pub use item::{
    AssistantMsg, Block, Item, ItemKind, Key, RawRow, ResultRow, SendState, Slot, SystemKind,
    SystemRow, TaskInfo, ToolCall, ToolOutput, ToolStatus, UserMsg, UserOrigin,
};
pub use prompt::{Notice, Prompt, PromptKind, SettledBy};
pub use session::{
    InterruptState, LocalRequest, ModelChoice, RateLimit, Session, SessionInfo, SessionState,
    SlashCommand, Source, prompt_of_frame, slash_matches, tool_result_text,
};
pub use tasks::{Task, TaskList, TaskStatus};

// The composer's attachments and queued follow-ups.
pub use attachment::{Attachment, AttachmentBody, UserImage};
pub use queue::{Queue, Queued};
