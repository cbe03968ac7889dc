// axe-core (every rule: experimental ones and WCAG's AAA ones too, so muted labels keep
// 7:1 contrast) on the release build, in light and dark, at 1280 and 360 px wide, in the states a person meets: idle after an answer,
// an approval pending, and Settings, History, the character loader and (narrow) the
// inspector panel open. No serious or critical violation is allowed.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { test, answer, openDemo, send, useDist } from './harness.mjs';

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
      await check('first load');
      await send(page, 'Remember that the ale is cold');
      await answer(page, 1);
      await check('idle after an answer');
      await send(page, 'Forget about the ale');
      await page.locator('.approval').waitFor();
      await check('approval pending');
      await page.locator('.approval .deny').click();
      await answer(page, 2);

      await page.getByRole('button', { name: 'Settings' }).click();
      await check('Settings open');
      await page.keyboard.press('Escape');
      await page.getByRole('button', { name: 'History' }).click();
      await check('History open');
      await page.keyboard.press('Escape');
      await page.locator('.character-select').selectOption('load-character');
      await page.locator('.character-loader').waitFor();
      await check('loader open');
      await page.keyboard.press('Escape');
      if (width <= 900) {
        await page.getByRole('button', { name: 'Inspector' }).click();
        await check('inspector panel open');
        await page.keyboard.press('Escape');
      }
      assert.deepEqual(found, {});
      assert.deepEqual(problems, []);
    });
  }
}
