/**
 * The terminal through `ase serve` (issue 20): keystroke → echo, as the desk (`ase attach`) feels
 * it. A writer on `GET /api/sessions/:id/terminal` sends one key and times the first output frame
 * that shows it: the WebSocket in, the room, the PTY, the program's echo, the mirror, the
 * WebSocket out. Twice: with `cat` in a PTY attached to the session's terminal (the server's own
 * cost: the line discipline echoes at once), and with the real pinned Claude Code's terminal UI in
 * local mode (its mock Messages API, loopback only), whose Ink renderer redraws the input box.
 * Then the real pinned Codex terminal UI (its mock Responses API) the same way, and the handoff the
 * desk-and-phone story lives on, a few rounds: the phone takes control (`POST …/mode {to:'remote'}`)
 * → the remote engine ready; the desk's key on the banner (the `mode` frame `ase attach` sends) →
 * the resumed terminal UI has drawn the conversation again.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { claudeEngine } from '../src/engines/claude/index.js';
import { codexEngine } from '../src/engines/codex/index.js';
import { spawnPty } from '../src/engines/transport/pty-process.js';
import { fakeEngine, MemoryJournal, MemoryStore } from '../src/index.js';
import { startServer, type RunningServer } from '../src/server.js';
import { startAnthropicMock } from '../test/mocks/anthropic-mock.js';
import { startOpenAIResponsesMock } from '../test/mocks/openai-responses-mock.js';
import { claudeBinary, hermeticClaudeEnv } from '../test/support/claude-hermetic.js';
import { hermeticCodex } from '../test/support/codex-hermetic.js';
import { CODEX_TUI_SEEN_TOML, HeadlessScreen, seedClaudeTuiConfig } from '../test/support/headless-screen.js';
import { phase, waitForNotice } from '../test/support/session-notices.js';
import { openTerminal, type TerminalTestClient } from '../test/support/terminal-client.js';
import { latency } from './support/measure.js';
import { ms, writeSection, type Row } from './support/report.js';

const KEYS = 200;
/** Handoff rounds (each starts an agent process: a remote one, then the terminal UI again: seconds). */
const HANDOFFS = 5;
/** Letters that no escape sequence ends with and Claude Code's screen does not show by itself. */
const KEYS_TYPED = 'qxzjkv';
/** Output without its escape sequences (CSI, OSC): only what is drawn as text. */
const visible = (text: string) => text.replace(/\x1b\[[0-9;?<>=]*[ -/]*[@-~]/g, '').replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, '').replace(/\x1b[()][0-9A-Za-z]|\x1b[=>78]/g, '');
const p99 = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.ceil(0.99 * samples.length) - 1]!;

async function writer(server: RunningServer, id: string): Promise<TerminalTestClient> {
  const client = await openTerminal(`${server.url}/api/sessions/${id}/terminal`, { role: 'writer', headers: { authorization: `Bearer ${server.token}` } });
  if ('refused' in client) throw new Error(`refused ${client.refused}`);
  client.control({ type: 'resize', cols: 100, rows: 30 });
  return client;
}

/** Types KEYS keys one at a time; each sample is send → the first frame after it holding the key. */
async function echoLatencies(client: TerminalTestClient, reset: () => void): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < KEYS; i++) {
    if (i % 40 === 0) reset();
    const key = KEYS_TYPED[i % KEYS_TYPED.length]!;
    const from = client.output().length;
    const started = performance.now();
    client.type(key);
    await client.waitFor(() => visible(client.output().slice(from)).includes(key), `echo of ${key}`, 10_000);
    samples.push(performance.now() - started);
  }
  return samples;
}

const stat = (samples: number[], what: string) => {
  const l = latency(samples);
  return `p50 ${ms(l.p50)}, p99 ${ms(p99(samples))}, max ${ms(l.max)} (${samples.length} ${what})`;
};

describe('the terminal through ase serve', () => {
  const rows: Row[] = [];
  afterAll(() => {
    if (rows.length === 0) return;
    writeSection(inject('benchResultsDir'), {
      id: 'terminal',
      order: 16,
      title: '16. Terminal through `ase serve`: keystroke → echo, handoff',
      method:
        `One server (\`startServer\`, in-process), a writer on \`GET /api/sessions/:id/terminal\` (the \`ws\` client, as \`ase attach\`) at 100×30. It sends ${KEYS} keys one at a time and times each from the send to the first output frame holding the key. ` +
        "First with `cat` in a PTY attached to a session's terminal (the line discipline echoes), then with the real pinned Claude Code and Codex in local mode (mock Messages / Responses API on loopback), the input line cleared every 40 keys. " +
        `Claude Code's handoff, ${HANDOFFS} rounds on the same session: \`POST …/mode {to:'remote'}\` until the snapshot says remote and idle, and the writer's \`{type:'mode', to:'local'}\` until a status frame says local and running and the output since holds the prompt (❯). ` +
        `Codex's handoff, ${HANDOFFS} rounds after one desk turn: \`POST …/mode {to:'remote'}\` → the session's status is remote and idle (the app-server engine on the same thread); then the writer's \`{type:'mode', to:'local'}\` frame (what a key on the desk's banner sends) → the resumed terminal UI, drawn by a headless xterm that answers its queries as the desk's terminal would, shows the desk turn's answer again.`,
      rows,
    });
  });

  it('keystroke → echo, cat and Claude Code', async () => {
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-bench-terminal-'));
    const mock = await startAnthropicMock();
    const env = hermeticClaudeEnv({ port: mock.port, root: path.join(tmp, 'claude') });
    const work = path.join(tmp, 'work');
    await fs.mkdir(work, { recursive: true });
    seedClaudeTuiConfig(env.CLAUDE_CONFIG_DIR!, work);
    const server = await startServer({ port: 0, dataDir: tmp, store: new MemoryStore(), journal: new MemoryJournal(), engines: [fakeEngine({}), claudeEngine({ bin: claudeBinary() })] });
    const headers = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
    const create = async (body: unknown) => {
      const r = await fetch(`${server.url}/api/sessions`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`create: ${r.status} ${await r.text()}`);
      return ((await r.json()) as { sessionId: string }).sessionId;
    };
    try {
      // cat in a PTY on a fake session's terminal: the server's path alone.
      const catId = await create({ agent: 'fake', workDir: work });
      const cat = await writer(server, catId);
      const pty = await spawnPty({ file: 'sh', args: ['-c', 'stty -icanon; exec cat >/dev/null'], cwd: work, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'xterm-256color' }, cols: 100, rows: 30 });
      server.host.get(catId)!.terminal.attach(1, pty);
      await cat.waitFor(() => cat.statuses.at(-1)?.running, 'running');
      const catSamples = await echoLatencies(cat, () => cat.type('\r'));
      await pty.stop();
      cat.close();

      // Claude Code's terminal UI in local mode, hosted by the server.
      const claudeId = await create({ agent: 'claude', workDir: work, mode: 'local', engineOptions: { env, permissionMode: 'default' } });
      const claude = await writer(server, claudeId);
      await claude.waitFor(() => claude.tail().includes('❯'), 'the prompt', 60_000);
      await new Promise((r) => setTimeout(r, 1000));
      // Ctrl-U clears the input line every 40 keys, so the box stays one line.
      const claudeSamples = await echoLatencies(claude, () => claude.type('\x15'));

      // The handoff, both ways, on the same session.
      const session = () => server.host.get(claudeId)!.snapshot();
      const until = async (check: () => boolean, what: string, ms = 120_000) => {
        for (const deadline = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 5))) {
          if (Date.now() > deadline) throw new Error(`never ${what}`);
        }
      };
      const takeSamples: number[] = [];
      const backSamples: number[] = [];
      for (let round = 0; round < HANDOFFS; round++) {
        const taken = performance.now();
        const r = await fetch(`${server.url}/api/sessions/${claudeId}/mode`, { method: 'POST', headers, body: JSON.stringify({ to: 'remote' }) });
        if (!r.ok) throw new Error(`take control: ${r.status} ${await r.text()}`);
        await until(() => session().mode === 'remote' && session().phase === 'idle', 'remote and idle');
        takeSamples.push(performance.now() - taken);
        const from = claude.output().length;
        const statusesBefore = claude.statuses.length;
        const keyed = performance.now();
        claude.control({ type: 'mode', to: 'local' });
        await claude.waitFor(() => claude.statuses.slice(statusesBefore).some((st) => st.mode === 'local' && st.running) && visible(claude.output().slice(from)).includes('❯'), 'the terminal UI drawn again', 120_000);
        backSamples.push(performance.now() - keyed);
      }
      claude.close();

      expect(catSamples).toHaveLength(KEYS);
      expect(claudeSamples).toHaveLength(KEYS);
      rows.unshift(
        { measurement: 'Keystroke → echo through the server, `cat` in a PTY', result: stat(catSamples, 'keys'), meaning: "The server's own path (WebSocket in, room, PTY, mirror, WebSocket out): what the desk pays for going through ase serve." },
        { measurement: "Keystroke → echo through the server, Claude Code's terminal UI", result: stat(claudeSamples, 'keys'), meaning: 'What the person at the desk feels: mostly the TUI redrawing its input box.' },
        { measurement: 'Phone "take control" → remote ready, Claude Code', result: stat(takeSamples, 'rounds'), meaning: "From the page's button (`POST …/mode`) to a session that takes a message: the terminal UI stopped, `claude --resume` in stream-json started." },
        { measurement: 'Desk key → terminal UI drawn, Claude Code', result: stat(backSamples, 'rounds'), meaning: "From the key under the banner to the resumed terminal UI on the desk's screen (its prompt drawn): the remote agent stopped, the TUI started with `--resume`." },
      );
    } finally {
      await server.close();
      await mock.close();
      await fs.rm(tmp, { recursive: true, force: true });
    }
  }, 600_000);

  it('keystroke → echo and the handoff both ways, Codex', async () => {
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-bench-terminal-codex-'));
    const mock = await startOpenAIResponsesMock();
    const h = hermeticCodex({ root: tmp, baseUrl: mock.providerBaseUrl, approvalPolicy: 'on-request', extraToml: CODEX_TUI_SEEN_TOML });
    const server = await startServer({ port: 0, dataDir: tmp, store: new MemoryStore(), journal: new MemoryJournal(), engines: [codexEngine({ bin: h.bin })] });
    const headers = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
    const post = async (route: string, body: unknown) => {
      const r = await fetch(`${server.url}${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
      if (!r.ok) throw new Error(`${route}: ${r.status} ${await r.text()}`);
      return (await r.json()) as { sessionId?: string };
    };
    try {
      const { sessionId: id } = await post('/api/sessions', { agent: 'codex', workDir: h.workDir, mode: 'local', engineOptions: { env: h.env, model: 'gpt-5.5', approvalPolicy: 'on-request' } });
      const session = server.host.get(id!)!;
      const desk = await writer(server, id!);
      // The desk is a terminal: it draws the output and answers the terminal UI's queries (cursor
      // position, colours), as tmux or any emulator under \`ase attach\` does.
      const screen = new HeadlessScreen(100, 30);
      desk.socket.on('message', (data: Buffer, binary: boolean) => void (binary && screen.term.write(data)));
      screen.term.onData((reply) => desk.type(reply));
      await screen.waitFor(/›/, 60_000);
      await new Promise((r) => setTimeout(r, 1000));
      // Ctrl-U clears the composer every 40 keys.
      const codexSamples = await echoLatencies(desk, () => desk.type('\x15'));
      desk.type('\x15');
      // One desk turn, so the resumed terminal UI has a conversation to draw.
      desk.type('hello from the desk');
      await screen.waitFor(/hello from the desk/);
      await new Promise((r) => setTimeout(r, 300));
      desk.type('\r');
      await screen.waitFor(/Echo: hello from the desk/, 60_000);

      const toRemote: number[] = [];
      const toDrawn: number[] = [];
      for (let round = 0; round < HANDOFFS; round++) {
        const ready = waitForNotice(session, (n) => n.type === 'status' && n.mode === 'remote' && n.phase === 'idle', 'remote ready', 60_000);
        const t0 = performance.now();
        await post(`/api/sessions/${id}/mode`, { to: 'remote' });
        await ready;
        toRemote.push(performance.now() - t0);
        await desk.waitFor(() => desk.statuses.at(-1)?.mode === 'remote', 'the desk told', 30_000);

        const local = waitForNotice(session, phase('local'), 'local again', 60_000);
        // What the desk shows then is `ase attach`'s banner on a cleared screen.
        screen.term.reset();
        const t1 = performance.now();
        desk.control({ type: 'mode', to: 'local' });
        await screen.waitFor(/Echo: hello from the desk/, 60_000);
        toDrawn.push(performance.now() - t1);
        await local;
        await screen.waitFor(/›/, 60_000);
      }
      desk.close();
      expect(codexSamples).toHaveLength(KEYS);
      expect(toDrawn).toHaveLength(HANDOFFS);
      rows.push(
        { measurement: "Keystroke → echo through the server, Codex's terminal UI", result: stat(codexSamples, 'keys'), meaning: "What the person at Codex's desk feels: mostly Codex's renderer redrawing its composer." },
        { measurement: 'Phone "take control" → remote ready, Codex', result: stat(toRemote, 'rounds'), meaning: 'The terminal UI stopped, the app-server engine started on the same thread: from the tap until the phone can send.' },
        { measurement: "Desk key → terminal UI drawn, Codex", result: stat(toDrawn, 'rounds'), meaning: "From the key on the banner until `codex resume` has drawn the conversation again at the desk." },
      );
    } finally {
      await server.close();
      await mock.close();
      await fs.rm(tmp, { recursive: true, force: true });
    }
  }, 300_000);
});
