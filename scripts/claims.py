#!/usr/bin/env python3
"""Every test scripts/claims.md names exists, and the test command runs it.

    claims.py [CLAIMS.md]     checks the `held by` column of each table row
    claims.py --self-test     the check's own tests

A reference is a path in backticks (`tests/ui.rs`, `e2e/chat.test.mjs`, `tests/sql/rls.sql`,
`scripts/scan-secrets.py`, a directory), optionally followed by `: name, name…` up to the
next `;`. Each path must exist. After a Rust file, each snake_case name (a module path's
last part; `…` ends an abridged one) must be a `fn` in that file or in the directory of
the same name (tests/app.rs's tests/app/). After an e2e file, the title (up to its `…`)
must be in the file. And the test command must run it: a browser test (a tests/*.rs for
wasm32 only) must be one `scripts/test.sh` names with `--test`, a script or SQL file one
that the test command's scripts name; native tests and e2e files run whole.
"""

import re
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The scripts the test command runs, whose text names what it runs.
RUNNERS = ["scripts/test.sh", "scripts/lib.sh", "bench/short.sh"]
REF = re.compile(r"`([A-Za-z0-9_./-]+)`(?:\s*:\s*([^;]*))?")
NAME = re.compile(r"^[a-z0-9_:]+…?$")


def held_by(text):
    """(line number, the last cell) of each table row that is not a header or rule."""
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2:
            continue
        if set(cells[-1]) <= set("-: ") or cells[-1] == "held by":
            continue
        rows.append((number, cells[-1]))
    return rows


def looks_like_path(ref):
    return "/" in ref or re.search(r"\.(rs|mjs|py|sh|sql|txt|js)$", ref)


def functions(path):
    """The names of the `fn`s in a Rust file, and in the directory of its name."""
    files = [path] if path.is_file() else []
    folder = path.with_suffix("") if path.suffix == ".rs" else path
    if folder.is_dir():
        files += sorted(folder.rglob("*.rs"))
    names = set()
    for file in files:
        names |= set(re.findall(r"\bfn\s+([a-z0-9_]+)", file.read_text(encoding="utf-8")))
    return names


def wasm_only(path):
    head = path.read_text(encoding="utf-8")[:4000]
    return '#![cfg(target_arch = "wasm32")]' in head


def problems_of(claims, root):
    problems = []
    runners = "\n".join((root / r).read_text(encoding="utf-8")
                        for r in RUNNERS if (root / r).exists())
    for number, cell in held_by(claims.read_text(encoding="utf-8")):
        where = f"{claims.name}:{number}"
        for ref, tail in REF.findall(cell):
            if not looks_like_path(ref):
                continue
            path = root / ref
            if ref.startswith("e2e/") and not path.exists():  # `e2e/chat` for its file
                path = root / f"{ref}.test.mjs"
            if not path.exists():
                problems.append(f"{where}: `{ref}` does not exist")
                continue
            if path.suffix == ".rs" and ref.startswith("tests/") and path.parent == root / "tests":
                if wasm_only(path) and not re.search(rf"--test {path.stem}\b", runners):
                    problems.append(f"{where}: `{ref}` is a browser test the test command "
                                    f"does not run (no `--test {path.stem}` in {', '.join(RUNNERS)})")
            elif path.suffix in (".py", ".sh", ".sql") and ref not in RUNNERS:
                # A script's own tests run as `scripts/X.py --self-test`.
                self_test = re.sub(r"/test_(\w+\.py)$", r"/\1 --self-test", ref)
                if ref not in runners and self_test not in runners:
                    problems.append(f"{where}: `{ref}` is not run by the test command "
                                    f"(not named in {', '.join(RUNNERS)})")
            tail = (tail or "").strip()
            if not tail or tail.startswith("("):
                continue
            if path.suffix == ".rs" or path.is_dir():
                known = functions(path)
                for word in re.split(r",\s*|\s+and\s+|\s+", tail):
                    word = word.strip().rstrip(".")
                    if not NAME.match(word) or "_" not in word:
                        continue
                    name = word.split("::")[-1]
                    if name.endswith("…"):
                        found = any(k.startswith(name[:-1]) for k in known)
                    else:
                        found = name in known
                    if not found:
                        problems.append(f"{where}: `{ref}` has no test `{name}`")
            elif path.name.endswith(".test.mjs"):
                title = tail.split("…")[0].strip().rstrip(",").strip()
                if title and title not in path.read_text(encoding="utf-8"):
                    problems.append(f"{where}: `{ref}` has no test titled {title!r}…")
    return problems


def check(claims):
    problems = problems_of(Path(claims), ROOT)
    for problem in problems:
        print(f"claims.py: {problem}", file=sys.stderr)
    rows = len(held_by(Path(claims).read_text(encoding="utf-8")))
    if not problems:
        print(f"claims: every test the {rows} promises of {claims} name exists and runs")
    return 1 if problems else 0


class ClaimsTests(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = Path(self.dir.name)
        for path, text in {
            "tests/app.rs": "#[test]\nfn kept_aside() {}\n",
            "tests/app/queue.rs": "#[test]\nfn queued_once() {}\n",
            "tests/ui.rs": '#![cfg(target_arch = "wasm32")]\nfn routes() {}\n',
            "e2e/chat.test.mjs": "test('asking the time shows the answer', () => {});\n",
            "scripts/test.sh": "cargo test --test api\npython3 scripts/scan.py\n",
            "scripts/scan.py": "",
            "tests/sql/rls.sql": "",
        }.items():
            (self.root / path).parent.mkdir(parents=True, exist_ok=True)
            (self.root / path).write_text(text)

    def tearDown(self):
        self.dir.cleanup()

    def problems(self, cell):
        claims = self.root / "claims.md"
        claims.write_text(f"| promise | held by |\n|---|---|\n| a promise | {cell} |\n")
        return problems_of(claims, self.root)

    def test_names_that_exist_and_run_pass(self):
        self.assertEqual(self.problems(
            "`tests/app.rs`: kept_aside, queue::queued_once; `e2e/chat.test.mjs`: asking the "
            "time shows … ; `scripts/scan.py` in `scripts/test.sh`"), [])

    def test_a_missing_file_or_test_fails(self):
        self.assertIn("claims.md:3: `tests/gone.rs` does not exist",
                      self.problems("`tests/gone.rs`: anything"))
        self.assertIn("claims.md:3: `tests/app.rs` has no test `renamed_away`",
                      self.problems("`tests/app.rs`: kept_aside, renamed_away"))
        self.assertIn("claims.md:3: `e2e/chat.test.mjs` has no test titled 'a title that went'…",
                      self.problems("`e2e/chat.test.mjs`: a title that went …"))

    def test_a_browser_test_or_script_the_test_command_does_not_run_fails(self):
        self.assertTrue(any("browser test the test command does not run" in p
                            for p in self.problems("`tests/ui.rs`: routes")))
        self.assertTrue(any("is not run by the test command" in p
                            for p in self.problems("`tests/sql/rls.sql`")))


def main(argv):
    if argv == ["--self-test"]:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(ClaimsTests)
        return 0 if unittest.TextTestRunner(verbosity=1).run(suite).wasSuccessful() else 1
    return check(argv[0] if argv else ROOT / "scripts/claims.md")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
