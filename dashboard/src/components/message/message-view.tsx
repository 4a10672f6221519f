import type { ComponentChildren } from 'preact';
import { useId, useMemo } from 'preact/hooks';
import { bytes, dateTime, ms } from '../format';
import { viewBody } from './body';
import { BodyDisplay, ListTable } from './body-view';
import type { Lists, Message, MessageRequest, MessageResponse } from './types';
import './message.css';

/** The class of a status for colouring: `s2` … `s5`, or `none` without a response. */
export function statusClass(status: number | null | undefined): string {
  if (status === null || status === undefined) return 'none';
  return `s${Math.floor(status / 100)}`;
}

/** A status code coloured by its class; "—" when no response arrived. */
export function StatusCode(props: { status: number | null | undefined; reason?: string }) {
  const { status } = props;
  return (
    <span class={`status-code ${statusClass(status)}`} title={props.reason || undefined}>
      {status ?? 'no response'}
    </span>
  );
}

/**
 * The status of a message: a capture is a received request the service answered itself, shown as a
 * neutral "received" badge with that answer's status (captures stored before the service kept its
 * answer have none); any other exchange shows its status code.
 */
export function MessageStatus(props: {
  source: string;
  status: number | null | undefined;
  reason?: string | undefined;
}) {
  const { status } = props;
  if (props.source !== 'capture') return <StatusCode status={status} reason={props.reason} />;
  const answered =
    status === null || status === undefined ? '' : `, answered ${status} ${props.reason ?? ''}`;
  return (
    <span class="badge received" title={`Received by the capture URL${answered.trimEnd()}`}>
      received{status === null || status === undefined ? '' : ` ${status}`}
    </span>
  );
}

function pairs(lists: Lists | null | undefined): [string, string][] {
  const out: [string, string][] = [];
  for (const [name, values] of Object.entries(lists ?? {})) {
    for (const value of values) out.push([name, value]);
  }
  return out;
}

function Half(props: { title: string; children: ComponentChildren }) {
  const id = useId();
  return (
    <section class="mv-half card" aria-labelledby={id}>
      <h2 id={id}>{props.title}</h2>
      {props.children}
    </section>
  );
}

function RequestHalf(props: { request: MessageRequest }) {
  const { request } = props;
  const body = useMemo(
    () => viewBody(request.body, request.body_encoding, request.headers),
    [request.body, request.body_encoding],
  );
  const form = pairs(request.form);
  return (
    <Half title="Request">
      <p class="mv-line">
        <span class="mv-method">{request.method}</span> <span class="mv-url">{request.url}</span>
      </p>
      <h3>Query parameters</h3>
      <ListTable caption="Query parameters" rows={pairs(request.params)} empty="No query parameters." />
      <h3>Headers</h3>
      <ListTable caption="Request headers" rows={pairs(request.headers)} empty="No headers." />
      {form.length > 0 && body.kind !== 'form' && (
        <>
          <h3>Form fields</h3>
          <ListTable caption="Request form fields" rows={form} empty="No form fields." />
        </>
      )}
      <h3>
        Body <span class="muted">{bytes(request.size_bytes)}</span>
      </h3>
      <BodyDisplay label="Request body" view={body} size={request.size_bytes} />
    </Half>
  );
}

function ResponseHalf(props: { response: MessageResponse }) {
  const { response } = props;
  const body = useMemo(
    () => viewBody(response.body, response.body_encoding, response.headers),
    [response.body, response.body_encoding],
  );
  return (
    <Half title="Response">
      <p class="mv-line">
        <StatusCode status={response.status} /> <span>{response.reason}</span>
      </p>
      <h3>Headers</h3>
      <ListTable caption="Response headers" rows={pairs(response.headers)} empty="No headers." />
      <h3>
        Body <span class="muted">{bytes(response.size_bytes)}</span>
      </h3>
      <BodyDisplay label="Response body" view={body} size={response.size_bytes} />
    </Half>
  );
}

/**
 * A captured exchange: a summary with its timing, then the request and the response side by side
 * (stacked on narrow screens). Read-only; the dashboard's detail view and the public page of a
 * shared message both render it, and put their own actions around it.
 */
export function MessageView(props: { message: Message }) {
  const { message } = props;
  const { request, response } = message;
  const duration = response?.response_time;
  return (
    <article class="message-view" data-uuid={message.uuid}>
      <dl class="mv-summary">
        <div>
          <dt>Status</dt>
          <dd>
            <MessageStatus source={message.source} status={response?.status} reason={response?.reason} />
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{duration === null || duration === undefined ? '—' : ms(duration * 1000)}</dd>
        </div>
        <div>
          <dt>Sent</dt>
          <dd>{dateTime(request?.timestamp ?? message.timestamp)}</dd>
        </div>
        {response && (
          <div>
            <dt>Answered</dt>
            <dd>{dateTime(response.timestamp)}</dd>
          </div>
        )}
        <div>
          <dt>Source</dt>
          <dd>{message.source}</dd>
        </div>
        {message.unique_identifier && (
          <div>
            <dt>Identifier</dt>
            <dd class="mono">{message.unique_identifier}</dd>
          </div>
        )}
      </dl>
      {message.note && <p class="banner warning mv-note">{message.note}</p>}
      <div class="mv-exchange">
        {request ? (
          <RequestHalf request={request} />
        ) : (
          <Half title="Request">
            <p class="muted">Only the response was recorded.</p>
          </Half>
        )}
        {response ? (
          <ResponseHalf response={response} />
        ) : (
          <Half title="Response">
            <p class="muted">No response was recorded.</p>
          </Half>
        )}
      </div>
    </article>
  );
}
