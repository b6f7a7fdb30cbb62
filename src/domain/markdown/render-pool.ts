/**
 * Rendering off the event loop (DESIGN, Performance shape: blocking work never runs on the hot
 * path). A long text takes the engine and the sanitiser hundreds of milliseconds or more, during
 * which no other request would be served; such texts render in worker threads, while short ones,
 * which cost less than the round trip, render in place. References are still resolved here, on
 * the main thread, by the caller's resolver: the worker asks for them by message.
 */
import { Worker } from 'node:worker_threads';
import { renderMarkdown, type RenderOptions } from './render.ts';
import type { ReferenceResolver } from './references.ts';

/** Texts up to this many characters render in place. */
export const IN_PLACE_LIMIT = 16_384;

export type ToWorker =
  | { type: 'render'; job: number; text: string; gfm: boolean; ownHost: string | null; references: boolean }
  | { type: 'resolved'; call: number; result?: unknown; error?: string };

export type FromWorker =
  | { type: 'resolve'; job: number; call: number; method: keyof ReferenceResolver; args: unknown[] }
  | { type: 'done'; job: number; html: string }
  | { type: 'failed'; job: number; error: string };

interface Job {
  resolver: ReferenceResolver | undefined;
  resolve: (html: string) => void;
  reject: (error: Error) => void;
  worker: PoolWorker;
}

interface PoolWorker {
  thread: Worker;
  busy: number;
}

export interface MarkdownRenderer {
  render(text: string, options: RenderOptions): Promise<string>;
  close(): Promise<void>;
}

/** A pool of `size` worker threads, started when a long text first needs one. */
export function createMarkdownRenderer(size = 2): MarkdownRenderer {
  const workers: PoolWorker[] = [];
  const jobs = new Map<number, Job>();
  let nextJob = 0;
  let closed = false;

  function failAll(worker: PoolWorker, error: Error): void {
    for (const [id, job] of jobs) {
      if (job.worker !== worker) continue;
      jobs.delete(id);
      job.reject(error);
    }
    const at = workers.indexOf(worker);
    if (at >= 0) workers.splice(at, 1);
  }

  function start(): PoolWorker {
    const thread = new Worker(new URL('./render.worker.ts', import.meta.url));
    const worker: PoolWorker = { thread, busy: 0 };
    // An idle pool does not keep the process alive.
    thread.unref();
    thread.on('message', (message: FromWorker) => {
      const job = jobs.get(message.job);
      if (!job) return;
      if (message.type === 'resolve') {
        const resolver = job.resolver;
        const answer = resolver
          ? (resolver[message.method] as (...args: unknown[]) => Promise<unknown>)(...message.args)
          : Promise.reject(new Error('no resolver'));
        answer.then(
          (result) => thread.postMessage({ type: 'resolved', call: message.call, result } satisfies ToWorker),
          (error: unknown) => thread.postMessage({ type: 'resolved', call: message.call, error: String(error) } satisfies ToWorker),
        );
        return;
      }
      jobs.delete(message.job);
      worker.busy -= 1;
      if (message.type === 'done') job.resolve(message.html);
      else job.reject(new Error(message.error));
    });
    thread.on('error', (error) => failAll(worker, error));
    thread.on('exit', (code) => failAll(worker, new Error(`markdown worker exited with code ${code}`)));
    workers.push(worker);
    return worker;
  }

  function leastBusy(): PoolWorker {
    if (workers.length < size) return start();
    return workers.reduce((a, b) => (b.busy < a.busy ? b : a));
  }

  return {
    render(text, options) {
      if (closed || text.length <= IN_PLACE_LIMIT) return renderMarkdown(text, options);
      const worker = leastBusy();
      const job = nextJob++;
      return new Promise<string>((resolve, reject) => {
        jobs.set(job, { resolver: options.resolveReferences, resolve, reject, worker });
        worker.busy += 1;
        worker.thread.postMessage({
          type: 'render', job, text, gfm: options.gfm, ownHost: options.ownHost ?? null,
          references: options.resolveReferences !== undefined,
        } satisfies ToWorker);
      });
    },
    async close() {
      closed = true;
      await Promise.all(workers.map((w) => w.thread.terminate()));
    },
  };
}
