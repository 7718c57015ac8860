// The top self-time entries of a V8 .cpuprofile (node --cpu-prof), as a Markdown table. Idle time
// and the profile driver's own work (frames in bench/, and Node internals it called directly:
// writing the stream file, removing temp dirs) are left out, so the percentages are of the CPU
// time the library and Node spent on the consumer.
//   node bench/profile/top.mjs <file.cpuprofile> [count]
import fs from 'node:fs';

const [file, n = '25'] = process.argv.slice(2);
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
/** The nearest frame with a script of its own (not Node's internals) is the driver's. */
const isDriver = (id) => {
  for (let node = byId.get(id); node; node = byId.get(parent.get(node.id))) {
    const url = node.callFrame.url;
    if (url && !url.startsWith('node:')) return url.includes('/bench/');
  }
  return false;
};
const self = new Map();
const dt = profile.timeDeltas;
let idle = 0;
let driver = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const node = byId.get(profile.samples[i]);
  const { functionName, url, lineNumber } = node.callFrame;
  const us = dt[i] ?? 0;
  if (functionName === '(idle)') {
    idle += us;
    continue;
  }
  if (isDriver(node.id)) {
    driver += us;
    continue;
  }
  const where = url ? `${url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${lineNumber + 1}` : '';
  const key = `${functionName || '(anonymous)'} ${where}`.trim();
  self.set(key, (self.get(key) ?? 0) + us);
}
const busy = [...self.values()].reduce((a, b) => a + b, 0);
const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(n));
console.log(`| self ms | % of busy | function |\n|---:|---:|---|`);
for (const [key, us] of rows) console.log(`| ${(us / 1000).toFixed(1)} | ${((100 * us) / busy).toFixed(1)} | \`${key.replace(/\|/g, '\\|')}\` |`);
console.log(`\nbusy ${(busy / 1000).toFixed(0)} ms (idle ${(idle / 1000).toFixed(0)} ms and the driver's own ${(driver / 1000).toFixed(0)} ms left out)`);
