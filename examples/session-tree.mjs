// @ts-check
/**
 * A sub-agent session entered without forking: a parent session spawns a child (which records its
 * parent), the focus moves to the child and back to the very same parent, and the child's answer
 * reaches the parent once. The supervisor lists the tree through `parentId`; `findSessionTree`
 * finds the tree (and its focus) from any of its sessions, as `ase serve` does for remote clients.
 *
 * Everything lives in a temporary data dir, removed at the end; the agent is the built-in fake
 * engine (it echoes). Run it with plain Node: `node examples/session-tree.mjs` (in this repository
 * after `npm run build`). `test/unit/examples.test.ts` runs it too.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createSupervisor, FileStore, findSessionTree, openSessionTree, sessionTreeFile } from 'agent-session-engine';

/** @returns {Promise<import('agent-session-engine').SupervisedSessionInfo[]>} */
export async function main() {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ase-tree-example-'));
  const store = new FileStore({ dir: path.join(dataDir, 'sessions') });
  const supervisor = createSupervisor({ dataDir, store });
  try {
    const workDir = process.cwd();
    await supervisor.create({ agent: 'fake', workDir, sessionId: 'parent' });
    const tree = await openSessionTree({ supervisor, file: sessionTreeFile(dataDir, 'parent'), rootId: 'parent' });

    const child = await tree.spawn('parent', { agent: 'fake', workDir, sessionId: 'tests', parentCallId: 'call-1' });
    console.log(`spawned ${child.id} under ${child.snapshot().parentId}`);

    await tree.enter('tests'); // the parent is suspended: not stopped, not forked
    const seen = await findSessionTree({ dataDir, store, sessionId: 'tests' });
    console.log(`focus: ${seen?.focus}, parent ${seen?.nodes['parent']?.state}`);
    await child.run('run the tests');
    await tree.exit();
    console.log(`focus: ${tree.focus}`);
    await tree.complete('tests'); // its last answer reaches the parent once, as a queued message
    await tree.close(); // the tree stays in its file

    const sessions = await supervisor.list();
    for (const s of [...sessions].sort((a, b) => a.sessionId.localeCompare(b.sessionId))) console.log(`${s.sessionId}${s.parentId ? ` (child of ${s.parentId})` : ''}: ${s.status}`);
    return sessions;
  } finally {
    await supervisor.shutdown();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
