import { AppError, invalid, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { dropNulls } from '../domain/schema.js';
import {
  type EmbeddedStep,
  findStep,
  LIMITS,
  normalizeStep,
  REQUIRED_STEP_FIELDS,
  type Step,
  StepInput,
} from '../domain/steps.js';
import { stepsRepo } from '../store/repositories/steps.js';
import type { Actor, Principal } from './principal.js';
import { stepIdAllocator, type TestAggregate, type TestService } from './tests.js';
import { assertValid } from './validation.js';

/** One element of a reorder body (spec 4.3): a step id, or a condition with its embedded step ids. */
export type OrderEntry = string | { id: string; steps: string[] };

/**
 * Builds the new step list from a reorder body. Every step id of the test must appear exactly once;
 * embedded steps may move into and out of conditions, but a condition cannot sit in a condition.
 */
export function reorderSteps(current: readonly Step[], order: readonly OrderEntry[]): Step[] {
  const byId = new Map<string, Step>();
  for (const step of current) {
    byId.set(step.id, step);
    if (step.step_type === 'condition') for (const inner of step.steps) byId.set(inner.id, inner);
  }
  const seen = new Set<string>();
  const unknown: string[] = [];
  const duplicate: string[] = [];
  const take = (id: string): Step | undefined => {
    if (seen.has(id)) duplicate.push(id);
    seen.add(id);
    const step = byId.get(id);
    if (!step) unknown.push(id);
    return step;
  };

  const result: Step[] = [];
  for (const [index, entry] of order.entries()) {
    const id = typeof entry === 'string' ? entry : entry.id;
    const step = take(id);
    if (!step) continue;
    if (typeof entry === 'string') {
      result.push(step.step_type === 'condition' ? { ...step, steps: [] } : step);
      continue;
    }
    if (step.step_type !== 'condition')
      throw invalid(`/${index}`, `gives embedded steps for ${id}, which is not a condition step`);
    const inner: EmbeddedStep[] = [];
    for (const [j, innerId] of entry.steps.entries()) {
      const innerStep = take(innerId);
      if (!innerStep) continue;
      if (innerStep.step_type === 'condition') {
        throw invalid(
          `/${index}/steps/${j}`,
          `places condition step ${innerId} inside a condition; conditions cannot nest`,
        );
      }
      inner.push(innerStep);
    }
    result.push({ ...step, steps: inner });
  }
  const missing = [...byId.keys()].filter((id) => !seen.has(id));
  const problems: string[] = [];
  if (missing.length) problems.push(`missing step ids ${missing.join(', ')}`);
  if (unknown.length) problems.push(`unknown step ids ${unknown.join(', ')}`);
  if (duplicate.length) problems.push(`duplicate step ids ${duplicate.join(', ')}`);
  if (problems.length) {
    throw new AppError(
      'validation_failed',
      `The new order must name every step of the test exactly once: ${problems.join('; ')}`,
      '/',
    );
  }
  return result;
}

function checkCount(steps: readonly Step[]): void {
  if (steps.length > LIMITS.stepsPerTest) {
    throw new AppError('limit_reached', `A test holds at most ${LIMITS.stepsPerTest} steps`);
  }
}

export class StepService {
  constructor(private readonly deps: { tests: TestService }) {}

  /** Adds a step at the end of the test (spec 4.3). */
  add(actor: Actor, bucketKey: string, testId: string, input: StepInput): Promise<TestAggregate> {
    return this.deps.tests.edit(actor, bucketKey, testId, async ({ trx, aggregate }) => {
      const steps = [...aggregate.steps, normalizeStep(input, () => newId())];
      checkCount(steps);
      await stepsRepo.replaceAll(trx, testId, steps);
    });
  }

  reorder(
    actor: Actor,
    bucketKey: string,
    testId: string,
    order: readonly OrderEntry[],
  ): Promise<TestAggregate> {
    return this.deps.tests.edit(actor, bucketKey, testId, async ({ trx, aggregate }) => {
      const steps = reorderSteps(aggregate.steps, order);
      checkCount(steps);
      await stepsRepo.replaceAll(trx, testId, steps);
    });
  }

  async list(principal: Principal, bucketKey: string, testId: string): Promise<Step[]> {
    return (await this.deps.tests.get(principal, bucketKey, testId)).steps;
  }

  async get(principal: Principal, bucketKey: string, testId: string, stepId: string): Promise<Step> {
    const aggregate = await this.deps.tests.get(principal, bucketKey, testId);
    const step = findStep(aggregate.steps, stepId);
    if (!step) throw notFound(`Step ${stepId}`);
    return step;
  }

  /**
   * Changes the properties given; the merged step is validated as a whole. The step type cannot change.
   * For a condition, `steps` replaces its embedded steps (ids of its own embedded steps are kept).
   * A property given as null is left unchanged. Answers the updated step.
   */
  async update(
    actor: Actor,
    bucketKey: string,
    testId: string,
    stepId: string,
    body: Record<string, unknown>,
  ): Promise<Step> {
    const aggregate = await this.deps.tests.edit(actor, bucketKey, testId, async ({ trx, aggregate }) => {
      const current = findStep(aggregate.steps, stepId);
      if (!current) throw notFound(`Step ${stepId}`);
      // null leaves an optional property as it is; a null step type or required field is refused below.
      const required = REQUIRED_STEP_FIELDS[current.step_type];
      const patch = dropNulls(
        body,
        Object.keys(body).filter((key) => key !== 'step_type' && !required.includes(key)),
      );
      if (patch.step_type !== undefined && patch.step_type !== current.step_type) {
        throw invalid(
          '/step_type',
          `cannot change from ${current.step_type}; delete the step and add a new one`,
        );
      }
      const merged = { ...current, ...patch, id: stepId, step_type: current.step_type };
      assertValid<StepInput>(StepInput, merged);
      // Embedded steps given for a condition keep their ids when they are already its own; others are new.
      const own = new Set(current.step_type === 'condition' ? current.steps.map((s) => s.id) : []);
      const allocateInner = stepIdAllocator(own);
      const updated = normalizeStep(merged, (input) => (input === merged ? stepId : allocateInner(input)));
      const replace = (step: Step): Step => (step.id === stepId ? updated : step);
      const steps = aggregate.steps.map((step) =>
        step.step_type === 'condition' && step.id !== stepId
          ? { ...step, steps: step.steps.map((inner) => replace(inner) as EmbeddedStep) }
          : replace(step),
      );
      await stepsRepo.replaceAll(trx, testId, steps);
    });
    return findStep(aggregate.steps, stepId)!;
  }

  /** Deletes a step; deleting a condition deletes its embedded steps with it. */
  delete(actor: Actor, bucketKey: string, testId: string, stepId: string): Promise<TestAggregate> {
    return this.deps.tests.edit(actor, bucketKey, testId, async ({ trx, aggregate }) => {
      if (!findStep(aggregate.steps, stepId)) throw notFound(`Step ${stepId}`);
      const steps = aggregate.steps
        .filter((s) => s.id !== stepId)
        .map((s) =>
          s.step_type === 'condition' ? { ...s, steps: s.steps.filter((inner) => inner.id !== stepId) } : s,
        );
      await stepsRepo.replaceAll(trx, testId, steps);
    });
  }
}
