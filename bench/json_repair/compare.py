"""Compares JSON repairers against intended values, on two sets of cases.

1. Our corpus, tests/fixtures/json-repair/*.txt: per class, the share of cases each
   repairer gets to the intended value (a refusal agrees only where the corpus says
   REFUSED), and whether valid JSON came back byte-identical.
2. The two libraries' own test suites (the JSON lines file named by `--suites`, written
   by suites/*_cases.*): every case whose input is not JSON and whose expected repair is
   an object or an array, once per distinct input (the union), intended value = what
   the suite that holds it expects. Per test group and in total.

Repairers: Familiar's `json::extract` (the `json_repair_corpus` example), the
`jsonrepair` npm package and the `json_repair` PyPI package. Run through run.sh, which
installs the two oracles and fetches the two suites in a temporary directory first.
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


def short(text, limit=240):
    return text if len(text) <= limit else f"{text[:limit // 2]}…{text[-limit // 2:]}"


def suite_cases(path):
    """The union of the suites' object/array repairs, grouped by suite and test."""
    groups, seen = {}, set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            case = json.loads(line)
            try:
                json.loads(case["input"])
                continue  # already JSON: not a repair
            except ValueError:
                pass
            try:
                intended = json.loads(case["expected"])
            except ValueError:
                continue
            if not isinstance(intended, (dict, list)) or case["input"] in seen:
                continue
            seen.add(case["input"])
            name = f"{case['suite']}: {case['group'].split(' / ')[-1]}"
            groups.setdefault(name, []).append(
                {"input": case["input"], "intended": intended, "refused": False})
    return groups


def table(title, classes, verbose, passthrough_class=None):
    """Runs the three repairers over `classes` and prints one row per class."""
    inputs = [c["input"] for cases in classes.values() for c in cases]
    ours = run_json(["cargo", "run", "--quiet", "--release", "--example", "json_repair_corpus"],
                    inputs, cwd=ROOT)
    npm = run_json(["node", os.path.join(ROOT, "bench", "json_repair", "oracle.mjs")], inputs)
    pypi = [python_oracle(text) for text in inputs]

    totals, at = [0, 0, 0, 0], 0
    passthrough = [0, 0]
    print(f"\n{title}")
    print(f"{'class':<60}{'cases':>6}{'familiar':>10}{'jsonrepair':>12}{'json_repair':>13}")
    for name, cases in classes.items():
        scores = [0, 0, 0]
        for case in cases:
            for column, results in enumerate((ours, npm, pypi)):
                ok = agrees(case, results[at])
                scores[column] += ok
                if verbose and column == 0 and not ok:
                    intended = json.dumps(case["intended"], ensure_ascii=False)
                    print(f"  MISS {name}: {short(repr(case['input']))} -> "
                          f"{short(str(results[at]))} (intended {short(intended)})")
            if name == passthrough_class:
                passthrough[0] += 1
                passthrough[1] += ours[at].get("ok") == case["input"]
            at += 1
        n = len(cases)
        totals[0] += n
        for i in range(3):
            totals[i + 1] += scores[i]
        print(f"{name[:59]:<60}{n:>6}" + "".join(f"{s / n:>{w}.0%}" for s, w in zip(scores, (10, 12, 13))))
    n = totals[0]
    print(f"{'total':<60}{n:>6}" + "".join(f"{s / n:>{w}.1%}" for s, w in zip(totals[1:], (10, 12, 13))))
    print(f"{'':<60}{'':>6}" + "".join(f"{s:>{w}}" for s, w in zip(totals[1:], (10, 12, 13))))
    if passthrough_class:
        print(f"valid JSON passed through byte-identical by familiar: {passthrough[1]}/{passthrough[0]}")


def main():
    verbose = "-v" in sys.argv
    only_suites = "--only-suites" in sys.argv
    if not only_suites:
        classes = {}
        for path in sorted(glob.glob(os.path.join(CORPUS, "*.txt"))):
            classes[os.path.basename(path)[:-4]] = read_cases(path)
        table("Our corpus (tests/fixtures/json-repair), per class", classes, verbose, "valid")
    if "--suites" in sys.argv:
        path = sys.argv[sys.argv.index("--suites") + 1]
        table("The libraries' own suites: object/array repairs, union of distinct inputs",
              suite_cases(path), verbose)


if __name__ == "__main__":
    main()
