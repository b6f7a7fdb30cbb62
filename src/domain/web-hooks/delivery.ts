/**
 * One webhook request (the Service's WebHookService#make_request): a JSON POST with the event
 * headers, the secret token header when the hook has one, credentials in the URL sent as HTTP
 * Basic instead, a 10 second timeout (Gitlab.config.gitlab.webhook_timeout's default) and no
 * redirect followed (Gitlab::HTTP is called with follow_redirects false: a 3xx answer counts as
 * delivered). Addresses are checked as the connection resolves them (url-policy.ts).
 */
import crypto from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { BlockedUrlError, checkDeliveryUrl, localAddressProblem } from './url-policy.ts';

export const DELIVERY_TIMEOUT_MS = 10_000;

export interface DeliveryRequest {
  url: string;
  /** The X-Gitlab-Event value ('Push Hook', 'System Hook', …). */
  event: string;
  data: unknown;
  /** The hook's secret, sent as X-Gitlab-Token. */
  token: string | null;
  allowLocal: boolean;
  verifyTls: boolean;
  /** KILN_EXTERNAL_URL, sent as X-Gitlab-Instance. */
  instanceUrl: string;
  userAgent: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Told the request headers (without HTTP Basic credentials) before the URL is checked, for the delivery log. */
  onRequest?: (headers: Record<string, string>) => void;
}

export interface DeliveryResult {
  status: number;
  /** 2xx, or a redirect (not followed): the Service's WebHookService#response_category :ok. */
  ok: boolean;
  /** The start of the answer's body (RESPONSE_BODY_SIZE_LIMIT, 8 KiB): the test routes report it. */
  body: string;
  /** The answer's headers in the order received. */
  headers: [string, string][];
}

const RESPONSE_BODY_LIMIT = 8192;

/** A lookup that refuses local addresses: the check sees exactly the addresses the socket will use. */
export function guardedLookup(allowLocal: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const problem = allowLocal ? null : list.map((a) => localAddressProblem(a.address)).find((p) => p !== null);
      if (problem) return callback(new BlockedUrlError(`URL is blocked: ${problem}`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

export function deliver(req: DeliveryRequest): Promise<DeliveryResult> {
  const body = JSON.stringify(req.data);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    'User-Agent': req.userAgent,
    'X-Gitlab-Event': req.event,
    'X-Gitlab-Event-UUID': crypto.randomUUID(),
    'X-Gitlab-Instance': req.instanceUrl,
  };
  // Line breaks would split the header (the Service removes them, Gitlab::Utils.remove_line_breaks).
  if (req.token) headers['X-Gitlab-Token'] = req.token.replace(/[\r\n]/g, '');
  req.onRequest?.({ ...headers });
  const url = checkDeliveryUrl(req.url, req.allowLocal);
  if (url.username || url.password) {
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    headers.Authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  const timeout = AbortSignal.timeout(req.timeoutMs ?? DELIVERY_TIMEOUT_MS);
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<DeliveryResult>((resolve, reject) => {
    const request = client.request(url, {
      method: 'POST', headers, signal, lookup: guardedLookup(req.allowLocal),
      rejectUnauthorized: req.verifyTls, agent: false,
    }, (response) => {
      const status = response.statusCode ?? 0;
      // Only the body's start is kept; the rest is read and dropped so the socket closes.
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept >= RESPONSE_BODY_LIMIT) return;
        chunks.push(chunk.subarray(0, RESPONSE_BODY_LIMIT - kept));
        kept += Math.min(chunk.length, RESPONSE_BODY_LIMIT - kept);
      });
      const answerHeaders: [string, string][] = [];
      for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) answerHeaders.push([response.rawHeaders[i], response.rawHeaders[i + 1]]);
      response.on('end', () => resolve({
        status, ok: status >= 200 && status < 400, body: Buffer.concat(chunks).toString('utf8'), headers: answerHeaders,
      }));
      response.on('error', reject);
    });
    request.on('error', (err) => {
      reject(signal.aborted && timeout.aborted ? new Error('Net::ReadTimeout: the hook did not answer in time') : err);
    });
    request.end(body);
  });
}
