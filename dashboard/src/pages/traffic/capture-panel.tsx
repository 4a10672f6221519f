import { useId, useState } from 'preact/hooks';
import type { Bucket } from '../../api/resources';
import { CopyButton } from '../../components/ui';

/** PUBLIC_URL, from the bucket's capture URL (`PUBLIC_URL/capture/<key>`). */
export function publicUrlOf(bucket: Bucket): string {
  const suffix = `/capture/${bucket.key}`;
  return bucket.capture_url.endsWith(suffix) ? bucket.capture_url.slice(0, -suffix.length) : location.origin;
}

/**
 * The gateway URL that forwards to `target` and records the exchange:
 * `PUBLIC_URL/gateway/<bucket>/<scheme>/<host[:port]>/<path>?<query>` (docs/capture.md).
 */
export function gatewayUrl(publicUrl: string, bucket: string, target: string): string {
  const url = new URL(target.trim());
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error('The gateway forwards http and https URLs only.');
  }
  if (url.username || url.password) throw new Error('The gateway does not take credentials in the URL.');
  return `${publicUrl}/gateway/${bucket}/${url.protocol.slice(0, -1)}/${url.host}${url.pathname}${url.search}`;
}

function CodeLine(props: { label: string; text: string; testId: string }) {
  const id = useId();
  return (
    <div class="code-line">
      <span id={id} class="code-line-label">
        {props.label}
      </span>
      <code aria-labelledby={id} data-testid={props.testId}>
        {props.text}
      </code>
      <CopyButton text={props.text} label={`Copy ${props.label.toLowerCase()}`} />
    </div>
  );
}

/** The bucket's capture URL with a sample request, and a builder of gateway URLs. */
export function CapturePanel(props: { bucket: Bucket; open: boolean }) {
  const { bucket } = props;
  const publicUrl = publicUrlOf(bucket);
  const [target, setTarget] = useState('');
  const targetId = useId();
  let built = '';
  let problem = '';
  if (target.trim()) {
    try {
      built = gatewayUrl(publicUrl, bucket.key, target);
    } catch (error) {
      problem =
        error instanceof TypeError
          ? 'Enter a full URL such as https://api.example.com/v1/x?y=1'
          : (error as Error).message;
    }
  }
  const sample = `curl -X POST '${bucket.capture_url}/hello' -H 'Content-Type: application/json' -d '{"hello":"world"}'`;
  return (
    <details class="card capture-panel" open={props.open}>
      <summary>Capture and gateway URLs</summary>
      <p class="muted">
        Anything sent to the capture URL (any method, any path below it, no token) is recorded in Captures.
      </p>
      <CodeLine label="Capture URL" text={bucket.capture_url} testId="capture-url" />
      <CodeLine label="Sample request" text={sample} testId="capture-sample" />
      <div class="field">
        <label for={targetId}>Gateway URL for</label>
        <input
          id={targetId}
          type="url"
          placeholder="https://api.example.com/v1/x?y=1"
          value={target}
          onInput={(event) => setTarget(event.currentTarget.value)}
          aria-invalid={problem ? true : undefined}
          aria-describedby={`${targetId}-hint`}
        />
        <small id={`${targetId}-hint`} class={problem ? 'field-error' : 'muted'}>
          {problem ||
            'Requests to the gateway URL are forwarded to this URL and recorded with their response.'}
        </small>
      </div>
      {built && <CodeLine label="Gateway URL" text={built} testId="gateway-url" />}
    </details>
  );
}
