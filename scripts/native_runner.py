#!/usr/bin/env python3
"""Cargo's runner for native binaries in the test command: a limit per test, and one per binary.

    CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="python3 scripts/native_runner.py"
    native_runner.py --self-test

Stable libtest has no limit per test (`--ensure-time` is nightly's), but its output
says when a test runs: on several threads it names one that runs long (`test NAME has
been running for over 60 seconds`), on one thread it writes `test NAME ... ` as the test
starts. This runner runs the binary in a process group of its own, passes its output
through as it comes, and reads those: a test still running NATIVE_TEST_LIMIT seconds
after it started (300 unless set; on several threads no sooner than 60 s, when libtest
first names it) stops the binary, and the runner names it and fails. A binary that runs NATIVE_BINARY_LIMIT seconds in all (1200
unless set) is stopped too, naming the tests libtest said were long, which catches a
hang outside any test. Non-test binaries (`cargo run --example`) just run under the
binary's limit.
"""

import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

LONG = re.compile(rb"test (\S+) has been running for over (\d+) seconds")
DONE = re.compile(rb"test (\S+) \.\.\. (?:ok|FAILED|ignored)")
# On one thread libtest writes this as the test starts, and the result after it.
STARTED = re.compile(rb"^test (\S+) \.\.\. $")


def limit(name, default):
    return float(os.environ.get(name, default))


def stop(child):
    """SIGTERM to the binary's group, SIGKILL 10 s later if it lingers."""
    try:
        os.killpg(child.pid, signal.SIGTERM)
        child.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.wait()


def run(argv, out=sys.stdout.buffer):
    """Runs argv under the limits; its exit code, or 124 when a limit stopped it."""
    per_test = limit("NATIVE_TEST_LIMIT", 300)
    per_binary = limit("NATIVE_BINARY_LIMIT", 1200)
    began = time.monotonic()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, start_new_session=True)
    long_running = {}  # test name -> when it started (by libtest's own count)
    pending = b""
    while True:
        now = time.monotonic()
        late = [n for n, t in long_running.items() if now - t >= per_test]
        if late or now - began >= per_binary:
            stop(child)
            out.flush()
            what = (f"native test {late[0].decode()} ran over its limit of {per_test:.0f} s"
                    if late else
                    f"{argv[0]} ran over its limit of {per_binary:.0f} s in all" +
                    (f"; still running: {', '.join(n.decode() for n in long_running)}"
                     if long_running else ""))
            print(f"\nnative_runner: {what} (scripts/native_runner.py stopped it)",
                  file=sys.stderr, flush=True)
            return 124
        ready, _, _ = select.select([child.stdout], [], [], 0.1)
        if not ready:
            continue
        chunk = os.read(child.stdout.fileno(), 65536)
        if not chunk:
            break
        out.write(chunk)
        out.flush()
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            for name, seconds in LONG.findall(line):
                long_running[name] = time.monotonic() - float(seconds)
            for name in DONE.findall(line):
                long_running.pop(name, None)
        started = STARTED.match(pending)
        if started:
            long_running.setdefault(started.group(1), time.monotonic())
    return child.wait()


class RunnerTests(unittest.TestCase):
    """A stand-in binary that prints what libtest prints, on a clock cut short."""

    def runs(self, script, **env):
        with tempfile.TemporaryDirectory() as folder:
            binary = Path(folder) / "tests"
            binary.write_text("#!/bin/sh\n" + script)
            binary.chmod(0o755)
            saved = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            try:
                with open(Path(folder) / "out", "wb+") as out:
                    began = time.monotonic()
                    code = run([str(binary)], out)
                    out.seek(0)
                    return code, out.read().decode(), time.monotonic() - began
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v

    def test_a_test_past_its_limit_is_stopped_and_fails(self):
        # libtest says a test ran 60 s; with a 60.3 s limit it has 0.3 s left.
        code, out, took = self.runs(
            "echo 'test quick ... ok'\n"
            "echo 'test stuck has been running for over 60 seconds'\nsleep 30\n",
            NATIVE_TEST_LIMIT="60.3")
        self.assertEqual(code, 124)
        self.assertIn("test quick ... ok", out)
        self.assertLess(took, 10)

    def test_a_long_test_that_ends_in_time_passes(self):
        code, _, _ = self.runs(
            "echo 'test slow has been running for over 60 seconds'\nsleep 0.2\n"
            "echo 'test slow ... ok'\nsleep 1.5\n", NATIVE_TEST_LIMIT="61")
        self.assertEqual(code, 0)

    def test_on_one_thread_a_test_is_timed_from_its_start(self):
        code, _, took = self.runs("printf 'test stuck ... '\nsleep 30\n", NATIVE_TEST_LIMIT="0.3")
        self.assertEqual(code, 124)
        self.assertLess(took, 10)
        code, _, _ = self.runs("printf 'test slow ... '\nsleep 0.2\necho ok\n"
                               "printf 'test next ... '\nsleep 0.2\necho ok\nsleep 1.5\n",
                               NATIVE_TEST_LIMIT="1")
        self.assertEqual(code, 0)

    def test_the_binary_limit_and_its_exit_code(self):
        code, _, took = self.runs("sleep 30\n", NATIVE_BINARY_LIMIT="0.3")
        self.assertEqual(code, 124)
        self.assertLess(took, 10)
        self.assertEqual(self.runs("exit 3\n")[0], 3)


def main(argv):
    if argv == ["--self-test"]:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(RunnerTests)
        return 0 if unittest.TextTestRunner(verbosity=1).run(suite).wasSuccessful() else 1
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    return run(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
