// Which bind addresses a server of ours may take without a token: the web host (core/host) and
// `serve-env` (core/openenv) apply the same rule, so it lives below both.

/** The binds that need no token: the default loopback addresses everyone on the machine expects. */
const DEFAULT_LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export function isLoopback(host: string): boolean {
  return DEFAULT_LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Any bind other than the default loopback was asked for on purpose (another 127.x address is
 * often a forwarded or shared one), so it is gated by a token like an exposed address.
 */
export function needsTokenFor(host: string): boolean {
  return !DEFAULT_LOOPBACK.has(host);
}
