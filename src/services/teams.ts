import { AppError, conflict, invalid, notFound } from '../domain/errors.js';
import { hashSecret, isUuid, newId, newSecret, nowFloat, nowSeconds } from '../domain/ids.js';
import { MEMBER_PERMISSIONS, PERMISSIONS, type Permission } from '../domain/permissions.js';
import type { Mail, Mailer } from '../notify/mail.js';
import type { TeamInvitationRow, TeamRoleRow } from '../store/database.js';
import { accountsRepo } from '../store/repositories/accounts.js';
import { notificationsRepo } from '../store/repositories/notifications.js';
import { type MemberRow, teamsRepo } from '../store/repositories/teams.js';
import type { Executor, Store } from '../store/store.js';
import { BUCKET_KEY_PATTERN } from './buckets.js';
import type { Principal } from './principal.js';

/** The shape the API presents. */
export type { MemberRow } from '../store/repositories/teams.js';

export interface TeamMembership {
  id: string;
  name: string;
  role: 'owner' | 'member';
}

/** A role's permissions as stored: the known ones given, in the list's order (JSON). */
const storedPermissions = (given: readonly Permission[]) =>
  JSON.stringify(PERMISSIONS.filter((p) => given.includes(p)));

/** How long an invitation link stays valid. */
export const INVITATION_DAYS = 14;

/** The permissions of a member: owners every one, no role every one but manage_team, else the role's. */
export function permissionsOf(member: {
  role: 'owner' | 'member';
  permissions: string | null;
}): Permission[] {
  if (member.role === 'owner') return [...PERMISSIONS];
  if (member.permissions === null) return [...MEMBER_PERMISSIONS];
  const stored = JSON.parse(member.permissions) as string[];
  return PERMISSIONS.filter((p) => stored.includes(p));
}

/**
 * Teams as the caller sees them: a team the caller is not a member of does not exist (404). Owners
 * invite people by e-mail, remove them and give each a role; a role limits what a member (and every
 * token of theirs) may do in the team's buckets (docs/teams.md).
 */
export class TeamService {
  constructor(
    private readonly deps: {
      store: Store;
      /** SMTP; null keeps invitation mails in the outbox. */
      mailer?: Mailer | null;
      mailFrom?: string;
      publicUrl?: string;
    },
  ) {}

  async requireMember(
    principal: Principal,
    teamId: string,
    db: Executor = this.deps.store.db,
  ): Promise<TeamMembership> {
    const team = isUuid(teamId) ? await teamsRepo.teamOfMember(db, teamId, principal.accountId) : undefined;
    if (!team) throw notFound(`Team ${teamId}`);
    return team;
  }

  /** Members' names and e-mail addresses (for `notify_all`). */
  async members(
    teamId: string,
    db: Executor = this.deps.store.db,
  ): Promise<{ id: string; name: string; email: string }[]> {
    return teamsRepo.memberAccounts(db, teamId);
  }

  /** What the account may do in the team, or null when it is no member. */
  async permissions(accountId: string, teamId: string): Promise<Permission[] | null> {
    if (!isUuid(teamId)) return null;
    const member = await teamsRepo.membership(this.deps.store.db, teamId, accountId);
    return member ? permissionsOf(member) : null;
  }

  /**
   * Checks the caller's role before a request reaches its route: 403 when the caller is a member of
   * the team that owns the bucket or team named (by `bucketKey` or `teamId`) but lacks `permission`.
   * A caller who is no member passes, and the route answers 404 as for anything foreign.
   */
  async checkRequest(
    principal: Principal,
    target: { bucketKey?: string | undefined; teamId?: string | undefined; defaultTeam?: true | undefined },
    permission: Permission,
  ): Promise<void> {
    const { db } = this.deps.store;
    let member: { role: 'owner' | 'member'; permissions: string | null } | undefined;
    if (target.defaultTeam) {
      const [first] = await accountsRepo.teamsOf(db, principal.accountId);
      member = first ? await teamsRepo.membership(db, first.id, principal.accountId) : undefined;
    } else if (target.teamId !== undefined) {
      member = isUuid(target.teamId)
        ? await teamsRepo.membership(db, target.teamId, principal.accountId)
        : undefined;
    } else if (target.bucketKey !== undefined && BUCKET_KEY_PATTERN.test(target.bucketKey)) {
      member = await teamsRepo.membershipByBucket(db, target.bucketKey, principal.accountId);
    }
    if (member && !permissionsOf(member).includes(permission)) {
      throw new AppError('forbidden', `Your role in this team does not allow this (it needs ${permission})`);
    }
  }

  /** 403 unless the caller, a member of the team, holds the permission (404 when no member). */
  async requirePermission(principal: Principal, teamId: string, permission: Permission): Promise<void> {
    const held = await this.permissions(principal.accountId, teamId);
    if (held === null) throw notFound(`Team ${teamId}`);
    if (!held.includes(permission)) {
      throw new AppError('forbidden', `Your role in this team does not allow this (it needs ${permission})`);
    }
  }

  async people(principal: Principal, teamId: string): Promise<MemberRow[]> {
    await this.requireMember(principal, teamId);
    return teamsRepo.members(this.deps.store.db, teamId);
  }

  /** Gives a member a role (null: the default member permissions). Owners keep every permission. */
  async setMemberRole(principal: Principal, teamId: string, accountId: string, roleId: string | null) {
    await this.requirePermission(principal, teamId, 'manage_team');
    const db = this.deps.store.db;
    await this.checkRoleRef(db, teamId, roleId);
    const member = isUuid(accountId) ? await teamsRepo.membership(db, teamId, accountId) : undefined;
    if (!member) throw notFound(`Member ${accountId}`);
    await teamsRepo.setMemberRole(db, teamId, accountId, roleId);
    return (await teamsRepo.members(db, teamId)).find((m) => m.id === accountId)!;
  }

  /** Removes a member from the team; the owner stays (409). */
  async removeMember(principal: Principal, teamId: string, accountId: string): Promise<void> {
    await this.requirePermission(principal, teamId, 'manage_team');
    const db = this.deps.store.db;
    const member = isUuid(accountId) ? await teamsRepo.membership(db, teamId, accountId) : undefined;
    if (!member) throw notFound(`Member ${accountId}`);
    if (member.role === 'owner') throw conflict('The owner of a team cannot be removed from it');
    await teamsRepo.removeMember(db, teamId, accountId);
  }

  async roles(principal: Principal, teamId: string): Promise<TeamRoleRow[]> {
    await this.requireMember(principal, teamId);
    return teamsRepo.roles(this.deps.store.db, teamId);
  }

  async role(principal: Principal, teamId: string, roleId: string): Promise<TeamRoleRow> {
    await this.requireMember(principal, teamId);
    const role = await this.findRole(this.deps.store.db, teamId, roleId);
    if (!role) throw notFound(`Role ${roleId}`);
    return role;
  }

  async createRole(principal: Principal, teamId: string, input: { name: string; permissions: Permission[] }) {
    await this.requirePermission(principal, teamId, 'manage_team');
    const row: TeamRoleRow = {
      id: newId(),
      team_id: teamId,
      name: input.name,
      permissions: storedPermissions(input.permissions),
      created_at: nowSeconds(),
    };
    await teamsRepo.insertRole(this.deps.store.db, row);
    return row;
  }

  async updateRole(
    principal: Principal,
    teamId: string,
    roleId: string,
    patch: { name?: string | undefined; permissions?: Permission[] | undefined },
  ): Promise<TeamRoleRow> {
    await this.requirePermission(principal, teamId, 'manage_team');
    const role = await this.findRole(this.deps.store.db, teamId, roleId);
    if (!role) throw notFound(`Role ${roleId}`);
    const updated: TeamRoleRow = {
      ...role,
      name: patch.name ?? role.name,
      permissions: patch.permissions === undefined ? role.permissions : storedPermissions(patch.permissions),
    };
    await teamsRepo.updateRole(this.deps.store.db, updated);
    return updated;
  }

  /** Deletes a role no member holds (409 otherwise). */
  async deleteRole(principal: Principal, teamId: string, roleId: string): Promise<void> {
    await this.requirePermission(principal, teamId, 'manage_team');
    const db = this.deps.store.db;
    const role = await this.findRole(db, teamId, roleId);
    if (!role) throw notFound(`Role ${roleId}`);
    const holders = await teamsRepo.roleHolders(db, roleId);
    if (holders > 0)
      throw conflict(`Role "${role.name}" is held by ${holders} member(s); give them another first`);
    await teamsRepo.deleteRole(db, roleId);
  }

  async invitations(principal: Principal, teamId: string): Promise<TeamInvitationRow[]> {
    await this.requirePermission(principal, teamId, 'manage_team');
    return teamsRepo.invitations(this.deps.store.db, teamId, nowSeconds());
  }

  /**
   * Invites an e-mail address into the team: stores the invitation and mails its link (or keeps the
   * mail in the outbox when no SMTP server is set). Answers the invitation.
   */
  async invite(
    principal: Principal,
    teamId: string,
    input: { email: string; role_id?: string | null | undefined },
  ): Promise<TeamInvitationRow> {
    await this.requirePermission(principal, teamId, 'manage_team');
    const { store } = this.deps;
    const roleId = input.role_id ?? null;
    await this.checkRoleRef(store.db, teamId, roleId);
    const email = input.email.trim().toLowerCase();
    const members = await teamsRepo.members(store.db, teamId);
    if (members.some((m) => m.email.toLowerCase() === email)) {
      throw conflict(`${email} is already a member of this team`);
    }
    const token = newSecret('vgl_inv_');
    const now = nowSeconds();
    const row: TeamInvitationRow = {
      id: newId(),
      team_id: teamId,
      email,
      role_id: roleId,
      token_hash: hashSecret(token),
      invited_by: principal.accountId,
      created_at: now,
      expires_at: now + INVITATION_DAYS * 86_400,
    };
    const team = await this.requireMember(principal, teamId);
    const inviter = members.find((m) => m.id === principal.accountId);
    await store.transaction(async (trx) => {
      await teamsRepo.insertInvitation(trx, row);
      await this.mail(
        trx,
        teamId,
        invitationMail({
          from: this.deps.mailFrom ?? 'Vigil <vigil@localhost>',
          to: email,
          team: team.name,
          inviter: inviter?.name ?? 'A team owner',
          link: `${this.deps.publicUrl ?? ''}/invitations/${token}`,
        }),
      );
    });
    return row;
  }

  async revokeInvitation(principal: Principal, teamId: string, id: string): Promise<void> {
    await this.requirePermission(principal, teamId, 'manage_team');
    if (!isUuid(id) || !(await teamsRepo.deleteInvitation(this.deps.store.db, teamId, id))) {
      throw notFound(`Invitation ${id}`);
    }
  }

  /** The team an invitation link leads to; 404 when the link is unknown, used or expired. */
  async invitationTeam(token: string): Promise<{ id: string; name: string }> {
    const { db } = this.deps.store;
    const invitation = await this.openInvitation(db, token);
    return teamsRepo.team(db, invitation.team_id);
  }

  /**
   * Joins the signed-in account to the team of the invitation (with its role) and uses the
   * invitation up. The link is the credential; it is valid for INVITATION_DAYS days. Answers the team.
   */
  async accept(accountId: string, token: string): Promise<{ id: string; name: string }> {
    return this.deps.store.transaction(async (trx) => {
      const invitation = await this.openInvitation(trx, token);
      const existing = await teamsRepo.membership(trx, invitation.team_id, accountId);
      if (!existing) {
        await teamsRepo.addMember(trx, {
          team_id: invitation.team_id,
          account_id: accountId,
          role_id: invitation.role_id,
          created_at: nowSeconds(),
        });
      }
      await teamsRepo.deleteInvitation(trx, invitation.team_id, invitation.id);
      return teamsRepo.team(trx, invitation.team_id);
    });
  }

  /** A `role_id` of a body: null, or a role of the team (400 naming /role_id otherwise). */
  private async checkRoleRef(db: Executor, teamId: string, roleId: string | null): Promise<void> {
    if (roleId !== null && !(await this.findRole(db, teamId, roleId))) {
      throw invalid('/role_id', `names no role of team ${teamId}`);
    }
  }

  /** The invitation of a link that is still open; 404 when unknown, used or expired. */
  private async openInvitation(db: Executor, token: string): Promise<TeamInvitationRow> {
    const invitation = await teamsRepo.invitationByTokenHash(db, hashSecret(token));
    if (!invitation || invitation.expires_at <= nowSeconds()) {
      throw notFound('Invitation (the link is unknown, used or expired)');
    }
    return invitation;
  }

  private findRole(db: Executor, teamId: string, roleId: string): Promise<TeamRoleRow | undefined> {
    return isUuid(roleId) ? teamsRepo.role(db, teamId, roleId) : Promise.resolve(undefined);
  }

  /** Sends a mail now through SMTP, or keeps it in the team's outbox (GET /account/outbox). */
  private async mail(db: Executor, teamId: string, mail: Mail): Promise<void> {
    if (this.deps.mailer) {
      await this.deps.mailer.send(mail);
      return;
    }
    await notificationsRepo.insertOutbox(db, {
      id: newId(),
      team_id: teamId,
      run_id: null,
      recipients: JSON.stringify(mail.to),
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      created_at: nowFloat(),
    });
  }
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The invitation e-mail: who invites, to which team, and the link that signs up or in and joins. */
export function invitationMail(facts: {
  from: string;
  to: string;
  team: string;
  inviter: string;
  link: string;
}): Mail {
  const text =
    `${facts.inviter} invites you to the team "${facts.team}" on Vigil.\n\n` +
    `Open this link to sign in (or create your account) and join the team:\n${facts.link}\n\n` +
    `The link is valid for ${INVITATION_DAYS} days.\n`;
  const html =
    `<p>${escapeHtml(facts.inviter)} invites you to the team “${escapeHtml(facts.team)}” on Vigil.</p>` +
    `<p><a href="${escapeHtml(facts.link)}">Sign in (or create your account) and join the team</a></p>` +
    `<p>The link is valid for ${INVITATION_DAYS} days.</p>`;
  return {
    from: facts.from,
    to: [{ email: facts.to, name: '' }],
    subject: `Join ${facts.team} on Vigil`,
    text,
    html,
  };
}
