import { bytes } from '../format';
import { type BodyView, HEX_DUMP_BYTES } from './body';
import './message.css';

/** Name/value rows (headers, parameters, form fields) as a table; `empty` when there are none. */
export function ListTable(props: { caption: string; rows: [string, string][]; empty: string }) {
  if (props.rows.length === 0) return <p class="muted mv-none">{props.empty}</p>;
  return (
    <div class="table-wrap">
      <table class="mv-table">
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map(([name, value], index) => (
            <tr key={index}>
              <th scope="row">{name}</th>
              <td>{value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * A body as `viewBody` reads it: JSON and XML indented, form fields as a table, binary as a hex dump.
 * The captured message view and the run result page (a step's request and response) both show it.
 */
export function BodyDisplay(props: { label: string; view: BodyView; size: number }) {
  const { view } = props;
  switch (view.kind) {
    case 'empty':
      return <p class="muted mv-none">No body.</p>;
    case 'form':
      return <ListTable caption={`${props.label} form fields`} rows={view.fields} empty="No form fields." />;
    case 'binary':
      return (
        <>
          <p class="muted">
            Binary, {bytes(view.size)}
            {view.size > HEX_DUMP_BYTES ? ` (first ${bytes(HEX_DUMP_BYTES)} shown)` : ''}
          </p>
          <pre class="mv-body mv-hex" tabIndex={0} role="region" aria-label={`${props.label} (hex dump)`}>
            {view.dump}
          </pre>
        </>
      );
    default:
      return (
        <>
          {view.cut && (
            <p class="muted">
              Cut at {bytes(view.text.length)} of {bytes(props.size)}.
            </p>
          )}
          <pre class={`mv-body mv-${view.kind}`} tabIndex={0} role="region" aria-label={props.label}>
            {view.text}
          </pre>
        </>
      );
  }
}
