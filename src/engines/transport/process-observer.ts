/**
 * How an engine tells the host about the processes it spawns (EngineContext.processes), so that
 * nothing it started is lost track of: the runtime records each one in the data dir (process
 * registry), and a later host that opens the data dir reaps what a dead host left. Engines never
 * see files: they hand this to the transport (`spawnSupervised({ observer })`,
 * `launchNdjsonProcess({ observer })`), which calls it.
 *
 * The runtime's process registry implements it (EngineContext.processes).
 */

/** A spawned process. */
export interface SpawnedProcessInfo {
  pid: number;
  /** Its process group (= pid: a supervised child leads its own group and session). */
  pgid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot); undefined without /proc. */
  startTime: string | undefined;
}

/** A descendant the supervisor collected from /proc. */
export interface DescendantInfo {
  pid: number;
  startTime: string;
}

/** One spawn's callbacks. They must not throw (a throw is ignored). */
export interface ProcessWatch {
  /** Added to the child's environment; its descendants inherit it, which marks the whole tree. */
  readonly env: Readonly<Record<string, string>>;
  /** The process exists. */
  spawned(info: SpawnedProcessInfo): void;
  /** The collected descendants changed (the current set). */
  descendants(list: readonly DescendantInfo[]): void;
  /** The process and everything collected are gone. May return the removal of its record (awaited, bounded, before a host signal ends the process). */
  reaped(): void | Promise<void>;
}

export interface ProcessObserver {
  /** Called right before a spawn; nothing is recorded until `spawned`, so a failed spawn leaves no trace. */
  spawning(file: string): ProcessWatch;
}
