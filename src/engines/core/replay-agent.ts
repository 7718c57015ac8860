/**
 * The stand-in agent of a replay: a real child process, spawned by the real engine code through
 * its usual transport, that answers from a recording (recording.ts) instead of running the agent.
 *
 * The child is a few lines of JavaScript (`node -e`) that relay its stdin and stdout over a Unix
 * socket to a {@link ReplayScript} in this process: the engine meets a real process (pid, pipes,
 * signals, the stop ladder, an exit status) while the checking stays typed and its mismatch an
 * AseError here. The script waits for each line the engine writes, checks it against the next
 * recorded host line (ids the host mints are mapped; a {@link REDACTED} value matches anything),
 * then answers with the agent lines that followed it in the recording, up to the next host line.
 * When the engine closes stdin, the rest is written and the child exits as the recorded agent did.
 * A host line that differs ends the child with exit code 9 and the reason on stderr.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { AseError } from '../../errors.js';
import { REDACTED, type RecordedGeneration } from './recording.js';

/** Exit code of a stand-in whose host went another way than the recording. */
export const REPLAY_MISMATCH_EXIT_CODE = 9;

/** The relay the child runs: stdin → socket; socket JSON lines → stdout / stderr / exit. CommonJS, Node ≥ 18. */
const RELAY_SOURCE = `
const sock = require('node:net').connect({ path: process.env.ASE_REPLAY_SOCKET, allowHalfOpen: true });
process.stdin.pipe(sock);
let buffer = '';
sock.setEncoding('utf8');
sock.on('data', (chunk) => {
  buffer += chunk;
  for (let nl = buffer.indexOf('\\n'); nl >= 0; nl = buffer.indexOf('\\n')) {
    const m = JSON.parse(buffer.slice(0, nl));
    buffer = buffer.slice(nl + 1);
    if (m.out !== undefined) process.stdout.write(m.out + '\\n');
    if (m.err !== undefined) process.stderr.write(m.err);
    if (m.exit) process.stdout.write('', () => { if (m.exit.signal) process.kill(process.pid, m.exit.signal); process.exit(m.exit.code ?? 0); });
  }
});
sock.on('error', () => process.exit(70));
`;

/** Recorded text → this run's text (the recorded workDir → this one's), applied to every recorded line. */
export type ReplayVars = ReadonlyArray<readonly [recorded: string, now: string]>;

type JsonMessage = Record<string, unknown>;

/** The checking and answering of one generation, without any process (so it is testable alone). */
export class ReplayScript {
  readonly #gen: number;
  readonly #records: { direction: 'to_agent' | 'from_agent'; line: string }[];
  #cursor = 0;
  #hostLines = 0;
  /** Recorded id of a request the host started → the id the host used this time. */
  readonly #hostIds = new Map<string, unknown>();
  /** The first mismatch, once there is one (the script then answers nothing more). */
  mismatch: AseError | undefined;
  readonly exit: { code: number | null; signal: string | null };

  constructor(generation: RecordedGeneration, vars: ReplayVars = []) {
    const fill = (line: string) => vars.reduce((text, [recorded, now]) => (recorded === now || recorded === '' ? text : text.split(recorded).join(now)), line);
    this.#gen = generation.gen;
    this.#records = generation.traffic.map((r) => ({ direction: r.direction, line: fill(r.line) }));
    this.exit = generation.exit ?? { code: 0, signal: null };
  }

  /** The agent lines recorded before the host's first line (usually none). */
  opening(): string[] {
    return this.#agentLines();
  }

  /** True once every recorded line was matched or written. */
  get finished(): boolean {
    return this.#cursor >= this.#records.length;
  }

  /** Checks the engine's next line; returns the agent lines to answer with. Throws REPLAY_MISMATCH. */
  hostLine(line: string): string[] {
    if (this.mismatch) throw this.mismatch;
    this.#hostLines++;
    const expected = this.#records[this.#cursor];
    if (!expected || expected.direction !== 'to_agent') {
      throw this.#fail(`the recording has ${expected ? 'agent output' : 'nothing more'} here, not a host line`, expected?.line, line);
    }
    const got = parseJson(line);
    const want = parseJson(expected.line);
    if (got === undefined || want === undefined) {
      if (line !== expected.line) throw this.#fail('the line differs from the recording', expected.line, line);
    } else if (!this.#matches(want, got)) {
      throw this.#fail('the line differs from the recording', expected.line, line);
    }
    this.#cursor++;
    return this.#agentLines();
  }

  /** The engine closed stdin: what the agent printed after the last host line. Throws REPLAY_MISMATCH when host lines are missing. */
  endOfInput(): string[] {
    if (this.mismatch) throw this.mismatch;
    const missing = this.#records.slice(this.#cursor).filter((r) => r.direction === 'to_agent');
    if (missing.length > 0) throw this.#fail(`stdin ended with ${missing.length} recorded host line(s) still to come`, missing[0]!.line, undefined);
    return this.#agentLines();
  }

  #agentLines(): string[] {
    const out: string[] = [];
    while (this.#cursor < this.#records.length && this.#records[this.#cursor]!.direction === 'from_agent') {
      const { line } = this.#records[this.#cursor++]!;
      out.push(this.#mapResponseId(line));
    }
    return out;
  }

  /** Compares a host message with the recorded one, learning the id of a request the host started. */
  #matches(want: unknown, got: unknown): boolean {
    const recorded = hostRequestId(want);
    const actual = hostRequestId(got);
    if (recorded && actual && recorded.key === actual.key) {
      this.#hostIds.set(JSON.stringify(recorded.id), actual.id);
      got = { ...(got as JsonMessage), [actual.key]: recorded.id };
    }
    return sameJson(want, got);
  }

  /** A recorded answer to a host request carries the id the host used this time. */
  #mapResponseId(line: string): string {
    if (this.#hostIds.size === 0) return line;
    const msg = parseJson(line);
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return line;
    const m = msg as JsonMessage;
    const response = m['response'];
    if (m['type'] === 'control_response' && typeof response === 'object' && response !== null) {
      const key = JSON.stringify((response as JsonMessage)['request_id']);
      if (this.#hostIds.has(key)) return JSON.stringify({ ...m, response: { ...(response as JsonMessage), request_id: this.#hostIds.get(key) } });
    }
    if (m['method'] === undefined && m['id'] !== undefined && this.#hostIds.has(JSON.stringify(m['id']))) return JSON.stringify({ ...m, id: this.#hostIds.get(JSON.stringify(m['id'])) });
    return line;
  }

  #fail(why: string, expected: string | undefined, got: string | undefined): AseError {
    const line = this.#hostLines;
    this.mismatch = new AseError(
      'REPLAY_MISMATCH',
      `replay of generation ${this.#gen}: host line ${line}: ${why}` +
        (expected !== undefined ? `\n  recorded: ${expected.slice(0, 600)}` : '') +
        (got !== undefined ? `\n  written:  ${got.slice(0, 600)}` : ''),
      { details: { gen: this.#gen, line, expected, got } },
    );
    return this.mismatch;
  }
}

/** The child process side: what to spawn and the socket it talks through. */
export interface ReplayRelay {
  file: string;
  args: string[];
  /** Added to the child's environment. */
  env: Record<string, string>;
  /** Closes the socket server (after the child is gone). */
  close(): void;
}

/**
 * Serves `script` to one stand-in child: listens on a fresh Unix socket, and returns how to spawn
 * the child. A mismatch is also reported to `onMismatch` (the child then exits 9).
 */
export async function openReplayRelay(script: ReplayScript, onMismatch: (error: AseError) => void): Promise<ReplayRelay> {
  const path = join(tmpdir(), `ase-replay-${randomUUID().slice(0, 12)}.sock`);
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => serve(socket, script, onMismatch));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    file: process.execPath,
    args: ['-e', RELAY_SOURCE],
    env: { ASE_REPLAY_SOCKET: path },
    close: () => void server.close(),
  };
}

function serve(socket: Socket, script: ReplayScript, onMismatch: (error: AseError) => void): void {
  const send = (message: { out?: string; err?: string; exit?: { code: number | null; signal: string | null } }) => {
    if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
  };
  const fail = (error: AseError) => {
    onMismatch(error);
    send({ err: `replay: ${error.message}\n`, exit: { code: REPLAY_MISMATCH_EXIT_CODE, signal: null } });
  };
  const answer = (run: () => string[]): boolean => {
    try {
      for (const out of run()) send({ out });
      return true;
    } catch (error) {
      fail(error as AseError);
      return false;
    }
  };
  answer(() => script.opening());
  let buffer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    if (script.mismatch) return;
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl >= 0 && !script.mismatch; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim() !== '') answer(() => script.hostLine(line));
    }
  });
  socket.on('end', () => {
    if (script.mismatch) return;
    if (answer(() => script.endOfInput())) send({ exit: script.exit });
  });
  socket.on('error', () => undefined);
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

/** The id of a request the host started: Claude's control_request `request_id`, JSON-RPC's `id` on a request. */
function hostRequestId(msg: unknown): { key: string; id: unknown } | undefined {
  if (typeof msg !== 'object' || msg === null) return undefined;
  const m = msg as JsonMessage;
  if (m['type'] === 'control_request' && typeof m['request_id'] === 'string') return { key: 'request_id', id: m['request_id'] };
  if (typeof m['method'] === 'string' && m['id'] !== undefined) return { key: 'id', id: m['id'] };
  return undefined;
}

/** Deep equality where a {@link REDACTED} string on the host's side matches any recorded value. */
function sameJson(recorded: unknown, written: unknown): boolean {
  if (written === REDACTED) return true;
  if (Array.isArray(recorded) || Array.isArray(written)) {
    return Array.isArray(recorded) && Array.isArray(written) && recorded.length === written.length && recorded.every((v, i) => sameJson(v, written[i]));
  }
  if (typeof recorded === 'object' && recorded !== null && typeof written === 'object' && written !== null) {
    const a = Object.keys(recorded).filter((k) => (recorded as JsonMessage)[k] !== undefined);
    const b = Object.keys(written).filter((k) => (written as JsonMessage)[k] !== undefined);
    return a.length === b.length && a.every((k) => sameJson((recorded as JsonMessage)[k], (written as JsonMessage)[k]));
  }
  return isDeepStrictEqual(recorded, written);
}
