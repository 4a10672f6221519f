import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'wouter-preact';
import { api } from '../api/client';
import type { Bucket } from '../api/resources';
import { dateTime } from '../components/format';
import { Checkbox, ErrorBanner, Loading, Notice, PageHeader, SelectField, TextField } from '../components/ui';
import { useResource } from '../components/use-resource';
import { paths, useSession } from '../session';
import { CopyValue, FormError, SecretPanel, useSubmit } from './account/shared';
import { StatusAndMaintenance } from './bucket-status';
import './account/account.css';

/** A bucket as `GET /buckets/<key>` answers it; message retention is not in the session's list type. */
interface BucketDetail extends Bucket {
  retention_days: number;
}

/**
 * `/b/<bucket>/settings`: the bucket's name, message retention and `verify_ssl`; its trigger,
 * capture and gateway URLs; its traffic token; the webhook signing secret; its public status pages
 * and maintenance windows; a new bucket; deleting this one.
 */
export function BucketSettingsPage(props: { bucket: string }) {
  const bucket = useResource(
    (signal) => api.get<BucketDetail>(`/buckets/${encodeURIComponent(props.bucket)}`, undefined, signal),
    [props.bucket],
  );
  return (
    <div class="settings-page">
      <PageHeader title="Bucket settings" subtitle={bucket.data?.name} />
      <ErrorBanner error={bucket.error} onRetry={bucket.reload} />
      {!bucket.data && !bucket.error && <Loading label="Loading the bucket…" />}
      {bucket.data && (
        <>
          <SettingsForm key={bucket.data.key} bucket={bucket.data} onSaved={bucket.setData} />
          <Addresses bucket={bucket.data} />
          <TrafficToken bucket={bucket.data} onChanged={bucket.setData} />
          <SigningSecret key={`secret-${bucket.data.key}`} bucketKey={bucket.data.key} />
          <StatusAndMaintenance key={`status-${bucket.data.key}`} bucketKey={bucket.data.key} />
          <NewBucket />
          {!bucket.data.default && <DeleteBucket key={`delete-${bucket.data.key}`} bucket={bucket.data} />}
        </>
      )}
    </div>
  );
}

function SettingsForm(props: { bucket: BucketDetail; onSaved: (bucket: BucketDetail) => void }) {
  const { reloadBuckets } = useSession();
  const [name, setName] = useState(props.bucket.name);
  const [retention, setRetention] = useState(String(props.bucket.retention_days));
  const [verifySsl, setVerifySsl] = useState(props.bucket.verify_ssl);
  const [saved, setSaved] = useState(false);
  const submit = useSubmit();

  const save = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    const days = Number(retention);
    const ok = await submit.run(async () => {
      const updated = await api.put<BucketDetail>(`/buckets/${props.bucket.key}`, {
        name,
        verify_ssl: verifySsl,
        // Not a whole number: sent as typed, so the API names the field.
        retention_days: retention.trim() !== '' && Number.isFinite(days) ? days : retention,
      });
      props.onSaved(updated);
      await reloadBuckets();
    });
    setSaved(ok);
  };

  return (
    <section class="card" aria-labelledby="bucket-general">
      <h2 id="bucket-general">General</h2>
      <form onSubmit={save} noValidate class="narrow-form" data-testid="bucket-form">
        <TextField
          label="Name"
          value={name}
          onValue={setName}
          error={submit.error}
          field="/name"
          maxLength={255}
        />
        <TextField
          label="Keep captured messages for (days)"
          type="number"
          inputMode="numeric"
          min={1}
          max={3650}
          value={retention}
          onValue={setRetention}
          error={submit.error}
          field="/retention_days"
          hint="1 to 3650 days. Shared messages are kept regardless."
        />
        <Checkbox
          label="Verify TLS certificates of the requests this bucket's tests send"
          checked={verifySsl}
          onValue={setVerifySsl}
        />
        <p class="muted">
          Key <code>{props.bucket.key}</code> · team {props.bucket.team.name} · created{' '}
          {dateTime(props.bucket.created_at)}
          {props.bucket.default && ' · the default bucket'}
        </p>
        <FormError error={submit.error} fields={['/name', '/retention_days']} />
        {saved && <Notice kind="success">The bucket was saved.</Notice>}
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Saving…' : 'Save'}
        </button>
      </form>
    </section>
  );
}

function Addresses(props: { bucket: BucketDetail }) {
  return (
    <section class="card" aria-labelledby="bucket-urls">
      <h2 id="bucket-urls">Addresses</h2>
      <CopyValue label="Trigger URL" value={props.bucket.trigger_url} />
      <p class="muted">
        A GET or POST to the trigger URL runs every test of the bucket with its default environment; no token
        needed, so keep it private.
      </p>
      <CopyValue label="Capture URL" value={props.bucket.capture_url} />
      <p class="muted">
        Anything sent to the capture URL (and any path below it) is stored as a message of this bucket.
      </p>
      <CopyValue label="Gateway URL" value={props.bucket.gateway_url} />
      <p class="muted">
        <code>{props.bucket.gateway_url}/https/api.example.com/path</code> forwards to{' '}
        <code>https://api.example.com/path</code> and stores the exchange. Capture and gateway URLs are served
        on their own origin, apart from this dashboard.
      </p>
    </section>
  );
}

/**
 * The bucket's own token for its capture and gateway URLs: without one the bucket key is enough to
 * send traffic into the bucket; with one, every request must also carry it.
 */
function TrafficToken(props: { bucket: BucketDetail; onChanged: (bucket: BucketDetail) => void }) {
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const token = props.bucket.auth_token;

  const change = async (require: boolean) => {
    const question = require
      ? token
        ? 'Make a new token? Senders that use the current one will be refused.'
        : 'Require a token? Senders that use only the bucket key will be refused until they send it.'
      : 'Stop requiring a token? Anyone with the bucket key can then send traffic into this bucket.';
    if (!confirm(question)) return;
    setBusy(true);
    setError(undefined);
    try {
      const path = `/buckets/${props.bucket.key}/auth-token`;
      props.onChanged(require ? await api.post<BucketDetail>(path) : await api.delete<BucketDetail>(path));
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="bucket-token">
      <h2 id="bucket-token">Traffic token</h2>
      <p class="muted">
        {token
          ? 'Capture and gateway requests must send this token in the Vigil-Bucket-Auth header (or as a query parameter of that name).'
          : 'Capture and gateway requests need only the bucket key. Require a token to keep out anyone who learns the key.'}
      </p>
      <ErrorBanner error={error} />
      {token && <CopyValue label="Token" value={token} />}
      <div class="actions">
        <button type="button" class="secondary" disabled={busy} onClick={() => void change(true)}>
          {token ? 'Make a new token' : 'Require a token'}
        </button>
        {token && (
          <button type="button" class="danger" disabled={busy} onClick={() => void change(false)}>
            Stop requiring a token
          </button>
        )}
      </div>
    </section>
  );
}

function SigningSecret(props: { bucketKey: string }) {
  const [secret, setSecret] = useState<{ value: string; rotated: boolean } | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const path = `/buckets/${props.bucketKey}/signing-secret`;

  const load = async (rotate: boolean) => {
    if (
      rotate &&
      !confirm('Make a new signing secret? Webhook receivers that check the old one will refuse deliveries.')
    )
      return;
    setBusy(true);
    setError(undefined);
    try {
      const answer = rotate
        ? await api.post<{ signing_secret: string }>(path)
        : await api.get<{ signing_secret: string }>(path);
      setSecret({ value: answer.signing_secret, rotated: rotate });
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="bucket-secret">
      <h2 id="bucket-secret">Webhook signing secret</h2>
      <p class="muted">
        Webhooks of this bucket carry <code>X-Vigil-Signature: sha256=…</code>, an HMAC-SHA256 of the body
        with this secret.
      </p>
      <ErrorBanner error={error} />
      {secret ? (
        <SecretPanel
          title={secret.rotated ? 'The new signing secret' : 'Signing secret'}
          secrets={[{ label: 'Signing secret', value: secret.value }]}
          onDismiss={() => setSecret(null)}
          warning={
            <>
              <strong>Keep it private:</strong> anyone who has it can sign payloads as this bucket.
              {secret.rotated && ' The previous secret no longer signs.'}
            </>
          }
        />
      ) : (
        <div class="actions">
          <button type="button" class="secondary" disabled={busy} onClick={() => void load(false)}>
            Show the secret
          </button>
          <button type="button" class="danger" disabled={busy} onClick={() => void load(true)}>
            Rotate the secret
          </button>
        </div>
      )}
    </section>
  );
}

function NewBucket() {
  const { account, reloadBuckets } = useSession();
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [team, setTeam] = useState(account.teams[0]?.id ?? '');
  const submit = useSubmit();

  const create = async (event: Event) => {
    event.preventDefault();
    await submit.run(async () => {
      const created = await api.post<Bucket>('/buckets', {
        name,
        ...(team && { team_uuid: team }),
      });
      setName('');
      await reloadBuckets();
      navigate(paths.bucketSettings(created.key));
    });
  };

  return (
    <section class="card" aria-labelledby="bucket-new">
      <h2 id="bucket-new">New bucket</h2>
      <form onSubmit={create} noValidate data-testid="new-bucket">
        <div class="row">
          <TextField
            label="Name of the new bucket"
            value={name}
            onValue={setName}
            error={submit.error}
            field="/name"
            maxLength={255}
          />
          {account.teams.length > 1 && (
            <SelectField
              label="Team"
              value={team}
              options={account.teams.map((t) => ({ value: t.id, label: t.name }))}
              onValue={setTeam}
              error={submit.error}
              field="/team_uuid"
            />
          )}
        </div>
        <FormError error={submit.error} fields={['/name', '/team_uuid']} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Creating…' : 'Create bucket'}
        </button>
      </form>
    </section>
  );
}

function DeleteBucket(props: { bucket: BucketDetail }) {
  const { buckets, reloadBuckets } = useSession();
  const [, navigate] = useLocation();
  const [typed, setTyped] = useState('');
  const submit = useSubmit();
  const matches = typed === props.bucket.name;
  useEffect(() => setTyped(''), [props.bucket.key]);

  const remove = async (event: Event) => {
    event.preventDefault();
    if (!matches) return;
    const fallback =
      buckets.find((b) => b.default && b.key !== props.bucket.key) ??
      buckets.find((b) => b.key !== props.bucket.key);
    const ok = await submit.run(async () => {
      await api.delete(`/buckets/${props.bucket.key}`);
    });
    if (!ok) return;
    // Leave the page first, so nothing reloads the bucket that is gone.
    navigate(fallback ? paths.tests(fallback.key) : '/', { replace: true });
    await reloadBuckets();
  };

  return (
    <section class="card danger-zone" aria-labelledby="bucket-delete">
      <h2 id="bucket-delete">Delete this bucket</h2>
      <p>
        Deleting <strong>{props.bucket.name}</strong> deletes its tests, environments, results and captured
        messages. This cannot be undone.
      </p>
      <form onSubmit={remove} noValidate data-testid="delete-bucket">
        <TextField
          label={`Type the bucket's name (${props.bucket.name}) to confirm`}
          value={typed}
          onValue={setTyped}
          autoComplete="off"
        />
        <ErrorBanner error={submit.error} />
        <button type="submit" class="danger" disabled={!matches || submit.busy}>
          {submit.busy ? 'Deleting…' : 'Delete bucket'}
        </button>
      </form>
    </section>
  );
}
