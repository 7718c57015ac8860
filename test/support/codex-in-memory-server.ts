/**
 * An in-memory stand-in for a `codex app-server` (or `codex mcp-server`) process, plugged into a
 * Codex engine through its `launcher` option: no binary, no pipes. It answers the handshake, hands
 * every other message the engine writes to the test's `answer` hook, lets the test push server
 * messages and non-JSON stdout lines at any moment, and records what the engine wrote and when it
 * was stopped. A method neither the handshake nor the hook answers is never answered, as with a
 * wedged server.
 */
import type { NdjsonLauncher, NdjsonProcessSpec } from '../../src/engines/codex/index.js';
import type { ProcessExit } from '../../src/engines/transport/process-supervisor.js';

/** One message as the engine wrote it. */
export interface WrittenMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
}

export interface InMemoryCodexServer {
  readonly launcher: NdjsonLauncher;
  /** Delivers one server message to the engine, as if read from stdout. */
  push(message: unknown): void;
  /** Delivers one stdout line that is not JSON. */
  pushInvalidLine(line: string): void;
  /** Everything the engine wrote, in order. */
  readonly written: WrittenMessage[];
  /** The methods the engine wrote, in order (undefined for answers to server requests). */
  methods(): (string | undefined)[];
  /** Date.now() at the engine's first stop() of the transport. */
  stoppedAt(): number | undefined;
}

export interface InMemoryCodexServerOptions {
  /**
   * Which protocol's handshake the server answers by itself: app-server (`initialize`,
   * `thread/start`; the default) or mcp-server (`initialize`, `tools/list`).
   */
  protocol?: 'app-server' | 'mcp-server';
  /**
   * The test's own behaviour: called for every written message (handshake messages included,
   * just before the server's own answer, so a hook can push notifications during the handshake).
   */
  answer?(message: WrittenMessage, push: (message: unknown) => void): void;
  /** What `exited` resolves to once stop() was called (default: code 0). */
  exit?: ProcessExit;
}

/** The thread `thread/start` (app-server) answers with; it has no rollout path. */
export const IN_MEMORY_THREAD = 'thread-1';

function handshakeAnswer(protocol: 'app-server' | 'mcp-server', m: WrittenMessage): unknown {
  if (protocol === 'app-server') {
    if (m.method === 'initialize') return { id: m.id, result: { userAgent: 'fake' } };
    if (m.method === 'thread/start') return { id: m.id, result: { thread: { id: IN_MEMORY_THREAD, path: null }, model: 'm' } };
    return undefined;
  }
  if (m.method === 'initialize') {
    return { jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'fake', version: '0.153.4' } } };
  }
  if (m.method === 'tools/list') return { jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'codex' }, { name: 'codex-reply' }] } };
  return undefined;
}

export function inMemoryCodexServer(options: InMemoryCodexServerOptions = {}): InMemoryCodexServer {
  const protocol = options.protocol ?? 'app-server';
  let spec: NdjsonProcessSpec | undefined;
  const launched = (): NdjsonProcessSpec => {
    if (!spec) throw new Error('in-memory codex server: the engine has not launched it yet');
    return spec;
  };
  let stoppedAt: number | undefined;
  let exit!: () => void;
  const exited = new Promise<void>((resolve) => (exit = resolve));
  const written: WrittenMessage[] = [];
  const push = (message: unknown): void => launched().onMessage(message);

  const launcher: NdjsonLauncher = async (s) => {
    spec = s;
    return {
      pid: undefined,
      write: async (value) => {
        const message = value as WrittenMessage;
        written.push(message);
        // Answer on a later turn of the event loop, as a real server reading its stdin would.
        setImmediate(() => {
          options.answer?.(message, push);
          const answer = handshakeAnswer(protocol, message);
          if (answer !== undefined) push(answer);
        });
      },
      exited: exited.then(() => options.exit ?? { code: 0, signal: null }),
      stop: async () => {
        stoppedAt ??= Date.now();
        exit();
      },
      stderrTail: () => '',
    };
  };

  return {
    launcher,
    push,
    pushInvalidLine: (line) => launched().onInvalidLine('not JSON', line),
    written,
    methods: () => written.map((m) => m.method),
    stoppedAt: () => stoppedAt,
  };
}
