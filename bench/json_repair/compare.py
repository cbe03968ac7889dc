"""Compares JSON repairers against the intended values of the corpus.

Reads tests/fixtures/json-repair/*.txt, repairs every input with Familiar's
`json::extract` (the `json_repair_corpus` example), the `jsonrepair` npm package and the
`json_repair` PyPI package, and prints per-class and total agreement with the intended
value. A refusal agrees only where the corpus says REFUSED. Run through run.sh, which
installs the two oracles in a temporary directory first.
"""

import glob
import json
import os
import subprocess
import sys

import json_repair

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fixtures", "json-repair")


def read_cases(path):
    """(input, intended) pairs; intended is None for REFUSED."""
    cases, mode, lines = [], None, []
    current = {}

    def flush():
        if mode == "input":
            current["input"] = "\n".join(lines)
        elif mode == "intended":
            text = "\n".join(lines).strip()
            current["refused"] = text == "REFUSED"
            current["intended"] = None if current["refused"] else json.loads(text)
            cases.append(dict(current))
            current.clear()

    with open(path, encoding="utf-8", newline="\n") as f:
        for line in f.read().split("\n"):
            if line in ("--- input", "--- intended"):
                flush()
                mode, lines = line[4:], []
            else:
                lines.append(line)
    if lines and lines[-1] == "":
        lines.pop()
    flush()
    return cases


def run_json(command, inputs, **kwargs):
    done = subprocess.run(command, input=json.dumps(inputs), capture_output=True,
                          text=True, check=True, **kwargs)
    return json.loads(done.stdout)


def same(a, b):
    """Equal as JSON values: 1 and 1.0 alike, booleans never equal to numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def agrees(case, outcome):
    if "error" in outcome:
        return case["refused"]
    if case["refused"]:
        return False
    try:
        return same(json.loads(outcome["ok"]), case["intended"])
    except ValueError:
        return False


def python_oracle(text):
    try:
        return {"ok": json.dumps(json_repair.loads(text, skip_json_loads=False))}
    except Exception as error:  # the oracle raises several kinds
        return {"error": str(error)}


def main():
    classes = {}
    for path in sorted(glob.glob(os.path.join(CORPUS, "*.txt"))):
        classes[os.path.basename(path)[:-4]] = read_cases(path)
    inputs = [c["input"] for cases in classes.values() for c in cases]
    ours = run_json(["cargo", "run", "--quiet", "--example", "json_repair_corpus"], inputs, cwd=ROOT)
    npm = run_json(["node", os.path.join(ROOT, "bench", "json_repair", "oracle.mjs")], inputs)
    pypi = [python_oracle(text) for text in inputs]

    verbose = "-v" in sys.argv
    rows, totals, at = [], [0, 0, 0, 0], 0
    passthrough = [0, 0]
    print(f"{'class':<32}{'cases':>6}{'familiar':>10}{'jsonrepair':>12}{'json_repair':>13}")
    for name, cases in classes.items():
        scores = [0, 0, 0]
        for case in cases:
            for column, results in enumerate((ours, npm, pypi)):
                ok = agrees(case, results[at])
                scores[column] += ok
                if verbose and column == 0 and not ok:
                    print(f"  MISS {name}: {case['input']!r} -> {results[at]}")
            if name == "valid":
                passthrough[0] += 1
                passthrough[1] += ours[at].get("ok") == case["input"]
            at += 1
        n = len(cases)
        totals[0] += n
        for i in range(3):
            totals[i + 1] += scores[i]
        print(f"{name:<32}{n:>6}" + "".join(f"{s / n:>{w}.0%}" for s, w in zip(scores, (10, 12, 13))))
    n = totals[0]
    print(f"{'total':<32}{n:>6}" + "".join(f"{s / n:>{w}.1%}" for s, w in zip(totals[1:], (10, 12, 13))))
    print(f"valid JSON passed through byte-identical by familiar: {passthrough[1]}/{passthrough[0]}")


if __name__ == "__main__":
    main()
