/**
 * Which `Host` names `ase serve` answers for. A page on another site can make a browser talk to
 * 127.0.0.1 under its own name (DNS rebinding): the browser then sends that name as `Host` and as
 * its own `Origin`, and since the server's "own origin" comes from `Host`, the Origin check alone
 * would pass it. So a request naming any other host is refused first, before authentication:
 * loopback names always pass (no rebinding page can be `localhost`), the name the server is bound to
 * passes, and every other name must be allowed explicitly (`--allow-host`, `allowedHosts`).
 */

/** The host part of a `Host` header (`name`, `name:port`, `[v6]:port`), lower-cased, without a trailing dot. */
export function hostName(header: string): string | undefined {
  const value = header.trim().toLowerCase();
  let name: string;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return undefined;
    name = value.slice(1, end);
    if (!/^(:\d{1,5})?$/.test(value.slice(end + 1))) return undefined;
  } else {
    const colon = value.indexOf(':');
    name = colon < 0 ? value : value.slice(0, colon);
    if (colon >= 0 && !/^\d{1,5}$/.test(value.slice(colon + 1))) return undefined;
  }
  name = name.replace(/\.$/, '');
  return name === '' ? undefined : name;
}

/** `localhost`, `*.localhost` (RFC 6761: always loopback), `127.0.0.0/8`, `::1`. */
export function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost') || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

/** The names one server answers for besides loopback: its bound address (unless a wildcard) and the allowed ones. */
export function allowedHostNames(bound: string | undefined, allowed: readonly string[] = []): Set<string> {
  const names = new Set<string>();
  for (const given of [...(bound !== undefined ? [bound] : []), ...allowed]) {
    const name = hostName(given.includes(':') && !given.startsWith('[') && given.split(':').length > 2 ? `[${given}]` : given);
    if (name !== undefined && name !== '0.0.0.0' && name !== '::') names.add(name);
  }
  return names;
}

/** Whether a request's `Host` header names this server. */
export function hostAllowed(header: string | undefined, names: ReadonlySet<string>): boolean {
  if (header === undefined) return false;
  const name = hostName(header);
  return name !== undefined && (isLoopbackName(name) || names.has(name));
}
