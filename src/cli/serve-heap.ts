/**
 * `ase serve` runs with a young generation of at most 8 MB per semi-space (`--max-semi-space-size=8`),
 * set by the launcher: bin.ts starts the same command again in place (`process.execve`: same pid,
 * nothing left behind) with the flag, before anything is loaded.
 *
 * Why: V8 grows the young generation to 64 MB per semi-space under steady allocation, and a
 * scavenge's pause is the objects still alive in it. Ten concurrent full replays of a 100,000-entry
 * session left 15-18 MB of young objects alive at each scavenge (measured, --trace-gc-nvp), so one
 * scavenge held the server's loop for 60-73 ms of CPU, over the 50 ms stall goal. Capped at 8 MB
 * the survivors stay under 6 MB and no stall held more than 36 ms of CPU, for no more total CPU
 * (docs/performance-notes.md section 15). The flag cannot be set later: V8 sizes the heap at start-up
 * (`v8.setFlagsFromString` does not resize it). A heap flag the user gave (on the command line or in
 * NODE_OPTIONS) wins; where `process.execve` is missing or fails (Windows), serve runs as started.
 */

export const SERVE_SEMI_SPACE_FLAG = '--max-semi-space-size=8';

/**
 * The argv to start again with (execPath first), or undefined to go on as started: not `serve`,
 * or a young-generation size already chosen.
 */
export function serveRelaunchArgv(execPath: string, execArgv: readonly string[], argv: readonly string[], nodeOptions: string | undefined): string[] | undefined {
  if (argv[2] !== 'serve') return undefined;
  const chosen = (arg: string) => /^--max[-_]semi[-_]space[-_]size(=|$)/.test(arg);
  if (execArgv.some(chosen) || (nodeOptions ?? '').split(/\s+/).some(chosen)) return undefined;
  return [execPath, ...execArgv, SERVE_SEMI_SPACE_FLAG, ...argv.slice(1)];
}
