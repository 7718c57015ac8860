#!/usr/bin/env node
// A stand-in for Claude Code's terminal UI, for the claude local engine's start: it reads the
// `--settings` file our engine wrote and runs its SessionStart hook as Claude Code does (the hook
// JSON on stdin: the `--session-id` and a transcript file), then, as Claude Code connects its MCP
// servers after its UI is up, talks to the server of `--mcp-config` as STANDIN_MCP says:
//   list     initialize, notifications/initialized, tools/list (what Claude Code 2.1.330 sends)
//   connect  initialize and notifications/initialized, but never tools/list
//   none     never connects
// STANDIN_EXIT_MS exits (code 0) that long after the hook ran; else it runs until a signal.
// STANDIN_KEYS names a file that gets one JSON line {at, text} per read of what is typed.
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const arg = (name) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const settingsPath = arg('--settings');
const sessionId = arg('--session-id');
const mcpConfig = arg('--mcp-config');
const settings = JSON.parse(readFileSync(settingsPath, 'utf8'));
const transcript = join(dirname(settingsPath), 'stand-in-transcript.jsonl');
writeFileSync(transcript, '');

function runHook(input) {
  const command = settings.hooks[input.hook_event_name][0].hooks[0].command;
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('exit', resolve);
    child.stdin.end(JSON.stringify(input));
  });
}

async function post(url, message) {
  const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(message) });
  return answer.status === 202 ? undefined : answer.json();
}

setInterval(() => {}, 60_000); // a UI runs until it is told to go
const keys = process.env.STANDIN_KEYS;
if (keys) process.stdin.on('data', (data) => appendFileSync(keys, JSON.stringify({ at: Date.now(), text: data.toString('utf8') }) + '\n'));
await runHook({ hook_event_name: 'SessionStart', session_id: sessionId, transcript_path: transcript, source: 'startup' });
const exitMs = process.env.STANDIN_EXIT_MS;
if (exitMs) setTimeout(() => process.exit(0), Number(exitMs));
const mode = process.env.STANDIN_MCP ?? 'list';
if (mcpConfig && mode !== 'none') {
  const { url } = JSON.parse(readFileSync(mcpConfig, 'utf8')).mcpServers.host;
  await post(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stand-in', version: '0' } } });
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (mode === 'list') await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
}
