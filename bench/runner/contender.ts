/** A test runner under measurement, loaded in its own worker process (worker.ts). */
export interface Contender {
  /**
   * One run of the benchmark test (see bench/README.md, "Runner") against the upstream at `baseUrl`,
   * on connections of its own, closed by the time the promise settles. True when every check passed.
   */
  run(baseUrl: string): Promise<boolean>;
}

/** A contender that cannot run here, with the reason shown in its row of the table. */
export interface Unavailable {
  unavailable: string;
}

export type LoadContender = () => Promise<Contender | Unavailable>;
