import { Type } from '@sinclair/typebox';
import { PERMISSIONS } from '../../domain/permissions.js';
import { StringEnum } from '../../domain/schema.js';
import { Nullable } from '../shared/envelope.js';

const Permissions = Type.Array(StringEnum(PERMISSIONS), {
  maxItems: PERMISSIONS.length,
  uniqueItems: true,
  description: `Any of ${PERMISSIONS.join(', ')}`,
});

export const PersonOut = Type.Object({
  id: Type.String(),
  uuid: Type.String({ description: 'Same as id' }),
  name: Type.String(),
  email: Type.String({ description: 'Empty without the account:email scope' }),
  created_at: Type.Integer(),
  last_login_at: Nullable(Type.Number()),
  group_name: Type.String({ description: 'The role name, or Owners / Members without a role' }),
  owner: Type.Boolean(),
  role_id: Nullable(Type.String()),
  permissions: Permissions,
});

export const RoleOut = Type.Object({
  uuid: Type.String(),
  id: Type.String({ description: 'Same as uuid' }),
  name: Type.String(),
  permissions: Permissions,
  created_at: Type.Integer(),
});

export const RoleInput = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  permissions: Permissions,
});
export const RolePatch = Type.Partial(RoleInput);

export const MemberPatch = Type.Object({
  role_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description: 'A role of the team, or null for the default member permissions',
  }),
});

export const InvitationInput = Type.Object({
  email: Type.String({ format: 'email', maxLength: 320 }),
  role_id: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()])),
});

export const InvitationOut = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role_id: Nullable(Type.String()),
  created_at: Type.Integer(),
  expires_at: Type.Integer(),
});

export const PersonParams = Type.Object({ team_id: Type.String(), account_id: Type.String() });
export const RoleParams = Type.Object({ team_id: Type.String(), role_id: Type.String() });
export const InvitationParams = Type.Object({ team_id: Type.String(), invitation_id: Type.String() });
