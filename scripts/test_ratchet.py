#!/usr/bin/env python3
"""Tests of scripts/ratchet.py, in throwaway git repositories: a floor lowered or a
budget raised without a reason line fails, with one it passes; committed changes are
checked on a clean clone as in CI. Run by scripts/test.sh (`ratchet.py --self-test`).
"""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
RATCHET = HERE / "ratchet.py"
sys.path.insert(0, str(HERE))
import counts  # noqa: E402  (the readers must skip reason lines)
import ratchet  # noqa: E402

COUNTS = "# floors\nnative tests/app.rs 41\nnative familiar src/lib.rs 236\ne2e chat 10\n"
BUDGETS = "# budgets\nlean 295800 pkg/a.wasm pkg/a.js\nworker 143500 dist/local/w.wasm\n"


def without_base():
    """This environment without FAMILIAR_RATCHET_BASE: .ci/run sets it for the real
    check, and a test's own repository must find its base as a clean clone would."""
    return {k: v for k, v in os.environ.items() if k != "FAMILIAR_RATCHET_BASE"}


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


class Repo:
    """A git repository holding tests/counts.txt and bench/budgets.txt."""

    def __init__(self, root):
        self.root = Path(root)
        git(self.root, "init", "-q", "-b", "main")
        (self.root / "tests").mkdir()
        (self.root / "bench").mkdir()
        self.write(COUNTS, BUDGETS)
        self.commit("the first floors and budgets")

    def write(self, counts_text=None, budgets_text=None):
        if counts_text is not None:
            (self.root / "tests/counts.txt").write_text(counts_text)
        if budgets_text is not None:
            (self.root / "bench/budgets.txt").write_text(budgets_text)

    def commit(self, message):
        git(self.root, "add", "tests/counts.txt", "bench/budgets.txt")
        git(self.root, "commit", "-q", "--allow-empty", "-m", message)

    def check(self, root=None, base=None):
        """(exit code, stderr) of `ratchet.py check` on both files."""
        root = Path(root or self.root)
        env = without_base()
        if base:
            env["FAMILIAR_RATCHET_BASE"] = base
        run = subprocess.run(
            [sys.executable, str(RATCHET), "check",
             str(root / "tests/counts.txt"), str(root / "bench/budgets.txt")],
            capture_output=True, text=True, env=env)
        return run.returncode, run.stderr


class RatchetTests(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.repo = Repo(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def assert_fails(self, result, *words):
        code, err = result
        self.assertEqual(code, 1, err)
        for word in words:
            self.assertIn(word, err)

    def assert_passes(self, result):
        code, err = result
        self.assertEqual(code, 0, err)

    def test_an_untouched_history_passes(self):
        self.assert_passes(self.repo.check())

    def test_a_lowered_floor_without_a_reason_fails_before_and_after_its_commit(self):
        self.repo.write(COUNTS.replace("app.rs 41", "app.rs 40"))
        self.assert_fails(self.repo.check(), "native tests/app.rs: floor 41 -> 40",
                          "lowered native tests/app.rs to 40: <why>")
        self.repo.commit("fewer app tests")
        self.assert_fails(self.repo.check(), "native tests/app.rs: floor 41 -> 40")

    def test_a_clean_clone_checks_the_commit_under_test(self):
        self.repo.write(COUNTS.replace("e2e chat 10", "e2e chat 9"))
        self.repo.commit("a chat test went")
        (self.repo.root / "unrelated").write_text("x")
        git(self.repo.root, "add", "unrelated")
        git(self.repo.root, "commit", "-q", "-m", "a later commit that leaves the floors be")
        with tempfile.TemporaryDirectory() as other:
            clone = Path(other) / "clone"
            git(other, "clone", "-q", str(self.repo.root), str(clone))
            self.assert_fails(self.repo.check(clone), "e2e chat: floor 10 -> 9")

    def test_a_shallow_clone_says_it_cannot_see_the_earlier_version(self):
        self.repo.write(COUNTS.replace("e2e chat 10", "e2e chat 11"))
        self.repo.commit("a chat test more")
        with tempfile.TemporaryDirectory() as other:
            clone = Path(other) / "clone"
            git(other, "clone", "-q", "--depth", "1", f"file://{self.repo.root}", str(clone))
            self.assert_fails(self.repo.check(clone), "too shallow")

    def test_a_reason_line_for_the_entry_and_its_new_value_lets_it_pass(self):
        text = COUNTS.replace("app.rs 41", "app.rs 40")
        self.repo.write(text + "lowered native tests/app.rs to 40: two tests merged into one\n")
        self.assert_passes(self.repo.check())
        self.repo.commit("merged")
        self.assert_passes(self.repo.check())

    def test_a_reason_for_another_value_or_another_entry_does_not(self):
        text = COUNTS.replace("app.rs 41", "app.rs 39")
        self.repo.write(text + "lowered native tests/app.rs to 40: two tests merged\n")
        self.assert_fails(self.repo.check(), "floor 41 -> 39")
        self.repo.write(text + "lowered e2e chat to 39: a typo of the entry\n")
        self.assert_fails(self.repo.check(), "floor 41 -> 39")

    def test_an_empty_reason_is_refused(self):
        text = COUNTS.replace("app.rs 41", "app.rs 40")
        self.repo.write(text + "lowered native tests/app.rs to 40:   \n")
        self.assert_fails(self.repo.check(), "no reason")

    def test_a_reason_already_in_the_file_does_not_cover_a_new_lowering(self):
        reason = "lowered native tests/app.rs to 40: two tests merged\n"
        self.repo.write(COUNTS.replace("app.rs 41", "app.rs 40") + reason)
        self.repo.commit("merged, with its reason")
        self.repo.write(COUNTS.replace("app.rs 41", "app.rs 45") + reason)
        self.repo.commit("more app tests")
        self.repo.write(COUNTS.replace("app.rs 41", "app.rs 40") + reason)
        self.assert_fails(self.repo.check(), "floor 45 -> 40")

    def test_a_suite_whose_line_goes_needs_a_reason_to_0(self):
        self.repo.write(COUNTS.replace("e2e chat 10\n", ""))
        self.assert_fails(self.repo.check(), "e2e chat: its line went",
                          "lowered e2e chat to 0")
        self.repo.write(COUNTS.replace("e2e chat 10\n", "")
                        + "lowered e2e chat to 0: chat.test.mjs merged into interface\n")
        self.assert_passes(self.repo.check())

    def test_raising_floors_and_lowering_budgets_need_no_reason(self):
        self.repo.write(COUNTS.replace("app.rs 41", "app.rs 50") + "e2e new 3\n",
                        BUDGETS.replace("295800", "290000"))
        self.assert_passes(self.repo.check())

    def test_a_raised_budget_without_a_reason_fails(self):
        self.repo.write(budgets_text=BUDGETS.replace("143500", "150000"))
        self.assert_fails(self.repo.check(), "worker: budget 143500 -> 150000",
                          "raised worker to 150000: <why>")
        self.repo.write(budgets_text=BUDGETS.replace("143500", "150000")
                        + "raised worker to 150000: WebGPU kernels (+6.5 KB)\n")
        self.assert_passes(self.repo.check())

    def test_a_budget_whose_line_goes_or_weighs_fewer_files_needs_a_reason(self):
        self.repo.write(budgets_text=BUDGETS.replace("worker 143500 dist/local/w.wasm\n", ""))
        self.assert_fails(self.repo.check(), "worker: its line went", "raised worker to none")
        self.repo.write(budgets_text=BUDGETS.replace(" pkg/a.js", ""))
        self.assert_fails(self.repo.check(), "lean: no longer weighs pkg/a.js")

    def test_a_floor_file_takes_lowered_and_a_budget_file_raised(self):
        self.repo.write(COUNTS.replace("app.rs 41", "app.rs 40")
                        + "raised native tests/app.rs to 40: the wrong word\n")
        self.assert_fails(self.repo.check(), "start with `lowered`")

    def head(self):
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=self.repo.root,
                              capture_output=True, text=True, check=True).stdout.strip()

    def lower_then_touch_again(self):
        """The hole the last-commit check had: a floor lowered with no reason in one
        commit, the file touched again (cleanly) in the next."""
        self.repo.write(COUNTS.replace("app.rs 41", "app.rs 40"))
        self.repo.commit("lowered, no reason")
        self.repo.write(COUNTS.replace("app.rs 41", "app.rs 40").replace("chat 10", "chat 11"))
        self.repo.commit("raised another: the last commit is clean")

    def record_base(self, commit):
        (self.repo.root / ".ci").mkdir(exist_ok=True)
        (self.repo.root / ".ci/ratchet-base").write_text(f"# the base\n{commit}\n")
        git(self.repo.root, "add", ".ci/ratchet-base")
        git(self.repo.root, "commit", "-q", "-m", "the ratchet's base")

    def test_a_floor_lowered_then_the_file_touched_again_fails_on_a_clean_clone(self):
        self.lower_then_touch_again()
        self.assert_fails(self.repo.check(), "floor 41 -> 40")
        with tempfile.TemporaryDirectory() as other:
            clone = Path(other) / "clone"
            git(other, "clone", "-q", str(self.repo.root), str(clone))
            self.assert_fails(self.repo.check(clone), "floor 41 -> 40")

    def test_every_commit_after_the_base_is_checked(self):
        base = self.head()
        self.lower_then_touch_again()
        self.assert_fails(self.repo.check(base=base), "floor 41 -> 40")
        self.assert_passes(self.repo.check(base=self.head()))

    def test_the_recorded_base_starts_the_check_in_a_clean_clone(self):
        self.lower_then_touch_again()
        recorded = self.head()
        self.record_base(recorded)  # what came before the base is history, not checked
        self.assert_passes(self.repo.check())
        self.repo.write(COUNTS.replace("app.rs 41", "app.rs 39").replace("chat 10", "chat 11"))
        self.repo.commit("lowered again, no reason")
        self.repo.write(COUNTS.replace("app.rs 41", "app.rs 39").replace("chat 10", "chat 12"))
        self.repo.commit("the file touched again")
        with tempfile.TemporaryDirectory() as other:
            clone = Path(other) / "clone"
            git(other, "clone", "-q", str(self.repo.root), str(clone))
            self.assert_fails(self.repo.check(clone), "floor 40 -> 39")
            base = subprocess.run([sys.executable, str(RATCHET), "base"], cwd=clone,
                                  capture_output=True, text=True, env=without_base())
            self.assertEqual((base.returncode, base.stdout.strip()), (0, recorded), base.stderr)

    def test_a_recorded_base_that_moves_fails(self):
        first = self.head()
        self.record_base(first)
        self.lower_then_touch_again()
        self.assert_fails(self.repo.check(), "floor 41 -> 40")
        self.record_base(self.head())  # moved past the bad commit: that hides it
        self.assert_fails(self.repo.check(), "the base moved")
        run = subprocess.run([sys.executable, str(RATCHET), "base"], cwd=self.repo.root,
                             capture_output=True, text=True, env=without_base())
        self.assertEqual(run.returncode, 1)
        self.assertIn("the base moved", run.stderr)

    def test_a_shallow_clone_without_the_base_says_so(self):
        self.record_base(self.head())
        self.repo.write(COUNTS.replace("e2e chat 10", "e2e chat 11"))
        self.repo.commit("a chat test more")
        self.repo.write(COUNTS.replace("e2e chat 10", "e2e chat 12"))
        self.repo.commit("another")
        with tempfile.TemporaryDirectory() as other:
            clone = Path(other) / "clone"
            git(other, "clone", "-q", "--depth", "1", f"file://{self.repo.root}", str(clone))
            self.assert_fails(self.repo.check(clone), "not in this clone")

    def test_the_readers_skip_reason_lines(self):
        text = COUNTS + "lowered e2e gone to 0: it went\n"
        self.repo.write(text)
        floors = counts.read_counts(str(self.repo.root / "tests/counts.txt"))
        self.assertEqual(floors, {"native tests/app.rs": 41,
                                  "native familiar src/lib.rs": 236, "e2e chat": 10})
        entries, reasons, problems = ratchet.parse(
            BUDGETS + "raised lean to 300000: more\n", "budget")
        self.assertEqual(sorted(entries), ["lean", "worker"])
        self.assertEqual(len(reasons), 1)
        self.assertEqual(problems, [])

    def test_counts_write_keeps_reason_lines_and_names_each_lowered_floor(self):
        path = self.repo.root / "tests/counts.txt"
        self.repo.write(COUNTS + "lowered e2e gone to 0: it went\n")
        log = self.repo.root / "native.log"
        log.write_text(
            "     Running tests/app.rs (target/debug/deps/app-0123abcd)\n"
            "test result: ok. 40 passed; 0 failed; 0 ignored; 0 measured\n"
            "     Running unittests src/lib.rs (target/debug/deps/familiar-89abcdef)\n"
            "test result: ok. 240 passed; 0 failed; 0 ignored; 0 measured\n")
        run = subprocess.run([sys.executable, str(HERE / "counts.py"), "write", str(path),
                              f"native={log}"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("lowered native tests/app.rs to 40: <why>", run.stderr)
        self.assertIn("lowered e2e chat to 0: <why>", run.stderr)
        self.assertIn("lowered e2e gone to 0: it went\n", path.read_text())
        self.assertEqual(counts.read_counts(str(path)),
                         {"native tests/app.rs": 40, "native familiar src/lib.rs": 240})
        self.assert_fails(self.repo.check(), "floor 41 -> 40", "e2e chat: its line went")

    def test_figures_and_sql_checks_are_floors_too(self):
        path = self.repo.root / "tests/counts.txt"
        text = ("sql tests/sql/rls.sql 145\nfigure e2e/frameworks tasks done 30\n"
                "figure tests/markdown.rs commonmark examples counted 571\n")
        self.repo.write(text)
        self.repo.commit("the gates outside the suites")
        log = self.repo.root / "sql.log"
        log.write_text(" tests/sql/rls.sql: 144 checks passed\n")
        check = [sys.executable, str(HERE / "counts.py"), "check", str(path), f"sql={log}"]
        run = subprocess.run(check, capture_output=True, text=True)
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertIn("sql tests/sql/rls.sql: 144 tests passed, 145 recorded", run.stderr)
        self.assertNotIn("figure", run.stderr)  # read by the tests that hold them
        log.write_text(" tests/sql/rls.sql: 145 checks passed\n")
        self.assertEqual(subprocess.run(check, capture_output=True, text=True).returncode, 0)
        run = subprocess.run([sys.executable, str(HERE / "counts.py"), "write", str(path),
                              f"sql={log}"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("figure e2e/frameworks tasks done 30\n", path.read_text())
        self.repo.write(text.replace("done 30", "done 29"))
        self.assert_fails(self.repo.check(), "figure e2e/frameworks tasks done: floor 30 -> 29")


if __name__ == "__main__":
    unittest.main(verbosity=1)
