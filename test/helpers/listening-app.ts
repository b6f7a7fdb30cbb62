/**
 * A kiln listening on 127.0.0.1 for clients that speak real HTTP (openid-client, a browser). The
 * port is chosen first so that KILN_EXTERNAL_URL, which names the OAuth issuer, matches the
 * address the clients connect to.
 */
import net from 'node:net';
import { startTestApp, type TestApp } from './app.ts';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface ListeningApp extends TestApp {
  baseUrl: string;
}

export async function startListeningApp(env: Record<string, string> = {}): Promise<ListeningApp> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const t = await startTestApp({ KILN_EXTERNAL_URL: baseUrl, ...env });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { ...t, baseUrl };
}
