/**
 * PROBE (a measurement, not a regression test; skipped unless ASE_PROBES=1):
 *
 *   ASE_PROBES=1 node scripts/loopback-only.mjs npx vitest run test/real-cli/codex-remote-attach.probe.test.ts
 *
 * The alternative local-mode design for Codex: host our own `codex app-server --listen unix://PATH`
 * per session and attach the terminal UI to it with `codex resume <threadId> --remote unix://PATH`
 * in a PTY, our client being a second client of the same server. Measured on the REAL pinned CLI
 * (0.169.0) against the mock Responses API, hermetic HOME/CODEX_HOME, loopback only. Each case
 * prints a `[probe] …` line with what it found; the expectations pin down what was observed, so a
 * new CLI version that behaves differently fails here instead of silently changing the numbers.
 *
 * Found on 0.169.0 (2 cores, shared; ROUNDS=5):
 * - `--listen unix://PATH` speaks WebSocket (HTTP/1.1 Upgrade → 101, then one JSON-RPC message per
 *   text frame) over the unix socket; a plain JSON line is dropped (connection closed, no answer).
 *   PATH becomes a symlink to `/tmp/codex-daemon-<uid>/<sha256(PATH)>` (outside TMPDIR and
 *   CODEX_HOME); SIGTERM removes both, SIGKILL leaves the socket (a new server replaces it).
 * - Several clients per server: ours and the TUI (or two of ours) share a thread; each sees the
 *   other's turns (turn/started, item/*, agentMessage deltas live, turn/completed), and the TUI
 *   shows turns our client started.
 * - Approvals go to every client subscribed to the thread (ours AND the TUI's dialog); the first
 *   answer wins, everyone gets `serverRequest/resolved`, a late answer is ignored.
 * - TUI exit: the thread stays loaded, the server keeps serving, no daemon is started (`--remote`).
 *   Server death under the TUI: it stays up ("Reconnecting to server…") and re-attaches to a new
 *   server on the same PATH by itself (~2 s).
 * - spawn → "Ask Codex" is the same as the local `codex resume <id>` (~320 ms either way).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnPty, type PtyProcess } from '../../src/engines/transport/pty-process.js';
import { execCommandCall, isTitleRequest, lastUserText, type OpenAIResponsesMock, startOpenAIResponsesMock } from '../mocks/openai-responses-mock.js';
import { findRollouts, hermeticCodex, type HermeticCodex } from '../support/codex-hermetic.js';
import { CODEX_TUI_SEEN_TOML, HeadlessScreen } from '../support/headless-screen.js';
import { findProcesses, waitUntilNone } from '../support/processes.js';

const WAIT_MS = 30_000;
const ROUNDS = Number(process.env.ASE_PROBE_ROUNDS ?? 5);
const ESCALATED = { sandbox_permissions: 'require_escalated', justification: 'need it' };


// ---------------------------------------------------------------------------------------------
// A minimal WebSocket client over a unix socket (RFC 6455: client frames masked, server frames not;
// text, continuation, ping/pong, close). Node 20 here has no global WebSocket, and none speaks unix.

class UnixWebSocket {
  #socket: net.Socket;
  #buffer = Buffer.alloc(0);
  #fragments: Buffer[] = [];
  #listeners: ((text: string) => void)[] = [];
  closed = false;
  readonly closedPromise: Promise<void>;

  private constructor(socket: net.Socket, rest: Buffer) {
    this.#socket = socket;
    this.closedPromise = new Promise((resolve) => socket.on('close', () => ((this.closed = true), resolve())));
    socket.on('data', (chunk) => this.#feed(chunk));
    socket.on('error', () => undefined);
    if (rest.length > 0) queueMicrotask(() => this.#feed(rest));
  }

  /** Connects and upgrades; resolves with the 101 response head and the socket. */
  static connect(path: string): Promise<{ ws: UnixWebSocket; head: string }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(path);
      const key = randomBytes(16).toString('base64');
      let received = Buffer.alloc(0);
      const onData = (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData);
        socket.off('error', reject);
        const head = received.subarray(0, end).toString('latin1');
        const accept = createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
        if (!/^HTTP\/1\.1 101/.test(head) || !head.toLowerCase().includes(`sec-websocket-accept: ${accept.toLowerCase()}`)) {
          socket.destroy();
          reject(new Error(`no websocket upgrade: ${head}`));
          return;
        }
        resolve({ ws: new UnixWebSocket(socket, received.subarray(end + 4)), head });
      };
      socket.on('data', onData);
      socket.on('error', reject);
      socket.on('connect', () =>
        socket.write(`GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`),
      );
    });
  }

  onMessage(listener: (text: string) => void): void {
    this.#listeners.push(listener);
  }

  send(text: string): void {
    this.#frame(0x1, Buffer.from(text, 'utf8'));
  }

  close(): void {
    if (this.closed) return;
    this.#frame(0x8, Buffer.from([0x03, 0xe8]));
    this.#socket.end();
  }

  #frame(opcode: number, payload: Buffer): void {
    const mask = randomBytes(4);
    const length = payload.length;
    const header = length < 126 ? Buffer.from([0x80 | opcode, 0x80 | length]) : length < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
    if (length >= 126 && length < 65536) {
      header[0] = 0x80 | opcode;
      header[1] = 0x80 | 126;
      header.writeUInt16BE(length, 2);
    } else if (length >= 65536) {
      header[0] = 0x80 | opcode;
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(BigInt(length), 2);
    }
    const masked = Buffer.alloc(length);
    for (let i = 0; i < length; i++) masked[i] = payload[i]! ^ mask[i % 4]!;
    this.#socket.write(Buffer.concat([header, mask, masked]));
  }

  #feed(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      if (this.#buffer.length < 2) return;
      const fin = (this.#buffer[0]! & 0x80) !== 0;
      const opcode = this.#buffer[0]! & 0x0f;
      const isMasked = (this.#buffer[1]! & 0x80) !== 0;
      let length = this.#buffer[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (this.#buffer.length < 4) return;
        length = this.#buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (this.#buffer.length < 10) return;
        length = Number(this.#buffer.readBigUInt64BE(2));
        offset = 10;
      }
      const maskKey = isMasked ? this.#buffer.subarray(offset, offset + 4) : undefined;
      if (isMasked) offset += 4;
      if (this.#buffer.length < offset + length) return;
      const payload = Buffer.from(this.#buffer.subarray(offset, offset + length));
      if (maskKey) for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ maskKey[i % 4]!;
      this.#buffer = this.#buffer.subarray(offset + length);
      if (opcode === 0x9) this.#frame(0xa, payload);
      else if (opcode === 0x8) this.#socket.end();
      else if (opcode === 0x1 || opcode === 0x2 || opcode === 0x0) {
        this.#fragments.push(payload);
        if (fin) {
          const text = Buffer.concat(this.#fragments).toString('utf8');
          this.#fragments = [];
          for (const listener of this.#listeners) listener(text);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A JSON-RPC client of the app-server (no `jsonrpc` member), recording everything it receives.

interface Received {
  at: number;
  method?: string;
  id?: number | string;
  params?: any;
  result?: any;
  error?: any;
}

class AppServerClient {
  readonly received: Received[] = [];
  #nextId = 1;
  #pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();

  constructor(
    readonly name: string,
    readonly ws: UnixWebSocket,
  ) {
    ws.onMessage((text) => {
      const message = JSON.parse(text) as Received;
      this.received.push({ ...message, at: performance.now() });
      if (message.method === undefined && typeof message.id === 'number') {
        const waiter = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if (message.error) waiter?.reject(new Error(`${this.name}: ${JSON.stringify(message.error)}`));
        else waiter?.resolve(message.result);
      }
    });
  }

  static async connect(name: string, socketPath: string): Promise<AppServerClient> {
    const { ws } = await UnixWebSocket.connect(socketPath);
    const client = new AppServerClient(name, ws);
    await client.request('initialize', { clientInfo: { name, title: null, version: '0' }, capabilities: { experimentalApi: false, requestAttestation: false } });
    client.notify('initialized');
    return client;
  }

  request(method: string, params: unknown = {}): Promise<any> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  notify(method: string, params?: unknown): void {
    this.ws.send(JSON.stringify({ method, ...(params !== undefined && { params }) }));
  }

  respond(id: number | string, result: unknown): void {
    this.ws.send(JSON.stringify({ id, result }));
  }

  notifications(method: string | RegExp): Received[] {
    return this.received.filter((m) => m.method !== undefined && m.id === undefined && (typeof method === 'string' ? m.method === method : method.test(m.method)));
  }

  serverRequests(): Received[] {
    return this.received.filter((m) => m.method !== undefined && m.id !== undefined);
  }

  async waitFor(match: (m: Received) => boolean, what: string, timeoutMs = WAIT_MS): Promise<Received> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`${this.name}: no ${what}; got ${this.received.map((m) => m.method ?? `#${m.id}`).join(',')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): void {
    this.ws.close();
  }
}

// ---------------------------------------------------------------------------------------------

/** Where `--listen unix://PATH` really puts its socket (PATH is a symlink to it). */
function daemonSocketOf(socketPath: string): string {
  return join('/tmp', `codex-daemon-${process.getuid!()}`, createHash('sha256').update(socketPath).digest('hex'));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

const ms = (v: number) => `${Math.round(v)} ms`;
const stats = (xs: number[]) => `median ${ms(median(xs))}, min ${ms(Math.min(...xs))}, max ${ms(Math.max(...xs))} (n=${xs.length}) [${xs.map((x) => Math.round(x)).join(', ')}]`;

function typeLine(pty: PtyProcess, screen: HeadlessScreen, text: string): Promise<void> {
  pty.write(text);
  return screen.waitFor(new RegExp(text)).then(async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    pty.write('\r');
  });
}

describe.skipIf(!process.env.ASE_PROBES)('probe: codex terminal UI attached to our own app-server over unix:// (real CLI 0.169.0)', () => {
  let root: string;
  let mock: OpenAIResponsesMock;
  let servers: ChildProcess[] = [];
  let ptys: PtyProcess[] = [];
  let clients: AppServerClient[] = [];
  let socketPaths: string[] = [];

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ase-codex-remote-'));
    mock = await startOpenAIResponsesMock();
  });

  afterEach(async () => {
    for (const client of clients) client.close();
    for (const pty of ptys) await pty.stop().catch(() => undefined);
    for (const server of servers) await stopAppServer(server);
    // A server that died by SIGKILL leaves its socket in the shared per-uid directory.
    for (const path of socketPaths) for (const file of [daemonSocketOf(path), `${daemonSocketOf(path)}.lock`]) rmSync(file, { force: true });
    socketPaths = [];
    clients = [];
    ptys = [];
    servers = [];
    await mock.close();
    rmSync(root, { recursive: true, force: true });
  });

  function hermetic(): HermeticCodex {
    return hermeticCodex({ root, baseUrl: mock.providerBaseUrl, approvalPolicy: 'on-request', extraToml: CODEX_TUI_SEEN_TOML });
  }

  /** Spawns `codex app-server --listen unix://<tmp>/app.sock`; resolves once the socket upgrades a connection. */
  async function startAppServer(h: HermeticCodex): Promise<{ server: ChildProcess; socketPath: string; readyMs: number; stderr: () => string }> {
    const socketPath = join(h.tmp, 'app.sock');
    socketPaths.push(socketPath);
    const t0 = performance.now();
    const server = spawn(h.bin, ['app-server', '-c', 'features.daemon_auto_start=false', '--listen', `unix://${socketPath}`], {
      cwd: h.workDir,
      env: h.env,
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    servers.push(server);
    let stderr = '';
    server.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      if (existsSync(socketPath)) {
        try {
          const { ws } = await UnixWebSocket.connect(socketPath);
          ws.close();
          break;
        } catch {
          // not accepting yet
        }
      }
      if (server.exitCode !== null || Date.now() > deadline) throw new Error(`app-server never listened: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return { server, socketPath, readyMs: performance.now() - t0, stderr: () => stderr };
  }

  /** SIGTERM to its process group (a clean stop removes the socket), SIGKILL after 3 s. */
  async function stopAppServer(server: ChildProcess): Promise<void> {
    if (server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    process.kill(-server.pid!, 'SIGTERM');
    const timer = setTimeout(() => process.kill(-server.pid!, 'SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
  }

  /** The terminal UI in a PTY, read by a headless emulator. */
  async function spawnTui(h: HermeticCodex, args: string[]): Promise<{ pty: PtyProcess; screen: HeadlessScreen; t0: number }> {
    const screen = new HeadlessScreen();
    const t0 = performance.now();
    const pty = await spawnPty({ file: h.bin, args, cwd: h.workDir, env: h.env, cols: screen.cols, rows: screen.rows });
    ptys.push(pty);
    screen.attach(1, pty);
    return { pty, screen, t0 };
  }

  /** A thread with one finished turn (so it has a rollout), started by `client`. */
  async function seedThread(client: AppServerClient, h: HermeticCodex, text = 'seed turn'): Promise<string> {
    const started = await client.request('thread/start', { cwd: h.workDir, approvalPolicy: 'on-request', sandbox: 'workspace-write', model: 'gpt-5.5' });
    const threadId = started.thread.id as string;
    await client.request('turn/start', { threadId, input: [{ type: 'text', text, text_elements: [] }] });
    await client.waitFor((m) => m.method === 'turn/completed', 'turn/completed of the seed turn');
    return threadId;
  }

  const ours = (root: string) => findProcesses((p) => !/\) Z /.test(p.stat()) && p.environ().includes(root));

  it('1. transport: unix:// is WebSocket-over-unix; two of our clients share one thread', async () => {
    const h = hermetic();
    const { server, socketPath, readyMs } = await startAppServer(h);
    // PATH is a symlink into a shared per-uid directory, named by the hash of PATH.
    const link = lstatSync(socketPath).isSymbolicLink() ? readlinkSync(socketPath) : undefined;
    const expectedTarget = daemonSocketOf(socketPath);

    // Plain JSON lines are not the framing: the server closes the connection without answering.
    const plain = net.connect(socketPath);
    let plainReply = '';
    plain.on('data', (d) => (plainReply += d.toString('latin1')));
    plain.write('{"id":1,"method":"initialize","params":{"clientInfo":{"name":"x","title":null,"version":"0"},"capabilities":{"experimentalApi":false}}}\n');
    await new Promise<void>((resolve) => plain.on('close', () => resolve()));

    const { ws, head } = await UnixWebSocket.connect(socketPath);
    ws.close();
    const tInit = performance.now();
    const a = await AppServerClient.connect('probe-a', socketPath);
    const initMs = performance.now() - tInit;
    const b = await AppServerClient.connect('probe-b', socketPath);
    clients.push(a, b);
    const threadId = await seedThread(a, h);
    const tResume = performance.now();
    const resumed = await b.request('thread/resume', { threadId, excludeTurns: true });
    const resumeMs = performance.now() - tResume;
    expect(resumed.thread.id).toBe(threadId);
    await b.request('turn/start', { threadId, input: [{ type: 'text', text: 'from client b', text_elements: [] }] });
    await b.waitFor((m) => m.method === 'turn/completed', 'turn/completed on b');
    const aSawB = await a.waitFor((m) => m.method === 'turn/completed' && m.params?.turn?.id !== a.notifications('turn/completed')[0]?.params?.turn?.id, 'b\'s turn/completed on a', 5_000).then(
      () => true,
      () => false,
    );
    const loaded = await a.request('thread/loaded/list', {});
    console.log(
      `[probe] transport: app-server spawn → socket upgrades ${ms(readyMs)}; initialize ${ms(initMs)}; thread/resume by a 2nd client ${ms(resumeMs)}; ` +
        `socket symlink → ${link}; plain JSON line answered: ${JSON.stringify(plainReply)}; upgrade head: ${JSON.stringify(head)}; ` +
        `client a saw client b's turn: ${aSawB}; loaded: ${JSON.stringify(loaded.data)}`,
    );
    expect(link).toBe(expectedTarget);
    expect(plainReply).toBe('');
    expect(head).toMatch(/^HTTP\/1\.1 101/);
    expect(aSawB).toBe(true);
    expect(loaded.data).toEqual([threadId]);
    await stopAppServer(server);
    // A clean stop removes the socket and the symlink.
    expect(existsSync(expectedTarget)).toBe(false);
    expect(() => lstatSync(socketPath)).toThrow();
  });

  it('2+3+5. attach latency, a turn typed in the TUI seen by our client, a turn of ours seen in the TUI, what survives the TUI', async () => {
    const h = hermetic();
    const { server, socketPath } = await startAppServer(h);
    const client = await AppServerClient.connect('probe', socketPath);
    clients.push(client);
    const threadId = await seedThread(client, h, 'seed turn');
    const remoteArgs = ['resume', threadId, '--remote', `unix://${socketPath}`];

    // 2. spawn → prompt, attached to our server; the TUI shows the conversation so far.
    const attach: number[] = [];
    const conversation: number[] = [];
    const detach: number[] = [];
    const loadedAfterExit: string[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const { pty, screen, t0 } = await spawnTui(h, remoteArgs);
      await screen.waitFor(/Ask Codex/);
      attach.push(performance.now() - t0);
      await screen.waitFor(/Echo: seed turn/);
      conversation.push(performance.now() - t0);
      const t1 = performance.now();
      await pty.stop();
      detach.push(performance.now() - t1);
      loadedAfterExit.push((await client.request('thread/loaded/list', {})).data);
    }

    // 3. A turn typed into the attached TUI: what does our client receive?
    const { pty, screen } = await spawnTui(h, remoteArgs);
    await screen.waitFor(/Ask Codex/);
    const before = client.received.length;
    const typedAt = performance.now();
    await typeLine(pty, screen, 'typed in the tui');
    await screen.waitFor(/Echo: typed in the tui/);
    const shownAt = performance.now();
    const completed = await client.waitFor((m) => m.method === 'turn/completed' && client.received.indexOf(m) >= before, 'turn/completed of the typed turn').then(
      (m) => m,
      () => undefined,
    );
    const seen = client.received.slice(before);
    const methods = [...new Set(seen.map((m) => m.method ?? `#${m.id}`))];
    const deltas = seen.filter((m) => m.method === 'item/agentMessage/delta').map((m) => m.params?.delta).join('');
    const items = seen.filter((m) => m.method === 'item/completed').map((m) => m.params?.item?.type);

    // …and a turn started by our client while the TUI is attached: does the TUI show it?
    await client.request('turn/start', { threadId, input: [{ type: 'text', text: 'sent by our client', text_elements: [] }] });
    const oursShown = await screen.waitFor(/Echo: sent by our client/, 15_000).then(
      () => true,
      () => false,
    );
    const oursShownScreen = screen.text();

    // 5. The TUI exits: the thread stays loaded, the server keeps serving, nothing else of ours runs.
    const tuiPid = pty.pid;
    await pty.stop();
    const loaded = (await client.request('thread/loaded/list', {})).data;
    await client.request('turn/start', { threadId, input: [{ type: 'text', text: 'after the tui left', text_elements: [] }] });
    await client.waitFor((m) => m.method === 'turn/completed' && m.at > shownAt && client.notifications('turn/completed').length >= 4, 'turn/completed after the TUI left');
    const left = ours(root);
    const daemonDirs = findProcesses((p) => /app-server-daemon|pid-update-loop/.test(p.cmdline()) && p.environ().includes(root));
    console.log(
      `[probe] attach (spawn \`codex resume <id> --remote unix://…\` → "Ask Codex"): ${stats(attach)}; → the seeded conversation on screen: ${stats(conversation)}; ` +
        `TUI stop (hang-up ladder): ${stats(detach)}; loaded after each TUI exit: ${JSON.stringify(loadedAfterExit)}`,
    );
    console.log(
      `[probe] turn typed in the TUI (Enter → echo on screen ${ms(shownAt - typedAt)}): our client received ${JSON.stringify(methods)}; ` +
        `turn/completed: ${completed ? completed.params?.turn?.status : 'NO'}; agentMessage deltas: ${JSON.stringify(deltas)}; items completed: ${JSON.stringify(items)}`,
    );
    console.log(`[probe] turn started by our client shown in the attached TUI: ${oursShown}${oursShown ? '' : `\n${oursShownScreen}`}`);
    console.log(`[probe] after the TUI exit: loaded ${JSON.stringify(loaded)}; live processes under the test root: ${JSON.stringify(left.map((pid) => `${pid}:${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').slice(0, 120)}`))}; daemon processes: ${JSON.stringify(daemonDirs)}; rollouts: ${findRollouts(h.codexHome).length}`);

    const others = client.notifications('thread/started').map((m) => m.params?.thread).filter((t) => t?.id !== threadId);
    console.log(`[probe] other threads started on the server: ${JSON.stringify(others.map((t) => ({ id: t.id, source: t.source, ephemeral: t.ephemeral, path: t.path, preview: t.preview })))}`);
    console.log(`[probe] model requests: ${JSON.stringify(mock.responsesRequests().map((r) => ({ user: lastUserText(r.body).slice(0, 60), instr: String(r.body?.instructions ?? '').slice(0, 80), tools: (r.body?.tools ?? []).length })))}`);
    expect(completed?.params?.turn?.status).toBe('completed');
    expect(oursShown).toBe(true);
    // Besides ours, the attached TUI's title generation leaves ephemeral threads loaded (source "vscode", no rollout).
    expect(loaded).toContain(threadId);
    expect(others.every((t) => t.ephemeral === true && t.path === null)).toBe(true);
    expect(loaded.length).toBe(1 + others.length);
    expect(left).toEqual([server.pid]);
    expect(left).not.toContain(tuiPid);
    expect(daemonDirs).toEqual([]);
    expect(existsSync(join(h.codexHome, 'packages', 'app-server-daemon'))).toBe(false);
    expect(findRollouts(h.codexHome)).toHaveLength(1);

    await stopAppServer(server);
    expect(await waitUntilNone(() => ours(root), 3_000, 50)).toEqual([]);

    // Baseline on the same machine and thread: the local design's `codex resume <id>` (no server).
    const local: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const tui = await spawnTui(h, ['resume', threadId, '-c', 'features.daemon_auto_start=false']);
      await tui.screen.waitFor(/Ask Codex/);
      local.push(performance.now() - tui.t0);
      await tui.pty.stop();
    }
    // Does the local TUI generate a title too (the extra model request seen above)?
    const titleRequests = () => mock.responsesRequests().filter(isTitleRequest).length;
    const titlesBefore = titleRequests();
    const tui = await spawnTui(h, ['resume', threadId, '-c', 'features.daemon_auto_start=false']);
    await tui.screen.waitFor(/Ask Codex/);
    await typeLine(tui.pty, tui.screen, 'typed in the local tui');
    await tui.screen.waitFor(/Echo: typed in the local tui/);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await tui.pty.stop();
    console.log(`[probe] baseline local \`codex resume <id>\` (no server) spawn → "Ask Codex": ${stats(local)}; title requests by a local TUI turn: ${titleRequests() - titlesBefore}`);
    expect(await waitUntilNone(() => ours(root), 3_000, 50)).toEqual([]);
  }, 240_000);

  it('4. an approval asked in a turn typed in the TUI: who gets the server request, can ours answer', async () => {
    const h = hermetic();
    const { server, socketPath } = await startAppServer(h);
    const client = await AppServerClient.connect('probe', socketPath);
    clients.push(client);
    const threadId = await seedThread(client, h);
    const { pty, screen } = await spawnTui(h, ['resume', threadId, '--remote', `unix://${socketPath}`]);
    await screen.waitFor(/Ask Codex/);

    // (a) ours answers first.
    const target = join(h.workDir, 'ours.txt');
    mock.enqueue(execCommandCall(`echo ours > ${target}`, ESCALATED), { kind: 'text', text: 'written by ours' });
    await typeLine(pty, screen, 'please write ours');
    const ask = await client.waitFor((m) => m.id !== undefined && m.method !== undefined && /requestApproval/.test(m.method), 'an approval request on our client', 15_000).then(
      (m) => m,
      () => undefined,
    );
    const dialog = await screen.waitFor(/Would you like to run/, 10_000).then(
      (s) => s,
      () => screen.text(),
    );
    const completedBefore = client.notifications('turn/completed').length;
    if (ask) client.respond(ask.id!, { decision: 'accept' });
    const resolvedOnOurs = ask ? await client.waitFor((m) => m.method === 'serverRequest/resolved', 'serverRequest/resolved', 10_000).then(() => true, () => false) : false;
    const dialogGone = await screen.waitFor(/^(?![\s\S]*Would you like to run)/, 10_000).then(() => true, () => false);
    await client.waitFor(() => client.notifications('turn/completed').length > completedBefore, 'turn/completed after our answer');
    const oursWritten = existsSync(target) ? readFileSync(target, 'utf8') : undefined;
    console.log(
      `[probe] approval (a): our client got ${ask ? `${ask.method} (id ${JSON.stringify(ask.id)})` : 'NOTHING'}; the TUI showed a dialog: ${/Would you like to run/.test(dialog)}; ` +
        `after ours answered accept: serverRequest/resolved on ours ${resolvedOnOurs}, file ${JSON.stringify(oursWritten)}, TUI dialog gone ${dialogGone}`,
    );

    // (b) the TUI answers first: does ours learn it was resolved?
    const target2 = join(h.workDir, 'tui.txt');
    mock.enqueue(execCommandCall(`echo tui > ${target2}`, ESCALATED), { kind: 'text', text: 'written by the tui' });
    const before = client.received.length;
    await typeLine(pty, screen, 'please write from the tui');
    const ask2 = await client.waitFor((m) => client.received.indexOf(m) >= before && m.id !== undefined && m.method !== undefined && /requestApproval/.test(m.method), 'second approval request', 15_000).then(
      (m) => m,
      () => undefined,
    );
    await screen.waitFor(/Would you like to run/, 15_000);
    const completedBefore2 = client.notifications('turn/completed').length;
    pty.write('y');
    await client.waitFor(() => client.notifications('turn/completed').length > completedBefore2, 'turn/completed after the TUI answered');
    const resolved2 = client.received.slice(before).find((m) => m.method === 'serverRequest/resolved');
    const tuiWritten = existsSync(target2) ? readFileSync(target2, 'utf8') : undefined;
    // A late answer of ours to a request the TUI already answered.
    if (ask2) client.respond(ask2.id!, { decision: 'decline' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    console.log(
      `[probe] approval (b): our client got ${ask2 ? ask2.method : 'NOTHING'}; after the TUI answered 'y': serverRequest/resolved on ours ${resolved2 ? JSON.stringify(resolved2.params) : 'NO'}, file ${JSON.stringify(tuiWritten)}; server alive after our late answer ${server.exitCode === null}`,
    );

    // (c) a turn started by OUR client asks: does the attached TUI show the dialog too, and answer it?
    const target3 = join(h.workDir, 'ourturn.txt');
    mock.enqueue(execCommandCall(`echo ourturn > ${target3}`, ESCALATED));
    const before3 = client.received.length;
    const completedBefore3 = client.notifications('turn/completed').length;
    await client.request('turn/start', { threadId, input: [{ type: 'text', text: 'our turn asks', text_elements: [] }] });
    const ask3 = await client.waitFor((m) => client.received.indexOf(m) >= before3 && m.id !== undefined && /requestApproval/.test(m.method ?? ''), 'third approval request', 15_000);
    const dialog3 = await screen.waitFor(/Would you like to run/, 10_000).then(() => true, () => false);
    if (dialog3) pty.write('y');
    else client.respond(ask3.id!, { decision: 'accept' });
    await client.waitFor(() => client.notifications('turn/completed').length > completedBefore3, 'turn/completed of our asking turn');
    const resolved3 = client.received.slice(before3).find((m) => m.method === 'serverRequest/resolved');
    console.log(
      `[probe] approval (c) in a turn started by our client: ours got ${ask3.method}; the attached TUI showed the dialog ${dialog3}${dialog3 ? ", answered there with 'y'" : ''}; serverRequest/resolved on ours ${resolved3 !== undefined}; file ${JSON.stringify(existsSync(target3) ? readFileSync(target3, 'utf8') : undefined)}`,
    );

    expect(ask?.method).toBe('item/commandExecution/requestApproval');
    expect(dialog).toMatch(/Would you like to run/);
    expect(resolvedOnOurs).toBe(true);
    expect(dialogGone).toBe(true);
    expect(ask2?.method).toBe('item/commandExecution/requestApproval');
    expect(resolved2).toBeDefined();
    expect(oursWritten).toBe('ours\n');
    expect(tuiWritten).toBe('tui\n');
    await pty.stop();
    await stopAppServer(server);
  }, 120_000);
  it('6. live streaming of a slow TUI turn to our client; the server dying under an attached TUI', async () => {
    const h = hermetic();
    const { server, socketPath } = await startAppServer(h);
    const client = await AppServerClient.connect('probe', socketPath);
    clients.push(client);
    const threadId = await seedThread(client, h);
    const { pty, screen } = await spawnTui(h, ['resume', threadId, '--remote', `unix://${socketPath}`]);
    await screen.waitFor(/Ask Codex/);

    // A slow stream (10 text deltas, 150 ms after every SSE event): do the deltas reach our client as they come?
    const text = 'one two three four five six seven eight nine ten';
    mock.enqueue({ kind: 'text', text, chunks: 10, delayMs: 150 });
    const before = client.received.length;
    const completedBefore = client.notifications('turn/completed').length;
    await typeLine(pty, screen, 'stream slowly');
    await client.waitFor(() => client.notifications('turn/completed').length > completedBefore, 'turn/completed of the slow turn');
    const deltas = client.received.slice(before).filter((m) => m.method === 'item/agentMessage/delta');
    const completed = client.received.slice(before).find((m) => m.method === 'item/completed' && m.params?.item?.type === 'agentMessage');
    const spreadMs = deltas.length > 1 ? deltas.at(-1)!.at - deltas[0]!.at : 0;
    const gaps = deltas.slice(1).map((d, i) => Math.round(d.at - deltas[i]!.at));
    console.log(
      `[probe] slow TUI turn seen by our client: ${deltas.length} deltas spread over ${ms(spreadMs)} (gaps ${JSON.stringify(gaps)}), joined ${JSON.stringify(deltas.map((d) => d.params?.delta).join(''))}; ` +
        `last delta → item/completed ${completed && deltas.length ? ms(completed.at - deltas.at(-1)!.at) : 'n/a'}`,
    );

    // The server goes away under the attached TUI.
    const stale = daemonSocketOf(socketPath);
    const t0 = performance.now();
    process.kill(-server.pid!, 'SIGKILL');
    const tuiExit = await Promise.race([pty.exited.then((e) => ({ ...e, afterMs: Math.round(performance.now() - t0) })), new Promise((resolve) => setTimeout(() => resolve('still running after 5 s'), 5_000))]);
    const screenAfter = screen.text();
    console.log(`[probe] app-server SIGKILLed under the attached TUI: TUI ${JSON.stringify(tuiExit)}; stale socket left in /tmp/codex-daemon-<uid>: ${existsSync(stale)}; screen:\n${screenAfter}`);

    // A new server on the same path (stale socket still there): does the TUI reconnect and go on with the thread?
    const t1 = performance.now();
    const second = await startAppServer(h).then(
      (s) => s,
      (error: Error) => error,
    );
    const restartMs = performance.now() - t1;
    let reconnect = 'no second server';
    if (!(second instanceof Error)) {
      const reconnected = await screen.waitFor(/^(?![\s\S]*Reconnecting to server)/, 20_000).then(() => performance.now() - t1, () => undefined);
      const observer = await AppServerClient.connect('probe-2', second.socketPath);
      clients.push(observer);
      await observer.request('thread/resume', { threadId, excludeTurns: true });
      const completedBefore2 = observer.notifications('turn/completed').length;
      await typeLine(pty, screen, 'after the restart');
      const echoed = await screen.waitFor(/Echo: after the restart/, 15_000).then(() => true, () => false);
      const seenByNew = await observer.waitFor(() => observer.notifications('turn/completed').length > completedBefore2, 'turn/completed on the new server', 5_000).then(() => true, () => false);
      reconnect = `second server listening after ${ms(second.readyMs)} (stale socket replaced); TUI "Reconnecting" gone after ${reconnected === undefined ? 'NEVER (20 s)' : ms(reconnected)}; a turn typed then: echoed ${echoed}, seen by a client of the new server ${seenByNew}; rollouts ${findRollouts(h.codexHome).length}`;
      if (!echoed) reconnect += `\n${screen.text()}`;
    } else reconnect = `second server failed after ${ms(restartMs)}: ${second.message}`;
    console.log(`[probe] restart under the attached TUI: ${reconnect}`);
    expect(deltas.map((d) => d.params?.delta).join('')).toBe(text);
  }, 120_000);
});
