/**
 * Who hears about a run (DESIGN §5, docs/notifications.md). Pure: the run's result and the results
 * of the runs before it (same test, environment and region; pass/fail only; newest first) in, a
 * decision out.
 */
import type { Emails } from '../domain/environments.js';
import type { Integration } from '../domain/integrations.js';

/** What of an integration decides when it hears of a run. */
type IntegrationNotice = Pick<Integration, 'integration_type' | 'notify_on' | 'notify_threshold'>;

type Result = 'pass' | 'fail' | 'canceled';
type Previous = readonly ('pass' | 'fail')[];

/** How many earlier results each rule needs to decide. */
export function historyNeeded(emails: Pick<Emails, 'notify_on' | 'notify_threshold'>): number {
  return emails.notify_on === 'threshold' ? thresholdOf(emails) : 1;
}

const thresholdOf = (emails: Pick<Emails, 'notify_threshold'>) => Math.max(1, emails.notify_threshold ?? 1);

/** Leading fails of `previous` (the streak this run continues or ends). */
function streak(previous: Previous): number {
  const index = previous.indexOf('pass');
  return index === -1 ? previous.length : index;
}

/**
 * Whether the run's e-mail goes out, and whether it reports a recovery. Canceled runs send none.
 * - all: every pass or fail; failures: every fail;
 * - threshold: the fail that makes the streak exactly `notify_threshold` long, and the first pass
 *   after a streak that reached it;
 * - switch: a result other than the previous one (a first run counts as following a pass).
 */
export function emailDecision(
  emails: Pick<Emails, 'notify_on' | 'notify_threshold'>,
  result: Result,
  previous: Previous,
): { send: boolean; recovered: boolean } {
  if (result === 'canceled') return { send: false, recovered: false };
  const last = previous[0] ?? 'pass';
  const recovered = result === 'pass' && last === 'fail';
  switch (emails.notify_on) {
    case 'all':
      return { send: true, recovered };
    case 'failures':
      return { send: result === 'fail', recovered: false };
    case 'threshold': {
      const threshold = thresholdOf(emails);
      if (result === 'fail') return { send: streak(previous) + 1 === threshold, recovered: false };
      // `previous` holds `threshold` results: all fail means the streak reached the threshold.
      const reached = previous.length >= threshold && streak(previous) >= threshold;
      return { send: reached, recovered: reached };
    }
    case 'switch':
      return { send: result !== last, recovered };
  }
}

/**
 * Slack and PagerDuty: every failed run alerts (PagerDuty folds them into one incident by its dedup
 * key); the first pass after a fail resolves. Canceled runs and passes after passes stay quiet.
 */
export function alertDecision(result: Result, previous: Previous): 'trigger' | 'resolve' | null {
  if (result === 'fail') return 'trigger';
  if (result === 'pass' && previous[0] === 'fail') return 'resolve';
  return null;
}

/** An integration's `notify_on` and `notify_threshold` in the shape of the e-mail rule. */
export const integrationRule = (integration: IntegrationNotice) => ({
  notify_on: integration.notify_on ?? 'all',
  notify_threshold: integration.notify_threshold,
});

/**
 * Whether an integration hears of the run, and how: null for nothing, `trigger` for a fail, `resolve`
 * for a recovery, `report` for another pass or a canceled run. Without `notify_on`, each type keeps its
 * own rule (webhooks: every finished run; Slack and PagerDuty: fails and the first pass after one);
 * with it, the e-mail rule decides (canceled runs then send nothing).
 */
export function integrationDecision(
  integration: IntegrationNotice,
  result: Result,
  previous: Previous,
): 'trigger' | 'resolve' | 'report' | null {
  if (integration.notify_on === null) {
    if (integration.integration_type === 'webhook') return 'report';
    return alertDecision(result, previous);
  }
  const decision = emailDecision(integrationRule(integration), result, previous);
  if (!decision.send) return null;
  if (result === 'fail') return 'trigger';
  return decision.recovered || previous[0] === 'fail' ? 'resolve' : 'report';
}

/** A run of a round as the quorum rule reads it. */
export interface RoundMember {
  /** The region label (agent name for a remote agent). */
  region: string;
  result: string;
}

export type RoundDecision =
  | { complete: false }
  | {
      complete: true;
      /** fail: at least the quorum failed; else pass when a run passed, else canceled. */
      result: 'pass' | 'fail' | 'canceled';
      failed: string[];
      passed: string[];
    };

/**
 * The alert quorum of a round: the round is decided once all its runs finished, and it fails when
 * at least `quorum` of them failed. A quorum above the round's size asks for every run to fail.
 * Canceled runs count neither way.
 */
export function roundDecision(quorum: number, members: readonly RoundMember[]): RoundDecision {
  if (members.some((m) => m.result !== 'pass' && m.result !== 'fail' && m.result !== 'canceled')) {
    return { complete: false };
  }
  const failed = members.filter((m) => m.result === 'fail').map((m) => m.region);
  const passed = members.filter((m) => m.result === 'pass').map((m) => m.region);
  const needed = Math.max(1, Math.min(quorum, members.length));
  const result = failed.length >= needed ? 'fail' : passed.length > 0 ? 'pass' : 'canceled';
  return { complete: true, result, failed, passed };
}
