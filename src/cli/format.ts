/**
 * How the CLI shows numbers and times. Costs are rounded here, for reading only: the data (the
 * stored usage, `--json` output) keeps the exact sums, so `0.0001 + 0.0002` is shown as `$0.0003`
 * but stored as the float it is.
 */

/** US dollars for reading: `$0`, `<$0.0001`, `$0.0003`, `$0.2500`, `$12.50` (four decimals below a dollar, two above). */
export function formatUsd(value: number): string {
  if (!Number.isFinite(value)) return `$${String(value)}`;
  if (value === 0) return '$0';
  const sign = value < 0 ? '-' : '';
  const abs = Math.abs(value);
  if (abs < 0.00005) return `${sign}<$0.0001`;
  // 0.99996 rounds to "1.0000": show it as a dollar amount.
  if (abs >= 0.99995) return `${sign}$${abs.toFixed(2)}`;
  return `${sign}$${abs.toFixed(4)}`;
}

/** An epoch-ms time as local `YYYY-MM-DD HH:MM:SS`. */
export function formatTime(epochMs: number): string {
  const d = new Date(epochMs);
  if (Number.isNaN(d.getTime())) return '?';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
