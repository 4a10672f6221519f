/** A line diff by longest common subsequence, for comparing revision snapshots. */

export interface DiffLine {
  kind: 'same' | 'added' | 'removed';
  text: string;
}

/** Above this many cells of the LCS table the changed middle is shown as removed then added. */
const MAX_CELLS = 4_000_000;

export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before === '' ? [] : before.split('\n');
  const b = after === '' ? [] : after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const head = a.slice(0, start).map((text): DiffLine => ({ kind: 'same', text }));
  const tail = a.slice(endA).map((text): DiffLine => ({ kind: 'same', text }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const n = midA.length;
  const m = midB.length;
  const middle: DiffLine[] = [];
  if (n * m > MAX_CELLS) {
    for (const text of midA) middle.push({ kind: 'removed', text });
    for (const text of midB) middle.push({ kind: 'added', text });
    return [...head, ...middle, ...tail];
  }
  // lengths[i][j]: LCS of midA[i..] and midB[j..], in one flat array.
  const width = m + 1;
  const lengths = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lengths[i * width + j] =
        midA[i] === midB[j]
          ? lengths[(i + 1) * width + j + 1]! + 1
          : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (midA[i] === midB[j]) {
      middle.push({ kind: 'same', text: midA[i]! });
      i += 1;
      j += 1;
    } else if (lengths[(i + 1) * width + j]! >= lengths[i * width + j + 1]!) {
      middle.push({ kind: 'removed', text: midA[i]! });
      i += 1;
    } else {
      middle.push({ kind: 'added', text: midB[j]! });
      j += 1;
    }
  }
  for (; i < n; i += 1) middle.push({ kind: 'removed', text: midA[i]! });
  for (; j < m; j += 1) middle.push({ kind: 'added', text: midB[j]! });
  return [...head, ...middle, ...tail];
}

/** JSON with object keys sorted at every level, so equal data gives equal text whatever the key order. */
export function canonicalJson(value: unknown): string {
  const sort = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(sort);
    if (item && typeof item === 'object')
      return Object.fromEntries(
        Object.keys(item)
          .sort()
          .map((key) => [key, sort((item as Record<string, unknown>)[key])]),
      );
    return item;
  };
  return value === null || value === undefined ? '' : JSON.stringify(sort(value), null, 2);
}

export type DiffChunk = { kind: 'lines'; lines: DiffLine[] } | { kind: 'gap'; count: number };

/** The changed lines with `context` unchanged lines around each change; longer unchanged runs fold. */
export function withContext(lines: DiffLine[], context = 3): DiffChunk[] {
  const keep = lines.map(() => false);
  lines.forEach((line, index) => {
    if (line.kind === 'same') return;
    for (let k = Math.max(0, index - context); k <= Math.min(lines.length - 1, index + context); k += 1)
      keep[k] = true;
  });
  const chunks: DiffChunk[] = [];
  let gap = 0;
  lines.forEach((line, index) => {
    if (!keep[index]) {
      gap += 1;
      return;
    }
    if (gap > 0) chunks.push({ kind: 'gap', count: gap });
    gap = 0;
    const last = chunks[chunks.length - 1];
    if (last?.kind === 'lines') last.lines.push(line);
    else chunks.push({ kind: 'lines', lines: [line] });
  });
  if (gap > 0) chunks.push({ kind: 'gap', count: gap });
  return chunks;
}
