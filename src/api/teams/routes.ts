import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Permission } from '../../domain/permissions.js';
import { type Principal, visibleEmail } from '../../services/principal.js';
import { permissionsOf } from '../../services/teams.js';
import type { TeamInvitationRow, TeamRoleRow } from '../../store/database.js';
import type { MemberRow } from '../../services/teams.js';
import type { ApiContext } from '../context.js';
import { TeamParams } from '../integrations/schemas.js';
import { principalOf } from '../plugins/auth.js';
import { Envelope, errorResponses, noContent, ok } from '../shared/envelope.js';
import {
  InvitationInput,
  InvitationOut,
  InvitationParams,
  MemberPatch,
  PersonOut,
  PersonParams,
  RoleInput,
  RoleOut,
  RoleParams,
  RolePatch,
} from './schemas.js';

export function presentPerson(member: MemberRow, principal: Principal) {
  return {
    id: member.id,
    uuid: member.id,
    name: member.name,
    email: visibleEmail(principal, member.email),
    created_at: member.created_at,
    last_login_at: member.last_login_at === null ? null : Number(member.last_login_at),
    group_name: member.role_name ?? (member.role === 'owner' ? 'Owners' : 'Members'),
    owner: member.role === 'owner',
    role_id: member.role_id,
    permissions: permissionsOf({ role: member.role, permissions: member.permissions }),
  };
}

export function presentRole(role: TeamRoleRow) {
  return {
    uuid: role.id,
    id: role.id,
    name: role.name,
    permissions: JSON.parse(role.permissions) as Permission[],
    created_at: role.created_at,
  };
}

function presentInvitation(row: TeamInvitationRow) {
  return {
    id: row.id,
    email: row.email,
    role_id: row.role_id,
    created_at: row.created_at,
    expires_at: row.expires_at,
  };
}

/** A team's people, roles and invitations (docs/teams.md). */
export const teamRoutes =
  (ctx: ApiContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { teams } = ctx.services;
    const tags = ['teams'];
    const write = { scope: 'bucket:write' as const };
    const gone = { 204: Type.Null({ description: 'No body' }), ...errorResponses, 409: errorResponses[400] };

    app.get(
      '/teams/:team_id/people',
      {
        schema: {
          tags,
          summary: 'Members of the team with their role',
          params: TeamParams,
          response: { 200: Envelope(Type.Array(PersonOut)), ...errorResponses },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const people = await teams.people(principal, request.params.team_id);
        return ok(people.map((p) => presentPerson(p, principal)));
      },
    );

    app.put(
      '/teams/:team_id/people/:account_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Give a member a role (null: the default member permissions); needs manage_team',
          params: PersonParams,
          body: MemberPatch,
          response: { 200: Envelope(PersonOut), ...errorResponses },
        },
      },
      async (request) => {
        const principal = principalOf(request);
        const { team_id, account_id } = request.params;
        return ok(
          presentPerson(
            await teams.setMemberRole(principal, team_id, account_id, request.body.role_id),
            principal,
          ),
        );
      },
    );

    app.delete(
      '/teams/:team_id/people/:account_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Remove a member (the owner stays: 409)',
          params: PersonParams,
          response: gone,
        },
      },
      async (request, reply) => {
        await teams.removeMember(principalOf(request), request.params.team_id, request.params.account_id);
        return noContent(reply);
      },
    );

    app.get(
      '/teams/:team_id/roles',
      {
        schema: {
          tags,
          summary: 'Roles of the team',
          params: TeamParams,
          response: { 200: Envelope(Type.Array(RoleOut)), ...errorResponses },
        },
      },
      async (request) =>
        ok((await teams.roles(principalOf(request), request.params.team_id)).map(presentRole)),
    );

    app.post(
      '/teams/:team_id/roles',
      {
        config: write,
        schema: {
          tags,
          summary: 'Add a role {name, permissions[]}; needs manage_team',
          params: TeamParams,
          body: RoleInput,
          response: { 201: Envelope(RoleOut), ...errorResponses },
        },
      },
      async (request, reply) => {
        const role = await teams.createRole(principalOf(request), request.params.team_id, request.body);
        reply.code(201);
        return ok(presentRole(role));
      },
    );

    app.get(
      '/teams/:team_id/roles/:role_id',
      {
        schema: {
          tags,
          summary: 'One role',
          params: RoleParams,
          response: { 200: Envelope(RoleOut), ...errorResponses },
        },
      },
      async (request) =>
        ok(
          presentRole(await teams.role(principalOf(request), request.params.team_id, request.params.role_id)),
        ),
    );

    app.put(
      '/teams/:team_id/roles/:role_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Change a role; omitted properties stay',
          params: RoleParams,
          body: RolePatch,
          response: { 200: Envelope(RoleOut), ...errorResponses },
        },
      },
      async (request) => {
        const { team_id, role_id } = request.params;
        return ok(presentRole(await teams.updateRole(principalOf(request), team_id, role_id, request.body)));
      },
    );

    app.delete(
      '/teams/:team_id/roles/:role_id',
      {
        config: write,
        schema: {
          tags,
          summary: 'Delete a role no member holds (409 otherwise)',
          params: RoleParams,
          response: gone,
        },
      },
      async (request, reply) => {
        await teams.deleteRole(principalOf(request), request.params.team_id, request.params.role_id);
        return noContent(reply);
      },
    );

    app.get(
      '/teams/:team_id/invitations',
      {
        schema: {
          tags,
          summary: 'Open invitations of the team; needs manage_team',
          params: TeamParams,
          response: { 200: Envelope(Type.Array(InvitationOut)), ...errorResponses },
        },
      },
      async (request) =>
        ok((await teams.invitations(principalOf(request), request.params.team_id)).map(presentInvitation)),
    );

    app.post(
      '/teams/:team_id/invitations',
      {
        config: write,
        schema: {
          tags,
          summary:
            'Invite someone by e-mail (the link signs them up or in and joins them); needs manage_team',
          description:
            'The e-mail goes out through SMTP_URL, or stays in the outbox (GET /account/outbox) when none is set.',
          params: TeamParams,
          body: InvitationInput,
          response: { 201: Envelope(InvitationOut), ...errorResponses, 409: errorResponses[400] },
        },
      },
      async (request, reply) => {
        const row = await teams.invite(principalOf(request), request.params.team_id, request.body);
        reply.code(201);
        return ok(presentInvitation(row));
      },
    );

    app.delete(
      '/teams/:team_id/invitations/:invitation_id',
      {
        config: write,
        schema: { tags, summary: 'Revoke an invitation', params: InvitationParams, response: gone },
      },
      async (request, reply) => {
        await teams.revokeInvitation(
          principalOf(request),
          request.params.team_id,
          request.params.invitation_id,
        );
        return noContent(reply);
      },
    );

    app.post(
      '/invitations/:token/accept',
      {
        config: { scope: 'api:read', personalToken: true },
        schema: {
          tags,
          summary:
            'Join the team of an invitation as the caller (the link of the invitation e-mail does this)',
          params: Type.Object({ token: Type.String({ maxLength: 128 }) }),
          response: {
            200: Envelope(Type.Object({ id: Type.String(), name: Type.String() })),
            ...errorResponses,
          },
        },
      },
      async (request) => ok(await teams.accept(principalOf(request).accountId, request.params.token)),
    );
  };
