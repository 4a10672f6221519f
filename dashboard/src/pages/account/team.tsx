import { useState } from 'preact/hooks';
import { type Permission, PERMISSIONS } from '../../../../src/domain/permissions';
import { api } from '../../api/client';
import type { Invitation, TeamMember, Role } from '../../api/resources';
import { dateTime } from '../../components/format';
import { Checkbox, Empty, SelectField, TextField } from '../../components/ui';
import { useResource } from '../../components/use-resource';
import { useSession } from '../../session';
import { FormError, ListState, useRowActions, useSubmit } from './shared';

const PERMISSION_LABELS: Record<Permission, string> = {
  view: 'View',
  edit_tests: 'Edit tests',
  manage_environments: 'Manage environments',
  manage_buckets: 'Manage buckets',
  manage_team: 'Manage the team',
};

/** No role: the default member permissions (all but managing the team). */
const NO_ROLE = '';

/** The members, invitations and roles of every team of the account (docs/teams.md). */
export function TeamSection() {
  const { account } = useSession();
  return (
    <>
      <h2>Teams</h2>
      <p class="muted">
        Invite people by e-mail and give each a role. A role limits what its members, and every token of
        theirs, may do in the team's buckets. Owners may do everything; members without a role everything but
        managing the team.
      </p>
      {account.teams.length === 0 && <Empty>You are not a member of any team.</Empty>}
      {account.teams.map((team) => (
        <Team key={team.id} team={team} />
      ))}
    </>
  );
}

function Team(props: { team: { id: string; name: string } }) {
  const { team } = props;
  const base = `/teams/${encodeURIComponent(team.id)}`;
  const people = useResource((signal) => api.get<TeamMember[]>(`${base}/people`, undefined, signal), [base]);
  const roles = useResource((signal) => api.get<Role[]>(`${base}/roles`, undefined, signal), [base]);
  const { account } = useSession();
  const me = people.data?.find((p) => p.id === account.id);
  const manages = me?.permissions.includes('manage_team') ?? false;
  const roleOptions = [
    { value: NO_ROLE, label: 'Member (no role)' },
    ...(roles.data ?? []).map((r) => ({ value: r.uuid, label: r.name })),
  ];
  return (
    <section class="card" aria-labelledby={`team-${team.id}`} data-team={team.id}>
      <h3 id={`team-${team.id}`}>{team.name}</h3>
      <Members base={base} people={people} roleOptions={roleOptions} manages={manages} />
      {manages && <Invitations base={base} roleOptions={roleOptions} teamName={team.name} />}
      <Roles base={base} roles={roles} manages={manages} onChange={people.reload} />
    </section>
  );
}

type ListOf<T> = { data: T[] | undefined; error: unknown; reload: () => Promise<void> };
type RoleOption = { value: string; label: string };

function Members(props: {
  base: string;
  people: ListOf<TeamMember>;
  roleOptions: RoleOption[];
  manages: boolean;
}) {
  const { base, people } = props;
  const rows = useRowActions();
  const setRole = (person: TeamMember, roleId: string) =>
    rows.run(
      `Give ${person.name} the role ${props.roleOptions.find((o) => o.value === roleId)?.label}?`,
      async () => {
        await api.put(`${base}/people/${encodeURIComponent(person.id)}`, {
          role_id: roleId === NO_ROLE ? null : roleId,
        });
        await people.reload();
        return `${person.name}'s role was changed.`;
      },
    );
  const remove = (person: TeamMember) =>
    rows.run(`Remove ${person.name} from the team? They lose access to its buckets.`, async () => {
      await api.delete(`${base}/people/${encodeURIComponent(person.id)}`);
      await people.reload();
      return `${person.name} was removed.`;
    });
  return (
    <>
      <h4>Members</h4>
      <ListState
        list={people}
        rows={rows}
        loading="Loading members…"
        empty={<p class="muted">No members.</p>}
      />
      {people.data && people.data.length > 0 && (
        <div class="table-wrap">
          <table data-testid="members-table">
            <caption class="visually-hidden">Members</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">E-mail</th>
                <th scope="col">Role</th>
                <th scope="col" class="hide-narrow">
                  Last sign-in
                </th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {people.data.map((person) => (
                <tr key={person.id}>
                  <td>{person.name}</td>
                  <td class="wrap">{person.email || <span class="muted">hidden</span>}</td>
                  <td>
                    {person.owner || !props.manages ? (
                      person.group_name
                    ) : (
                      <SelectField
                        label={`Role of ${person.name}`}
                        hideLabel
                        value={person.role_id ?? NO_ROLE}
                        options={props.roleOptions}
                        onValue={(value) => void setRole(person, value)}
                      />
                    )}
                  </td>
                  <td class="hide-narrow">
                    {person.last_login_at ? dateTime(person.last_login_at) : <span class="muted">—</span>}
                  </td>
                  <td>
                    {props.manages && !person.owner && (
                      <button
                        type="button"
                        class="danger small"
                        aria-label={`Remove ${person.name}`}
                        onClick={() => void remove(person)}
                      >
                        Remove
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

function Invitations(props: { base: string; roleOptions: RoleOption[]; teamName: string }) {
  const { base } = props;
  const list = useResource(
    (signal) => api.get<Invitation[]>(`${base}/invitations`, undefined, signal),
    [base],
  );
  const rows = useRowActions();
  const submit = useSubmit();
  const [email, setEmail] = useState('');
  const [roleId, setRoleId] = useState(NO_ROLE);
  const invite = async (event: Event) => {
    event.preventDefault();
    await submit.run(async () => {
      await api.post(`${base}/invitations`, { email, role_id: roleId === NO_ROLE ? null : roleId });
      rows.setNotice(`An invitation was sent to ${email}.`);
      setEmail('');
      await list.reload();
    });
  };
  const revoke = (invitation: Invitation) =>
    rows.run(`Revoke the invitation of ${invitation.email}? Its link stops working.`, async () => {
      await api.delete(`${base}/invitations/${encodeURIComponent(invitation.id)}`);
      await list.reload();
      return `The invitation of ${invitation.email} was revoked.`;
    });
  return (
    <>
      <h4>Invitations</h4>
      <ListState
        list={list}
        rows={rows}
        loading="Loading invitations…"
        empty={<p class="muted">No open invitations.</p>}
      />
      {list.data && list.data.length > 0 && (
        <ul data-testid="invitations-list">
          {list.data.map((invitation) => (
            <li key={invitation.id}>
              {invitation.email} <span class="muted">until {dateTime(invitation.expires_at)}</span>{' '}
              <button
                type="button"
                class="danger small"
                aria-label={`Revoke the invitation of ${invitation.email}`}
                onClick={() => void revoke(invitation)}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={invite} noValidate data-testid="invite-form">
        <div class="row">
          <TextField
            label="E-mail address"
            type="email"
            value={email}
            onValue={setEmail}
            error={submit.error}
            field="/email"
            maxLength={320}
          />
          <SelectField label="Role" value={roleId} options={props.roleOptions} onValue={setRoleId} />
        </div>
        <FormError error={submit.error} fields={['/email']} />
        <button type="submit" disabled={submit.busy}>
          {submit.busy ? 'Inviting…' : `Invite to ${props.teamName}`}
        </button>
      </form>
    </>
  );
}

function Roles(props: {
  base: string;
  roles: ListOf<Role>;
  manages: boolean;
  onChange: () => Promise<void>;
}) {
  const { base, roles } = props;
  const rows = useRowActions();
  const submit = useSubmit();
  const [name, setName] = useState('');
  const [permissions, setPermissions] = useState<Permission[]>(['view']);
  const create = async (event: Event) => {
    event.preventDefault();
    await submit.run(async () => {
      await api.post(`${base}/roles`, { name, permissions });
      rows.setNotice(`The role ${name} was added.`);
      setName('');
      await roles.reload();
    });
  };
  const remove = (role: Role) =>
    rows.run(`Delete the role ${role.name}?`, async () => {
      await api.delete(`${base}/roles/${encodeURIComponent(role.uuid)}`);
      await roles.reload();
      await props.onChange();
      return `The role ${role.name} was deleted.`;
    });
  return (
    <>
      <h4>Roles</h4>
      <ListState
        list={roles}
        rows={rows}
        loading="Loading roles…"
        empty={<p class="muted">No roles yet.</p>}
      />
      {roles.data && roles.data.length > 0 && (
        <ul data-testid="roles-list">
          {roles.data.map((role) => (
            <li key={role.uuid}>
              <strong>{role.name}</strong>:{' '}
              {role.permissions.length > 0
                ? role.permissions.map((p) => PERMISSION_LABELS[p]).join(', ')
                : 'nothing'}{' '}
              {props.manages && (
                <button
                  type="button"
                  class="danger small"
                  aria-label={`Delete the role ${role.name}`}
                  onClick={() => void remove(role)}
                >
                  Delete
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {props.manages && (
        <form onSubmit={create} noValidate data-testid="new-role">
          <TextField
            label="Role name"
            value={name}
            onValue={setName}
            error={submit.error}
            field="/name"
            maxLength={255}
          />
          <fieldset>
            <legend>Permissions</legend>
            {PERMISSIONS.map((permission) => (
              <Checkbox
                key={permission}
                label={PERMISSION_LABELS[permission]}
                checked={permissions.includes(permission)}
                onValue={(on) =>
                  setPermissions(
                    on ? [...permissions, permission] : permissions.filter((p) => p !== permission),
                  )
                }
              />
            ))}
          </fieldset>
          <FormError error={submit.error} fields={['/name']} />
          <button type="submit" disabled={submit.busy}>
            {submit.busy ? 'Adding…' : 'Add role'}
          </button>
        </form>
      )}
    </>
  );
}
