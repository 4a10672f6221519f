/** The part of Newman's programmatic API the runner benchmark uses (Newman ships no types). */
declare module 'newman' {
  import type { EventEmitter } from 'node:events';
  import type { Agent } from 'node:http';

  namespace newman {
    interface NewmanRunOptions {
      /** A Postman collection (v2.1) as a parsed object, or the path of its file. */
      collection: object | string;
      /** Environment variables of the run. */
      envVar?: { key: string; value: string }[];
      /** Agents the requests go through instead of a pool shared by every run. */
      requestAgents?: { http?: Agent; https?: Agent };
      reporters?: string | string[];
    }

    interface NewmanStat {
      total: number;
      failed: number;
      pending: number;
    }

    interface NewmanRunSummary {
      run: {
        stats: Record<'requests' | 'assertions' | 'testScripts' | 'prerequestScripts', NewmanStat>;
        failures: { error?: { message?: string } }[];
        /** Null when the run itself did not fail. */
        error: unknown;
      };
    }

    function run(
      options: NewmanRunOptions,
      callback: (error: Error | null, summary: NewmanRunSummary) => void,
    ): EventEmitter;
  }

  export = newman;
}
