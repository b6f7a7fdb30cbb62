/**
 * Which addresses a hook may reach (the Service's Gitlab::UrlBlocker as WebHookService calls it):
 * http and https only, and no loopback, private, link-local, shared (CGNAT) or unspecified
 * address unless the instance allows local requests for that kind of hook
 * (`allow_local_requests_from_web_hooks_and_services` for project hooks and integrations,
 * `allow_local_requests_from_system_hooks` for system hooks).
 *
 * The check runs twice: on the URL's literal host when a hook is saved (the Service's
 * PublicUrlValidator, which does not resolve names), and at delivery on every address the
 * name resolves to, inside the connection's own lookup (delivery.ts), so a name that resolves to a
 * public address when checked and a private one when connecting (DNS rebinding) is still refused.
 */
import net from 'node:net';

const loopback = new net.BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addSubnet('0.0.0.0', 8, 'ipv4');
loopback.addSubnet('::1', 128, 'ipv6');
loopback.addSubnet('::', 128, 'ipv6');
const linkLocal = new net.BlockList();
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4');
linkLocal.addSubnet('fe80::', 10, 'ipv6');
// Private, shared address space (CGNAT), broadcast, unique local.
const privateNetwork = new net.BlockList();
for (const [address, prefix] of [
  ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10], ['255.255.255.255', 32],
] as const) privateNetwork.addSubnet(address, prefix, 'ipv4');
privateNetwork.addSubnet('fc00::', 7, 'ipv6');

/** An IPv6 address carrying an IPv4 one (::ffff:a.b.c.d) is judged by the IPv4 address. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return { address: m[1], family: 'ipv4' };
  return { address, family: net.isIPv4(address) ? 'ipv4' : 'ipv6' };
}

/** Why a delivery may not reach `address` (Gitlab::UrlBlocker's wording), or null for a public address. */
export function localAddressProblem(address: string): string | null {
  const a = unmapped(address);
  if (loopback.check(a.address, a.family)) return 'Requests to localhost are not allowed';
  if (linkLocal.check(a.address, a.family)) return 'Requests to the link local network are not allowed';
  if (privateNetwork.check(a.address, a.family)) return 'Requests to the local network are not allowed';
  return null;
}

export function isLocalAddress(address: string): boolean {
  return localAddressProblem(address) !== null;
}

export class BlockedUrlError extends Error {}

/** The host of a URL without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Parses and checks a hook URL as saved; returns why it is refused, or null. Names are not
 * resolved here (`localhost` excepted, which always means this machine).
 */
export function urlProblem(text: string, allowLocal: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'Only allowed schemes are http, https';
  const host = bareHost(url);
  if (host === '') return 'is not a valid URL';
  if (allowLocal) return null;
  if (host === 'localhost' || host.endsWith('.localhost')) return 'Requests to localhost are not allowed';
  return net.isIP(host) ? localAddressProblem(host) : null;
}

/** Throws BlockedUrlError when a delivery may not go to `text` (its literal host; names are checked on lookup). */
export function checkDeliveryUrl(text: string, allowLocal: boolean): URL {
  const problem = urlProblem(text, allowLocal);
  if (problem) throw new BlockedUrlError(`URL is blocked: ${problem}`);
  return new URL(text);
}
