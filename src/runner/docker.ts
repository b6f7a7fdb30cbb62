/**
 * Whether a Docker daemon answers (GET /_ping on DOCKER_HOST or the default socket). kiln's
 * runner never runs a job that asks for an image or services on the host: without a daemon
 * such a job fails at once with runner_system_failure and a line saying why.
 */
import http from 'node:http';

export function dockerHost(configured?: string): string {
  return configured || process.env.DOCKER_HOST || 'unix:///var/run/docker.sock';
}

export function pingDocker(host: string, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    let opts: http.RequestOptions;
    if (host.startsWith('unix://')) {
      opts = { socketPath: host.slice('unix://'.length), path: '/_ping' };
    } else if (host.startsWith('tcp://') || host.startsWith('http://')) {
      const u = new URL(host.replace(/^tcp:/, 'http:'));
      opts = { host: u.hostname, port: u.port || 2375, path: '/_ping' };
    } else {
      resolve(false);
      return;
    }
    const req = http.get({ ...opts, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}
