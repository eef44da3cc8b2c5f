// Drives one turn through the UNMODIFIED official browser SDK (`sse` option) against bridge-relay.
// Usage: node sdk-turn.mjs <streamUrl> <sendUrl> <sessionId> <token>
// Prints one JSON line summarising what the SDK yielded; exits non-zero on failure.
import { query } from '@anthropic-ai/claude-agent-sdk/browser';

const [streamUrl, sendUrl, sessionId, token] = process.argv.slice(2);
const asked = [];
const yielded = [];
let toolResult = null;
let resultMsg = null;

async function* prompt() {
  yield {
    type: 'user',
    message: { role: 'user', content: 'hello from the official browser SDK' },
    parent_tool_use_id: null,
    session_id: '',
  };
  await new Promise(() => {}); // keep the input open; the query never ends by itself
}

const timer = setTimeout(() => {
  console.log(JSON.stringify({ ok: false, error: 'timeout', yielded }));
  process.exit(2);
}, 45000);

const q = query({
  prompt: prompt(),
  canUseTool: async (toolName, input, opts) => {
    asked.push({ toolName, input, toolUseID: opts.toolUseID });
    return { behavior: 'allow', updatedInput: { ...input, command: 'echo edited-by-the-official-sdk' } };
  },
  sse: { streamUrl, sendUrl, sessionId, headers: { Authorization: `Bearer ${token}` } },
});

try {
  for await (const msg of q) {
    yielded.push(msg.type + (msg.subtype ? `/${msg.subtype}` : ''));
    if (msg.type === 'user' && Array.isArray(msg.message?.content)) {
      const block = msg.message.content.find((b) => b.type === 'tool_result');
      if (block) toolResult = typeof block.content === 'string' ? block.content : JSON.stringify(block.content);
    }
    if (msg.type === 'result') {
      resultMsg = msg;
      break;
    }
  }
  clearTimeout(timer);
  console.log(JSON.stringify({ ok: true, asked, yielded, toolResult, result: { subtype: resultMsg.subtype, is_error: resultMsg.is_error } }));
  process.exit(0);
} catch (e) {
  clearTimeout(timer);
  console.log(JSON.stringify({ ok: false, error: String(e), yielded }));
  process.exit(1);
}
