/**
 * POSIX shell quoting, one rule for every engine that shows or runs a command line: the acp
 * engine's terminals (`sh -c`), the Codex engines' shell tool calls (shown the way app-server
 * reports them), the local hooks' command. A word in single quotes reaches the command verbatim;
 * a quote inside is closed, escaped and reopened (`'\''`).
 */

/** `word` in single quotes, always (a hook command's paths, whatever they hold). */
export function singleQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** `arg` as one shell word: bare when it holds only characters the shell leaves alone, else single-quoted. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : singleQuote(arg);
}

/** `["/bin/bash", "-lc", "echo hi"]` → `/bin/bash -lc 'echo hi'` (the form app-server reports). */
export function shellJoin(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}
