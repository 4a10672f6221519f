import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the evolving Database type
export async function up(db: Kysely<any>): Promise<void> {
  // A capture is answered by the service itself: a received request, never in the error view. Those
  // stored before the service kept its answer have no response and stay so (docs/capture.md).
  await db.updateTable('messages').set({ is_error: 0 }).where('source', '=', 'capture').execute();
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see up()
export async function down(db: Kysely<any>): Promise<void> {
  await db
    .updateTable('messages')
    .set({ is_error: 1 })
    .where('source', '=', 'capture')
    .where((eb) => eb.or([eb('response_status', 'is', null), eb('response_status', '>=', 400)]))
    .execute();
}
