/**
 * Tasks run one at a time per key, in call order; a task's failure does not stop the next (each
 * caller gets its own task's outcome). The file store serializes each session's file operations
 * with it, `ase serve` the lifecycle of each session it opens or settles.
 */

/** A runner of its own: `run(key, task)` starts `task` once every earlier task of `key` has settled. */
export function oneAtATime(): <T>(key: string, task: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<void>>();
  return <T>(key: string, task: () => Promise<T>): Promise<T> => {
    const run = (tails.get(key) ?? Promise.resolve()).then(task);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}
