import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import { TIMEFRAMES } from '../../../../src/domain/vocabulary';
import { api } from '../../api/client';
import type { Timeframe } from '../../api/resources';
import { dateTime, ms } from '../../components/format';
import { useTheme } from '../../components/theme';
import { Empty, ErrorBanner, Loading, SelectField } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import type { Metrics, RegionInfo } from '../runs/types';
import { testPath, useTest } from './context';
import './tabs.css';

function percent(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return `${Math.round(value * 1000) / 10} %`;
}

/** "+12 % from last period", or a dash without data. */
function change(value: number | null | undefined): string {
  if (value === null || value === undefined) return 'no earlier data';
  const rounded = Math.round(value * 1000) / 10;
  return `${rounded > 0 ? '+' : ''}${rounded} % from last period`;
}

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

/**
 * A line chart drawn by uPlot, which loads (with its CSS) on first use. Colours come from the theme's CSS
 * variables and the chart is drawn again when the theme changes. It is an image to assistive technology;
 * the same numbers are in the table that follows it.
 */
function LineChart(props: {
  title: string;
  summary: string;
  xs: number[];
  ys: (number | null)[];
  label: string;
  format: (value: number) => string;
  max?: number;
}) {
  const host = useRef<HTMLDivElement>(null);
  const { dark } = useTheme();
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    let chart: uPlot | undefined;
    let observer: ResizeObserver | undefined;
    let cancelled = false;
    void Promise.all([import('uplot'), import('uplot/dist/uPlot.min.css')])
      .then(([module]) => {
        const element = host.current;
        if (cancelled || !element) return;
        const UPlot = module.default;
        const text = cssVar('--muted');
        const grid = cssVar('--border');
        const width = Math.max(260, element.clientWidth);
        chart = new UPlot(
          {
            width,
            height: 220,
            legend: { show: false },
            cursor: { drag: { x: false, y: false } },
            scales: {
              x: { time: true },
              y: props.max === undefined ? {} : { range: [0, props.max] },
            },
            series: [
              {},
              {
                label: props.label,
                stroke: cssVar('--accent'),
                width: 2,
                spanGaps: true,
                points: { show: props.xs.length < 60 },
              },
            ],
            axes: [
              { stroke: text, grid: { stroke: grid }, ticks: { stroke: grid } },
              {
                stroke: text,
                grid: { stroke: grid },
                ticks: { stroke: grid },
                size: 80,
                values: (_u, splits) => splits.map((value) => props.format(value)),
              },
            ],
          },
          [props.xs, props.ys],
          element,
        );
        observer = new ResizeObserver(() => {
          if (chart && element.clientWidth > 0) chart.setSize({ width: element.clientWidth, height: 220 });
        });
        observer.observe(element);
      })
      .catch(setError);
    return () => {
      cancelled = true;
      observer?.disconnect();
      chart?.destroy();
    };
  }, [props.xs, props.ys, dark]);
  return (
    <figure class="chart">
      <figcaption>
        <h3>{props.title}</h3>
      </figcaption>
      <ErrorBanner error={error} />
      <div ref={host} role="img" aria-label={`${props.title}: ${props.summary}`} />
    </figure>
  );
}

const DEFAULT_TIMEFRAME: Timeframe = 'day';

/** Response-time percentiles, run counts and the success ratio of the test over a timeframe. */
export function MetricsTab() {
  const { bucket, test } = useTest();
  // The page opens on a day, or on the shortest longer timeframe with runs when the day has none;
  // the search ends at the first answer with runs, at the longest timeframe, or at the user's choice.
  const [chosen, setChosen] = useState<Timeframe | undefined>(undefined);
  const [opening, setOpening] = useState<{ timeframe: Timeframe; settled: boolean }>({
    timeframe: DEFAULT_TIMEFRAME,
    settled: false,
  });
  const timeframe = chosen ?? opening.timeframe;
  const [region, setRegion] = useState('all');
  const [environment, setEnvironment] = useState('all');
  const regions = useResource(
    (signal) =>
      api.get<{ regions: RegionInfo[] }>('/regions', undefined, signal).then((data) => data.regions),
    [],
  );
  const metrics = useResource(
    (signal) =>
      api.get<Metrics>(
        `${testPath(bucket, test.id)}/metrics`,
        { timeframe, region, environment_uuid: environment },
        signal,
      ),
    [bucket, test.id, timeframe, region, environment],
  );

  useEffect(() => {
    if (chosen || opening.settled || !metrics.data) return;
    if (metrics.data.this_time_period.total_test_runs > 0) {
      setOpening({ ...opening, settled: true });
      return;
    }
    const longer = TIMEFRAMES[TIMEFRAMES.indexOf(opening.timeframe) + 1];
    // No timeframe has runs: back to the default, which then shows that it is empty.
    setOpening(
      longer ? { timeframe: longer, settled: false } : { timeframe: DEFAULT_TIMEFRAME, settled: true },
    );
  }, [metrics.data]);
  const searching = !chosen && !opening.settled;

  const regionCodes = useMemo(() => {
    const codes = new Set<string>();
    for (const r of regions.data ?? []) if (r.region !== '*') codes.add(r.region);
    for (const env of test.environments) for (const code of env.regions) codes.add(code);
    if (test.last_run) codes.add(test.last_run.region);
    codes.add('local');
    return [...codes].sort();
  }, [regions.data, test]);

  const series = useMemo(() => {
    const points = metrics.data?.response_times ?? [];
    return {
      xs: points.map((p) => p.timestamp),
      times: points.map((p) => p.avg_response_time_ms),
      ratios: points.map((p) => (p.success_ratio === null ? null : p.success_ratio * 100)),
    };
  }, [metrics.data]);

  const data = metrics.data;
  const period = data?.this_time_period;
  const delta = data?.change_from_last_period;
  const withData = (data?.response_times ?? []).filter((p) => p.avg_response_time_ms !== null);
  const times = withData.map((p) => p.avg_response_time_ms!);
  const timeSummary = times.length
    ? `average response time between ${ms(Math.min(...times))} and ${ms(Math.max(...times))} over ${times.length} intervals`
    : 'no runs in this timeframe';
  const ratioSummary =
    period?.success_ratio !== null && period?.success_ratio !== undefined
      ? `${percent(period.success_ratio)} of runs passed in this timeframe`
      : 'no runs in this timeframe';

  return (
    <div>
      <h2>Metrics</h2>
      <div class="filters" role="group" aria-label="Metrics filters">
        <SelectField
          label="Timeframe"
          value={timeframe}
          options={TIMEFRAMES.map((value) => ({ value, label: `Last ${value}` }))}
          onValue={setChosen}
        />
        <SelectField
          label="Region"
          value={region}
          options={[
            { value: 'all', label: 'All regions' },
            ...regionCodes.map((value) => ({ value, label: value })),
          ]}
          onValue={setRegion}
        />
        <SelectField
          label="Environment"
          value={environment}
          options={[
            { value: 'all', label: 'All environments' },
            ...test.environments.map((env) => ({ value: env.id, label: env.name })),
          ]}
          onValue={setEnvironment}
        />
      </div>
      <ErrorBanner error={metrics.error} onRetry={metrics.reload} />
      {(searching || !data) && !metrics.error && <Loading label="Loading metrics…" />}
      {!searching && data && period && delta && (
        <>
          <dl class="stat-cards" aria-label="This period">
            {(
              [
                [
                  'p50 response time',
                  ms(period.response_time_50th_percentile),
                  delta.response_time_50th_percentile,
                ],
                [
                  'p95 response time',
                  ms(period.response_time_95th_percentile),
                  delta.response_time_95th_percentile,
                ],
                [
                  'p99 response time',
                  ms(period.response_time_99th_percentile),
                  delta.response_time_99th_percentile,
                ],
                ['Total runs', String(period.total_test_runs ?? 0), delta.total_test_runs],
                ['Success ratio', percent(period.success_ratio), delta.success_ratio],
              ] as const
            ).map(([label, value, difference]) => (
              <div key={label}>
                <dt>{label}</dt>
                <dd>
                  {value}
                  <span class="change">{change(difference)}</span>
                </dd>
              </div>
            ))}
          </dl>
          {data.response_times.length === 0 ? (
            <Empty>No runs in this timeframe.</Empty>
          ) : (
            <>
              <LineChart
                title="Average response time"
                summary={timeSummary}
                xs={series.xs}
                ys={series.times}
                label="Average response time (ms)"
                format={(value) => ms(value)}
              />
              <LineChart
                title="Success ratio"
                summary={ratioSummary}
                xs={series.xs}
                ys={series.ratios}
                label="Success ratio (%)"
                format={(value) => `${Math.round(value)} %`}
                max={100}
              />
              <details>
                <summary>The numbers as a table</summary>
                <div class="table-wrap">
                  <table>
                    <caption class="visually-hidden">
                      Average response time and success ratio per interval
                    </caption>
                    <thead>
                      <tr>
                        <th scope="col">Time</th>
                        <th scope="col">Average response time</th>
                        <th scope="col">Success ratio</th>
                      </tr>
                    </thead>
                    <tbody>
                      {data.response_times.map((point) => (
                        <tr key={point.timestamp}>
                          <td>{dateTime(point.timestamp)}</td>
                          <td class="num">{ms(point.avg_response_time_ms)}</td>
                          <td class="num">{percent(point.success_ratio)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </details>
            </>
          )}
        </>
      )}
    </div>
  );
}
