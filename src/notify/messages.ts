/**
 * Messages people read about a run: the e-mail (plain text and HTML), the Slack message and the
 * PagerDuty event. Pure: facts in, documents out. Everything from a run is escaped in HTML.
 */
import { escapeHtml } from '../domain/html.js';
import { type Failure, failureOf, type RunFacts, runUrlOf } from './payload.js';

export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

const shown = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined ? 'undefined' : JSON.stringify(value);

/** One line per fact, as label/value pairs shared by the text and HTML mail and Slack. */
function factLines(facts: RunFacts, failure: Failure | null): [string, string][] {
  const { run, test } = facts;
  const lines: [string, string][] = [
    ['Test', test.name],
    ['Environment', run.environment_name],
    ['Region', run.region],
    ['Result', run.result],
  ];
  if (facts.round) {
    lines.push(['Failed regions', facts.round.failed_regions.join(', ') || 'none']);
    lines.push(['Passed regions', facts.round.passed_regions.join(', ') || 'none']);
  }
  if (failure?.step) {
    const { step } = failure;
    const where = [step.method, step.url].filter(Boolean).join(' ');
    lines.push([
      'Failing step',
      `#${step.index + 1} ${step.step_type}${where ? ` ${where}` : ''}${step.note ? ` (${step.note})` : ''}`,
    ]);
  }
  if (failure?.assertion) {
    const a = failure.assertion;
    lines.push([
      'Failing assertion',
      `${a.source}${a.property ? ` ${a.property}` : ''} ${a.comparison} ${shown(a.target_value)}`,
    ]);
    lines.push(['Expected', shown(a.target_value)]);
    lines.push(['Actual', shown(a.actual_value)]);
  }
  if (failure?.error) lines.push(['Error', failure.error]);
  return lines;
}

/** Where the headline says the run ran: its region, or the failed regions of a round. */
const where = (facts: RunFacts) =>
  facts.round && facts.round.failed_regions.length > 0
    ? `failed in ${facts.round.failed_regions.join(', ')}`
    : facts.run.region;

const headline = (facts: RunFacts, recovered: boolean) =>
  recovered
    ? `${facts.test.name} passes again (${facts.run.environment_name}, ${facts.round ? 'every region' : facts.run.region})`
    : `${facts.test.name} ${facts.run.result === 'pass' ? 'passed' : 'failed'} (${facts.run.environment_name}, ${where(facts)})`;

/** The notification e-mail of one run. */
export function runMail(facts: RunFacts, options: { recovered?: boolean } = {}): MailContent {
  const failure = facts.run.result === 'fail' ? failureOf(facts.run) : null;
  const lines = factLines(facts, failure);
  const link = runUrlOf(facts);
  const subject = `[Vigil] ${headline(facts, options.recovered ?? false)}`.replace(/[\r\n]+/g, ' ');
  const text = [
    headline(facts, options.recovered ?? false),
    '',
    ...lines.map(([label, value]) => `${label}: ${value}`),
    '',
    `Result: ${link}`,
    '',
  ].join('\n');
  const rows = lines
    .map(
      ([label, value]) => `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
    )
    .join('\n');
  const html = [
    '<!doctype html>',
    '<html><body>',
    `<p>${escapeHtml(headline(facts, options.recovered ?? false))}</p>`,
    `<table>\n${rows}\n</table>`,
    `<p><a href="${escapeHtml(link)}">View the result</a></p>`,
    '</body></html>',
    '',
  ].join('\n');
  return { subject, text, html };
}

/** Slack incoming-webhook message: `text` for notifications, `blocks` for the channel. */
export function slackMessage(facts: RunFacts, options: { recovered: boolean }) {
  const failure = facts.run.result === 'fail' ? failureOf(facts.run) : null;
  const title = `${options.recovered ? ':white_check_mark:' : ':x:'} ${headline(facts, options.recovered)}`;
  const escape = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const link = runUrlOf(facts);
  return {
    text: escape(title),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${escape(title)}*` } },
      {
        type: 'section',
        fields: factLines(facts, failure).map(([label, value]) => ({
          type: 'mrkdwn',
          text: `*${label}*\n${escape(value).slice(0, 1_900)}`,
        })),
      },
      { type: 'section', text: { type: 'mrkdwn', text: `<${link}|View the result>` } },
    ],
  };
}

/** A PagerDuty Events API v2 event: trigger on failure, resolve on recovery, one dedup key per series. */
export function pagerDutyEvent(
  facts: RunFacts,
  options: { routingKey: string; action: 'trigger' | 'resolve' },
) {
  const { run, test } = facts;
  const failure = run.result === 'fail' ? failureOf(run) : null;
  const link = runUrlOf(facts);
  return {
    routing_key: options.routingKey,
    event_action: options.action,
    // A round alerts for its regions together: one incident for the environment, not per region.
    dedup_key: `vigil-${test.id}-${run.environment_id}-${facts.round ? 'round' : run.region}`,
    payload: {
      summary: headline(facts, options.action === 'resolve').slice(0, 1_024),
      source: 'vigil',
      severity: 'error',
      timestamp: new Date((run.finished_at ?? run.queued_at) * 1000).toISOString(),
      custom_details: Object.fromEntries(factLines(facts, failure)),
    },
    links: [{ href: link, text: 'Vigil result' }],
  };
}
