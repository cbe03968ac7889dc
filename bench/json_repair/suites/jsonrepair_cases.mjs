// The repairs `jsonrepair`'s own test suite expects, as JSON lines of
// {"suite", "group", "input", "expected"} on stdout. Runs the suite's `src/index.test.ts`
// (from the checkout given as the first argument, type-stripped by esbuild) with
// stand-ins for vitest and for jsonrepair itself: `expect(jsonrepair(input)).toBe(out)`
// records the pair instead of checking it. Only the regular implementation is walked
// (the suite repeats every case for its streaming one). Driven by run.sh.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(`${process.env.ORACLE_DIR}/npm/`);
const esbuild = require('esbuild');
const source = readFileSync(`${process.argv[2]}/src/index.test.ts`, 'utf8');
const { code } = esbuild.transformSync(source, { loader: 'ts', format: 'cjs' });

const titles = [];
let group = '';
const cases = [];

class Repaired {
  constructor(input) {
    this.input = input;
  }
}
const record = (actual, expected) => {
  if (actual instanceof Repaired && typeof expected === 'string') {
    cases.push({ suite: 'jsonrepair', group, input: actual.input, expected });
  }
};
const expect = (actual) => ({
  toBe: (expected) => record(actual, expected),
  toEqual: (expected) => record(actual, expected),
  toStrictEqual: (expected) => record(actual, expected),
  toThrow: () => {},
  not: { toBe: () => {}, toEqual: () => {} },
});
const describe = (title, body) => {
  titles.push(title);
  body();
  titles.pop();
};
describe.each = (rows) => (title, body) => {
  const regular = rows.find((row) => row.name === 'regular') ?? rows[0];
  describe(title, () => body(regular));
};
const test = (title, body) => {
  group = [...titles.slice(1), title].join(' / ');
  try {
    body();
  } catch {
    // A test that uses the repaired text further (JSON.parse, a RegExp) stops there;
    // the pairs recorded before it stand.
  }
};
test.each = (rows) => (title, body) => rows.forEach((row) => test(title, () => body(row)));
const stubs = {
  vitest: { describe, expect, test, it: test },
  './index': { jsonrepair: (input) => new Repaired(input) },
  './regular/jsonrepair': { jsonrepair: (input) => new Repaired(input) },
  './streaming/core': { jsonrepairCore: () => ({ transform() {}, flush() {} }) },
  './utils/JSONRepairError': { JSONRepairError: class extends Error {} },
};
const module = { exports: {} };
new Function('require', 'module', 'exports', code)(
  (name) => {
    if (!(name in stubs)) throw new Error(`the suite imports ${name}`);
    return stubs[name];
  },
  module,
  module.exports,
);
for (const c of cases) process.stdout.write(`${JSON.stringify(c)}\n`);
