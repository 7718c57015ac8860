/**
 * Who this process is, and whether a process named in a lock or lease is still alive, so a store
 * can take over what a dead process left at once instead of waiting for a timeout.
 *
 * A pid alone is not an identity: the kernel hands freed pids out again. On Linux a process is
 * (boot id, pid, start time): the start time is field 22 of `/proc/<pid>/stat` (clock ticks since
 * boot), and the boot id changes with every reboot. Elsewhere only `kill(pid, 0)` is available, which
 * cannot see a reused pid; that errs on the safe side (a dead owner looks alive until its lease expires).
 */
import os from 'node:os';
import { bootId, HAS_PROC, processStartTime } from '../../engines/transport/proc.js';

export interface ProcessIdentity {
  host: string;
  pid: number;
  /** '' when unknown (no /proc). */
  startTime: string;
  /** '' when unknown (no /proc). */
  bootId: string;
}

export type Liveness = 'alive' | 'dead' | 'unknown';

let self: ProcessIdentity | undefined;

/** This process (the host name can be overridden per store: `hostId`). */
export function currentProcess(host: string = os.hostname()): ProcessIdentity {
  self ??= { host: os.hostname(), pid: process.pid, startTime: processStartTime(process.pid) ?? '', bootId: bootId() };
  return host === self.host ? self : { ...self, host };
}

/**
 * Whether the process `owner` names is alive. `unknown` for another host (only a lease's expiry can
 * tell then). On this host: `dead` when it is from another boot, when no such pid exists, or when the
 * pid now belongs to a process that started at another time.
 */
export function liveness(owner: { host: string; pid: number; startTime?: string | undefined; bootId?: string | undefined }, me: ProcessIdentity = currentProcess()): Liveness {
  if (owner.host !== me.host) return 'unknown';
  if (owner.bootId && me.bootId && owner.bootId !== me.bootId) return 'dead';
  if (!Number.isSafeInteger(owner.pid) || owner.pid <= 0) return 'dead';
  if (HAS_PROC) {
    const started = processStartTime(owner.pid);
    if (started === undefined) return 'dead';
    if (owner.startTime && started !== owner.startTime) return 'dead';
    return 'alive';
  }
  try {
    process.kill(owner.pid, 0);
    return 'alive';
  } catch (error) {
    return (error as { code?: string }).code === 'ESRCH' ? 'dead' : 'alive';
  }
}
