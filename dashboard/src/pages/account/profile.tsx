import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { Account } from '../../api/resources';
import { dateTime } from '../../components/format';
import { Notice, TextField } from '../../components/ui';
import { useSession } from '../../session';
import { FormError, useSubmit } from './shared';

/** Shortest password sign-up accepts (MIN_SIGNUP_PASSWORD of the server). */
const MIN_PASSWORD = 10;

/** The account's name (editable), e-mail address (read-only) and the password change. */
export function ProfileSection() {
  const { account } = useSession();
  return (
    <>
      <NameForm account={account} />
      <PasswordForm />
    </>
  );
}

function NameForm(props: { account: Account }) {
  const { reloadAccount } = useSession();
  const [name, setName] = useState(props.account.name);
  const [saved, setSaved] = useState(false);
  const submit = useSubmit();

  const save = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    const ok = await submit.run(async () => {
      const updated = await api.put<Account>('/account', { name });
      setName(updated.name);
      await reloadAccount();
    });
    setSaved(ok);
  };

  return (
    <section class="card" aria-labelledby="profile-heading">
      <h2 id="profile-heading">Profile</h2>
      <form onSubmit={save} class="narrow-form">
        <TextField
          label="Name"
          value={name}
          onValue={(value) => {
            setName(value);
            setSaved(false);
          }}
          error={submit.error}
          field="/name"
          required
          maxLength={255}
          autoComplete="name"
        />
        <div class="field">
          <span class="field-label">E-mail address</span>
          <span class="readonly-value">{props.account.email || '—'}</span>
          <small class="muted">Your e-mail address is your sign-in name and cannot be changed here.</small>
        </div>
        <p class="muted">Member since {dateTime(props.account.created_at)}</p>
        <FormError error={submit.error} fields={['/name']} />
        {saved && <Notice kind="success">Your name was saved.</Notice>}
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Saving…' : 'Save name'}
        </button>
      </form>
    </section>
  );
}

function PasswordForm() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [done, setDone] = useState(false);
  const submit = useSubmit();
  const mismatch = repeat !== '' && repeat !== next;

  const change = async (event: Event) => {
    event.preventDefault();
    setDone(false);
    if (next !== repeat) {
      submit.setError(undefined);
      return;
    }
    const ok = await submit.run(() =>
      api.post<void>('/account/password', { current_password: current, new_password: next }),
    );
    if (ok) {
      setCurrent('');
      setNext('');
      setRepeat('');
      setDone(true);
    }
  };

  return (
    <section class="card" aria-labelledby="password-heading">
      <h2 id="password-heading">Password</h2>
      <form onSubmit={change} class="narrow-form" data-testid="password-form">
        <TextField
          label="Current password"
          type="password"
          value={current}
          onValue={setCurrent}
          error={submit.error}
          field="/current_password"
          required
          autoComplete="current-password"
        />
        <TextField
          label="New password"
          type="password"
          value={next}
          onValue={setNext}
          error={submit.error}
          field="/new_password"
          required
          minLength={MIN_PASSWORD}
          maxLength={1024}
          autoComplete="new-password"
          hint={`At least ${MIN_PASSWORD} characters.`}
        />
        <TextField
          label="Repeat the new password"
          type="password"
          value={repeat}
          onValue={setRepeat}
          required
          autoComplete="new-password"
          aria-invalid={mismatch ? true : undefined}
          hint={mismatch ? 'The two new passwords differ.' : undefined}
        />
        <FormError error={submit.error} fields={['/current_password', '/new_password']} />
        {done && (
          <Notice kind="success">
            Your password was changed. Other browsers signed in to Vigil must sign in again; access tokens
            stay valid.
          </Notice>
        )}
        <button type="submit" disabled={submit.busy || mismatch}>
          {submit.busy ? 'Changing…' : 'Change password'}
        </button>
      </form>
    </section>
  );
}
