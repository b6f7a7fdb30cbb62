/**
 * A kiln listening on 127.0.0.1 for real clients (gitbeaker, git, browsers): KILN_EXTERNAL_URL is
 * the listening URL, so Link headers and web_urls point back at the server the client talks to.
 */
import net from 'node:net';
import { startTestApp, type TestApp, type TestAppOptions } from './app.ts';

export interface ListeningTestApp extends TestApp {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  url: string;
}

/** A port nothing listens on right now (the kernel's choice for port 0, released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function startListeningApp(env: Record<string, string> = {}, opts: TestAppOptions = {}): Promise<ListeningTestApp> {
  // The port freePort saw free can be taken by another test process before kiln listens on it
  // (files run in parallel): then the app is closed and started again on another port.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const t = await startTestApp({ PORT: String(port), KILN_EXTERNAL_URL: url, ...env }, opts);
    try {
      await t.app.listen({ port, host: '127.0.0.1' });
      return { ...t, url };
    } catch (err) {
      await t.close();
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt >= 5) throw err;
    }
  }
}
