/** A small inline chart of recent response times; failed runs are marked. Pure SVG, no library. */
export interface SparkPoint {
  value: number | null;
  failed: boolean;
}

export function Sparkline(props: { points: SparkPoint[]; width?: number; height?: number; label: string }) {
  const width = props.width ?? 120;
  const height = props.height ?? 28;
  const values = props.points.map((p) => p.value).filter((v): v is number => v !== null);
  if (values.length === 0) {
    return (
      <span class="muted sparkline-empty" aria-label={`${props.label}: no runs yet`}>
        —
      </span>
    );
  }
  const max = Math.max(...values);
  const min = Math.min(...values);
  const span = max - min || 1;
  const step = props.points.length > 1 ? (width - 4) / (props.points.length - 1) : 0;
  const coordinates = props.points.map((point, index) => ({
    x: 2 + index * step,
    y: point.value === null ? null : height - 3 - ((point.value - min) / span) * (height - 6),
    failed: point.failed,
  }));
  const line = coordinates
    .filter((c) => c.y !== null)
    .map((c) => `${c.x.toFixed(1)},${c.y!.toFixed(1)}`)
    .join(' ');
  const failures = props.points.filter((p) => p.failed).length;
  const summary = `${props.label}: ${props.points.length} runs, ${Math.round(min)}–${Math.round(max)} ms${
    failures ? `, ${failures} failed` : ''
  }`;
  return (
    <svg
      class="sparkline"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={summary}
    >
      <title>{summary}</title>
      <polyline points={line} fill="none" stroke="currentColor" stroke-width="1.5" />
      {coordinates
        .filter((c) => c.failed)
        .map((c) => (
          <circle key={c.x} cx={c.x} cy={c.y ?? height / 2} r="2.5" class="spark-fail" />
        ))}
    </svg>
  );
}
