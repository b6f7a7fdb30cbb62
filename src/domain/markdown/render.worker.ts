/**
 * A worker thread of render-pool.ts: renders the texts the pool sends, asking the pool for the
 * references it finds (the resolver and its database stay on the main thread).
 */
import { parentPort } from 'node:worker_threads';
import { renderMarkdown } from './render.ts';
import type { ReferenceResolver } from './references.ts';
import type { FromWorker, ToWorker } from './render-pool.ts';

const port = parentPort;
if (!port) throw new Error('render.worker.ts runs as a worker thread');

const calls = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
let nextCall = 0;

function proxy(job: number): ReferenceResolver {
  const ask = (method: keyof ReferenceResolver, args: unknown[]) => new Promise<any>((resolve, reject) => {
    const call = nextCall++;
    calls.set(call, { resolve, reject });
    port!.postMessage({ type: 'resolve', job, call, method, args } satisfies FromWorker);
  });
  return {
    users: (usernames) => ask('users', [usernames]),
    issues: (iids) => ask('issues', [iids]),
    mergeRequests: (iids) => ask('mergeRequests', [iids]),
    labels: (query) => ask('labels', [query]),
    milestones: (query) => ask('milestones', [query]),
    allMembers: () => ask('allMembers', []),
  };
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'resolved') {
    const call = calls.get(message.call);
    calls.delete(message.call);
    if (message.error !== undefined) call?.reject(new Error(message.error));
    else call?.resolve(message.result);
    return;
  }
  const { job, text, gfm, ownHost, references } = message;
  renderMarkdown(text, { gfm, ownHost, ...(references ? { resolveReferences: proxy(job) } : {}) }).then(
    (html) => port.postMessage({ type: 'done', job, html } satisfies FromWorker),
    (error: unknown) => port.postMessage({ type: 'failed', job, error: String(error) } satisfies FromWorker),
  );
});
