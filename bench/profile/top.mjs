// The top self-time entries of a V8 .cpuprofile (node --cpu-prof), as a Markdown table.
//   node bench/profile/top.mjs <file.cpuprofile> [count]
import fs from 'node:fs';

const [file, n = '25'] = process.argv.slice(2);
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map();
const dt = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) {
  const node = byId.get(profile.samples[i]);
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? `${url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${lineNumber + 1}` : '';
  const key = `${functionName || '(anonymous)'} ${where}`.trim();
  self.set(key, (self.get(key) ?? 0) + (dt[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(n));
console.log(`| self ms | % | function |\n|---:|---:|---|`);
for (const [key, us] of rows) console.log(`| ${(us / 1000).toFixed(1)} | ${((100 * us) / total).toFixed(1)} | \`${key.replace(/\|/g, '\\|')}\` |`);
console.log(`\ntotal sampled: ${(total / 1000).toFixed(0)} ms`);
