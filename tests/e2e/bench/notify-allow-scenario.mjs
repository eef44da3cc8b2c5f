// The demo-agent scenario of notify-allow.mjs's long session: HISTORY turns of ordinary work (a
// prompt, then text, tool calls — Read, Bash, Grep, Glob, all run unprompted — with their results and
// commentary), sized so the session holds exactly `messages` transcript messages once its last
// turn has asked for permission, and a `PROMPT_MATCH` reply: a short text and a Bash call that asks
// (`can_use_tool`), the prompt each measurement opens. Deterministic (a seeded generator), so every
// run of the bench replays the same bytes.
//
// A transcript message here is what the console shows as a row: a prompt the user sent (`user`,
// source client), an assistant block (`assistant`: one per text or tool_use block), a tool result
// (`user` with a tool_result). The agent's replays of prompts (`isReplay`) and its bookkeeping
// (`system`, `command_lifecycle`, `result`, control frames) are stored too but not counted.

export const PROMPT_MATCH = 'notify-allow-prompt';
export const HISTORY_MATCH = 'notify-allow-history';
/** Messages the prompt turn has stored when its dialog is open: the prompt, a text, the tool call. */
export const PROMPT_TURN_MESSAGES = 3;

const WORDS = (
  'the relay console session transcript stream event frame cursor replay store index cache worker ' +
  'request response header body parser decoder buffer queue channel socket timeout retry backoff ' +
  'handler route module crate function closure iterator vector string slice error result option ' +
  'test fixture snapshot assertion benchmark profile build release target feature flag config ' +
  'permission prompt dialog button layout style render paint frame signal effect memo component'
).split(' ');
const FILES = [
  'src/store.rs', 'src/net/connection.rs', 'src/components/transcript.rs', 'src/state/session/apply.rs',
  'crates/relay/src/edge/sse.rs', 'crates/relay/src/core/store.rs', 'crates/transport/src/driver.rs',
  'crates/protocol/src/decode.rs', 'src/components/prompt_dock.rs', 'src/lazy.rs', 'www/sw.js',
  'tests/e2e/flows/02-edit-bash.spec.ts', 'crates/relay/src/http/sessions.rs', 'src/virtual_window.rs',
];
const COMMANDS = [
  'cargo test -p bridge-transport', 'cargo clippy --all-targets -q', 'git status --short',
  'git diff --stat', 'cargo test -p bridge-relay --test integration replay', 'ls -la src/components',
  'rg -n "caught_up" src', 'cargo build --release -p bridge-relay', 'scripts/test.sh --quick',
];

/** A small seeded generator (mulberry32): the same scenario on every run. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function writer(seed) {
  const r = rng(seed);
  const int = (lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const sentence = () => {
    const n = int(8, 20);
    const w = Array.from({ length: n }, () => pick(WORDS));
    if (r() < 0.3) w[int(0, n - 1)] = `\`${pick(WORDS)}_${pick(WORDS)}\``;
    if (r() < 0.15) w[int(0, n - 1)] = `**${pick(WORDS)}**`;
    const s = w.join(' ');
    return s[0].toUpperCase() + s.slice(1) + '.';
  };
  const paragraph = () => Array.from({ length: int(2, 5) }, sentence).join(' ');
  // Assistant prose, ~150-900 characters: paragraphs, sometimes a list or a code fence.
  const prose = () => {
    const parts = [paragraph()];
    if (r() < 0.5) parts.push(paragraph());
    if (r() < 0.25) parts.push(Array.from({ length: int(2, 4) }, () => `- ${sentence()}`).join('\n'));
    if (r() < 0.15) parts.push('```rust\n' + Array.from({ length: int(3, 8) }, () => `    let ${pick(WORDS)} = ${pick(WORDS)}.${pick(WORDS)}()?;`).join('\n') + '\n```');
    return parts.join('\n\n');
  };
  // A file's lines (the demo agent numbers them as Read does).
  const codeLines = (n) =>
    Array.from({ length: n }, () => `${'    '.repeat(int(0, 3))}${pick(['let', 'fn', 'if', 'match', 'return', '//'])} ${pick(WORDS)}_${pick(WORDS)}(${pick(WORDS)});`).join('\n');
  // A tool call and its output, ~150-2,000 characters of output.
  const tool = () => {
    const k = r();
    if (k < 0.4) {
      const file = pick(FILES);
      return { name: 'Read', input: { file_path: `{cwd}/${file}` }, output: codeLines(int(10, 45)) };
    }
    if (k < 0.7) {
      const command = pick(COMMANDS);
      const lines = Array.from({ length: int(3, 25) }, () => `test ${pick(WORDS)}::${pick(WORDS)}_${pick(WORDS)} ... ok`);
      return { name: 'Bash', input: { command, description: sentence().slice(0, 60) }, output: `${lines.join('\n')}\n\ntest result: ok. ${lines.length} passed; 0 failed` };
    }
    if (k < 0.9) {
      const pattern = `${pick(WORDS)}_${pick(WORDS)}`;
      const lines = Array.from({ length: int(2, 15) }, () => `${pick(FILES)}:${int(1, 900)}:    ${pick(WORDS)} ${pattern}(${pick(WORDS)});`);
      return { name: 'Grep', input: { pattern, path: 'src', output_mode: 'content' }, output: lines.join('\n') };
    }
    const lines = Array.from({ length: int(3, 20) }, () => pick(FILES));
    return { name: 'Glob', input: { pattern: '**/*.rs' }, output: lines.join('\n') };
  };
  return { int, prose, tool, sentence };
}

/** Steps of one history turn with exactly `n` (>= 2) messages, its prompt included. */
function historyTurn(w, n) {
  const steps = [];
  const text = () => steps.push({ type: 'text', text: w.prose(), chunk_chars: 4000 });
  text();
  let left = n - 2; // the prompt and the first text
  while (left >= 3) {
    const t = w.tool();
    steps.push({ type: 'tool_use', name: t.name, permission: 'allow', input: t.input, output: t.output, run_ms: 0 });
    text();
    left -= 3; // the call, its result, the text after it
  }
  for (; left > 0; left--) text();
  return steps;
}

/**
 * The scenario and the prompts that play it: `prompts` are sent in order (each waits for its
 * turn's result) and leave `messages - PROMPT_TURN_MESSAGES` messages; a prompt containing
 * PROMPT_MATCH then asks for permission.
 */
export function longSessionScenario(messages = 10_000, seed = 29) {
  const w = writer(seed);
  const replies = [];
  const prompts = [];
  let left = messages - PROMPT_TURN_MESSAGES;
  for (let t = 1; left > 0; t++) {
    // Turns of 60-600 messages, like a working session; the last takes what is left.
    let n = w.int(60, 600);
    if (left - n < 60) n = left;
    const match = `${HISTORY_MATCH}-${String(t).padStart(4, '0')}/`;
    replies.push({ match, steps: historyTurn(w, n) });
    prompts.push(`${match} ${w.sentence()}`);
    left -= n;
  }
  replies.push({
    match: PROMPT_MATCH,
    steps: [
      { type: 'text', text: "I'll write the release notes file now; this needs your permission.", chunk_chars: 4000 },
      { type: 'tool_use', name: 'Bash', permission: 'ask', input: { command: 'touch release-notes.md', description: 'Create the release notes file' } },
      { type: 'text', if: 'allowed', text: 'Done:\n\n```\n{tool_result}\n```' },
      { type: 'text', if: 'denied', text: 'Understood, I did not run it. {tool_result}' },
    ],
  });
  return {
    scenario: {
      name: 'notify-allow-long',
      description: `scripts/bench.sh notify-allow: ${messages} transcript messages of ordinary work, then a prompt`,
      replies,
    },
    prompts,
  };
}
