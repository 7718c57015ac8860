/**
 * `ase replay FILE [--json]`: reruns the `ase run` a recording was made by (its header's argv),
 * with the real engine talking to a stand-in agent that answers from the recording
 * (`replayEngine`). Same prompt, same engine options, same permission answers (`--yes` / `--deny`),
 * in a throwaway data directory; the recorded working directory when it still exists, else a
 * temporary one (the recorded path is mapped to it). Exits 1 with REPLAY_MISMATCH when the engine
 * went another way than the recording.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isAseError, readRecording, replayEngine, type Recording } from '../index.js';
import { runArgsOf } from './run-args.js';
import { runPrompt } from './run.js';
import type { Output } from './render.js';

export interface ReplayArgs {
  file: string;
  json: boolean;
}

export async function runReplay(args: ReplayArgs, output: Output): Promise<number> {
  let recording: Recording;
  try {
    recording = readRecording(args.file);
  } catch (error) {
    if (!isAseError(error)) throw error;
    output.err(`${error.code}: ${error.message}\n`);
    return 2;
  }
  const { header } = recording;
  if (header.argv[0] !== 'run') {
    output.err(`ase replay: ${args.file} was recorded by a program (createSession), not by \`ase run\`: replay it in code with replayEngine() (docs/recording.md)\n`);
    return 2;
  }
  const recorded = runArgsOf(header.argv.slice(1));
  if ('usage' in recorded) {
    output.err(`ase replay: the recorded command line does not parse: ${recorded.usage}\n`);
    return 2;
  }
  const scratch = mkdtempSync(path.join(tmpdir(), 'ase-replay-'));
  try {
    const workDir = isDirectory(header.workDir) ? header.workDir : path.join(scratch, 'work');
    if (workDir !== header.workDir) mkdirSync(workDir);
    const engine = replayEngine(recording);
    const { sessionId: _continued, bin: _bin, record: _record, ...run } = recorded;
    const code = await runPrompt({ ...run, agent: header.agent, cwd: workDir, json: args.json, dataDir: path.join(scratch, 'data'), interactive: false, engine }, output);
    try {
      engine.assertReplayed();
    } catch (error) {
      if (!isAseError(error)) throw error;
      output.err(`${error.code}: ${error.message}\n`);
      return 1;
    }
    return code;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function isDirectory(dir: string): boolean {
  return existsSync(dir) && statSync(dir).isDirectory();
}
