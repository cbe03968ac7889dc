// The `jsonrepair` npm package over a JSON array of inputs on stdin; prints one JSON
// array of outcomes like corpus.rs. Its path comes from ORACLE_DIR (set by run.sh).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(`${process.env.ORACLE_DIR}/npm/`);
const { jsonrepair } = require('jsonrepair');
const cases = JSON.parse(readFileSync(0, 'utf8'));
const outcomes = cases.map((text) => {
  try {
    return { ok: jsonrepair(text) };
  } catch (error) {
    return { error: String(error.message) };
  }
});
process.stdout.write(JSON.stringify(outcomes));
