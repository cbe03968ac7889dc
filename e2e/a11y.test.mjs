// axe-core (every rule: experimental ones and WCAG's AAA ones too, so muted labels keep
// 7:1 contrast) on the release build, in light and dark, at 1280 and 360 px wide, in
// every state the e2e suite visits: the chat empty, a turn with its steps open, an
// approval waiting, Settings, History, the World (and a resident's request waiting on
// her card), the Guild, "Talk to" asking before a new conversation, the character
// loader, the inspector (beside the chat when wide, its panel when narrow) and, at 360,
// the top bar's menu open (there is none at 1280). No serious or critical violation is allowed.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { test, answer, openDemo, send, topBar, useDist } from './harness.mjs';

const env = useDist();
const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The serious and critical violations axe finds in the page as it is now. */
async function audit(page) {
  // Evaluated through the DevTools protocol, not a <script>: the page's CSP stays whole.
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const rules = Object.fromEntries(window.axe.getRules().map((r) => [r.ruleId, { enabled: true }]));
    const result = await window.axe.run(document, { rules, resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary.split('\n').slice(1).join(' ').trim()}`),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

for (const colorScheme of ['light', 'dark']) {
  for (const width of [1280, 360]) {
    test(`axe finds no serious or critical violation (${colorScheme}, ${width} px)`, async (t) => {
      const { page, problems } = await openDemo(env, t, { viewport: { width, height: width > 900 ? 800 : 740 }, colorScheme });
      const found = {};
      const check = async (state) => {
        await page.waitForTimeout(150);
        const violations = await audit(page);
        if (violations.length) found[state] = violations;
      };
      await check('chat empty');
      await send(page, 'Remember that the ale is cold');
      await answer(page, 1);
      await page.locator('.turn .steps-summary').first().click();
      await page.locator('.turn .step-list').first().waitFor();
      await check('a turn with its steps open');
      await send(page, 'Forget about the ale');
      await page.locator('.approval').waitFor();
      await check('approval waiting');
      await page.locator('.approval .deny').click();
      await answer(page, 2);

      // Each panel of the top bar, opened as a person would at this width, and the
      // inspector: beside the chat when wide (audited in every state above), a panel
      // when narrow.
      const panels = [
        ['Settings', 'form.settings', 'form.settings fieldset'],
        ['History', 'section.conversations', 'section.conversations li'],
        ['World', 'section.world', 'section.world .world-agent'],
        ['Guild', 'section.guild', 'section.guild .guild-resource'],
      ];
      if (width <= 900) panels.push(['Inspector', '.inspector.open', '.inspector.open h2']);
      for (const [name, panel, drawn] of panels) {
        await topBar(page, name);
        await page.locator(drawn).first().waitFor();
        // Opened, the panel takes focus (then Escape closes it).
        await page.waitForFunction((s) => document.activeElement?.closest(s) !== null, panel, { timeout: 10_000 });
        await check(`${name} open`);
        await page.keyboard.press('Escape');
        await page.locator(panel).waitFor({ state: 'detached' });
      }
      if (width <= 900) {
        await page.getByRole('button', { name: 'Menu', exact: true }).click();
        await page.locator('.top-menu.open').waitFor();
        await check('the top bar\'s menu open');
        await page.keyboard.press('Escape');
      }
      // A resident's request waiting on her World card.
      await topBar(page, 'World');
      const dotty = page.locator('.world-agent[data-agent="Dotty"]');
      await dotty.locator('.say-hi').click();
      await dotty.locator('.agent-asks').waitFor({ timeout: 20_000 });
      await check('a resident\'s request waiting in the World');
      await page.keyboard.press('Escape');
      await page.locator('section.world').waitFor({ state: 'detached' });
      // Someone else chosen mid-conversation: "Talk to" asks before it starts anew.
      await page.locator('.character-select').selectOption('dotty');
      await page.locator('.talk-to-confirm').waitFor();
      await check('"Talk to" asking to start a new conversation');
      await page.locator('.keep-talking').click();
      await page.locator('.character-select').selectOption('load-character');
      await page.locator('.character-loader').waitFor();
      await check('loader open');
      await page.keyboard.press('Escape');
      assert.deepEqual(found, {});
      assert.deepEqual(problems, []);
    });
  }
}
