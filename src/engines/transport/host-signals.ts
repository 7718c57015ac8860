/**
 * SIGTERM, SIGINT and SIGHUP of the host: Node runs no `exit` handlers on those signals, so without
 * this an agent (and what it spawned) outlives a host stopped with Ctrl-C or `kill`. While
 * supervised processes are alive, and only while nobody else handles the signal, a listener runs
 * every stop ladder and then gives the signal its default effect (the host dies of it, exit status
 * 128 + n, as it would have without us).
 *
 * The host's own handlers win, and are never changed:
 * - A listener is added for a signal only while `process.listenerCount(signal)` is 0, i.e. neither
 *   the host nor a library handles it; our listener then is the only one.
 * - When anyone adds a listener for that signal later (`process.on('newListener')`), ours is
 *   removed first: the host now decides what the signal means (a REPL's Ctrl-C, a graceful
 *   shutdown calling `session.stop()`, signal-exit's re-raise), and we add ours back when their
 *   last listener is removed. So a signal never reaches both.
 * - `setHostSignalHandling(false)` turns all this off for the process (the opt-out). The `exit`
 *   hook of the supervisor (for `process.exit()`) is not affected.
 *
 * A second signal while the ladders run kills every supervised tree at once and takes the default
 * effect immediately. While the ladders run, no new supervised process may start (a session that
 * sees its agent exit would otherwise restart it).
 */

export interface HostSignalTarget {
  /** Whether supervised processes are alive (listeners are held only then). */
  active(): boolean;
  /** Runs every stop ladder; resolves when all ended. */
  stopAll(): Promise<void>;
  /** SIGKILLs everything at once (second signal). */
  killAllSync(): void;
}

export const HOST_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
type HostSignal = (typeof HOST_SIGNALS)[number];

let target: HostSignalTarget | undefined;
let enabled = true;
let shuttingDown: HostSignal | undefined;
/** Signals our listener is currently registered for. */
const listening = new Set<HostSignal>();
/** True while we add or remove our own listener (those are not someone else's). */
let selfChange = false;
let watchingListeners = false;

const isHostSignal = (name: string | symbol): name is HostSignal => (HOST_SIGNALS as readonly (string | symbol)[]).includes(name);

/**
 * Turns the host signal handling on (the default) or off for this process. Off: SIGTERM, SIGINT and
 * SIGHUP are left entirely to the host (with no handler of its own, Node exits at once and agents
 * are only caught by the parent-death signal and the next open's reaping).
 */
export function setHostSignalHandling(on: boolean): void {
  enabled = on;
  syncHostSignals();
}

/** The signal being handled while the stop ladders run, if any: new spawns are refused meanwhile. */
export function hostShutdownSignal(): HostSignal | undefined {
  return shuttingDown;
}

/** Called by the supervisor once; the listeners then follow `target.active()` (see syncHostSignals). */
export function attachHostSignals(t: HostSignalTarget): void {
  target = t;
  syncHostSignals();
}

/** Adds or removes our listeners to match: active processes, enabled, no one else listening. */
export function syncHostSignals(): void {
  const want = enabled && target !== undefined && target.active();
  if (want && !watchingListeners) {
    watchingListeners = true;
    process.on('newListener', onNewListener);
    process.on('removeListener', onRemoveListener);
  }
  for (const signal of HOST_SIGNALS) {
    const others = process.listenerCount(signal) - (listening.has(signal) ? 1 : 0);
    if (want && others === 0 && !listening.has(signal)) listen(signal, true);
    else if ((!want || others > 0) && listening.has(signal) && !shuttingDown) listen(signal, false);
  }
  if (!want && watchingListeners && listening.size === 0) {
    watchingListeners = false;
    process.off('newListener', onNewListener);
    process.off('removeListener', onRemoveListener);
  }
}

function listen(signal: HostSignal, on: boolean): void {
  selfChange = true;
  try {
    if (on) {
      process.on(signal, onSignal);
      listening.add(signal);
    } else {
      process.off(signal, onSignal);
      listening.delete(signal);
    }
  } finally {
    selfChange = false;
  }
}

function onNewListener(event: string | symbol): void {
  // Emitted before the host's listener is added: step aside first, so the signal never reaches both.
  if (selfChange || !isHostSignal(event) || !listening.has(event) || shuttingDown) return;
  listen(event, false);
}

function onRemoveListener(event: string | symbol): void {
  // Emitted after removal: the host's last listener gone, the signal may be ours again.
  if (selfChange || !isHostSignal(event)) return;
  queueMicrotask(syncHostSignals);
}

function onSignal(signal: HostSignal): void {
  if (shuttingDown) {
    // Second signal: no more waiting.
    target?.killAllSync();
    reraise(signal);
    return;
  }
  shuttingDown = signal;
  void (target?.stopAll() ?? Promise.resolve()).catch(() => target?.killAllSync()).finally(() => reraise(signal));
}

/** Removes our listeners and sends the signal again: with no listener left, its default action ends the process. */
function reraise(signal: HostSignal): void {
  for (const s of [...listening]) listen(s, false);
  if (watchingListeners) {
    watchingListeners = false;
    process.off('newListener', onNewListener);
    process.off('removeListener', onRemoveListener);
  }
  process.kill(process.pid, signal);
}
