#!/usr/bin/env python3
"""Every test scripts/claims.md names exists, and the test command runs it.

    claims.py [CLAIMS.md]     checks the `held by` column of each table row
    claims.py --self-test     the check's own tests

A reference is a path in backticks (`tests/ui.rs`, `e2e/chat.test.mjs`, `tests/sql/rls.sql`,
`scripts/scan-secrets.py`, a directory), optionally followed by `: name, name…` up to the
next `;`. Each path must exist. After a Rust file, each snake_case name (a module path's
last part; `…` ends an abridged one) must be a `fn` in that file or in the directory of
the same name (tests/app.rs's tests/app/) marked `#[test]` or `#[wasm_bindgen_test]` (a
helper `fn` or a name in a comment does not count). After an e2e file, the title must be
a `test(` call's title in the file: the whole title, or its start up to the claim's `…`
(a template's `${…}` stands for any text); a string elsewhere does not count. And the
test command must run it: a browser test (a tests/*.rs for
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


# A `fn` with the attributes and comments above it; a test is one whose attributes
# include libtest's or wasm-bindgen-test's mark (also inside `proptest! { … }`).
TEST_FN = re.compile(r"((?:[ \t]*(?:#\[[^\n]*\]|//[^\n]*)[ \t]*\n)*)[ \t]*"
                     r"(?:pub(?:\([a-z]+\))?\s+)?(?:async\s+)?fn\s+([a-z0-9_]+)")
TEST_MARK = re.compile(r"#\[(?:test|wasm_bindgen_test|tokio::test)\b")


def functions(path):
    """The names of the test `fn`s in a Rust file, and in the directory of its name."""
    files = [path] if path.is_file() else []
    folder = path.with_suffix("") if path.suffix == ".rs" else path
    if folder.is_dir():
        files += sorted(folder.rglob("*.rs"))
    names = set()
    for file in files:
        for attributes, name in TEST_FN.findall(file.read_text(encoding="utf-8")):
            if TEST_MARK.search(attributes):
                names.add(name)
    return names


# A node:test (or e2e/harness.mjs) `test(` call's title: a quoted string or a template.
TITLE = re.compile(r"""(?<![\w.])test\(\s*(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`([^`]*)`)""")


def titles(path):
    """Each test title in an e2e file, as its literal parts: a template's `${…}` between
    two parts stands for any text."""
    found = []
    code = re.sub(r"/\*.*?\*/", "", path.read_text(encoding="utf-8"), flags=re.S)
    code = re.sub(r"(?m)^[ \t]*//.*$", "", code)
    for single, double, template in TITLE.findall(code):
        if template:
            found.append(re.split(r"\$\{[^}]*\}", template))
        else:
            found.append([re.sub(r"\\(.)", r"\1", single or double)])
    return found


def matches(claimed, parts, abridged):
    """Whether `claimed` is a title of these parts (or its start, when abridged)."""
    first = parts[0]
    if len(parts) == 1:
        return first.startswith(claimed) if abridged else claimed == first
    if abridged and len(claimed) <= len(first):
        return first.startswith(claimed)
    if not claimed.startswith(first):
        return False
    rest = claimed[len(first):]
    return any(matches(rest[cut:], parts[1:], abridged) for cut in range(1, len(rest) + 1))


def has_title(path, claimed, abridged):
    """Whether a test of the e2e file is titled `claimed` (or starts so, when abridged)."""
    return any(matches(claimed, parts, abridged) for parts in titles(path))


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
                if title and not has_title(path, title, abridged="…" in tail):
                    problems.append(f"{where}: `{ref}` has no test titled {title!r}"
                                    + ("…" if "…" in tail else ""))
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
            "tests/app.rs": "#[test]\nfn kept_aside() {}\n\n/// A helper.\nfn set_up_world() {}\n"
                            "// fn in_a_comment_only() {}\n",
            "tests/app/queue.rs": "#[test]\n// why\n#[should_panic(expected = \"x\")]\n"
                                  "fn queued_once() {}\nproptest! {\n    #[test]\n"
                                  "    fn any_order_is_kept(n in 0..9u8) {}\n}\n",
            "tests/ui.rs": '#![cfg(target_arch = "wasm32")]\n#[wasm_bindgen_test]\n'
                           'async fn routes_offered() {}\n',
            "e2e/chat.test.mjs": "test('asking the time shows the answer', () => {});\n"
                                 "test(`the ${scheme} theme at 360 px`, () => {});\n"
                                 "// test('a test that was removed', …)\n"
                                 "assert.ok(x, 'an answer shown in full');\n",
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
            "`tests/app.rs`: kept_aside, queue::queued_once; "
            "`e2e/chat.test.mjs`: asking the time shows … ; `scripts/scan.py` in "
            "`scripts/test.sh`"), [])

    def test_a_missing_file_or_test_fails(self):
        self.assertIn("claims.md:3: `tests/gone.rs` does not exist",
                      self.problems("`tests/gone.rs`: anything"))
        self.assertIn("claims.md:3: `tests/app.rs` has no test `renamed_away`",
                      self.problems("`tests/app.rs`: kept_aside, renamed_away"))
        self.assertIn("claims.md:3: `e2e/chat.test.mjs` has no test titled 'a title that went'…",
                      self.problems("`e2e/chat.test.mjs`: a title that went …"))

    def test_a_helper_or_a_name_in_a_comment_is_not_a_test(self):
        self.assertEqual(self.problems("`tests/app/queue.rs`: queued_once, any_order_is_kept"), [])
        self.assertIn("claims.md:3: `tests/app.rs` has no test `set_up_world`",
                      self.problems("`tests/app.rs`: set_up_world"))
        self.assertIn("claims.md:3: `tests/app.rs` has no test `in_a_comment_only`",
                      self.problems("`tests/app.rs`: in_a_comment_only"))

    def test_an_e2e_title_is_a_test_calls_whole_or_abridged(self):
        self.assertEqual(self.problems("`e2e/chat.test.mjs`: the dark theme at 360 px"), [])
        self.assertEqual(self.problems("`e2e/chat.test.mjs`: the light theme …"), [])
        self.assertEqual(self.problems("`e2e/chat.test.mjs`: asking the time shows the answer"), [])
        for cell, title in [
            ("`e2e/chat.test.mjs`: a test that was removed", "'a test that was removed'"),
            ("`e2e/chat.test.mjs`: an answer shown …", "'an answer shown'…"),
            # A title's start alone is a claim only with its `…`.
            ("`e2e/chat.test.mjs`: asking the time", "'asking the time'"),
        ]:
            self.assertIn(f"claims.md:3: `e2e/chat.test.mjs` has no test titled {title}",
                          self.problems(cell))

    def test_a_browser_test_or_script_the_test_command_does_not_run_fails(self):
        self.assertTrue(any("browser test the test command does not run" in p
                            for p in self.problems("`tests/ui.rs`: routes_offered")))
        self.assertTrue(any("is not run by the test command" in p
                            for p in self.problems("`tests/sql/rls.sql`")))


def main(argv):
    if argv == ["--self-test"]:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(ClaimsTests)
        return 0 if unittest.TextTestRunner(verbosity=1).run(suite).wasSuccessful() else 1
    return check(argv[0] if argv else ROOT / "scripts/claims.md")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
