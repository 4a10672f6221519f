import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { type Dashboard, skipReason, startDashboard, USER } from './harness.js';

/**
 * The Team section of the account pages: an owner sees the members, adds a role, invites someone by
 * e-mail (the invitation lands in the outbox), gives no one a wrong role and revokes the invitation.
 */
describe('Dashboard team page', { skip: skipReason() }, () => {
  let dash: Dashboard;
  let context: BrowserContext;
  let page: Page;
  let teamId = '';

  before(async () => {
    dash = await startDashboard();
    teamId = (await dash.api<{ teams: { id: string }[] }>('GET', '/account')).data.teams[0]!.id;
    ({ context, page } = await dash.signedIn());
    page.on('dialog', (dialog) => void dialog.accept());
  });

  after(async () => {
    await context?.close();
    await dash?.close();
  });

  test('members, a new role, an invitation by e-mail and its revocation', async () => {
    await page.goto(`${dash.base}/app/account/team`);
    const members = page.getByTestId('members-table');
    await members.getByText(USER.name).waitFor();
    await members.getByText('Owners').waitFor();

    await page.getByLabel('Role name').fill('Readers');
    await page.getByRole('button', { name: 'Add role' }).click();
    await page.getByText('The role Readers was added.').waitFor();
    await page.getByTestId('roles-list').getByText('Readers').waitFor();
    const roles = await dash.api<{ name: string; permissions: string[] }[]>('GET', `/teams/${teamId}/roles`);
    assert.deepEqual(
      roles.data.map((r) => [r.name, r.permissions]),
      [['Readers', ['view']]],
    );

    const invite = page.getByTestId('invite-form');
    await invite.getByLabel('E-mail address').fill('new.person@example.com');
    await invite.getByLabel('Role').selectOption({ label: 'Readers' });
    await invite.getByRole('button', { name: /Invite to/ }).click();
    await page.getByText('An invitation was sent to new.person@example.com.').waitFor();
    await page.getByTestId('invitations-list').getByText('new.person@example.com').waitFor();
    const outbox = await dash.api<{ subject: string; text: string }[]>('GET', '/account/outbox');
    assert.ok(
      outbox.data.some((m) => /\/invitations\/vgl_inv_/.test(m.text)),
      'the invitation mail is in the outbox',
    );
    await dash.checkA11y(page, 'team page');

    await page.getByRole('button', { name: 'Revoke the invitation of new.person@example.com' }).click();
    await page.getByText('The invitation of new.person@example.com was revoked.').waitFor();
    const open = await dash.api<unknown[]>('GET', `/teams/${teamId}/invitations`);
    assert.deepEqual(open.data, []);
  });
});
