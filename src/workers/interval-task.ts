/**
 * Work a process repeats on an interval (the CI sweep, the pipeline scheduler's tick): at most
 * one run at a time — a tick that finds the last run still going is skipped — a failed run
 * logged and tried again at the next tick, and stop() waiting for the run in progress, so the
 * database can close after it. An interval of 0 seconds turns the work off.
 */
type Log = { error(obj: object, msg: string): void };

export class IntervalTask {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<unknown> | null = null;
  readonly #run: () => Promise<unknown>;
  readonly #intervalMs: number;
  readonly #log: Log;
  readonly #failure: string;

  constructor(run: () => Promise<unknown>, intervalSeconds: number, log: Log, failure: string) {
    this.#run = run;
    this.#intervalMs = intervalSeconds * 1000;
    this.#log = log;
    this.#failure = failure;
  }

  start(): void {
    if (this.#intervalMs === 0 || this.#timer) return;
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = this.#run()
        .catch((err: unknown) => this.#log.error({ err }, this.#failure))
        .finally(() => { this.#running = null; });
    }, this.#intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }
}
