#!/usr/bin/env python3
"""The README and the guides in docs/ say what the code and the benches say.

    check_docs.py              checks README.md and docs/*.md; prints what is wrong
    check_docs.py --self-test  plants one wrong link, anchor, path, budget and count
                               and fails unless each is caught

What it checks, in every page:
- every relative link resolves to a file, and a `#anchor` to one of its headings (as
  GitHub makes their anchors);
- every script, bench, test or source path named in backticks or in a shell block
  (`scripts/demo.sh --with-model`, `./scripts/test.sh`, `tests/sql/rls.sql`,
  `e2e/*.test.mjs`) exists;
- every budget quoted as "`NAME` budget N B" is NAME's line in bench/budgets.txt;
- every "at least N native|browser|end-to-end tests" holds against tests/counts.txt
  (the floors' sum is N or more) and is not stale (N is within a tenth of the sum);
- README.md is at most 250 lines and opens with the two commands.
There must be at least one budget and one count quoted, so the check cannot pass vacuously.
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Pages other people are writing now: linked from docs/README.md before they land.
PENDING = {"docs/webmcp.md", "docs/telemetry.md", "docs/usage-and-cost.md"}
# Folders a path in the docs may start with; build outputs (dist/, pkg/…) are not checked.
TRACKED = ("scripts/", "bench/", "tests/", "e2e/", "migrations/", "public/", "crates/",
           "src/", "js/", "extension/", "examples/", "style/", ".ci/", "docs/")
# Made by a run, not kept in the repository.
GENERATED = ("e2e/artifacts", "target/")
FIRST_LINES = [
    "# Familiar",
    "",
    "```sh",
    "./scripts/demo.sh   # installs what is missing, serves the demo at http://127.0.0.1:8080 (in-browser, offline)",
    "./scripts/test.sh   # installs what is missing, runs every test: native, browser, end-to-end",
    "```",
]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")
BUDGET = re.compile(r"`([a-z][a-z-]*)` budget ([\d,]+) B\b")
COUNT = re.compile(r"at\s+least\s+([\d,]+)\s+native\s+tests,\s+([\d,]+)\s+browser\s+tests\s+and\s+([\d,]+)\s+end-to-end\s+tests")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text):
    return {slug(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


def budgets(root):
    found = {}
    with open(os.path.join(root, "bench/budgets.txt"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and not line.startswith(("#", "raised", "lowered")) and parts[1].isdigit():
                found[parts[0]] = int(parts[1])
    return found


def counts(root):
    sums = {"native": 0, "browser": 0, "e2e": 0}
    with open(os.path.join(root, "tests/counts.txt"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] in sums and parts[-1].isdigit():
                sums[parts[0]] += int(parts[-1])
    return sums


def paths_named(text):
    """Repository paths a page names: in backticks, and commands in its shell blocks."""
    named = [m.group(1) for m in CODE.finditer(text)]
    in_shell = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_shell = line.strip() in ("```sh", "```bash", "```shell") and not in_shell
            continue
        if in_shell:
            named.append(line.strip())
    for item in named:
        word = item.split()[0] if item.split() else ""
        word = word.removeprefix("./").rstrip(".,;:)")
        if word.startswith(TRACKED) and not word.startswith(GENERATED):
            yield word


def check_page(root, rel, text, quoted):
    problems = []
    here = os.path.dirname(rel)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        path = os.path.normpath(os.path.join(here, file)) if file else rel
        if path in PENDING and not os.path.exists(os.path.join(root, path)):
            continue
        if not os.path.exists(os.path.join(root, path)):
            problems.append(f"{rel}: link to {target}: no file {path}")
            continue
        if anchor and path.endswith(".md"):
            with open(os.path.join(root, path), encoding="utf-8") as f:
                if anchor not in anchors(f.read()):
                    problems.append(f"{rel}: link to {target}: {path} has no heading #{anchor}")
    for path in paths_named(text):
        if not glob.glob(os.path.join(root, path)):
            problems.append(f"{rel}: names {path}, which does not exist")
    have = budgets(root)
    for name, figure in BUDGET.findall(text):
        quoted["budgets"] += 1
        said = int(figure.replace(",", ""))
        if have.get(name) != said:
            problems.append(f"{rel}: says the `{name}` budget is {said} B; bench/budgets.txt says {have.get(name)}")
    sums = counts(root)
    for found in COUNT.findall(text):
        quoted["counts"] += 1
        for kind, figure in zip(("native", "browser", "e2e"), found):
            said, floor = int(figure.replace(",", "")), sums[kind]
            if said > floor or said < floor * 0.9:
                problems.append(f"{rel}: says at least {said} {kind} tests; tests/counts.txt's floors sum to {floor}")
    return problems


def check(root):
    problems, quoted = [], {"budgets": 0, "counts": 0}
    pages = ["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs/*.md")))
    for rel in pages:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            text = f.read()
        problems += check_page(root, rel, text, quoted)
        if rel == "README.md":
            lines = text.splitlines()
            if len(lines) > 250:
                problems.append(f"README.md has {len(lines)} lines; it is to be read in five minutes (250 at most)")
            if lines[: len(FIRST_LINES)] != FIRST_LINES:
                problems.append("README.md no longer opens with the two commands as they were")
    if not quoted["budgets"]:
        problems.append("no page quotes a budget as \"`NAME` budget N B\": nothing was checked")
    if not quoted["counts"]:
        problems.append("no page says \"at least N native tests, N browser tests and N end-to-end tests\"")
    return pages, quoted, problems


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        for d in ("docs", "bench", "tests", "scripts"):
            os.makedirs(os.path.join(root, d))
        open(os.path.join(root, "bench/budgets.txt"), "w").write("# build budget files\nlean 100 pkg/x\n")
        open(os.path.join(root, "tests/counts.txt"), "w").write("native a 10\nbrowser b 5\ne2e c 4\n")
        for script in ("demo.sh", "test.sh"):
            open(os.path.join(root, "scripts", script), "w").write("")
        readme = "\n".join(FIRST_LINES) + "\n\n## Here\n\nat least 10 native tests, 5 browser tests and 4 end-to-end tests; `lean` budget 100 B; [ok](docs/a.md#a-title)\n"
        open(os.path.join(root, "README.md"), "w").write(readme)
        open(os.path.join(root, "docs/a.md"), "w").write("# A title\n\n`scripts/demo.sh --x` [up](../README.md#here)\n")
        _, _, clean = check(root)
        assert clean == [], clean
        open(os.path.join(root, "docs/b.md"), "w").write(
            "# B\n\n[gone](nowhere.md) [bad](a.md#no-such) `scripts/gone.sh`\n"
            "`lean` budget 99 B; at least 11 native tests, 4 browser tests and 3 end-to-end tests\n")
        _, _, found = check(root)
        expected = ["nowhere.md", "#no-such", "scripts/gone.sh", "budget is 99", "11 native", "4 browser", "3 e2e"]
        missed = [e for e in expected if not any(e in p for p in found)]
        assert not missed, f"not caught: {missed} in {found}"
    print("check_docs self-test: a wrong link, anchor, path, budget and each count caught")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    pages, quoted, problems = check(ROOT)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s) in the README and docs/: fix the page, or the figure it quotes")
        return 1
    print(f"{len(pages)} pages: links, named paths, {quoted['budgets']} budget(s) and {quoted['counts']} count line(s) hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
