// ---------------------------------------------------------------------------------------------
// Options, handlers and results of the bridge-console-client API.
// ---------------------------------------------------------------------------------------------

/** Options of `BridgeClient.login`. */
export interface LoginOptions {
  /** The relay's origin. Omit it in a page served by the relay (the cookie is for that origin). */
  baseUrl?: string;
  /** The relay's token, or a one-time login code (the `#login=…` of the console URL). */
  token: string;
}

/** Options of `BridgeClient.createSession`. */
export interface CreateSessionOptions {
  /** The relay's origin, e.g. `'http://127.0.0.1:8787'`. Omit it in a page served by the relay. */
  baseUrl?: string;
  /** The controller token (`BRIDGE_RELAY_TOKEN`). Omit it in a page served by the relay after login: the `bridge_session` cookie is used. */
  token?: string;
  /** The login secret that goes with the cookie (what `login` returned). Default: the one kept at login on this origin. */
  loginSecret?: string;
  /** Working directory of the agent (the relay's `--cwd` when omitted). */
  cwd?: string;
  /** Model alias or id (`'sonnet'`, `'opus'`, …). */
  model?: string;
  /** Initial permission mode. */
  permissionMode?: PermissionMode;
  /** A title for the session list. */
  title?: string;
}

/** Options of `BridgeClient.connect`. */
export interface ConnectOptions {
  /** The relay's origin. Omit it in a page served by the relay. */
  baseUrl?: string;
  /** A controller or observer token. Omit it in a page served by the relay after login (cookie). */
  token?: string;
  /** The login secret that goes with the cookie (what `login` returned). Default: the one kept at login on this origin. */
  loginSecret?: string;
  /** The session (`cse_…`). */
  sessionId: string;
  /**
   * `'sse'` (default): Server-Sent Events down, POST up — works everywhere, Node 20 included.
   * `'ws'`: one WebSocket both ways. `'hybrid'`: WebSocket down, POST up.
   * Both WebSocket kinds need a global `WebSocket` (browsers, Node 22+, Node 20 with `--experimental-websocket`).
   */
  transport?: 'sse' | 'ws' | 'hybrid';
  /** Resume after this relay sequence number (what `onMessage` reports as `seq`, or `client.cursor`). Default 0: the whole log. */
  fromSeq?: number;
}

/**
 * The connection state: `connecting` (first attempt), `live`, `reconnecting` (waiting to retry;
 * it resumes where it stopped), `offline` (closed: `close()` was called, or a failure retrying
 * cannot fix, such as a revoked token) or `ended` (the session is over and all of it was delivered).
 */
export type ConnectionStateName = 'connecting' | 'live' | 'reconnecting' | 'offline' | 'ended';

/** Where a stored message came from (durable messages only). */
export interface MessageInfo {
  /** `'worker'` (the agent, or the relay standing in for it), `'client'` (an echo of what a client posted), `'relay'`; `null` for ephemeral frames. */
  source: 'worker' | 'client' | 'relay' | string | null;
  /** The relay's event id (durable messages only). */
  eventId: string | null;
  /** When the relay stored it, RFC 3339 (durable messages only). */
  createdAt: string | null;
}

/**
 * Gets every CLI→client message in order, without duplicates. `seq` is the relay's sequence
 * number (dense: each durable message has the next one), `null` for ephemeral frames
 * (`stream_event`, `system/thinking_tokens`, …).
 */
export type MessageHandler = (message: CliMessage, seq: number | null, info: MessageInfo) => void;

/** Gets the connection state, at registration and on every change. */
export type StateHandler = (state: ConnectionStateName) => void;

/** Something the stream could not give: history pruned by the relay, or a frame that did not decode. */
export type Notice =
  | { kind: 'gap'; after: number; next: number; message: string }
  | { kind: 'malformed'; seq: number | null; message: string };

/** Gets notices. */
export type NoticeHandler = (notice: Notice) => void;

/** The answer to a `can_use_tool` request. */
export type PermissionDecision =
  | {
      behavior: 'allow';
      /** The tool input to run with: edit it to change what runs. Default: the input as asked. */
      updatedInput?: ToolInput;
      /** Rules, mode or directory changes to apply with this answer (e.g. one of the request's `permission_suggestions`). */
      updatedPermissions?: PermissionUpdate[];
    }
  | {
      behavior: 'deny';
      /** What the model is told (the tool_result text). */
      message?: string;
      /** `true` also ends the turn. */
      interrupt?: boolean;
    };

/** What `parseNdjson` returns. */
export interface ParsedNdjson {
  /** Every message, as a plain object, in order (types this version does not know included, kept whole). */
  messages: CliMessage[];
  /** Every line that is not a message (bad JSON or UTF-8, too long, a known type with a body that does not fit); the lines after it are still read. */
  errors: { line: number; message: string }[];
}

/**
 * What `classify` answers: the message's `type`, except `can_use_tool` (a permission prompt) and
 * `elicitation` (an MCP form or URL request) for those control requests; `internal` for internal
 * frames the protocol recognises, `unknown` for a type it does not know, `invalid` for something
 * that is not a message or a known type whose body does not fit.
 */
export type MessageClass =
  | 'assistant' | 'user' | 'result' | 'system' | 'stream_event' | 'tool_progress'
  | 'tool_use_summary' | 'auth_status' | 'rate_limit_event' | 'prompt_suggestion'
  | 'conversation_reset' | 'active_goal' | 'can_use_tool' | 'elicitation' | 'control_request'
  | 'control_response' | 'control_cancel_request' | 'keep_alive' | 'command_lifecycle'
  | 'internal' | 'unknown' | 'invalid';

// ---------------------------------------------------------------------------------------------
// The CLI's stream-json messages (Claude Code 2.1.332), as the protocol crate models them.
// Objects may carry more fields than listed (newer CLIs add some); they are delivered as sent.
// ---------------------------------------------------------------------------------------------

/** A permission mode. The set is open: newer CLIs may add modes. */
export type PermissionMode =
  | 'default' | 'acceptEdits' | 'bypassPermissions' | 'plan' | 'dontAsk' | 'auto' | (string & {});

/** Why a model response stopped. The set is open. */
export type StopReason =
  | 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'compaction'
  | 'refusal' | 'model_context_window_exceeded' | (string & {});

/** Token usage of a response or a turn. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  [field: string]: unknown;
}

/** A tool's input: an object whose fields depend on the tool (`command` for Bash, `file_path` for Edit, …). */
export type ToolInput = Record<string, unknown>;

/** Plain text. */
export interface TextBlock { type: 'text'; text: string; citations?: unknown[] | null }
/** The model's extended thinking. */
export interface ThinkingBlock { type: 'thinking'; thinking: string; signature?: string | null }
/** Thinking the API returned encrypted. */
export interface RedactedThinkingBlock { type: 'redacted_thinking'; data: string }
/** A tool call. `input` is the JSON the tool will get (after the CLI applied defaults). */
export interface ToolUseBlock { type: 'tool_use'; id: string; name: string; input: ToolInput }
/** A tool's result (in `user` messages). */
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | ContentBlock[];
  is_error?: boolean | null;
}
/** An image or a document, by `source` (`base64`, `url`, `file`, …). */
export interface SourceBlock { type: 'image' | 'document'; source: Record<string, unknown> }
/** A tool run by the API itself (web search, web fetch, code execution, …), or an MCP tool call. */
export interface ServerToolUseBlock {
  type: 'server_tool_use' | 'mcp_tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  server_name?: string;
}
/** The other content blocks (server tool results, MCP results, compaction, …), each with its own fields. */
export interface OtherBlock {
  type:
    | 'web_search_tool_result' | 'web_fetch_tool_result' | 'advisor_tool_result'
    | 'code_execution_tool_result' | 'bash_code_execution_tool_result'
    | 'text_editor_code_execution_tool_result' | 'tool_search_tool_result' | 'mcp_tool_result'
    | 'container_upload' | 'compaction' | 'fallback' | 'mcp_tool_listing' | 'search_result'
    | 'tool_reference';
  [field: string]: unknown;
}
/** A content block. */
export type ContentBlock =
  | TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock | SourceBlock
  | ServerToolUseBlock | OtherBlock;

/** A Messages-API message (the `message` of an `assistant` frame and of `message_start`). */
export interface BetaMessage {
  /** `msg_…`, shared by every per-block `assistant` frame of one response. */
  id: string;
  type?: 'message';
  role: 'assistant';
  /** The model (`'<synthetic>'` on CLI-made error frames). */
  model: string;
  /** An `assistant` frame holds exactly one completed block. */
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: Usage;
}

/** A Messages-API user message: a prompt or tool results. */
export interface MessageParam { role: 'user' | 'assistant'; content: string | ContentBlock[] }

/** One completed content block of the model's answer (streamed before as `stream_event`s). */
export interface AssistantMessage {
  type: 'assistant';
  message: BetaMessage;
  /** Non-null inside a subagent started by that tool call. */
  parent_tool_use_id: string | null;
  /** Set on CLI-made error frames (`authentication_failed`, `rate_limit`, …). */
  error?: string;
  uuid: string;
  session_id: string;
}

/**
 * A user message: tool results written by the CLI, a CLI-generated prompt (`isSynthetic`), or the
 * echo of a client's prompt (`isReplay: true`, same `uuid` as sent).
 */
export interface UserMessage {
  type: 'user';
  message: MessageParam;
  parent_tool_use_id: string | null;
  uuid?: string;
  session_id?: string;
  isReplay?: boolean;
  isSynthetic?: boolean;
  /** Structured tool output (tool-specific JSON). */
  tool_use_result?: unknown;
  timestamp?: string;
}

/** A tool call a permission rule or the user denied, listed in `result`. */
export interface PermissionDenial { tool_name: string; tool_use_id: string; tool_input: ToolInput }

/** Exactly one per turn: the turn is over. */
export interface ResultMessage {
  type: 'result';
  /** `success`, or `error_during_execution`, `error_max_turns`, `error_max_budget_usd`, … (open set). */
  subtype: 'success' | 'error_during_execution' | 'error_max_turns' | 'error_max_budget_usd' | (string & {});
  /** `true` when the turn failed (an API error also ends with `subtype: 'success'` and `is_error: true`). */
  is_error: boolean;
  duration_ms: number;
  duration_api_ms: number;
  num_turns: number;
  /** The text of the turn's last text block (success only). */
  result?: string;
  stop_reason: StopReason | null;
  total_cost_usd: number;
  usage: Usage;
  /** Usage and cost per model. */
  modelUsage: Record<string, {
    inputTokens: number; outputTokens: number; cacheReadInputTokens: number;
    cacheCreationInputTokens: number; webSearchRequests: number; costUSD: number;
    contextWindow: number; maxOutputTokens: number;
  }>;
  permission_denials: PermissionDenial[];
  /** Error subtypes only. */
  errors?: string[];
  uuid: string;
  session_id: string;
}

/** `system/init`: at the start of every turn. */
export interface SystemInitMessage {
  type: 'system';
  subtype: 'init';
  cwd: string;
  model: string;
  permissionMode: PermissionMode;
  tools: string[];
  mcp_servers: { name: string; status: string }[];
  slash_commands: string[];
  apiKeySource: string;
  claude_code_version: string;
  output_style: string;
  skills: string[];
  plugins: { name: string; path: string }[];
  agents?: string[];
  uuid: string;
  session_id: string;
}

/** `system/status`: `requesting` before each model request, `compacting`, or `null` with the new `permissionMode` after a mode change. */
export interface SystemStatusMessage {
  type: 'system';
  subtype: 'status';
  status: 'requesting' | 'compacting' | null;
  permissionMode?: PermissionMode;
  uuid: string;
  session_id: string;
}

/**
 * `system/session_state_changed`: `idle`, `running`, `requires_action` (waiting for an answer)
 * or `ended`. The relay sends it with `state: 'ended'`, `exit_code`, `signal` and `stderr_tail`
 * (and `relay_generated: true`) when the agent exits.
 */
export interface SystemSessionStateChangedMessage {
  type: 'system';
  subtype: 'session_state_changed';
  state: 'idle' | 'running' | 'requires_action' | 'ended' | (string & {});
  exit_code?: number | null;
  signal?: string | null;
  stderr_tail?: string;
  relay_generated?: boolean;
  uuid: string;
  session_id: string;
}

/** `system/api_retry`: the CLI retries a failed API request. */
export interface SystemApiRetryMessage {
  type: 'system';
  subtype: 'api_retry';
  attempt: number;
  max_retries: number;
  retry_delay_ms: number;
  error_status: number | null;
  error: string;
  uuid: string;
  session_id: string;
}

/** `system/compact_boundary`: the conversation was compacted (`/compact`, or automatically). */
export interface SystemCompactBoundaryMessage {
  type: 'system';
  subtype: 'compact_boundary';
  compact_metadata: { trigger: string; pre_tokens: number; post_tokens?: number };
  uuid: string;
  session_id: string;
}

/**
 * The other `system` subtypes (`thinking_tokens`, `task_started`, `task_progress`,
 * `task_notification`, `hook_started`, `hook_response`, `local_command_output`, `notification`,
 * `permission_denied`, `elicitation_complete`, …), each with its own fields.
 */
export interface SystemOtherMessage {
  type: 'system';
  subtype:
    | 'thinking_tokens' | 'task_started' | 'task_updated' | 'task_progress' | 'task_notification'
    | 'background_tasks_changed' | 'hook_started' | 'hook_progress' | 'hook_response'
    | 'local_command_output' | 'notification' | 'permission_denied' | 'elicitation_complete'
    | 'control_request_progress' | 'model_refusal_fallback' | 'model_refusal_no_fallback'
    | 'plugin_install' | 'worker_shutting_down' | 'commands_changed' | 'files_persisted'
    | 'memory_recall' | 'mirror_error' | 'informational' | 'session_writes_lost';
  uuid?: string;
  session_id?: string;
  [field: string]: unknown;
}

/** A `system` message. */
export type SystemMessage =
  | SystemInitMessage | SystemStatusMessage | SystemSessionStateChangedMessage
  | SystemApiRetryMessage | SystemCompactBoundaryMessage | SystemOtherMessage;

/** A Messages-API stream event (`--include-partial-messages`). */
export type StreamEvent =
  | { type: 'message_start'; message: BetaMessage }
  | { type: 'content_block_start'; index: number; content_block: ContentBlock }
  | {
      type: 'content_block_delta';
      index: number;
      delta:
        | { type: 'text_delta'; text: string }
        | { type: 'input_json_delta'; partial_json: string }
        | { type: 'thinking_delta'; thinking: string }
        | { type: 'signature_delta'; signature: string }
        | { type: 'citations_delta'; citation: unknown }
        | { type: 'compaction_delta'; content?: string | null };
    }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason: StopReason | null; stop_sequence?: string | null }; usage: { output_tokens: number } }
  | { type: 'message_stop'; abandoned_blocks?: { api_message_id: string; from_block_index: number } }
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } };

/** One streamed piece of the model's answer (ephemeral: `seq` is `null`). */
export interface StreamEventMessage {
  type: 'stream_event';
  event: StreamEvent;
  parent_tool_use_id: string | null;
  uuid: string;
  session_id: string;
}

/** A long-running tool is still running. */
export interface ToolProgressMessage {
  type: 'tool_progress';
  tool_use_id: string;
  tool_name: string;
  parent_tool_use_id: string | null;
  elapsed_time_seconds: number;
  uuid: string;
  session_id: string;
}

/** A summary of earlier tool calls. */
export interface ToolUseSummaryMessage { type: 'tool_use_summary'; summary: string; preceding_tool_use_ids: string[]; uuid: string; session_id: string }
/** Login progress (`--enable-auth-status`). */
export interface AuthStatusMessage { type: 'auth_status'; isAuthenticating: boolean; output: string[]; error?: string; uuid: string; session_id: string }
/** Subscription rate-limit state. */
export interface RateLimitEventMessage {
  type: 'rate_limit_event';
  rate_limit_info: { status: 'allowed' | 'allowed_warning' | 'rejected' | (string & {}); resetsAt?: number; rateLimitType?: string; utilization?: number };
  uuid: string;
  session_id: string;
}
/** A suggested next prompt. */
export interface PromptSuggestionMessage { type: 'prompt_suggestion'; suggestion: string; uuid: string; session_id: string }
/** The conversation was reset (`/clear`, leaving plan mode, …). */
export interface ConversationResetMessage { type: 'conversation_reset'; new_conversation_id: string; trigger?: string; uuid: string; session_id: string }
/** The active goal changed. */
export interface ActiveGoalMessage {
  type: 'active_goal';
  value: { condition: string; iterations: number; set_at: number; tokens_at_start: number; last_reason?: string } | null;
  uuid: string;
  session_id: string;
}
/** Progress of a client prompt that had a `uuid` (`queued`, `started`, `completed`, …). */
export interface CommandLifecycleMessage {
  type: 'command_lifecycle';
  /** The prompt's uuid (what `sendUser` resolved with). */
  command_uuid: string;
  state: 'queued' | 'started' | 'completed' | 'cancelled' | 'discarded' | 'refused' | (string & {});
  uuid: string;
  session_id: string;
}
/** A keep-alive; ignore it. */
export interface KeepAliveMessage { type: 'keep_alive' }

/** A permission rule. `ruleContent` narrows it (e.g. a Bash command prefix `'npm test:*'`). */
export interface PermissionRuleValue { toolName: string; ruleContent?: string }
/** Where a permission update is stored. */
export type PermissionUpdateDestination = 'userSettings' | 'projectSettings' | 'localSettings' | 'session' | 'cliArg' | (string & {});
/** A permission update (in `permission_suggestions` and `updatedPermissions`). */
export type PermissionUpdate =
  | { type: 'addRules' | 'replaceRules' | 'removeRules'; rules: PermissionRuleValue[]; behavior: 'allow' | 'deny' | 'ask'; destination: PermissionUpdateDestination }
  | { type: 'setMode'; mode: PermissionMode; destination: PermissionUpdateDestination }
  | { type: 'addDirectories' | 'removeDirectories'; directories: string[]; destination: PermissionUpdateDestination };

/** `can_use_tool`: the CLI asks whether a tool may run. Answer with `respondToPermission(request_id, …)`. */
export interface CanUseToolRequest {
  subtype: 'can_use_tool';
  tool_name: string;
  /** The tool's input as asked; send an edited copy as `updatedInput` to change what runs. */
  input: ToolInput;
  tool_use_id: string;
  /** Rule or mode changes the CLI suggests (pass one as `updatedPermissions`). */
  permission_suggestions?: PermissionUpdate[];
  /** The path outside the allowed directories that made the CLI ask. */
  blocked_path?: string;
  decision_reason?: string;
  title?: string;
  display_name?: string;
  description?: string;
  /** An MCP tool: which server. */
  mcp_server?: { name: string; source: string };
  /** `AskUserQuestion` and dialog-like asks: the answers go in `updatedInput`. */
  requires_user_interaction?: boolean;
}

/** `elicitation`: an MCP server asks the user for input (a form, or a URL to open). */
export interface ElicitationRequest {
  subtype: 'elicitation';
  mcp_server_name: string;
  message: string;
  mode?: 'form' | 'url' | (string & {});
  url?: string;
  requested_schema?: Record<string, unknown>;
}

/** The other requests the CLI sends: run a client hook, talk to an SDK MCP server, show a dialog. */
export interface OtherCliControlRequest {
  subtype: 'hook_callback' | 'mcp_message' | 'request_user_dialog';
  [field: string]: unknown;
}

/** A request the CLI sends and a client must answer; `request_id` identifies it. */
export interface ControlRequestMessage {
  type: 'control_request';
  request_id: string;
  request: CanUseToolRequest | ElicitationRequest | OtherCliControlRequest;
}

/** The CLI's answer to a client's control request (`interrupt`, `set_model`, …). */
export interface ControlResponseMessage {
  type: 'control_response';
  response:
    | { subtype: 'success'; request_id: string; response?: Record<string, unknown> }
    | { subtype: 'error'; request_id: string; error: string; error_code?: string };
}

/** The CLI withdrew one of its requests (e.g. a permission prompt after an interrupt). */
export interface ControlCancelRequestMessage { type: 'control_cancel_request'; request_id: string }

/** Every message the CLI writes (and the relay forwards), keyed by `type`. */
export type KnownCliMessage =
  | AssistantMessage | UserMessage | ResultMessage | SystemMessage | StreamEventMessage
  | ToolProgressMessage | ToolUseSummaryMessage | AuthStatusMessage | RateLimitEventMessage
  | PromptSuggestionMessage | ConversationResetMessage | ActiveGoalMessage | ControlRequestMessage
  | ControlResponseMessage | ControlCancelRequestMessage | KeepAliveMessage | CommandLifecycleMessage;

/**
 * A message of a type this package does not know (a newer CLI, the relay's `relay_error`, an internal
 * frame), delivered whole: `classify` says `unknown` (or `internal`). Such messages do arrive through
 * `onMessage` although `CliMessage` does not list them (a catch-all member would stop
 * `msg.type === 'assistant'` from narrowing): keep a `default:` branch, and cast there when needed.
 */
export interface UnknownCliMessage {
  type: string;
  [field: string]: unknown;
}

/**
 * What `onMessage` and `parseNdjson` give: every message the CLI writes (and the relay forwards), a
 * union discriminated by `type`. Messages of other types arrive as well (see `UnknownCliMessage`).
 */
export type CliMessage = KnownCliMessage;
