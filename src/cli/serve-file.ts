/**
 * `<dataDir>/serve.json`: how the other `ase` commands of a data dir find the `ase serve` that runs
 * on it (`ase run --mode local`, `ase attach`), so a session started at the desk is hosted by the
 * server and seen on the phone without any extra step. It holds the URL, the pid with the process's
 * start time, and the token file (mode 0600, like the file itself). A stale one is ignored: its pid
 * is dead, or reused by another process (the start time differs).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

const ServeFileSchema = z.object({
  url: z.string().url(),
  pid: z.number().int().positive(),
  /** The process's start time as the OS counts it (Linux: /proc/<pid>/stat field 22); null where unknown. */
  startTime: z.string().nullable(),
  tokenFile: z.string().min(1),
  /** The server offers its sessions sub-agent tools (`ase serve --sub-agents`). */
  subAgents: z.boolean().optional(),
});
export type ServeFile = z.infer<typeof ServeFileSchema>;

/** A live server of the data dir, with its token. */
export interface LiveServer {
  url: string;
  token: string;
  pid: number;
  /** Started with `--sub-agents`. */
  subAgents: boolean;
}

export function serveFilePath(dataDir: string): string {
  return path.join(dataDir, 'serve.json');
}

/** Where `ase serve` keeps a token it generated, for the commands that find it through serve.json. */
export function generatedTokenPath(dataDir: string): string {
  return path.join(dataDir, 'serve.token');
}

/** The start time of a process (Linux), or null where the OS does not tell it this way or the process is gone. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the command) may hold spaces and parentheses: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null; // field 22 overall; fields[0] is field 3
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Writes this process's serve.json (mode 0600, atomically: a reader never sees half of it). */
export async function writeServeFile(dataDir: string, entry: { url: string; tokenFile: string; subAgents?: boolean }): Promise<void> {
  const file = serveFilePath(dataDir);
  const body: ServeFile = {
    url: entry.url,
    pid: process.pid,
    startTime: processStartTime(process.pid),
    tokenFile: path.resolve(entry.tokenFile),
    ...(entry.subAgents && { subAgents: true }),
  };
  const temp = `${file}.${randomUUID()}.tmp`;
  await writeFile(temp, JSON.stringify(body, null, 2) + '\n', { mode: 0o600 });
  await rename(temp, file);
}

/** Removes serve.json if it is this process's (another server may have taken the data dir since). */
export async function removeServeFile(dataDir: string): Promise<void> {
  const found = await readServeFile(dataDir);
  if (found?.pid === process.pid) await rm(serveFilePath(dataDir), { force: true });
}

/** serve.json as written, or undefined (none, or not ours to read). */
export async function readServeFile(dataDir: string): Promise<ServeFile | undefined> {
  let text: string;
  try {
    text = await readFile(serveFilePath(dataDir), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const parsed = ServeFileSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The server running on this data dir, if serve.json names a live one: its pid is alive and (where
 * the OS tells start times) the same process that wrote it. Its token is read from the token file.
 */
export async function findLiveServer(dataDir: string): Promise<LiveServer | undefined> {
  const entry = await readServeFile(dataDir);
  if (!entry || !alive(entry.pid)) return undefined;
  if (entry.startTime !== null && processStartTime(entry.pid) !== entry.startTime) return undefined;
  const token = (await readFile(entry.tokenFile, 'utf8').catch(() => '')).trim();
  if (token === '') return undefined;
  return { url: entry.url, token, pid: entry.pid, subAgents: entry.subAgents === true };
}
