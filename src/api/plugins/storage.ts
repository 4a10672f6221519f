import type { FastifyInstance } from 'fastify';
import { StorageFull } from '../../domain/errors.js';
import type { StoragePort } from '../context.js';

/** Methods whose requests add data. DELETE is never refused: it is how a full store is emptied. */
const ADDING = new Set(['POST', 'PUT', 'PATCH']);
/** Signing in and out writes a session row at most; a full store must stay reachable to be emptied. */
const SESSION_PATHS = /^\/signin(\/|$|\?)|^\/signout(\/|$|\?)/;

/**
 * A store that cannot take writes (disk below MIN_FREE_DISK, or opened read-only) answers 507
 * `storage_full` to every request that adds data, before any of it is written; reads and deletes go
 * on. (Message recording and run starts check too, for the URLs that write on GET.)
 */
export function registerStorageGuard(
  app: FastifyInstance,
  storage: Pick<StoragePort, 'writeBlocker'>,
  /** `all`: every request adds data (the traffic origin records each one, GET included). */
  methods: 'adding' | 'all' = 'adding',
): void {
  app.addHook('onRequest', async (request) => {
    if (methods === 'adding' && (!ADDING.has(request.method) || SESSION_PATHS.test(request.url))) return;
    const blocker = await storage.writeBlocker();
    if (blocker) throw new StorageFull(`Storage is full: ${blocker}`);
  });
}
