import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { Integration, NotificationPreview, TestListItem } from '../../api/resources';
import { SelectField, TextArea, TextField } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { useSession } from '../../session';
import { FormError, useSubmit } from './shared';

/** The placeholders of notification templates (docs/alerting.md, "Notification templates"). */
export const PLACEHOLDERS = [
  'test_name',
  'environment_name',
  'region',
  'result',
  'recovered',
  'failing_assertions',
  'failing_assertions_count',
  'error',
  'duration_ms',
  'started_at',
  'finished_at',
  'result_url',
  'test_url',
  'bucket_name',
];

type Channel = 'slack' | 'pagerduty' | 'webhook';

const HELP: Record<Channel, string> = {
  slack: 'The Slack message text (mrkdwn).',
  pagerduty: 'The subject is the incident summary; the body goes to its details.',
  webhook: 'The JSON body sent. Put placeholders inside JSON strings: values are JSON-escaped.',
};

/**
 * A row's "Message" cell: whether the integration sends the standard message or its own template,
 * and a form to write one and preview it against a test's newest result.
 */
export function MessageCell(props: {
  base: string;
  integration: Integration;
  name: string;
  onSaved: (saved: Integration) => void;
}) {
  const { integration } = props;
  const channel = integration.integration_type as Channel | 'partner-inspector';
  const [editing, setEditing] = useState(false);
  if (channel === 'partner-inspector') return <span class="muted">—</span>;
  if (!editing) {
    return (
      <>
        <span data-testid="message">{integration.template ? 'Own template' : 'Standard'}</span>{' '}
        <button
          type="button"
          class="link"
          aria-label={`Edit the message of ${props.name}`}
          onClick={() => setEditing(true)}
        >
          Edit
        </button>
      </>
    );
  }
  return (
    <TemplateForm
      {...props}
      channel={channel}
      onClose={() => setEditing(false)}
      onSaved={(saved) => {
        props.onSaved(saved);
        setEditing(false);
      }}
    />
  );
}

function TemplateForm(props: {
  base: string;
  integration: Integration;
  name: string;
  channel: Channel;
  onSaved: (saved: Integration) => void;
  onClose: () => void;
}) {
  const { integration, channel } = props;
  const [subject, setSubject] = useState(integration.template?.subject ?? '');
  const [body, setBody] = useState(integration.template?.body ?? '');
  const submit = useSubmit();
  const template =
    body.trim() === '' ? null : { ...(channel === 'pagerduty' && subject !== '' && { subject }), body };

  const save = async (event: Event) => {
    event.preventDefault();
    await submit.run(async () => {
      const saved = await api.put<Integration>(`${props.base}/${encodeURIComponent(integration.id)}`, {
        template,
      });
      props.onSaved(saved);
    });
  };

  return (
    <form onSubmit={save} noValidate aria-label={`Message of ${props.name}`} data-testid="template-form">
      <p class="muted small-text">
        {HELP[channel]} Leave the body empty for the standard message. Placeholders:{' '}
        {PLACEHOLDERS.map((name, index) => (
          <span key={name}>
            {index > 0 && ', '}
            <code>{`{{${name}}}`}</code>
          </span>
        ))}
        .
      </p>
      {channel === 'pagerduty' && (
        <TextField
          label="Subject (summary)"
          value={subject}
          onValue={setSubject}
          error={submit.error}
          field="/template/subject"
          maxLength={1000}
        />
      )}
      <TextArea
        label="Body"
        value={body}
        onValue={setBody}
        error={submit.error}
        field="/template/body"
        rows={6}
      />
      <FormError error={submit.error} fields={['/template']} />
      <Preview channel={channel} template={template} />
      <div class="actions">
        <button type="submit" class="small" disabled={submit.busy}>
          {submit.busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" class="secondary small" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Renders the draft against the newest result of a test the user picks. */
export function Preview(props: {
  channel: Channel | 'email';
  template: { subject?: string; body: string } | null;
}) {
  const { buckets } = useSession();
  const [bucket, setBucket] = useState(buckets[0]?.key ?? '');
  const [testId, setTestId] = useState('');
  const tests = useResource(
    (signal) =>
      bucket
        ? api.get<TestListItem[]>(`/buckets/${encodeURIComponent(bucket)}/tests`, { count: 1000 }, signal)
        : Promise.resolve([]),
    [bucket],
  );
  const [preview, setPreview] = useState<NotificationPreview | null>(null);
  const submit = useSubmit();
  const chosen = testId || tests.data?.[0]?.id || '';

  const run = async () => {
    setPreview(null);
    await submit.run(async () => {
      setPreview(
        await api.post<NotificationPreview>(
          `/buckets/${encodeURIComponent(bucket)}/tests/${encodeURIComponent(chosen)}/notification-preview`,
          { channel: props.channel, template: props.template },
        ),
      );
    });
  };

  return (
    <fieldset class="preview">
      <legend>Preview</legend>
      <div class="row">
        <SelectField
          label="Bucket"
          value={bucket}
          options={buckets.map((b) => ({ value: b.key, label: b.name }))}
          onValue={(value) => {
            setBucket(value);
            setTestId('');
          }}
        />
        <SelectField
          label="Test"
          value={chosen}
          options={(tests.data ?? []).map((t) => ({ value: t.id, label: t.name }))}
          onValue={setTestId}
          disabled={!tests.data || tests.data.length === 0}
        />
      </div>
      <button
        type="button"
        class="secondary small"
        disabled={!chosen || submit.busy}
        onClick={() => void run()}
      >
        {submit.busy ? 'Rendering…' : 'Preview'}
      </button>
      <FormError error={submit.error} fields={[]} />
      {preview && (
        <div data-testid="template-preview" aria-live="polite">
          {preview.sample && (
            <p class="muted small-text">No finished result yet: shown with sample values.</p>
          )}
          {preview.subject !== null && (
            <p>
              <strong>Subject:</strong> {preview.subject}
            </p>
          )}
          <pre class="wrap">{preview.body}</pre>
        </div>
      )}
    </fieldset>
  );
}
