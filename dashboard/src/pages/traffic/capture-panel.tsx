import { useId, useState } from 'preact/hooks';
import type { Bucket } from '../../api/resources';
import { CopyButton } from '../../components/ui';
import { gatewayHostUrl, gatewayPathUrl } from '../../../../src/domain/gateway-urls';

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
  const [target, setTarget] = useState('');
  const targetId = useId();
  let built = '';
  let byHost: { url: string; port: string | null } | null = null;
  let problem = '';
  if (target.trim()) {
    try {
      built = gatewayPathUrl(bucket.gateway_url, target.trim());
      if (bucket.gateway_domain) byHost = gatewayHostUrl(bucket.gateway_domain, bucket.key, target.trim());
    } catch (error) {
      problem =
        error instanceof TypeError
          ? 'Enter a full URL such as https://api.example.com/v1/x?y=1'
          : (error as Error).message;
    }
  }
  const auth = bucket.auth_token ? ` -H 'Vigil-Bucket-Auth: ${bucket.auth_token}'` : '';
  const sample = `curl -X POST '${bucket.capture_url}/hello' -H 'Content-Type: application/json'${auth} -d '{"hello":"world"}'`;
  return (
    <details class="card capture-panel" open={props.open}>
      <summary>Capture and gateway URLs</summary>
      <p class="muted">
        Anything sent to the capture URL (any method, any path below it) is recorded in Captures.{' '}
        {bucket.auth_token
          ? 'This bucket requires its token in the Vigil-Bucket-Auth header (or query parameter) of every capture and gateway request.'
          : 'No token is needed: keep the bucket key private, or require a token in the bucket settings.'}
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
      {byHost && <CodeLine label="Host-form gateway URL" text={byHost.url} testId="gateway-host-url" />}
      {byHost?.port && (
        <p class="muted">
          Send the port with the host-form URL as the header <code>Vigil-Request-Port: {byHost.port}</code>.
        </p>
      )}
    </details>
  );
}
