import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ApiHarness, describeApi } from '../helpers/api.js';
import { goClient, providerStep as requestStep } from './client.js';

const providerStep = requestStep('https://example.org/health');

async function newTest(h: ApiHarness): Promise<{ id: string; steps: { id: string }[] }> {
  return goClient(h).data(
    'POST',
    `/buckets/${h.alice.bucketKey}/tests`,
    { name: 'steps', description: '' },
    201,
  );
}

for (const mode of ['spec', 'runscope'] as const) {
  await describeApi(
    `compat: step writes (API_COMPAT=${mode})`,
    (get) => {
      test(`POST …/steps answers ${mode === 'spec' ? 'the full test' : 'the step list'} (item 3)`, async () => {
        const h = get();
        const created = await newTest(h);
        const base = `/buckets/${h.alice.bucketKey}/tests/${created.id}/steps`;
        const data = await goClient(h).data('POST', base, providerStep, 201);
        const steps = mode === 'spec' ? data.steps : data;
        if (mode === 'spec') assert.equal(data.id, created.id);
        else assert.ok(Array.isArray(data));
        assert.equal(steps.length, 2);
        const added = steps[steps.length - 1];
        assert.equal(added.url, providerStep.url);
        assert.equal(added.note, 'health');
        assert.equal(added.id, (await goClient(h).data('GET', `${base}/${added.id}`, undefined, 200)).id);
      });

      test('PUT …/steps/<id> answers the step; GET …/steps lists them; null leaves a field as it was', async () => {
        const h = get();
        const client = goClient(h);
        const created = await newTest(h);
        const base = `/buckets/${h.alice.bucketKey}/tests/${created.id}/steps`;
        await client.data('POST', base, providerStep, 201);
        const list = await client.data('GET', base, undefined, 200);
        assert.equal(list.length, 2);
        const target = list[1];
        const step = await client.data(
          'PUT',
          `${base}/${target.id}`,
          { ...providerStep, id: target.id, url: 'https://example.org/v2', note: null, headers: null },
          200,
        );
        assert.equal(step.id, target.id);
        assert.equal(step.step_type, 'request');
        assert.equal(step.url, 'https://example.org/v2');
        assert.equal(step.note, 'health');
        assert.deepEqual(step.headers, { Accept: ['application/json'] });
        assert.equal((await client.send('DELETE', `${base}/${target.id}`)).status, 204);
        assert.equal((await client.data('GET', base, undefined, 200)).length, 1);
      });

      test('a pause step as the provider sends it (request fields empty)', async () => {
        const h = get();
        const created = await newTest(h);
        const base = `/buckets/${h.alice.bucketKey}/tests/${created.id}/steps`;
        const data = await goClient(h).data(
          'POST',
          base,
          {
            ...providerStep,
            step_type: 'pause',
            method: '',
            url: '',
            duration: 5,
            assertions: null,
            variables: null,
          },
          201,
        );
        const steps = mode === 'spec' ? data.steps : data;
        assert.deepEqual(Object.keys(steps[1]).sort(), ['duration', 'id', 'step_type']);
        assert.equal(steps[1].duration, 5);
      });
    },
    { env: { API_COMPAT: mode } },
  );
}
