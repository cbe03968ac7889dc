// The one-tag assistant inside a page's focus trap (issue 57, class 5). Pages built from
// the modal libraries as npm publishes them (their dist files served from node_modules,
// unedited): focus-trap (its container an `aria-modal` dialog; and, with isolateSubtrees,
// a plain container in a portal with everything else made inert, the assistant's host
// included), Bootstrap 5's modal, a11y-dialog and micromodal. With the library's modal
// open, a person opens the assistant, types a question with the keyboard, presses Enter
// and reads the scripted model's answer: the trap must not take the focus or the typing
// from the assistant, nor refuse the presses on it. Then the person closes the assistant
// with Escape, which the modal does not hear, and the modal works as before: the focus is
// in it (on the launcher, the modal's first child while it is open), Tab stays in it,
// Escape closes it, and the assistant goes back to the page's body.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test, useDist, watch } from './harness.mjs';

const ANSWER = 'This page edits your profile.';
const TAG = '<script src="/pkg-page/assistant.js" data-model-url="/script/v1" data-model="scripted" data-stream="false" defer></script>';

const page = (title, head, body) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title><link rel="icon" href="data:,">${head}</head>
<body>
  <main>
    <h1>Your account</h1>
    <p>Keep your profile up to date.</p>
    <button id="outside" type="button">Outside the modal</button>
  </main>
  ${body}
  <footer><a href="#top">Back to top</a></footer>
  ${TAG}
</body></html>`;

/** The modal's form, the same in each library's markup. */
const form = `<label for="name">Name</label> <input id="name" value="Ada">
  <label for="email">Email</label> <input id="email" type="email" value="ada@example.com">`;

/**
 * A page whose modal focus-trap traps (made when it opens, as libraries on it do): its
 * container's `attributes`, the trap's `options`, and the container inside a portal
 * element or not.
 */
const focusTrapPage = (title, attributes, options, portal) => page(title, '<style>[hidden] { display: none !important; }</style>', `
  <button id="open" type="button">Edit profile</button>
  ${portal ? '<div id="portal">' : ''}<div id="modal" ${attributes} hidden>
    <h2 id="modal-title">Edit profile</h2>
    <div class="fields">${form}</div>
    <button id="save" type="button">Save</button> <button id="cancel" type="button">Cancel</button>
  </div>${portal ? '</div>' : ''}
  <script src="/npm/tabbable/dist/index.umd.js"></script>
  <script src="/npm/focus-trap/dist/focus-trap.umd.js"></script>
  <script>
    const modal = document.getElementById('modal');
    let trap;
    document.getElementById('open').addEventListener('click', () => {
      modal.hidden = false;
      trap = focusTrap.createFocusTrap(modal, { ...${options}, onDeactivate: () => { modal.hidden = true; } });
      trap.activate();
    });
    document.getElementById('cancel').addEventListener('click', () => trap.deactivate());
  </script>`);

const fixtures = {
  'focus-trap': {
    page: focusTrapPage('focus-trap', 'role="dialog" aria-modal="true" aria-labelledby="modal-title"', '{}', false),
    modal: '#modal',
  },
  'focus-trap, a plain container': {
    page: focusTrapPage('focus-trap plain', 'class="drawer"', '{}', false),
    modal: '#modal',
  },
  'focus-trap, the rest made inert': {
    page: focusTrapPage('focus-trap isolated', 'role="dialog" aria-labelledby="modal-title"', "{ isolateSubtrees: 'inert' }", true),
    modal: '#modal',
    // What focus-trap made inert, and stays so: the assistant never takes it off.
    inert: ['main', '#open', 'footer'],
  },
  bootstrap: {
    page: page('Bootstrap', '<link rel="stylesheet" href="/npm/bootstrap/dist/css/bootstrap.min.css">', `
  <button id="open" type="button" class="btn btn-primary" data-bs-toggle="modal" data-bs-target="#modal">Edit profile</button>
  <div class="modal fade" id="modal" tabindex="-1" aria-labelledby="modal-title" aria-hidden="true">
    <div class="modal-dialog"><div class="modal-content">
      <div class="modal-header">
        <h1 class="modal-title fs-5" id="modal-title">Edit profile</h1>
        <button type="button" class="btn-close" data-bs-dismiss="modal" aria-label="Close"></button>
      </div>
      <div class="modal-body">${form.replaceAll('<input', '<input class="form-control"')}</div>
      <div class="modal-footer">
        <button type="button" class="btn btn-secondary" data-bs-dismiss="modal">Cancel</button>
        <button type="button" class="btn btn-primary">Save</button>
      </div>
    </div></div>
  </div>
  <script src="/npm/bootstrap/dist/js/bootstrap.bundle.min.js"></script>`),
    modal: '#modal',
  },
  'a11y-dialog': {
    page: page('a11y-dialog', `<style>
    .dialog[aria-hidden="true"] { display: none; }
    .dialog { position: fixed; inset: 0; z-index: 2; display: flex; }
    .dialog-overlay { position: fixed; inset: 0; background: rgb(0 0 0 / 40%); }
    .dialog-content { position: relative; margin: auto; background: #fff; padding: 1em; }
  </style>`, `
  <button id="open" type="button" data-a11y-dialog-show="modal">Edit profile</button>
  <div class="dialog" id="modal" data-a11y-dialog="modal" aria-labelledby="modal-title" aria-hidden="true">
    <div class="dialog-overlay" data-a11y-dialog-hide></div>
    <div class="dialog-content" role="document">
      <button type="button" data-a11y-dialog-hide aria-label="Close">×</button>
      <h2 id="modal-title">Edit profile</h2>
      ${form}
      <button type="button">Save</button>
    </div>
  </div>
  <script src="/npm/a11y-dialog/dist/a11y-dialog.min.js"></script>`),
    modal: '#modal',
  },
  micromodal: {
    page: page('micromodal', `<style>
    .modal { display: none; }
    .modal.is-open { display: block; }
    .modal__overlay { position: fixed; inset: 0; background: rgb(0 0 0 / 60%); display: flex; justify-content: center; align-items: center; }
    .modal__container { background: #fff; padding: 30px; }
  </style>`, `
  <button id="open" type="button" data-micromodal-trigger="modal">Edit profile</button>
  <div class="modal" id="modal" aria-hidden="true">
    <div class="modal__overlay" tabindex="-1" data-micromodal-close>
      <div class="modal__container" role="dialog" aria-modal="true" aria-labelledby="modal-title">
        <h2 id="modal-title">Edit profile</h2>
        <button type="button" aria-label="Close" data-micromodal-close>×</button>
        ${form}
        <button type="button">Save</button> <button type="button" data-micromodal-close>Cancel</button>
      </div>
    </div>
  </div>
  <script src="/npm/micromodal/dist/micromodal.min.js"></script>
  <script>MicroModal.init();</script>`),
    modal: '#modal',
  },
};

const modules = resolve(fileURLToPath(new URL('..', import.meta.url)), 'node_modules');
const env = useDist({
  pages: Object.fromEntries(Object.entries(fixtures).map(([name, f]) => [`/${slug(name)}.html`, f.page])),
  mounts: { '/npm/': modules },
  scripted: () => ({ role: 'assistant', content: ANSWER }),
});

function slug(name) {
  return name.replace(/[^a-z0-9]+/gi, '-');
}

// Playwright's locators do not enter closed shadow roots: the widget's is opened (as
// e2e/assistant.test.mjs does), for Playwright's own isolated world only. The page's
// scripts still find no `shadowRoot` on its host, as with the closed root it ships with
// (focus-trap reads an open root's innermost target, which a closed one hides); the test
// reads it from `__assistantRoot`.
function openRoots() {
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function attachOpen(init) {
    const root = attach.call(this, { ...init, mode: 'open' });
    Object.defineProperty(this, 'shadowRoot', { get: () => null });
    window.__assistantRoot = root;
    return root;
  };
}

/** Where the focus is: the page's element (its id or tag), and inside the assistant which. */
const focusOf = (tab, modal) => tab.evaluate((selector) => {
  const active = document.activeElement;
  const inner = active?.id === 'familiar-page-assistant' ? window.__assistantRoot.activeElement : null;
  return {
    inModal: !!document.querySelector(selector)?.contains(active),
    at: active?.id || active?.tagName,
    inner: inner ? inner.tagName : null,
  };
}, modal);

const modalShown = (tab, modal) => tab.locator(modal).evaluate((e) =>
  e.checkVisibility() && e.getAttribute('aria-hidden') !== 'true');

/** A tab on `name`'s page, closed with `t`; `problems` as harness.watch collects them. */
async function openTab(t, name) {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const tab = await context.newPage();
  const problems = await watch(tab, env);
  await tab.addInitScript(openRoots);
  await tab.goto(`${env.server.url}${slug(name)}.html`);
  return { tab, problems };
}

/** The page's modal, opened as a person does; its library puts the focus in it. */
async function openModal(tab, { modal }) {
  await tab.getByRole('button', { name: 'Edit profile' }).click();
  await tab.waitForFunction((selector) => document.querySelector(selector).contains(document.activeElement), modal);
  assert.equal(await modalShown(tab, modal), true);
}

/** The person opens the assistant and waits for it to be ready. */
async function openAssistant(tab) {
  await tab.getByRole('button', { name: 'Page assistant' }).click();
  const panel = tab.getByRole('dialog', { name: 'Page assistant' });
  await panel.getByText(/actions on the page ask you first/).waitFor({ timeout: 30_000 });
  return panel;
}

/**
 * With the page's modal open, the person clicks into the assistant, types a question,
 * sends it with Enter and reads the answer; then closes the assistant with Escape.
 */
async function askAndClose(tab, panel, { modal, inert = [] }) {
  const box = panel.getByRole('textbox', { name: 'Ask about this page' });
  await box.click();
  const question = 'What is this page for?';
  await tab.keyboard.type(question);
  assert.equal(await box.inputValue(), question, 'the typing reached the assistant');
  assert.deepEqual(await focusOf(tab, modal), { inModal: true, at: 'familiar-page-assistant', inner: 'TEXTAREA' },
    'the assistant, in the modal, keeps the focus');
  await tab.keyboard.press('Enter');
  await panel.locator('.msg.assistant', { hasText: ANSWER }).waitFor({ timeout: 30_000 });
  assert.equal(await panel.locator('.msg.user').last().innerText(), question);
  assert.equal(await modalShown(tab, modal), true, 'the modal stayed open');
  for (const selector of inert) assert.equal(await tab.locator(selector).evaluate((e) => e.inert), true, `${selector} is inert still`);

  await tab.keyboard.press('Escape');
  await panel.waitFor({ state: 'hidden' });
  assert.equal(await modalShown(tab, modal), true, "Escape in the assistant left the page's modal open");
  assert.deepEqual(await focusOf(tab, modal), { inModal: true, at: 'familiar-page-assistant', inner: 'BUTTON' },
    'the focus is on the launcher, in the modal');
}

/** The modal's own trap still holds the focus, and Escape still closes it. */
async function modalStillWorks(tab, { modal }) {
  for (let i = 0; i < 6; i += 1) {
    await tab.keyboard.press('Tab');
    const now = await focusOf(tab, modal);
    assert.equal(now.inModal, true, `Tab ${i + 1} left the modal for ${now.at}`);
  }
  await tab.keyboard.press('Escape');
  await tab.waitForFunction((selector) => {
    const element = document.querySelector(selector);
    return !element.checkVisibility() || element.getAttribute('aria-hidden') === 'true';
  }, modal);
  await tab.waitForFunction(() => document.getElementById('familiar-page-assistant')?.parentNode === document.body);
  assert.equal(await tab.locator('[inert]').count(), 0, 'nothing is left inert');
}

for (const [name, fixture] of Object.entries(fixtures)) {
  test(`in ${name}'s modal, a person opens the assistant, asks and gets its answer; the modal works after`, async (t) => {
    const { tab, problems } = await openTab(t, name);
    await openModal(tab, fixture);
    const panel = await openAssistant(tab);
    await askAndClose(tab, panel, fixture);
    await modalStillWorks(tab, fixture);
    assert.deepEqual(problems, []);
  });

  test(`with the assistant open when ${name}'s modal opens, a person asks it and gets its answer; the modal works after`, async (t) => {
    const { tab, problems } = await openTab(t, name);
    const panel = await openAssistant(tab);
    await openModal(tab, fixture);
    await askAndClose(tab, panel, fixture);
    await modalStillWorks(tab, fixture);
    assert.deepEqual(problems, []);
  });
}
