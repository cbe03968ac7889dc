// What the e2e files that drive the one-tag assistant on a page of their own share:
// a tab on the page with the widget's shadow root opened for Playwright, the panel
// opened, a listing's element numbers, and a person clicking Allow on each card.
import assert from 'node:assert/strict';
import { settled, watch } from './harness.mjs';

/** Playwright's locators do not enter closed shadow roots: the widget's is opened. */
export function openRoots() {
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function attachOpen(init) {
    return attach.call(this, { ...init, mode: 'open' });
  };
}

/**
 * A tab of `env` (harness.mjs's `useDist`) on `path`, its problems watched; with the
 * assistant's panel open and ready unless `assistant` is false.
 */
export async function openPage(env, t, path, { assistant = true } = {}) {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const tab = await context.newPage();
  const problems = await watch(tab, env);
  await tab.addInitScript(openRoots);
  await tab.goto(`${env.server.url}${path}`);
  if (!assistant) return { tab, problems };
  await tab.getByRole('button', { name: 'Page assistant' }).click();
  const panel = tab.getByRole('dialog', { name: 'Page assistant' });
  await panel.getByText(/actions on the page ask you first/).waitFor({ timeout: 20_000 });
  return { tab, problems, panel };
}

/** The element numbered for `name` in a `page_elements` listing. */
export function numbered(listing, name) {
  const line = listing.find((l) => l.includes(`"${name}"`));
  if (!line) throw new Error(`no "${name}" in ${listing.join(' | ')}`);
  return Number(/\[(\d+)\]/.exec(line)[1]);
}

/**
 * Sends `text`, then clicks Allow on each card, with the mouse, until `done` holds;
 * resolves to the cards' texts.
 */
export async function allowEach(tab, panel, text, done) {
  const box = panel.getByRole('textbox', { name: 'Ask about this page' });
  await box.fill(text);
  await box.press('Enter');
  const allowed = [];
  const deadline = Date.now() + 30_000;
  while (!(await done())) {
    if (Date.now() >= deadline) {
      const chat = await panel.locator('.log').innerText();
      assert.fail(`done after allowing ${allowed.length}: ${allowed.join(' | ')}; the chat: ${chat}`);
    }
    const card = panel.getByRole('group', { name: 'Approval' }).first();
    if (await card.isVisible()) {
      allowed.push(await card.innerText());
      await card.getByRole('button', { name: 'Allow', exact: true }).click();
    }
    await tab.waitForTimeout(100);
  }
  await settled(tab);
  return allowed;
}
