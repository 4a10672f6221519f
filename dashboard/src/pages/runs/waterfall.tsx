import type { Timings } from '../../api/resources';
import { ms } from '../../components/format';

const PHASES: { key: keyof Timings; label: string }[] = [
  { key: 'dns_lookup_ms', label: 'DNS lookup' },
  { key: 'dial_ms', label: 'Connect' },
  { key: 'tls_handshake_ms', label: 'TLS handshake' },
  { key: 'send_headers_ms', label: 'Send headers' },
  { key: 'send_body_ms', label: 'Send body' },
  { key: 'wait_for_response_ms', label: 'Wait for response' },
  { key: 'receive_response_ms', label: 'Receive response' },
];

/**
 * The phases of one request as horizontal bars, each starting where the one before ended. Pure CSS;
 * the numbers are in the table cells, so screen readers read the same thing as a table.
 */
export function Waterfall(props: { timings: Timings }) {
  const total = PHASES.reduce((sum, phase) => sum + Math.max(0, props.timings[phase.key] || 0), 0);
  let offset = 0;
  return (
    <table class="waterfall">
      <caption class="visually-hidden">Timing of the request, total {ms(total)}</caption>
      <thead>
        <tr>
          <th scope="col">Phase</th>
          <th scope="col">Time</th>
          <th scope="col" class="waterfall-track-head">
            <span class="visually-hidden">Bar</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {PHASES.map((phase) => {
          const value = Math.max(0, props.timings[phase.key] || 0);
          const left = total > 0 ? (offset / total) * 100 : 0;
          const width = total > 0 ? (value / total) * 100 : 0;
          offset += value;
          return (
            <tr key={phase.key}>
              <th scope="row">{phase.label}</th>
              <td class="num">{value < 1 && value > 0 ? `${value.toFixed(2)} ms` : ms(value)}</td>
              <td class="waterfall-track" aria-hidden="true">
                <span
                  class={`waterfall-bar phase-${phase.key}`}
                  style={{ left: `${left}%`, width: `max(${width}%, ${value > 0 ? '2px' : '0px'})` }}
                />
              </td>
            </tr>
          );
        })}
        <tr class="waterfall-total">
          <th scope="row">Total</th>
          <td class="num">{ms(total)}</td>
          <td />
        </tr>
      </tbody>
    </table>
  );
}
