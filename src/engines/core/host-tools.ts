/**
 * Host tools: functions of the host program the agent may call ("look up the ticket", "ask the
 * on-call human"), given as `createSession({ tools })`. This module is the one registry every engine
 * uses, whatever carries the call (Claude's in-process MCP server, Codex `dynamicTools`, a loopback
 * MCP server for ACP agents):
 * - `HostToolbox.specs` is what an engine lists to the agent (`name`, `description`, a JSON Schema);
 * - `HostToolCalls.call(name, args, {callId})` runs one call: the input is checked against the
 *   tool's schema before the handler runs, a thrown handler, an unknown tool or a bad result become
 *   an error result (never a throw), and `abortAll()` (the turn aborted, the engine stopped) aborts
 *   every running handler's `ctx.signal` and answers its call at once.
 *
 * Schemas: a zod 4 schema is checked with zod itself (the handler gets zod's output, defaults and
 * transforms applied) and listed as its `z.toJSONSchema` (draft-07, the dialect every agent CLI
 * takes); a plain JSON Schema is compiled once with ajv, the maintained reference validator (draft-07
 * by default, 2019-09 / 2020-12 when its `$schema` says so), so a broken schema is refused when the
 * session is created, not at the first call. Tools are code: they are not stored with the session,
 * and a session continued later needs them passed again.
 *
 * Engine-side and pure of the runtime: engines get a toolbox through `EngineContext.hostTools`.
 */
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { z } from 'zod';
import { AseError, errorMessage } from '../../errors.js';

/** A JSON Schema object (the tool's input is an object: `type: "object"`). */
export type JsonSchema = Record<string, unknown>;

/** One part of a tool's answer, as MCP has it: text, or an image (base64 `data`). */
export type HostToolContent = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

/** What a call answers to the agent. `isError: true` tells the agent the call failed (it sees the text). */
export interface HostToolResult {
  content: HostToolContent[];
  isError: boolean;
}

/** What a handler gets besides its input. */
export interface HostToolContext {
  /** The session whose agent called the tool. */
  sessionId: string;
  /** The agent's id of this call: the `callId` of the `tool_call` / `tool_result` events. */
  callId: string;
  /** Aborted when the turn is aborted, the engine stops or the session ends: stop working then. */
  signal: AbortSignal;
}

/**
 * What a handler may return: a string (the text the agent sees), `{content, isError?}` (MCP's
 * shape), or any other JSON value (sent as its JSON text). Nothing (`undefined`) is an empty answer.
 */
export type HostToolReturn = string | { content: HostToolContent[]; isError?: boolean } | unknown;

/** A tool of the host program, offered to the agent. */
export interface HostTool<Args = Record<string, unknown>> {
  /** What the agent calls it: letters, digits, `_`, `-`, at most 48 (agents prefix it, e.g. `mcp__host__<name>`). */
  name: string;
  /** What it does, for the model: when to call it and what it returns. */
  description: string;
  /** Its input: a JSON Schema of an object, or a zod 4 object schema. */
  inputSchema: JsonSchema | z.ZodType;
  /** Runs one call. A throw is an error result to the agent (its message is the text), never a crash. */
  handler(args: Args, ctx: HostToolContext): HostToolReturn | Promise<HostToolReturn>;
  /**
   * The call needs the person's permission first, like the agent's own risky tools: it becomes a
   * `permission_prompt` on the session (the ledger) where the engine can ask. Default false: host
   * tools are the host's own code, trusted.
   */
  requiresPermission?: boolean;
}

/**
 * Types a tool: with a zod schema the handler's `args` are the schema's output type; with a JSON
 * Schema give the type yourself (`defineTool<{ id: string }>({...})`). Returns the tool unchanged.
 */
export function defineTool<S extends z.ZodType>(tool: Omit<HostTool<z.output<S>>, 'inputSchema'> & { inputSchema: S }): HostTool<z.output<S>>;
export function defineTool<Args = Record<string, unknown>>(tool: HostTool<Args> & { inputSchema: JsonSchema }): HostTool<Args>;
export function defineTool(tool: HostTool<never>): HostTool<never> {
  return tool;
}

/** A tool as an engine lists it to the agent. */
export interface HostToolSpec {
  name: string;
  description: string;
  /** Always a JSON Schema object (a zod schema converted). */
  inputSchema: JsonSchema;
  requiresPermission: boolean;
}

/** Tool names: what every agent's tool-name rule takes once its server prefix is added (Claude: `mcp__host__`, 64 at most). */
export const HOST_TOOL_NAME = /^[A-Za-z0-9_-]{1,48}$/;

/**
 * The name engines give the host's MCP server (Claude's in-process one, the loopback one): the
 * agent sees `mcp__host__<tool>`. A user MCP server of that name would be shadowed, so engines refuse it.
 */
export const HOST_TOOL_SERVER = 'host';

/**
 * The host tool an agent's tool name means, or undefined when it is not one of `toolbox`'s: the
 * plain name, or the name behind an MCP prefix (`mcp__host__add` in Claude and Codex, `mcp_host_add`
 * in gemini, `host/add`, `host__add`). Engines report host tool calls under the plain name.
 */
export function hostToolName(agentName: string, toolbox: { has(name: string): boolean } | undefined, server = HOST_TOOL_SERVER): string | undefined {
  if (!toolbox) return undefined;
  for (const prefix of [`mcp__${server}__`, `mcp_${server}_`, `${server}__`, `${server}/`]) {
    if (agentName.startsWith(prefix) && toolbox.has(agentName.slice(prefix.length))) return agentName.slice(prefix.length);
  }
  return undefined;
}

/** `agentName` with the host prefix taken off when it names a host tool; otherwise unchanged. */
export function displayToolName(agentName: string, toolbox: { has(name: string): boolean } | undefined): string {
  return hostToolName(agentName, toolbox) ?? agentName;
}

const isZodSchema = (schema: unknown): schema is z.ZodType => typeof schema === 'object' && schema !== null && '_zod' in schema;
const typeOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** A checked tool with its validator: what the toolbox keeps. */
interface RegisteredTool {
  tool: HostTool<unknown>;
  spec: HostToolSpec;
  /** The parsed input (zod's output, or the input itself), or why it is refused. */
  check(args: unknown): { ok: true; args: unknown } | { ok: false; problems: string };
}

/** One thing wrong with a `tools` list: where (`[0, 'name']`) and what. */
export interface HostToolProblem {
  path: (string | number)[];
  message: string;
}

/** Checks a `tools` list (shape, names, duplicates, schemas) and compiles each schema. */
function registerTools(tools: unknown): { registered: RegisteredTool[]; problems: HostToolProblem[] } {
  if (!Array.isArray(tools)) return { registered: [], problems: [{ path: [], message: `must be an array of tools, got ${typeOf(tools)}` }] };
  const problems: HostToolProblem[] = [];
  const seen = new Set<string>();
  const registered: RegisteredTool[] = [];
  tools.forEach((raw: unknown, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      problems.push({ path: [i], message: `must be a tool {name, description, inputSchema, handler}, got ${typeOf(raw)}` });
      return;
    }
    const tool = raw as Partial<HostTool<unknown>>;
    const mine: HostToolProblem[] = [];
    const bad = (key: string, message: string) => mine.push({ path: [i, key], message });
    if (typeof tool.name !== 'string' || !HOST_TOOL_NAME.test(tool.name)) {
      bad('name', `must be 1-48 letters, digits, "_" or "-", got ${typeof tool.name === 'string' ? JSON.stringify(tool.name) : typeOf(tool.name)}`);
    } else if (seen.has(tool.name)) bad('name', `"${tool.name}" is given twice (tool names are unique)`);
    else seen.add(tool.name);
    if (typeof tool.description !== 'string') bad('description', `must be a string, got ${typeOf(tool.description)}`);
    if (typeof tool.handler !== 'function') bad('handler', `must be a function, got ${typeOf(tool.handler)}`);
    if (tool.requiresPermission !== undefined && typeof tool.requiresPermission !== 'boolean') bad('requiresPermission', `must be a boolean, got ${typeOf(tool.requiresPermission)}`);
    let compiled: (Pick<RegisteredTool, 'check'> & { jsonSchema: JsonSchema }) | undefined;
    try {
      compiled = compileSchema(tool.inputSchema);
    } catch (error) {
      bad('inputSchema', errorMessage(error));
    }
    if (mine.length > 0 || !compiled) {
      problems.push(...mine);
      return;
    }
    const spec: HostToolSpec = { name: tool.name!, description: tool.description!, inputSchema: compiled.jsonSchema, requiresPermission: tool.requiresPermission === true };
    registered.push({ tool: tool as HostTool<unknown>, spec, check: compiled.check });
  });
  return { registered, problems };
}

/** `tools[0].name: …; tools[2]: …` */
function describeProblems(what: string, problems: HostToolProblem[]): string {
  return problems.map((p) => `${what}${p.path.map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`)).join('')}: ${p.message}`).join('; ');
}

/** The JSON Schema a tool is listed with, and its input check. Throws (a plain Error) on a schema that is not an object schema. */
function compileSchema(schema: unknown): Pick<RegisteredTool, 'check'> & { jsonSchema: JsonSchema } {
  if (isZodSchema(schema)) {
    let jsonSchema: JsonSchema;
    try {
      jsonSchema = z.toJSONSchema(schema, { target: 'draft-07', io: 'input', unrepresentable: 'any' }) as JsonSchema;
    } catch (error) {
      throw new Error(`the zod schema has no JSON Schema form: ${errorMessage(error)}`, { cause: error });
    }
    if (jsonSchema['type'] !== 'object') throw new Error(`must describe an object (a tool's input is an object), got a zod schema of type ${JSON.stringify(jsonSchema['type'] ?? 'any')}`);
    return {
      jsonSchema,
      check: (args) => {
        const parsed = schema.safeParse(args);
        if (parsed.success) return { ok: true, args: parsed.data };
        return { ok: false, problems: parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : 'input'}: ${i.message}`).join('; ') };
      },
    };
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error(`must be a JSON Schema object or a zod schema, got ${typeOf(schema)}`);
  const jsonSchema = schema as JsonSchema;
  if (jsonSchema['type'] !== 'object') throw new Error(`must have type "object" (a tool's input is an object), got ${JSON.stringify(jsonSchema['type'] ?? null)}`);
  let validate: ValidateFunction;
  try {
    validate = validatorFor(jsonSchema).compile(jsonSchema);
  } catch (error) {
    throw new Error(`is not a valid JSON Schema: ${errorMessage(error)}`, { cause: error });
  }
  return {
    jsonSchema,
    check: (args) => (validate(args) ? { ok: true, args } : { ok: false, problems: describeAjvErrors(validate.errors ?? []) }),
  };
}

/** One ajv per dialect, made on first use. `strict: false`: unknown keywords (annotations, `_meta`) are fine in a tool schema. */
const validators = new Map<string, Ajv>();
function validatorFor(schema: JsonSchema): Ajv {
  const dialect = typeof schema['$schema'] === 'string' ? schema['$schema'] : '';
  const key = dialect.includes('2020-12') ? '2020' : dialect.includes('2019-09') ? '2019' : '07';
  let ajv = validators.get(key);
  if (!ajv) {
    const options = { allErrors: true, strict: false, validateFormats: false } as const;
    // ajv (~95 modules) loads on the first plain JSON Schema, not with the library: most programs
    // (and every `ase` start) never compile one. It is CommonJS, so a synchronous require serves.
    const require = createRequire(import.meta.url);
    ajv =
      key === '2020'
        ? new (require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')).Ajv2020(options)
        : key === '2019'
          ? new (require('ajv/dist/2019.js') as typeof import('ajv/dist/2019.js')).Ajv2019(options)
          : new (require('ajv') as typeof import('ajv')).Ajv(options);
    validators.set(key, ajv);
  }
  return ajv;
}

function describeAjvErrors(errors: ErrorObject[]): string {
  return errors
    .slice(0, 8)
    .map((e) => {
      const where = e.instancePath === '' ? 'input' : e.instancePath.slice(1).replaceAll('/', '.');
      const extra = e.keyword === 'additionalProperties' ? ` (${JSON.stringify((e.params as { additionalProperty?: string }).additionalProperty)})` : '';
      return `${where}: ${e.message ?? e.keyword}${extra}`;
    })
    .join('; ');
}

/** A result that is text only: the shape every error takes. */
export function textResult(text: string, isError = false): HostToolResult {
  return { content: [{ type: 'text', text }], isError };
}

/** The agent-facing result of whatever a handler returned; an unusable value is an error result. */
function normalizeResult(name: string, value: unknown): HostToolResult {
  if (value === undefined) return { content: [], isError: false };
  if (typeof value === 'string') return textResult(value);
  if (typeof value === 'object' && value !== null && Array.isArray((value as { content?: unknown }).content)) {
    const { content, isError } = value as { content: unknown[]; isError?: unknown };
    const bad = content.findIndex((c) => !isContent(c));
    if (bad >= 0) return textResult(`host tool "${name}" returned an invalid result: content[${bad}] must be {type: "text", text} or {type: "image", data, mimeType}`, true);
    return { content: content as HostToolContent[], isError: isError === true };
  }
  try {
    const json = JSON.stringify(value);
    if (json === undefined) throw new Error(`a ${typeof value} has no JSON form`);
    return textResult(json);
  } catch (error) {
    return textResult(`host tool "${name}" returned a value that is not JSON: ${errorMessage(error)}`, true);
  }
}

function isContent(c: unknown): c is HostToolContent {
  if (typeof c !== 'object' || c === null) return false;
  const block = c as Record<string, unknown>;
  if (block['type'] === 'text') return typeof block['text'] === 'string';
  if (block['type'] === 'image') return typeof block['data'] === 'string' && typeof block['mimeType'] === 'string';
  return false;
}

/**
 * A session's host tools, checked and compiled (`createSession` builds it from `tools`). Engines
 * list `specs` to the agent and run calls through a {@link HostToolCalls} of their own
 * (`toolbox.calls()`), so stopping one engine aborts its calls only.
 */
export class HostToolbox {
  readonly sessionId: string;
  readonly specs: readonly HostToolSpec[];
  readonly #tools: ReadonlyMap<string, RegisteredTool>;

  /** Throws AseError INVALID_OPTIONS for a bad list, every problem named (`details.problems`). */
  constructor(tools: readonly HostTool<never>[] | unknown, options: { sessionId: string; what?: string }) {
    const { registered, problems } = registerTools(tools);
    if (problems.length > 0) throw new AseError('INVALID_OPTIONS', describeProblems(options.what ?? 'tools', problems), { details: { problems } });
    this.sessionId = options.sessionId;
    this.#tools = new Map(registered.map((r) => [r.spec.name, r]));
    this.specs = Object.freeze(registered.map((r) => Object.freeze(r.spec)));
  }

  /** What is wrong with a `tools` list (empty when nothing is), without keeping it. */
  static problems(tools: unknown): HostToolProblem[] {
    return registerTools(tools).problems;
  }

  get size(): number {
    return this.#tools.size;
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  spec(name: string): HostToolSpec | undefined {
    return this.#tools.get(name)?.spec;
  }

  /** A set of calls an engine runs (one per engine generation): `abortAll` ends them all. */
  calls(): HostToolCalls {
    return new HostToolCalls(this, (name) => this.#tools.get(name));
  }
}

/** Options of one call. */
export interface HostToolCallOptions {
  /** The agent's id of the call (the `tool_call` event's `callId`). */
  callId: string;
  /** Aborting it aborts this call (e.g. the agent cancelled this one request). */
  signal?: AbortSignal;
}

/**
 * The calls of one engine generation. `call` never rejects: every failure is an error result the
 * agent reads. `abortAll` (turn aborted, engine stopped) aborts each running handler's signal and
 * answers its call at once with an error result; the handler's later answer is dropped.
 */
export class HostToolCalls {
  readonly #toolbox: HostToolbox;
  readonly #lookup: (name: string) => RegisteredTool | undefined;
  readonly #running = new Set<AbortController>();
  #closed: string | undefined;

  constructor(toolbox: HostToolbox, lookup: (name: string) => RegisteredTool | undefined) {
    this.#toolbox = toolbox;
    this.#lookup = lookup;
  }

  get specs(): readonly HostToolSpec[] {
    return this.#toolbox.specs;
  }

  /** Handlers running now. */
  get running(): number {
    return this.#running.size;
  }

  has(name: string): boolean {
    return this.#toolbox.has(name);
  }

  async call(name: string, args: unknown, options: HostToolCallOptions): Promise<HostToolResult> {
    const registered = this.#lookup(name);
    if (!registered) {
      const known = this.#toolbox.specs.map((s) => s.name);
      return textResult(`unknown host tool "${name}"${known.length > 0 ? ` (known: ${known.join(', ')})` : ''}`, true);
    }
    if (this.#closed !== undefined) return textResult(`host tool "${name}" was not run: ${this.#closed}`, true);
    if (options.signal?.aborted) return textResult(`host tool "${name}" was not run: the call was cancelled`, true);
    // A call without arguments is a call with none (MCP clients omit `arguments` for `{}`).
    const checked = registered.check(args ?? {});
    if (!checked.ok) return textResult(`invalid input for host tool "${name}": ${checked.problems}`, true);

    const controller = new AbortController();
    const onCancel = () => controller.abort(new AseError('ABORTED', 'the call was cancelled'));
    options.signal?.addEventListener('abort', onCancel, { once: true });
    this.#running.add(controller);
    const aborted = new Promise<HostToolResult>((resolve) => {
      controller.signal.addEventListener('abort', () => resolve(textResult(`host tool "${name}" was aborted: ${errorMessage(controller.signal.reason)}`, true)), { once: true });
    });
    const ran = (async () => {
      try {
        return normalizeResult(name, await registered.tool.handler(checked.args, { sessionId: this.#toolbox.sessionId, callId: options.callId, signal: controller.signal }));
      } catch (error) {
        return textResult(`host tool "${name}" failed: ${errorMessage(error)}`, true);
      }
    })();
    try {
      return await Promise.race([ran, aborted]);
    } finally {
      this.#running.delete(controller);
      options.signal?.removeEventListener('abort', onCancel);
    }
  }

  /** Aborts every running call (their signals, with `reason`); calls made afterwards still run. */
  abortAll(reason: string): void {
    for (const controller of [...this.#running]) controller.abort(new AseError('ABORTED', reason));
  }

  /** Aborts every running call and refuses later ones (the engine is gone). Idempotent. */
  close(reason: string): void {
    this.#closed ??= reason;
    this.abortAll(reason);
  }
}
