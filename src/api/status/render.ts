/**
 * The public status page as self-contained HTML (inline styles, no script): the overall state, open
 * incidents, maintenance, and per test its state and 90 daily uptime bars. Everything shown is
 * escaped; the bars carry a text alternative for screen readers.
 */
import { escapeHtml } from '../../domain/html.js';
import type { PublicStatus, PublicTest, UptimeDay } from '../../domain/status-pages.js';

const STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1d2330;--muted:#4d5566;--card:#fff;--line:#dde1e8;
--ok:#1a6b33;--bad:#b3202a;--none:#8a93a3;--okbar:#2f9e55;--badbar:#d23a43;--nonebar:#c9ced6}
@media (prefers-color-scheme:dark){:root{--bg:#14171c;--fg:#e4e7ec;--muted:#aab2c0;--card:#1c2027;
--line:#2e343e;--ok:#7fd18f;--bad:#ff8f94;--none:#9aa3b2;--okbar:#3fb26a;--badbar:#e5535b;--nonebar:#3a414c}}
*{box-sizing:border-box}
body{margin:0;padding:1.5rem;background:var(--bg);color:var(--fg);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:60rem;margin:0 auto}
h1{font-size:1.5rem;margin:0 0 .5rem}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
section,.banner{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem 1.1rem;margin:0 0 1rem}
.banner{font-weight:600}
.banner.ok{border-color:var(--ok);color:var(--ok)}.banner.bad{border-color:var(--bad);color:var(--bad)}
ul.tests{list-style:none;margin:0;padding:0}
ul.tests>li{padding:.6rem 0;border-top:1px solid var(--line)}
ul.tests>li:first-child{border-top:0}
.row{display:flex;justify-content:space-between;gap:1rem;flex-wrap:wrap}
.name{font-weight:600;overflow-wrap:anywhere}
.state-pass{color:var(--ok)}.state-fail{color:var(--bad)}.state-unknown{color:var(--muted)}
.bars{display:flex;gap:1px;height:2rem;margin:.4rem 0 .2rem}
.bars span{flex:1;border-radius:2px;background:var(--nonebar)}
.bars .up{background:var(--okbar)}.bars .down{background:var(--badbar)}.bars .partial{background:linear-gradient(var(--badbar) 50%,var(--okbar) 50%)}
.legend{display:flex;justify-content:space-between;color:var(--muted);font-size:.85rem}
.muted{color:var(--muted)}
`;

const when = (seconds: number) =>
  `${new Date(seconds * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

function page(title: string, content: string): string {
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><main>${content}</main></body></html>\n`
  );
}

const STATE_TEXT = { pass: 'Operational', fail: 'Failing', unknown: 'No data' } as const;

function barClass(day: UptimeDay): string {
  if (day.passes + day.fails === 0) return '';
  if (day.fails === 0) return ' class="up"';
  return day.passes === 0 ? ' class="down"' : ' class="partial"';
}

function barTitle(day: UptimeDay): string {
  const total = day.passes + day.fails;
  if (total === 0) return `${day.date}: no runs`;
  return `${day.date}: ${day.passes} of ${total} runs passed`;
}

function renderTest(test: PublicTest): string {
  const uptime = test.uptime_percent === null ? 'no runs in 90 days' : `${test.uptime_percent}% uptime`;
  const bad = test.days.filter((day) => day.fails > 0).length;
  const summary =
    test.uptime_percent === null
      ? `${test.name}: no runs in the last 90 days`
      : `${test.name}: ${test.uptime_percent}% of runs passed in the last 90 days; ${bad} day${bad === 1 ? '' : 's'} with failures`;
  const bars = test.days
    .map((day) => `<span${barClass(day)} title="${escapeHtml(barTitle(day))}"></span>`)
    .join('');
  const state = `<span class="state-${test.state}">${STATE_TEXT[test.state]}${
    test.failing_since === null ? '' : ` since ${escapeHtml(when(test.failing_since))}`
  }</span>`;
  return (
    `<li><div class="row"><span class="name">${escapeHtml(test.name)}</span>${state}</div>` +
    `<div class="bars" role="img" aria-label="${escapeHtml(summary)}">${bars}</div>` +
    `<div class="legend" aria-hidden="true"><span>90 days ago</span><span>${escapeHtml(uptime)}</span><span>Today</span></div></li>`
  );
}

/** The HTML of a status page. */
export function renderStatusPage(status: PublicStatus): string {
  const banner =
    status.status === 'operational'
      ? '<p class="banner ok" role="status">All systems operational</p>'
      : `<p class="banner bad" role="status">${status.incidents.length} check${status.incidents.length === 1 ? ' is' : 's are'} failing</p>`;
  const incidents =
    status.incidents.length === 0
      ? ''
      : `<section aria-labelledby="incidents"><h2 id="incidents">Open incidents</h2><ul>${status.incidents
          .map(
            (incident) =>
              `<li><strong>${escapeHtml(incident.test)}</strong> <span class="muted">(${escapeHtml(incident.group)})</span> failing since ${escapeHtml(when(incident.since))}</li>`,
          )
          .join('')}</ul></section>`;
  const maintenance =
    status.maintenance.length === 0
      ? ''
      : `<section aria-labelledby="maintenance"><h2 id="maintenance">Maintenance</h2><ul>${status.maintenance
          .map(
            (m) =>
              `<li><strong>${escapeHtml(m.title)}</strong>: ${escapeHtml(when(m.starts_at))} to ${escapeHtml(when(m.ends_at))}</li>`,
          )
          .join('')}</ul></section>`;
  const groups = status.groups
    .map(
      (group, index) =>
        `<section aria-labelledby="group-${index}"><h2 id="group-${index}">${escapeHtml(group.name)}</h2>` +
        `<ul class="tests">${group.tests.map(renderTest).join('')}</ul></section>`,
    )
    .join('');
  return page(
    status.title,
    `<h1>${escapeHtml(status.title)}</h1>${banner}${incidents}${maintenance}${groups}` +
      `<p class="muted">Updated ${escapeHtml(when(status.generated_at))}. Bars show each of the last 90 days (UTC).</p>`,
  );
}

export function renderStatusNotFound(): string {
  return page('Not found', '<h1>Not found</h1><p>There is no status page at this address.</p>');
}
