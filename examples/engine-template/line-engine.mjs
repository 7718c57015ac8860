// A template AgentEngine for a line-based agent (line-agent.mjs speaks the protocol described
// there): copy this directory, replace the protocol parts (`#onLine`, the words written in `send`,
// `abort`, `answerPermission`), keep the rest. It imports only the public package, and the kit
// (agent-session-engine/testing) proves it keeps the engine contract: conformance.test.mjs.
//
// The contract in short (docs/writing-an-engine.md): every event carries the start's `gen` and the
// time; `ready` once the agent can take a turn; one `turn_complete` per turn; a `tool_result` only
// after its `tool_call`; unknown or malformed agent output is skipped, never thrown; `stop()` is
// idempotent, leaves no process and ends with `exited`; nothing is emitted after `exited`.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { AseError, engineTier } from 'agent-session-engine';

/** The agent is our stand-in unless `options.command`/`options.args` name another. */
const STAND_IN = fileURLToPath(new URL('./line-agent.mjs', import.meta.url));
/** A longer line is skipped whole (bounded memory however much the agent prints). */
const MAX_LINE_CHARS = 1024 * 1024;
const ZERO_USAGE = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

export const LINE_CAPABILITIES = Object.freeze({
  streamingInput: false,
  permissions: true,
  interrupt: true,
  resume: true,
  localMode: false,
  transcriptTail: false,
  cost: false,
  tier: engineTier('hooked', { turnEnd: 'authoritative', toolUse: 'cooperative', permission: 'authoritative', cost: 'absent', fileChanges: 'absent' }),
});

/** The factory a session (or the kit) creates engines from: `createSession({ agent: 'line', engines: [lineEngine()] })`. */
export function lineEngine(options = {}) {
  return { name: 'line', capabilities: LINE_CAPABILITIES, create: (context) => new LineEngine(context, options) };
}

export class LineEngine {
  capabilities = LINE_CAPABILITIES;
  /** Lines the engine could not read (kept short, for diagnostics). */
  skipped = [];
  #context;
  #options;
  #listeners = new Set();
  #spec;
  #child;
  #exited = false;
  #stopping;
  /** The running turn: its text so far and message id, and whether we cancelled it. */
  #turn;
  #pending = new Map();
  #buffer = '';
  #discarding = false;
  #messages = 0;

  constructor(context, options = {}) {
    this.#context = context;
    this.#options = options;
  }

  onEvent(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #emit(body) {
    if (this.#exited) return;
    if (body.type === 'exited') this.#exited = true;
    const event = { ...body, gen: this.#spec.gen, at: this.#context.now() };
    for (const listener of [...this.#listeners]) listener(event);
  }

  async start(spec) {
    if (this.#spec) throw new AseError('INVALID_INPUT', 'line engine: start() twice');
    this.#spec = spec;
    const options = { ...this.#options, ...spec.options };
    const file = options.command ?? process.execPath;
    const args = [...(options.args ?? [STAND_IN]), ...(spec.resumeToken ? ['--resume', spec.resumeToken] : [])];
    // Tell the host about the process (it records it, and reaps it if this host dies).
    const watch = this.#context.processes?.spawning(file);
    const child = spawn(file, args, { cwd: spec.workDir, stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env, ...watch?.env } });
    this.#child = child;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => this.#onData(chunk));
    child.stderr.resume(); // always drained: a full pipe would block the agent
    child.stdin.on('error', () => undefined); // a dead agent's stdin; its exit is reported below
    child.on('spawn', () => watch?.spawned({ pid: child.pid, pgid: child.pid, startTime: undefined }));
    child.on('error', (error) => this.#onExit(null, null, `spawn failed: ${error.message}`));
    // 'close', not 'exit': the agent's last lines are read before its end is reported.
    child.on('close', (code, signal) => {
      void watch?.reaped();
      this.#onExit(code, signal, this.#stopping ? 'stopped' : 'the agent exited');
    });
  }

  #onData(chunk) {
    let rest = chunk;
    for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n')) {
      const line = this.#buffer + rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      this.#buffer = '';
      if (this.#discarding) this.#discarding = false;
      else this.#onLine(line);
    }
    if (this.#discarding) return;
    this.#buffer += rest;
    if (this.#buffer.length > MAX_LINE_CHARS) {
      this.#skip(this.#buffer, 'line too long');
      this.#buffer = '';
      this.#discarding = true;
    }
  }

  #skip(line, why) {
    if (this.skipped.length < 100) this.skipped.push({ why, line: line.slice(0, 200) });
  }

  /** One line of the agent's protocol (line-agent.mjs) as AgentEvents. */
  #onLine(line) {
    const [word, ...rest] = line.split(' ');
    try {
      switch (word) {
        case 'READY':
          this.#emit({ type: 'session_identified', resumeToken: rest[0] });
          return this.#emit({ type: 'ready' });
        case 'TEXT': {
          const text = JSON.parse(rest.join(' '));
          if (!this.#turn || typeof text !== 'string') return this.#skip(line, 'text outside a turn');
          this.#turn.text += text;
          return this.#emit({ type: 'text_delta', messageId: this.#turn.messageId, text });
        }
        case 'TOOL':
          return this.#emit({ type: 'tool_call', callId: rest[0], toolName: 'shell', input: JSON.parse(rest.slice(1).join(' ')) });
        case 'RESULT': {
          const status = { ok: 'completed', denied: 'denied', failed: 'failed' }[rest[1]];
          if (!status) return this.#skip(line, 'unknown result status');
          return this.#emit({ type: 'tool_result', callId: rest[0], status, output: JSON.parse(rest.slice(2).join(' ')), isError: status !== 'completed' });
        }
        case 'ASK': {
          // Request ids stay unique across generations: the agent's call ids restart per process.
          const requestId = `${this.#spec.gen}-${rest[0]}`;
          this.#pending.set(requestId, rest[0]);
          return this.#emit({ type: 'permission_request', requestId, toolName: 'shell', input: JSON.parse(rest.slice(1).join(' ')), callId: rest[0] });
        }
        case 'DONE':
          return this.#endTurn(this.#turn?.cancelled ? 'cancelled' : 'completed', { ...ZERO_USAGE, inputTokens: Number(rest[0]) || 0, outputTokens: Number(rest[1]) || 0 });
        case 'FAIL':
          this.#emit({ type: 'error', kind: 'transient', message: `line agent: ${JSON.parse(rest.join(' '))}`, retryable: true });
          return this.#endTurn('failed', ZERO_USAGE);
        case 'CANCELLED':
          return this.#endTurn('cancelled', ZERO_USAGE);
        default:
          return this.#skip(line, 'unknown line');
      }
    } catch {
      this.#skip(line, 'malformed line'); // bad JSON, a line cut short: skipped, never thrown
    }
  }

  #endTurn(status, usage) {
    const turn = this.#turn;
    if (!turn) return;
    this.#turn = undefined;
    this.#pending.clear();
    if (turn.text) this.#emit({ type: 'message', role: 'assistant', id: turn.messageId, blocks: [{ type: 'text', text: turn.text }] });
    this.#emit({ type: 'turn_complete', status, usage });
  }

  #assertRunning(what) {
    if (!this.#child || this.#exited || this.#stopping) throw new AseError('ENGINE_NOT_RUNNING', `line engine: ${what}() while the engine is not running`);
  }

  #write(line) {
    this.#child.stdin.write(`${line}\n`);
  }

  async send(message) {
    this.#assertRunning('send');
    if (this.#turn) throw new AseError('INVALID_INPUT', 'line engine: send() while a turn runs (the agent takes one turn at a time)');
    this.#turn = { text: '', messageId: `line-${this.#spec.gen}-${++this.#messages}`, cancelled: false };
    this.#write(`PROMPT ${JSON.stringify(message.text)}`);
  }

  async abort() {
    if (!this.#turn || this.#exited || !this.#child) return;
    this.#turn.cancelled = true;
    this.#write('CANCEL');
  }

  async answerPermission(requestId, decision) {
    this.#assertRunning('answerPermission');
    const callId = this.#pending.get(requestId);
    if (callId === undefined) return; // answered already, or its turn ended: nothing to do
    this.#pending.delete(requestId);
    this.#write(`${decision.behavior === 'allow' ? 'ALLOW' : 'DENY'} ${callId}`);
    if (decision.behavior === 'deny' && decision.interrupt) await this.abort();
  }

  /** Ends stdin, then SIGTERM, then SIGKILL; resolves once the agent is gone and `exited` was reported. */
  async stop() {
    if (!this.#child) return;
    this.#stopping ??= (async () => {
      const child = this.#child;
      const gone = new Promise((resolve) => (this.#exited ? resolve() : child.once('close', () => resolve())));
      const within = (ms) => Promise.race([gone.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), ms))]);
      child.stdin.end();
      if (!(await within(2_000))) {
        child.kill('SIGTERM');
        if (!(await within(2_000))) child.kill('SIGKILL');
      }
      await gone;
      // The exit handler reported it; a child that never spawned is reported here.
      this.#onExit(child.exitCode, child.signalCode, 'stopped');
    })();
    await this.#stopping;
  }

  #onExit(code, signal, reason) {
    if (this.#exited || !this.#spec) return;
    if (this.#turn) {
      if (!this.#stopping) this.#emit({ type: 'error', kind: 'fatal', message: `line agent exited during a turn (${reason})`, retryable: false });
      this.#endTurn(this.#stopping ? 'cancelled' : 'failed', ZERO_USAGE);
    }
    this.#emit({ type: 'exited', code, signal, reason });
  }
}
