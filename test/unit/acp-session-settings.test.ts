/**
 * The acp engine's agent options against what the agent offers, through a scripted in-process
 * agent (shapes as the pinned agents answer session/new, test/fixtures/acp): `modeId` through
 * session/set_mode, `model` through the `model` config option (codex-acp) or session/set_model
 * (gemini, claude-code-acp), `configOptions` through session/set_config_option; each checked
 * against the agent's offer first, so a typo fails the start naming the agent's own choices. Also
 * the version check against a preset's tested version (agentInfo) and the credential hint of an
 * auth failure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acpEngine, AcpEngine, type AcpEngineOptions } from '../../src/engines/acp/index.js';
import { FakeAgentProcess, fakeSpawner } from '../support/acp-fake-agent.js';
import { EventLog } from '../support/acp-hermetic.js';
import { realContext } from '../support/acp-scenarios.js';

const SID = 'sess-1';
const MODES = { currentModeId: 'default', availableModes: [{ id: 'default', name: 'Default' }, { id: 'autoEdit', name: 'Auto Edit' }, { id: 'plan', name: 'Plan' }] };
const LEGACY_MODELS = { currentModelId: 'auto', availableModels: [{ modelId: 'auto', name: 'Auto' }, { modelId: 'gemini-2.5-pro', name: 'gemini-2.5-pro' }] };
const CONFIG_OPTIONS = [
  { id: 'model', name: 'Model', category: 'model', type: 'select', currentValue: 'gpt-5.4', options: [{ value: 'gpt-5.5', name: 'GPT-5.5' }, { value: 'gpt-5.4', name: 'gpt-5.4' }] },
  { id: 'reasoning_effort', name: 'Reasoning Effort', category: 'thought_level', type: 'select', currentValue: 'medium', options: [{ group: 'g', name: 'G', options: [{ value: 'low', name: 'Low' }, { value: 'high', name: 'High' }] }] },
  { id: 'web_search', name: 'Web search', type: 'boolean', currentValue: false },
];

describe('acp agent options checked against the agent', () => {
  let root: string;
  let agent: FakeAgentProcess;
  let log: EventLog;
  let engine: AcpEngine | undefined;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ase-acp-settings-'));
    agent = new FakeAgentProcess();
    log = new EventLog();
  });

  afterEach(async () => {
    await engine?.stop().catch(() => undefined);
    engine = undefined;
    rmSync(root, { recursive: true, force: true });
  });

  /** Starts the engine and answers initialize and session/new with `sessionResult`. */
  async function open(options: AcpEngineOptions, sessionResult: Record<string, unknown>, agentInfo?: Record<string, unknown>): Promise<void> {
    engine = new AcpEngine(realContext(), { command: 'fake-agent', home: join(root, 'home'), spawn: fakeSpawner(agent), ...options });
    engine.onEvent(log.push);
    await engine.start({ gen: 1, mode: 'remote', workDir: root, options: {} });
    const init = await agent.nextMethod('initialize');
    agent.respond(init, { protocolVersion: 1, agentCapabilities: {}, authMethods: [], ...(agentInfo && { agentInfo }) });
    const created = await agent.nextMethod('session/new');
    agent.respond(created, { sessionId: SID, ...sessionResult });
  }

  /** The start-up failure message (the engine reports it and stops the agent). */
  async function startupFailure(): Promise<string> {
    const exited = log.next('exited');
    await exited;
    const error = log.of('error')[0];
    expect(error).toMatchObject({ kind: 'fatal' });
    return error!.message;
  }

  const sentMethods = () => agent.received.map((m) => m.method).filter(Boolean);

  it('modeId: set with session/set_mode when the agent offers it', async () => {
    const ready = log.next('ready');
    await open({ modeId: 'plan' }, { modes: MODES });
    const set = await agent.nextMethod('session/set_mode');
    expect(set.params).toEqual({ sessionId: SID, modeId: 'plan' });
    agent.respond(set, {});
    await ready;
  });

  it('modeId: one the agent does not offer fails the start, listing its modes, and nothing is set', async () => {
    await open({ modeId: 'yolo-typo' }, { modes: MODES });
    expect(await startupFailure()).toContain('modeId "yolo-typo" is not a mode of this agent; its modes: default, autoEdit, plan');
    expect(sentMethods()).not.toContain('session/set_mode');
    expect(log.of('ready')).toEqual([]);
  });

  it('model: through the agent`s `model` config option (session/set_config_option)', async () => {
    const ready = log.next('ready');
    await open({ model: 'gpt-5.5' }, { configOptions: CONFIG_OPTIONS, models: LEGACY_MODELS });
    const set = await agent.nextMethod('session/set_config_option');
    expect(set.params).toEqual({ sessionId: SID, configId: 'model', value: 'gpt-5.5' });
    agent.respond(set, { configOptions: CONFIG_OPTIONS });
    await ready;
    expect(sentMethods()).not.toContain('session/set_model');
  });

  it('model: through session/set_model when the agent reports `models` (gemini, claude-code-acp)', async () => {
    const ready = log.next('ready');
    await open({ model: 'gemini-2.5-pro' }, { modes: MODES, models: LEGACY_MODELS });
    const set = await agent.nextMethod('session/set_model');
    expect(set.params).toEqual({ sessionId: SID, modelId: 'gemini-2.5-pro' });
    agent.respond(set, {});
    await ready;
  });

  it('model: one the agent does not offer, or an agent with no model choice, fails the start', async () => {
    await open({ model: 'gpt-9' }, { configOptions: CONFIG_OPTIONS });
    expect(await startupFailure()).toContain('model "gpt-9" is not offered by this agent; its models: gpt-5.5, gpt-5.4');
    await engine!.stop();

    agent = new FakeAgentProcess();
    log = new EventLog();
    await open({ model: 'anything' }, {});
    expect(await startupFailure()).toContain('this agent offers no model choice');
  });

  it('configOptions: select values (grouped too) and booleans, each checked and set', async () => {
    const ready = log.next('ready');
    await open({ configOptions: { reasoning_effort: 'high', web_search: true } }, { configOptions: CONFIG_OPTIONS });
    const first = await agent.nextMethod('session/set_config_option');
    expect(first.params).toEqual({ sessionId: SID, configId: 'reasoning_effort', value: 'high' });
    agent.respond(first, { configOptions: CONFIG_OPTIONS });
    const second = await agent.nextMethod('session/set_config_option');
    expect(second.params).toEqual({ sessionId: SID, configId: 'web_search', type: 'boolean', value: true });
    agent.respond(second, { configOptions: CONFIG_OPTIONS });
    await ready;
  });

  it('configOptions: an unknown id or value fails the start, naming what the agent offers', async () => {
    await open({ configOptions: { reasoning: 'high' } }, { configOptions: CONFIG_OPTIONS });
    expect(await startupFailure()).toContain('configOptions.reasoning: not a config option of this agent; its options: model, reasoning_effort, web_search');
    await engine!.stop();

    agent = new FakeAgentProcess();
    log = new EventLog();
    await open({ configOptions: { reasoning_effort: 'extreme' } }, { configOptions: CONFIG_OPTIONS });
    expect(await startupFailure()).toContain('configOptions.reasoning_effort: "extreme" is not one of low, high');
  });

  it('a preset agent reporting another version than the tested one gets a warning, not a failure', async () => {
    const ready = log.next('ready');
    await open({ preset: 'gemini' }, {}, { name: 'gemini-cli', version: '0.99.0' });
    await ready;
    expect(log.of('warning')).toEqual([
      expect.objectContaining({ code: 'untested_version', message: expect.stringContaining('Gemini CLI 0.99.0 (command) is not the version this library is tested against (0.61.0)') }),
    ]);
    await engine!.stop();

    agent = new FakeAgentProcess();
    log = new EventLog();
    const again = log.next('ready');
    await open({ preset: 'gemini' }, {}, { name: 'gemini-cli', version: '0.61.0' });
    await again;
    expect(log.of('warning')).toEqual([]);
  });

  it('an authentication failure names the credential variables the preset looks for (names only)', async () => {
    engine = new AcpEngine(realContext(), { preset: 'gemini', command: 'fake-agent', home: join(root, 'home'), env: { GEMINI_API_KEY: 'secret-value-not-printed' }, spawn: fakeSpawner(agent) });
    engine.onEvent(log.push);
    await engine.start({ gen: 1, mode: 'remote', workDir: root, options: {} });
    const init = await agent.nextMethod('initialize');
    agent.respond(init, { protocolVersion: 1, agentCapabilities: {}, authMethods: [] });
    const created = await agent.nextMethod('session/new');
    agent.send({ jsonrpc: '2.0', id: created.id, error: { code: -32000, message: 'Authentication required' } });
    await log.next('exited');
    const error = log.of('error')[0]!;
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('Gemini CLI looks for credentials in GEMINI_API_KEY, GOOGLE_API_KEY');
    expect(error.message).toContain('its environment had GEMINI_API_KEY');
    expect(error.message).not.toContain('secret-value-not-printed');
  });
});

/**
 * The session's runtime settings (`setPermissionMode` = the agent's mode id, `setModel`): from the
 * start spec (they win over `modeId` / `model`, and one the agent does not take is reported, not
 * fatal), and `configure()` on a running session (at once; before the session is open, right
 * after it; `null` back to the engineOptions value, else to what the session opened with), with
 * `validateSettings` checking a change against the agent's offer first.
 */
describe('acp runtime settings (setPermissionMode / setModel)', () => {
  let root: string;
  let agent: FakeAgentProcess;
  let log: EventLog;
  let engine: AcpEngine | undefined;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ase-acp-runtime-'));
    agent = new FakeAgentProcess();
    log = new EventLog();
  });

  afterEach(async () => {
    await engine?.stop().catch(() => undefined);
    engine = undefined;
    rmSync(root, { recursive: true, force: true });
  });

  async function open(options: AcpEngineOptions, sessionResult: Record<string, unknown>, spec: { model?: string; permissionMode?: string } = {}, before?: (e: AcpEngine) => Promise<void>): Promise<void> {
    engine = new AcpEngine(realContext(), { command: 'fake-agent', home: join(root, 'home'), spawn: fakeSpawner(agent), ...options });
    engine.onEvent(log.push);
    await engine.start({ gen: 1, mode: 'remote', workDir: root, options: {}, ...spec });
    await before?.(engine);
    const init = await agent.nextMethod('initialize');
    agent.respond(init, { protocolVersion: 1, agentCapabilities: {}, authMethods: [] });
    const created = await agent.nextMethod('session/new');
    agent.respond(created, { sessionId: SID, ...sessionResult });
  }

  /** Answers the next settings request of `method` and returns its params. */
  async function answer(method: string, result: unknown = {}): Promise<unknown> {
    const request = await agent.nextMethod(method);
    agent.respond(request, result);
    return request.params;
  }

  const settingsRequests = () => agent.received.filter((m) => typeof m.method === 'string' && /^session\/set_/.test(m.method)).map((m) => [m.method, m.params]);

  it('declares both capabilities', () => {
    expect(acpEngine().capabilities).toMatchObject({ setModel: true, setPermissionMode: true });
  });

  it('the start spec wins over modeId / model', async () => {
    const ready = log.next('ready');
    await open({ modeId: 'default', model: 'auto' }, { modes: MODES, models: LEGACY_MODELS }, { permissionMode: 'plan', model: 'gemini-2.5-pro' });
    expect(await answer('session/set_mode')).toEqual({ sessionId: SID, modeId: 'plan' });
    expect(await answer('session/set_model')).toEqual({ sessionId: SID, modelId: 'gemini-2.5-pro' });
    await ready;
    expect(settingsRequests()).toHaveLength(2);
    expect(log.of('error')).toEqual([]);
  });

  it('a stored choice the agent does not offer does not fail the start: reported, and the engineOptions value applies', async () => {
    const ready = log.next('ready');
    await open({ modeId: 'autoEdit' }, { modes: MODES, configOptions: CONFIG_OPTIONS }, { permissionMode: 'yolo', model: 'gpt-9' });
    expect(await answer('session/set_mode')).toEqual({ sessionId: SID, modeId: 'autoEdit' });
    await ready;
    expect(settingsRequests()).toEqual([['session/set_mode', { sessionId: SID, modeId: 'autoEdit' }]]);
    const errors = log.of('error');
    expect(errors).toEqual([
      expect.objectContaining({ kind: 'protocol', retryable: true, message: expect.stringContaining('permission mode "yolo" was not applied') }),
      expect.objectContaining({ kind: 'protocol', retryable: true, message: expect.stringContaining('model "gpt-9" was not applied') }),
    ]);
    expect(errors[0]!.message).toContain('its modes: default, autoEdit, plan');
  });

  it('configure on an open session: set_mode and the model option at once; null back to engineOptions, else to what the session opened with', async () => {
    const ready = log.next('ready');
    await open({ model: 'gpt-5.5' }, { modes: MODES, configOptions: CONFIG_OPTIONS });
    expect(await answer('session/set_config_option', { configOptions: CONFIG_OPTIONS })).toEqual({ sessionId: SID, configId: 'model', value: 'gpt-5.5' });
    await ready;

    const changing = engine!.configure({ permissionMode: 'plan', model: 'gpt-5.4' });
    expect(await answer('session/set_mode')).toEqual({ sessionId: SID, modeId: 'plan' });
    expect(await answer('session/set_config_option', { configOptions: CONFIG_OPTIONS })).toEqual({ sessionId: SID, configId: 'model', value: 'gpt-5.4' });
    await changing;

    const back = engine!.configure({ permissionMode: null, model: null });
    expect(await answer('session/set_mode')).toEqual({ sessionId: SID, modeId: 'default' }); // what session/new reported
    expect(await answer('session/set_config_option', { configOptions: CONFIG_OPTIONS })).toEqual({ sessionId: SID, configId: 'model', value: 'gpt-5.5' }); // engineOptions
    await back;
  });

  it('validateSettings checks against the offer once the session is open; configure refuses what is not offered', async () => {
    await open({}, { modes: MODES, models: LEGACY_MODELS }, {}, async (e) => {
      // Before the session is open nothing is known yet: accepted.
      expect(() => e.validateSettings({ permissionMode: 'anything', model: 'anything' })).not.toThrow();
    });
    await log.next('ready');
    expect(() => engine!.validateSettings({ permissionMode: 'yolo' })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringContaining('its modes: default, autoEdit, plan') }));
    expect(() => engine!.validateSettings({ model: 'gpt-9' })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', message: expect.stringContaining('its models: auto, gemini-2.5-pro') }));
    expect(() => engine!.validateSettings({ permissionMode: 'plan', model: 'auto' })).not.toThrow();
    expect(() => engine!.validateSettings({ permissionMode: null, model: null })).not.toThrow();
    await expect(engine!.configure({ permissionMode: 'yolo' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(settingsRequests()).toEqual([]);
  });

  it('an agent with no modes or no model choice: UNSUPPORTED', async () => {
    await open({}, {});
    await log.next('ready');
    expect(() => engine!.validateSettings({ permissionMode: 'plan' })).toThrow(expect.objectContaining({ code: 'UNSUPPORTED' }));
    expect(() => engine!.validateSettings({ model: 'x' })).toThrow(expect.objectContaining({ code: 'UNSUPPORTED', message: expect.stringContaining('no model choice') }));
  });

  it('a change made before the session is open is applied right after it, before ready', async () => {
    const ready = log.next('ready');
    await open({}, { modes: MODES, models: LEGACY_MODELS }, {}, async (e) => {
      await e.configure({ permissionMode: 'autoEdit' });
    });
    expect(await answer('session/set_mode')).toEqual({ sessionId: SID, modeId: 'autoEdit' });
    await ready;
    expect(log.events.findIndex((ev) => ev.type === 'ready')).toBeGreaterThan(-1);
  });

  it('an agent refusing a change: configure rejects with its error; the session goes on', async () => {
    await open({}, { modes: MODES });
    await log.next('ready');
    const changing = engine!.configure({ permissionMode: 'plan' });
    const request = await agent.nextMethod('session/set_mode');
    agent.send({ jsonrpc: '2.0', id: request.id, error: { code: -32602, message: 'mode not available now' } });
    await expect(changing).rejects.toMatchObject({ code: 'AGENT_ERROR', message: expect.stringContaining('mode not available now') });
    expect(log.of('exited')).toEqual([]);
  });
});

