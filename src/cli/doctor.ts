/**
 * `ase doctor`: per engine, which agent CLI was found where (or every place looked in), its
 * version against the tested one, and which of the credential variables the engine looks for are
 * set: names only, never values. Works with no agent installed; it reports, it never fails (exit 0)
 * unless asked something it cannot do.
 */
import { defaultRegistry, tierOf, TIER_SIGNALS, type AgentDiagnosis, type EngineTier } from '../index.js';
import { bold, dim, green, red, yellow, type Output } from './render.js';

export interface DoctorArgs {
  json: boolean;
  /** Where ASE_*_BIN, PATH and the credentials are read. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

export async function runDoctor(args: DoctorArgs, output: Output): Promise<number> {
  const registry = defaultRegistry();
  const reports: { engine: string; tier: EngineTier; agents: AgentDiagnosis[] }[] = [];
  for (const name of registry.names()) {
    const factory = registry.get(name);
    const agents = factory.diagnose ? await factory.diagnose(args.env ? { env: args.env } : {}) : [];
    reports.push({ engine: name, tier: tierOf(factory.capabilities), agents });
  }
  if (args.json) {
    output.out(`${JSON.stringify({ engines: reports }, null, 2)}\n`);
    return 0;
  }
  output.out(`${bold('ase doctor')}: agent CLIs, versions and credentials (variable names only, never values)\n`);
  for (const { engine, tier, agents } of reports) {
    if (agents.length === 0) output.out(`\n${bold(engine)}  built in, no agent CLI needed\n`);
    for (const a of agents) output.out(`\n${describe(a)}`);
    output.out(describeTier(engine, tier));
  }
  const found = reports.flatMap((r) => r.agents).filter((a) => a.found).length;
  const total = reports.flatMap((r) => r.agents).length;
  output.out(`\n${found} of ${total} agent CLIs found.\n`);
  return 0;
}

function describe(a: AgentDiagnosis): string {
  const lines = [`${bold(a.agent)}  ${a.title}  ${dim(`(${a.select})`)}`];
  const looked = a.looked.filter((l) => l !== 'bin option: not given');
  if (a.found) {
    lines.push(`  found        ${green('yes')}, ${a.where}: ${a.path}`);
  } else {
    lines.push(`  found        ${red('no')}; looked in:`);
    for (const place of looked) lines.push(`                 ${place}`);
    lines.push(`  install      ${a.install}  (or put it on PATH, or set ${a.envVar})`);
  }
  const tested = a.testedVersion ?? 'not in the test suite';
  if (a.found) {
    const version = a.version ?? `unknown (${a.versionError ?? 'not reported'})`;
    const mark = a.version === undefined || a.testedVersion === undefined ? '' : a.version === a.testedVersion ? ` ${green('✓ tested')}` : ` ${yellow('⚠ not the tested version')}`;
    lines.push(`  version      ${version}${mark}`);
  }
  lines.push(`  tested with  ${tested}`);
  const set = a.credentials.set.length > 0 ? a.credentials.set.join(', ') : 'none';
  lines.push(`  credentials  set: ${set}`);
  lines.push(dim(`               looked for: ${a.credentials.variables.join(', ')}`));
  return `${lines.join('\n')}\n`;
}

/** One line per engine: its runtime tier and how far each signal can be trusted. */
function describeTier(engine: string, tier: EngineTier): string {
  const mark = { authoritative: green('authoritative'), cooperative: yellow('cooperative'), absent: dim('absent') } as const;
  const signals = TIER_SIGNALS.map((signal) => `${signal} ${mark[tier.signals[signal]]}`).join(', ');
  return `  tier         ${engine}: ${tier.tier}; ${signals}\n`;
}
