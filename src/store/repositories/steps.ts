import type { EmbeddedStep, Step } from '../../domain/steps.js';
import type { StepRow } from '../database.js';
import { preparedQuery } from '../prepared.js';
import type { Executor } from '../store.js';

type StepBody = Record<string, unknown>;

function toRow(
  step: Step | EmbeddedStep,
  testId: string,
  parentId: string | null,
  position: number,
): StepRow {
  const { id, step_type, ...rest } = step;
  const body: StepBody = rest;
  if (step.step_type === 'condition') delete body.steps;
  return { id, test_id: testId, parent_id: parentId, position, step_type, body: JSON.stringify(body) };
}

function fromRow(row: StepRow): Step {
  const body = JSON.parse(row.body) as StepBody;
  const step = { id: row.id, step_type: row.step_type, ...body } as Step;
  if (step.step_type === 'condition') step.steps = [];
  return step;
}

/** Builds the step tree from rows ordered by position: top-level steps with their embedded steps. */
export function assembleSteps(rows: readonly StepRow[]): Step[] {
  const top: Step[] = [];
  const conditions = new Map<string, Step>();
  const embedded: StepRow[] = [];
  for (const row of rows) {
    if (row.parent_id !== null) {
      embedded.push(row);
      continue;
    }
    const step = fromRow(row);
    top.push(step);
    if (step.step_type === 'condition') conditions.set(step.id, step);
  }
  for (const row of embedded) {
    const parent = conditions.get(row.parent_id!);
    if (parent?.step_type === 'condition') parent.steps.push(fromRow(row) as EmbeddedStep);
  }
  return top;
}

const stepsOfTest = preparedQuery<{ testId: string }, StepRow>(['testId'], (db, p) =>
  db.selectFrom('steps').selectAll().where('test_id', '=', p.testId).orderBy('position'),
);

export const stepsRepo = {
  async forTest(db: Executor, testId: string): Promise<Step[]> {
    return assembleSteps(await stepsOfTest(db, { testId }));
  },

  /** Replaces the test's whole step list; callers run it inside the transaction of the change. */
  async replaceAll(db: Executor, testId: string, steps: readonly Step[]): Promise<void> {
    await db.deleteFrom('steps').where('test_id', '=', testId).execute();
    await stepsRepo.insert(db, testId, steps);
  },

  /**
   * Writes the step list of a test that has none yet; answers the rows written, ordered by position
   * as `forTest` reads them back (`assembleSteps` turns them into the same steps).
   */
  async insert(db: Executor, testId: string, steps: readonly Step[]): Promise<StepRow[]> {
    const rows: StepRow[] = [];
    let position = 0;
    for (const step of steps) {
      rows.push(toRow(step, testId, null, position++));
      if (step.step_type === 'condition') {
        for (const inner of step.steps) rows.push(toRow(inner, testId, step.id, position++));
      }
    }
    // Chunked so that long step lists stay under every dialect's bound-parameter limit.
    for (let i = 0; i < rows.length; i += 100) {
      await db
        .insertInto('steps')
        .values(rows.slice(i, i + 100))
        .execute();
    }
    return rows;
  },
};
