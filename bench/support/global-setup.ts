/**
 * Global setup of `npm run bench`: gives every bench file a fresh results directory and, after the
 * last file ran, renders docs/benchmarks.md from the sections they recorded. The document is only
 * rewritten when every benchmark recorded its section (running one file alone leaves it as it is).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { describeMachine, readSections, renderMarkdown, RESULTS_DIR_KEY, SECTION_IDS } from './report.js';

const DOC = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));

export default function setup(project: TestProject): () => void {
  const started = performance.now();
  const loadStart = os.loadavg()[0] ?? 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ase-bench-results-'));
  project.provide(RESULTS_DIR_KEY, dir);
  return () => {
    try {
      const sections = readSections(dir);
      const missing = SECTION_IDS.filter((id) => !sections.some((s) => s.id === id));
      if (missing.length > 0) {
        console.warn(`[bench] ${path.relative(process.cwd(), DOC)} not rewritten: no results for ${missing.join(', ')}`);
        return;
      }
      const wallSeconds = (performance.now() - started) / 1000;
      fs.mkdirSync(path.dirname(DOC), { recursive: true });
      fs.writeFileSync(DOC, renderMarkdown(sections, describeMachine(loadStart), wallSeconds));
      console.log(`[bench] wrote ${path.relative(process.cwd(), DOC)} (${wallSeconds.toFixed(0)} s)`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
}
