/**
 * An ACP session's mode and model: what the agent offers (its session/new or session/load answer,
 * updated by `config_option_update`), checking a choice against that offer, and setting it
 * (`session/set_mode`; the model through the agent's `model` config option or the legacy
 * `session/set_model`). Used at start-up (engineOptions `modeId` / `model`, and the session's
 * runtime choices) and by `configure` (`session.setPermissionMode` / `setModel`).
 */
import type { ClientConnection } from '@agentclientprotocol/sdk';
import { AseError } from '../../errors.js';
import type { ErrorCode } from '../../events/error-codes.js';

/** A session config option as agents report it (`select` with values, or `boolean`). */
export interface ConfigOption {
  id: string;
  category?: string | null;
  type?: string;
  currentValue?: unknown;
  options?: unknown[];
}

/** What the agent offers to choose from, and what was current when the session opened. */
export interface SessionOffer {
  /** Mode ids (`modes.availableModes`); undefined when the agent reported no modes at all. */
  modes: string[] | undefined;
  currentModeId: string | undefined;
  /** The model config option (codex-acp), if any. */
  modelOption: ConfigOption | undefined;
  /** Model ids of the legacy `models` state (gemini, claude-code-acp), if any. */
  legacyModels: string[] | undefined;
  currentModel: string | undefined;
  configs: ConfigOption[];
}

/** The values a `select` option offers (grouped options flattened). */
export function selectValues(option: ConfigOption): string[] {
  const out: string[] = [];
  const walk = (items: unknown[] | undefined) => {
    for (const item of items ?? []) {
      const entry = item as { value?: unknown; options?: unknown[] };
      if (typeof entry.value === 'string') out.push(entry.value);
      else if (Array.isArray(entry.options)) walk(entry.options);
    }
  };
  walk(option.options);
  return out;
}

/** Reads the offer from a session/new or session/load answer (`configOptions`: a later full set, if any). */
export function readOffer(result: Record<string, unknown>, configOptions?: unknown[]): SessionOffer {
  const configs = (Array.isArray(configOptions) ? configOptions : Array.isArray(result['configOptions']) ? result['configOptions'] : []) as ConfigOption[];
  const modesState = result['modes'] as { currentModeId?: unknown; availableModes?: { id?: unknown }[] } | undefined;
  const modes = Array.isArray(modesState?.availableModes) ? modesState.availableModes.map((m) => m.id).filter((id): id is string => typeof id === 'string') : undefined;
  const modelOption = configs.find((c) => c.category === 'model' && c.type === 'select') ?? configs.find((c) => c.id === 'model');
  const legacy = result['models'] as { currentModelId?: unknown; availableModels?: { modelId?: unknown }[] } | undefined;
  const legacyModels = Array.isArray(legacy?.availableModels) ? legacy.availableModels.map((m) => m.modelId).filter((id): id is string => typeof id === 'string') : undefined;
  const current = modelOption ? modelOption.currentValue : legacy?.currentModelId;
  return {
    modes,
    currentModeId: typeof modesState?.currentModeId === 'string' ? modesState.currentModeId : undefined,
    modelOption,
    legacyModels,
    currentModel: typeof current === 'string' ? current : undefined,
    configs,
  };
}

const refusal = (code: ErrorCode, message: string) => new AseError(code, `acp engine: ${message}`);

/**
 * Throws `code` when the agent lists its modes and `modeId` is not one of them (`label` names the
 * choice in the message, e.g. `modeId`). An agent that listed none is left to answer itself.
 */
export function checkMode(offer: SessionOffer, modeId: string, code: ErrorCode, label: string): void {
  const ids = offer.modes ?? [];
  if (ids.length > 0 && !ids.includes(modeId)) throw refusal(code, `${label} ${JSON.stringify(modeId)} is not a mode of this agent; its modes: ${ids.join(', ')}`);
}

/** Throws `code` for a model the agent does not offer, `noChoice` when it offers no model choice at all. */
export function checkModel(offer: SessionOffer, model: string, code: ErrorCode, label: string, noChoice: ErrorCode = code): void {
  const values = offer.modelOption ? selectValues(offer.modelOption) : offer.legacyModels;
  if (values === undefined) throw refusal(noChoice, 'this agent offers no model choice (no `model` config option and no `models` in its session)');
  if (values.length > 0 && !values.includes(model)) throw refusal(code, `${label} ${JSON.stringify(model)} is not offered by this agent; its models: ${values.join(', ')}`);
}

/** One bounded request of ours (agent-request.ts). */
export type SettingsRequest = <T>(request: Promise<T>, ms: number, what: string) => Promise<T>;

/** `session/set_mode`. */
export async function setMode(request: SettingsRequest, agent: ClientConnection['agent'], sessionId: string, modeId: string, timeoutMs: number): Promise<void> {
  await request(agent.request('session/set_mode', { sessionId, modeId }), timeoutMs, 'session/set_mode');
}

/** The model through the agent's model config option, else the legacy `session/set_model` (gemini, claude-code-acp). */
export async function setModel(request: SettingsRequest, agent: ClientConnection['agent'], sessionId: string, offer: SessionOffer, model: string, timeoutMs: number): Promise<void> {
  if (offer.modelOption) {
    await request(agent.request('session/set_config_option', { sessionId, configId: offer.modelOption.id, value: model }), timeoutMs, 'session/set_config_option');
  } else {
    // Not in the stable schema, but what gemini-cli and the Claude ACP agents serve (their `models` state).
    await request(agent.request('session/set_model', { sessionId, modelId: model }), timeoutMs, 'session/set_model');
  }
}
