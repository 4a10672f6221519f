import { useEffect, useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { api } from '../../api/client';
import { toCurl } from '../../components/message/curl';
import { MessageView } from '../../components/message/message-view';
import type { Message, SharedListItem, SharedMessage } from '../../components/message/types';
import { CopyButton, ErrorBanner, Loading, Notice, PageHeader } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { paths } from '../../session';
import { AddToTest } from './add-to-test';
import './traffic.css';

/** One message: the shared renderer with the dashboard's actions around it. */
export function MessagePage(props: { bucket: string; uuid: string }) {
  const { bucket, uuid } = props;
  const [, navigate] = useLocation();
  const message = useResource(
    (signal) => api.get<Message>(`/buckets/${bucket}/messages/${uuid}`, undefined, signal),
    [bucket, uuid],
  );
  // The public link of this message: from the share answer, or looked up in the Shared view.
  const [link, setLink] = useState<{ uuid: string; url: string } | null>(null);
  const [linkError, setLinkError] = useState<unknown>(undefined);
  const [showCurl, setShowCurl] = useState(false);
  const [adding, setAdding] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [notice, setNotice] = useState('');

  const data = message.data;
  const publicUrl = link?.uuid === uuid ? link.url : null;
  const sharedAt = data?.shared ? data.shared_at : null;

  useEffect(() => {
    if (sharedAt === null || publicUrl !== null) return;
    // The Shared view pages by share time: a window around this message's holds it.
    const controller = new AbortController();
    setLinkError(undefined);
    api
      .get<SharedListItem[]>(
        `/buckets/${bucket}/shared`,
        { since: sharedAt - 0.001, before: sharedAt + 0.001, count: 1000 },
        controller.signal,
      )
      .then((items) => {
        const item = items.find((candidate) => candidate.uuid === uuid);
        if (item) setLink({ uuid, url: item.share_url });
        else setLinkError(new Error('The public link was not found; “New share link” makes a new one.'));
      })
      .catch((failure: unknown) => {
        if (!controller.signal.aborted) setLinkError(failure);
      });
    return () => controller.abort();
  }, [bucket, uuid, sharedAt]);
  const title = data?.request
    ? `${data.request.method} ${data.request.path}`
    : data
      ? `Response ${data.response?.status ?? ''}`
      : 'Message';

  async function act(name: string, work: () => Promise<void>) {
    setBusy(name);
    setError(undefined);
    setNotice('');
    try {
      await work();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(null);
    }
  }

  const share = () =>
    act('share', async () => {
      const shared = await api.put<SharedMessage>(`/buckets/${bucket}/shared/${uuid}`);
      const { public_url, ...rest } = shared;
      setLink({ uuid, url: public_url });
      message.setData(rest);
      setNotice('Shared: anyone with the link can see this exchange.');
    });
  const unshare = () =>
    act('unshare', async () => {
      await api.delete(`/buckets/${bucket}/shared/${uuid}`);
      setLink(null);
      if (data) message.setData({ ...data, shared: false, shared_at: null });
      setNotice('No longer shared: the public link answers 404 now.');
    });
  const replay = () =>
    act('replay', async () => {
      const replayed = await api.post<Message>(`/buckets/${bucket}/messages/${uuid}/replay`);
      navigate(paths.message(bucket, replayed.uuid));
    });
  const remove = () => {
    if (!confirm('Delete this message? This cannot be undone.')) return;
    void act('delete', async () => {
      await api.delete(`/buckets/${bucket}/messages/${uuid}`);
      navigate(paths.traffic(bucket));
    });
  };

  const curl = data?.request ? toCurl(data.request) : '';

  return (
    <>
      <p class="breadcrumb">
        <Link href={paths.traffic(bucket)}>Traffic</Link> /
      </p>
      <PageHeader
        title={<span class="mono message-title">{title}</span>}
        subtitle={<span class="mono">{uuid}</span>}
      />
      {message.error ? (
        <ErrorBanner error={message.error} onRetry={() => void message.reload()} />
      ) : !data ? (
        <Loading label="Loading the message…" />
      ) : (
        <>
          <div class="message-actions" role="group" aria-label="Message actions">
            {data.request && (
              <button
                type="button"
                class="secondary"
                onClick={async () => {
                  setShowCurl(true);
                  const copied = await navigator.clipboard?.writeText(curl).then(
                    () => true,
                    () => false,
                  );
                  setNotice(
                    copied ? 'The cURL command is on the clipboard.' : 'Copy the cURL command below.',
                  );
                }}
              >
                Copy as cURL
              </button>
            )}
            {data.shared ? (
              <>
                <button type="button" class="secondary" disabled={busy !== null} onClick={() => void share()}>
                  New share link
                </button>
                <button
                  type="button"
                  class="secondary"
                  disabled={busy !== null}
                  onClick={() => void unshare()}
                >
                  Unshare
                </button>
              </>
            ) : (
              <button type="button" class="secondary" disabled={busy !== null} onClick={() => void share()}>
                Share
              </button>
            )}
            {data.request && (
              <button type="button" class="secondary" disabled={busy !== null} onClick={() => void replay()}>
                {busy === 'replay' ? 'Replaying…' : 'Replay'}
              </button>
            )}
            {data.request && (
              <button
                type="button"
                class="secondary"
                aria-expanded={adding}
                onClick={() => setAdding((v) => !v)}
              >
                Add as a step to a test
              </button>
            )}
            <button type="button" class="danger" disabled={busy !== null} onClick={remove}>
              Delete
            </button>
          </div>
          <ErrorBanner error={error} />
          {notice && <Notice kind="success">{notice}</Notice>}
          {data.shared && (
            <div class="card public-link">
              {publicUrl ? (
                <div class="code-line">
                  <span class="code-line-label" id="public-link-label">
                    Public link
                  </span>
                  <a href={publicUrl} target="_blank" rel="noreferrer" class="mono" data-testid="public-url">
                    {publicUrl}
                  </a>
                  <CopyButton text={publicUrl} label="Copy link" />
                </div>
              ) : linkError ? (
                <ErrorBanner error={linkError} />
              ) : (
                <Loading label="Loading the public link…" />
              )}
            </div>
          )}
          {showCurl && (
            <div id="curl-box" class="curl-box">
              <div class="code-line">
                <span class="code-line-label">cURL command</span>
                <CopyButton text={curl} label="Copy command" />
              </div>
              <pre class="mono" data-testid="curl" data-curl={curl} tabIndex={0} aria-label="cURL command">
                {curl}
              </pre>
            </div>
          )}
          {adding && <AddToTest bucket={bucket} message={data} onClose={() => setAdding(false)} />}
          <MessageView message={data} />
        </>
      )}
    </>
  );
}
