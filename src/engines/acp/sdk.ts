/**
 * The ACP SDK, loaded when the first ACP engine starts. Loading it (its protocol schemas) costs
 * about 120 ms of CPU, a fifth of importing this library, and every process paid it, with an ACP
 * agent or not: each `ase` command, each library user. Code that needs the SDK's values at run time
 * calls `acpSdk()`; an ACP engine's `start()` has loaded it by then (`loadAcpSdk()`).
 */
import type * as Sdk from '@agentclientprotocol/sdk';
import { AseError } from '../../errors.js';

export type AcpSdk = typeof Sdk;

let sdk: AcpSdk | undefined;
let loading: Promise<AcpSdk> | undefined;

/** Loads the SDK once (a failed load is tried again by the next call). */
export function loadAcpSdk(): Promise<AcpSdk> {
  loading ??= import('@agentclientprotocol/sdk').then(
    (module) => (sdk = module),
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** The SDK, once {@link loadAcpSdk} resolved; throws before that (a bug: whatever runs ACP traffic loads it first). */
export function acpSdk(): AcpSdk {
  if (!sdk) throw new AseError('INTERNAL', 'the ACP SDK was used before loadAcpSdk() resolved');
  return sdk;
}

/** The SDK if it is loaded (an error can only be one of its classes once it is). */
export function loadedAcpSdk(): AcpSdk | undefined {
  return sdk;
}
