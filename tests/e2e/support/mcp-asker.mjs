#!/usr/bin/env node
// A minimal MCP server (stdio, newline-delimited JSON-RPC 2.0) for the end-to-end tests. Its one tool,
// `ask_user`, asks the person through MCP elicitation (`elicitation/create`): the CLI forwards that to its
// SDK client as an `elicitation` control request, so the console's elicitation dialog is exercised against
// the real CLI. The tool's result says what came back, e.g. `Elicitation accept: {"answer":"..."}`.
// No dependencies. Every line read and written is appended to $MCP_ASKER_LOG when that is set.
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const log = (dir, msg) => {
  if (process.env.MCP_ASKER_LOG) appendFileSync(process.env.MCP_ASKER_LOG, `${dir} ${JSON.stringify(msg)}\n`);
};
const send = (msg) => {
  log('>>', msg);
  process.stdout.write(`${JSON.stringify(msg)}\n`);
};

const waiting = new Map(); // our request id -> the tools/call id it answers
let next = 1;

const TOOL = {
  name: 'ask_user',
  description: 'Ask the person a question through a form and return their answer.',
  inputSchema: {
    type: 'object',
    properties: { question: { type: 'string', description: 'What to ask' } },
    required: ['question'],
  },
};

function handle(msg) {
  if (msg.method === undefined && msg.id !== undefined) {
    // A response to our elicitation/create.
    const callId = waiting.get(msg.id);
    if (callId === undefined) return;
    waiting.delete(msg.id);
    const r = msg.result ?? {};
    // The same text as the demo agent's elicitation tool, so one flow checks both backends.
    const text = msg.error
      ? `Elicitation error: ${msg.error.message}`
      : `Elicitation ${r.action}: ${JSON.stringify(r.content ?? {})}`;
    send({ jsonrpc: '2.0', id: callId, result: { content: [{ type: 'text', text }] } });
    return;
  }
  switch (msg.method) {
    case 'initialize':
      send({
        jsonrpc: '2.0',
        id: msg.id,
        result: {
          protocolVersion: msg.params?.protocolVersion ?? '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'asker', version: '1.0.0' },
        },
      });
      return;
    case 'tools/list':
      send({ jsonrpc: '2.0', id: msg.id, result: { tools: [TOOL] } });
      return;
    case 'tools/call': {
      const id = `elicit-${next++}`;
      waiting.set(id, msg.id);
      send({
        jsonrpc: '2.0',
        id,
        method: 'elicitation/create',
        params: {
          message: msg.params?.arguments?.question ?? 'Your answer?',
          requestedSchema: {
            type: 'object',
            properties: {
              answer: { type: 'string', title: 'Answer', description: 'Type your answer' },
              urgent: { type: 'boolean', title: 'Urgent' },
            },
            required: ['answer'],
          },
        },
      });
      return;
    }
    case 'ping':
      send({ jsonrpc: '2.0', id: msg.id, result: {} });
      return;
    default:
      if (msg.id !== undefined) {
        send({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
      }
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  log('<<', msg);
  handle(msg);
});
