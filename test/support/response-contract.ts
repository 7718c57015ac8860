/**
 * The OpenAPI document as a contract on what `ase serve` really answers: `watchContract` taps a
 * running server's Node HTTP server (every response it writes, whichever client asked: `fetch`, the
 * `ase/client` library, an SSE reader, a WebSocket upgrade) and checks each one against
 * `openApiDocument()`: the status is declared for the operation, the content type is one declared
 * for that status, and a JSON body validates (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses). An
 * undeclared response is a violation that `startTestServer`'s `stop()` turns into a failed test.
 * It taps the server side, not a client, so no test can get past it by asking in another way.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { openApiDocument } from '../../src/server/openapi.js';
import type { RunningServer } from '../../src/server.js';

/** One response as the server wrote it. */
export interface ObservedResponse {
  method: string;
  /** The request path, as sent (percent-escapes kept). */
  path: string;
  status: number;
  /** The media type without parameters (`application/json`), or undefined when none was sent. */
  contentType: string | undefined;
  body: Buffer;
  /** Refused or accepted WebSocket upgrade (written on the raw socket, no body). */
  upgrade: boolean;
}

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

const DOCUMENT_ID = 'https://agent-session-engine.invalid/openapi.json';
/** Bodies kept for validation; a longer one (an event stream) is checked by its content type only. */
const MAX_KEPT_BODY = 4 * 1024 * 1024;
/** What the server may answer a path no operation declares: its 404, or its checks before routing (Host, bad path). */
const UNROUTED_STATUSES = new Set([400, 404, 421]);

export class ResponseContract {
  /** `METHOD /template` of every operation some response was checked against. */
  readonly seen = new Set<string>();
  /** Every response that broke the contract, described. */
  readonly violations: string[] = [];
  readonly operations: Operation[];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ReturnType<Ajv2020['compile']>>();

  constructor(readonly document: Record<string, unknown> = openApiDocument()) {
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    const paths = document.paths as Record<string, Record<string, { responses: Operation['responses'] }>>;
    this.operations = Object.entries(paths).flatMap(([template, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        template,
        // A path parameter is one segment; the server matches the raw (still escaped) path.
        pattern: new RegExp(`^${template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+')}$`),
        responses: operation.responses,
      })),
    );
  }

  /** Every `METHOD /template` the document declares. */
  declared(): string[] {
    return this.operations.map((o) => `${o.method} ${o.template}`);
  }

  /** Checks every response `server` writes from now on. */
  watch(server: Server): void {
    server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => this.tapResponse(request, response));
    // Upgrades are answered on the raw socket by the WebSocket adapter, which writes a refusal itself
    // only while it is the sole 'upgrade' listener: tapped through emit so that count stays the same.
    const emit = server.emit.bind(server);
    server.emit = ((event: string, ...args: unknown[]) => {
      if (event === 'upgrade') this.tapUpgrade(args[0] as IncomingMessage, args[1] as Duplex);
      return emit(event, ...args);
    }) as typeof server.emit;
  }

  /** Throws the violations so far (once: they are cleared), naming where the contract lives. */
  assertKept(): void {
    const violations = this.violations.splice(0);
    if (violations.length > 0) throw new Error(`responses the OpenAPI document does not declare (src/server/openapi.ts):\n${violations.join('\n')}`);
  }

  /** Checks one response (exported for the contract test's own cases). */
  check(observed: ObservedResponse): void {
    const where = `${observed.method} ${observed.path} → ${observed.status}`;
    // HEAD answers as GET without a body; OPTIONS is the CORS preflight, which OpenAPI does not describe.
    if (observed.method === 'OPTIONS') return;
    const method = observed.method === 'HEAD' ? 'GET' : observed.method;
    const operation = this.operations.find((o) => o.method === method && o.pattern.test(observed.path));
    if (!operation) {
      if (UNROUTED_STATUSES.has(observed.status) && !observed.upgrade) this.checkBody(where, observed, '#/components/schemas/Error', 'application/json');
      else this.violations.push(`${where}: no operation in the document for ${method} ${observed.path}`);
      return;
    }
    const key = `${operation.method} ${operation.template}`;
    this.seen.add(key);
    const declared = operation.responses[String(observed.status)] ?? operation.responses.default;
    if (!declared) {
      this.violations.push(`${where}: status ${observed.status} is not declared for ${key} (declared: ${Object.keys(operation.responses).join(', ')})`);
      return;
    }
    if (observed.upgrade || observed.method === 'HEAD') return; // no body on the raw socket or for HEAD
    const content = declared.content;
    if (!content) {
      if (observed.body.length > 0) this.violations.push(`${where}: ${key} declares no body for ${observed.status}, got ${observed.body.length} bytes (${observed.contentType})`);
      return;
    }
    if (observed.contentType === undefined || !(observed.contentType in content)) {
      this.violations.push(`${where}: content type ${observed.contentType} is not declared for ${key} ${observed.status} (declared: ${Object.keys(content).join(', ')})`);
      return;
    }
    const pointer = `#/paths/${escapePointer(operation.template)}/${operation.method.toLowerCase()}/responses/${observed.status in operation.responses ? observed.status : 'default'}/content/${escapePointer(observed.contentType)}/schema`;
    this.checkBody(where, observed, pointer, observed.contentType);
  }

  private checkBody(where: string, observed: ObservedResponse, pointer: string, mediaType: string): void {
    if (mediaType !== 'application/json') return; // text, HTML, SVG, scripts, event streams: the type is the contract
    if (observed.contentType !== 'application/json') {
      this.violations.push(`${where}: expected application/json, got ${observed.contentType}`);
      return;
    }
    if (observed.body.length > MAX_KEPT_BODY) return;
    let body: unknown;
    try {
      body = JSON.parse(observed.body.toString('utf8'));
    } catch {
      this.violations.push(`${where}: the body is not JSON: ${observed.body.toString('utf8').slice(0, 200)}`);
      return;
    }
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.validators.set(pointer, validate);
    }
    if (!validate(body)) {
      const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}`).join('; ');
      this.violations.push(`${where}: the body does not fit ${pointer}: ${problems}; body: ${JSON.stringify(body).slice(0, 300)}`);
    }
  }

  private tapResponse(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    let kept = 0;
    let headers: Record<string, unknown> = {};
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function' || kept > MAX_KEPT_BODY) return;
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array);
      kept += buffer.length;
      chunks.push(buffer);
    };
    const writeHead = response.writeHead.bind(response);
    response.writeHead = ((status: number, ...rest: unknown[]) => {
      const given = rest.find((r) => typeof r === 'object' && r !== null);
      if (Array.isArray(given)) {
        // [name, value, name, value...] or [[name, value]...]
        const flat = given.flat() as string[];
        for (let i = 0; i + 1 < flat.length; i += 2) headers[String(flat[i]).toLowerCase()] = flat[i + 1];
      } else if (given) headers = Object.fromEntries(Object.entries(given).map(([k, v]) => [k.toLowerCase(), v]));
      return writeHead(status, ...(rest as []));
    }) as typeof response.writeHead;
    const write = response.write.bind(response);
    response.write = ((chunk: unknown, ...rest: unknown[]) => {
      keep(chunk, rest[0]);
      return write(chunk as never, ...(rest as []));
    }) as typeof response.write;
    const end = response.end.bind(response);
    response.end = ((chunk?: unknown, ...rest: unknown[]) => {
      keep(chunk, rest[0]);
      return end(chunk as never, ...(rest as []));
    }) as typeof response.end;
    response.once('close', () => {
      if (!response.headersSent) return; // the client went away before any answer
      const type = headers['content-type'] ?? response.getHeader('content-type');
      this.check({
        method: request.method ?? 'GET',
        path: (request.url ?? '/').split('?')[0]!,
        status: response.statusCode,
        contentType: mediaTypeOf(type),
        body: Buffer.concat(chunks),
        upgrade: false,
      });
    });
  }

  private tapUpgrade(request: IncomingMessage, socket: Duplex): void {
    let head = '';
    const write = socket.write.bind(socket);
    const end = socket.end.bind(socket);
    const keep = (chunk: unknown) => {
      if (head.length < 64 && (typeof chunk === 'string' || chunk instanceof Uint8Array)) head += Buffer.from(chunk as never).toString('latin1').slice(0, 64);
    };
    socket.write = ((chunk: unknown, ...rest: unknown[]) => (keep(chunk), write(chunk as never, ...(rest as [])))) as typeof socket.write;
    socket.end = ((chunk?: unknown, ...rest: unknown[]) => (keep(chunk), end(chunk as never, ...(rest as [])))) as typeof socket.end;
    socket.once('close', () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1];
      if (status === undefined) return; // closed before any answer
      this.check({ method: request.method ?? 'GET', path: (request.url ?? '/').split('?')[0]!, status: Number(status), contentType: undefined, body: Buffer.alloc(0), upgrade: true });
    });
  }
}

function mediaTypeOf(value: unknown): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (typeof text !== 'string' || text === '') return undefined;
  return text.split(';')[0]!.trim().toLowerCase();
}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Taps `server` with a fresh contract; read its `violations` and `seen`. */
export function watchContract(server: Pick<RunningServer, 'httpServer'>): ResponseContract {
  const contract = new ResponseContract();
  contract.watch(server.httpServer as Server); // an HTTP/1 server: startServer does not serve HTTP/2
  return contract;
}
