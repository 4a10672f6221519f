import type { FastifyInstance, FastifyRequest } from 'fastify';
import { permissionFor } from '../../domain/permissions.js';
import type { TeamService } from '../../services/teams.js';

/** The team a request acts in: named by `:team_id`, by `:bucket_key`, or for a new bucket by its team reference. */
function targetOf(
  request: FastifyRequest,
): { bucketKey?: string; teamId?: string; defaultTeam?: true } | null {
  const params = (request.params ?? {}) as Record<string, unknown>;
  if (typeof params.team_id === 'string') return { teamId: params.team_id };
  if (typeof params.bucket_key === 'string') return { bucketKey: params.bucket_key };
  if (request.method === 'POST' && request.routeOptions.url === '/buckets') {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const query = (request.query ?? {}) as Record<string, unknown>;
    const team = body.team_uuid ?? body.team_id ?? query.team_uuid;
    // No team named: the bucket goes to the caller's first team, whose role is checked.
    return typeof team === 'string' ? { teamId: team } : { defaultTeam: true };
  }
  return null;
}

/**
 * Team roles on every route (docs/teams.md): before a handler runs, the caller's role in the team the
 * request acts in must hold the permission the route needs (reads `view`; writes by resource).
 * Requests outside any team (the account, applications, regions) need none.
 */
export function registerPermissions(app: FastifyInstance, teams: TeamService): void {
  app.addHook('preHandler', async (request) => {
    if (!request.principal) return;
    const target = targetOf(request);
    if (!target) return;
    await teams.checkRequest(
      request.principal,
      target,
      permissionFor(request.method, request.routeOptions.url ?? ''),
    );
  });
}
