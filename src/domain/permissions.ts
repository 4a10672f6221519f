/**
 * What a team member may do (docs/teams.md). Owners hold every permission; a member without a role
 * holds every one but `manage_team`; a member with a role holds exactly the role's.
 */
export const PERMISSIONS = [
  'view',
  'edit_tests',
  'manage_environments',
  'manage_buckets',
  'manage_team',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const MEMBER_PERMISSIONS: readonly Permission[] = PERMISSIONS.filter((p) => p !== 'manage_team');

/**
 * The permission a request needs, from its method and route pattern: reads need `view`; writes of
 * environments `manage_environments`; of tests, steps, schedules, maintenance windows, runs and
 * revisions `edit_tests`;
 * of a team's people, roles, invitations, integrations and agents `manage_team`; every other write in
 * a bucket (the bucket itself, messages, views, its signing secret) `manage_buckets`.
 */
export function permissionFor(method: string, route: string): Permission {
  if (method === 'GET' || method === 'HEAD') return 'view';
  if (route.startsWith('/teams/')) return 'manage_team';
  if (/\/environments(\/|$)/.test(route)) return 'manage_environments';
  if (/^\/buckets\/:bucket_key\/(tests|radar|maintenance_windows)(\/|$)/.test(route)) return 'edit_tests';
  return 'manage_buckets';
}
