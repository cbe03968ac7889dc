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

Nothing of the binary's group outlives the runner: a runner sent SIGTERM, SIGINT or
SIGHUP (`timeout`, a cancelled CI job, Ctrl-C, none of which reaches the binary's own
session) stops the group and exits 128+N, and so does a runner that fails. A binary
killed by signal N exits 128+N (cargo's "exit status: 134"), not sys.exit's 256-N. The
run ends when the binary has exited and its output is drained, or 2 s after its exit
when a process it started still holds that output; that process is stopped.
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


# The signals that end the runner (Ctrl-C, `timeout`, a cancelled CI job, a closed
# terminal): the binary runs in a session of its own, which none of them reaches.
ENDING = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# How long output may still come once the binary has exited: past it, whatever it left
# running holds the pipe, and is stopped rather than waited for.
DRAIN = 2.0


class Ended(Exception):
    """The runner was sent one of ENDING."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def on_ending_signal(signum, _frame):
    # A second signal must not cut the binary's stopping short.
    for sig in ENDING:
        signal.signal(sig, signal.SIG_IGN)
    raise Ended(signum)


def group_alive(pgid):
    """Whether a process of the group is still running (zombies left out)."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 2 and fields[0] != "Z" and fields[2] == str(pgid):
            return True
    return False


def stop(child, grace=10.0):
    """SIGTERM to the binary's group, SIGKILL to what is left of it `grace` s later."""
    try:
        os.killpg(child.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + grace
    while child.poll() is None or group_alive(child.pid):
        if time.monotonic() >= deadline:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            break
        time.sleep(0.05)
    child.wait()


def run(argv, out=sys.stdout.buffer):
    """Runs argv under the limits; its exit code, 128+N when signal N ended it, or 124
    when a limit stopped it. Whatever happens, nothing of its group outlives the call."""
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, start_new_session=True)
    try:
        code = watch(child, argv, out)
    finally:
        stop(child)
    if code < 0:
        print(f"\nnative_runner: {argv[0]} was killed by {signal.Signals(-code).name}",
              file=sys.stderr, flush=True)
        return 128 - code
    return code


def watch(child, argv, out):
    """Passes the binary's output through until it has exited and its output is drained
    (DRAIN s at most after its exit); its status, or 124 when a limit stopped it."""
    per_test = limit("NATIVE_TEST_LIMIT", 300)
    per_binary = limit("NATIVE_BINARY_LIMIT", 1200)
    began = time.monotonic()
    long_running = {}  # test name -> when it started (by libtest's own count)
    pending = b""
    exited = None
    while True:
        now = time.monotonic()
        if exited is None and child.poll() is not None:
            exited = now
        if exited is not None and now - exited >= DRAIN:
            print(f"\nnative_runner: {argv[0]} exited, but a process it started still holds "
                  "its output (scripts/native_runner.py stopped it)", file=sys.stderr, flush=True)
            break
        late = [n for n, t in long_running.items() if now - t >= per_test]
        if exited is None and (late or now - began >= per_binary):
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


def alive(pid):
    """Whether a process runs (a zombie, ended but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:][:1] != "Z"


class RunnerTests(unittest.TestCase):
    """A stand-in binary that prints what libtest prints, on a clock cut short."""

    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.folder = Path(folder.name)
        self.binary = self.folder / "tests"

    def write(self, script):
        self.binary.write_text("#!/bin/sh\n" + script)
        self.binary.chmod(0o755)

    def pids(self):
        """What the stand-in wrote to `pids` (the processes it started), once there."""
        done = self.folder / "pids"
        for _ in range(200):
            if done.exists():
                return [int(pid) for pid in done.read_text().split()]
            time.sleep(0.05)
        self.fail("the stand-in binary never wrote its pids")

    def runs(self, script, **env):
        self.write(script)
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            with open(self.folder / "out", "wb+") as out:
                began = time.monotonic()
                code = run([str(self.binary)], out)
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


    def test_a_binary_killed_by_a_signal_exits_128_plus_it(self):
        # sys.exit(-6) would be 250, and cargo would no longer say it was SIGABRT.
        code, _, _ = self.runs("echo 'test boom ... '\nkill -ABRT $$\n")
        self.assertEqual(code, 128 + signal.SIGABRT)

    def test_a_process_left_holding_the_output_neither_holds_the_run_nor_outlives_it(self):
        code, out, took = self.runs(
            "sleep 300 &\necho $! > \"$(dirname \"$0\")/pids\"\necho 'test quick ... ok'\n")
        self.assertEqual(code, 0)
        self.assertIn("test quick ... ok", out)
        self.assertLess(took, DRAIN + 5)
        self.assertFalse(alive(self.pids()[0]))

    def test_a_runner_sent_sigterm_or_sigint_leaves_nothing_of_its_binary_running(self):
        # The stand-in, and a process it started, both in its group: `timeout`, a
        # cancelled CI job or Ctrl-C reach the runner alone.
        self.write('sleep 300 &\necho $! $$ > "$(dirname "$0")/pids.new"\n'
                   'mv "$(dirname "$0")/pids.new" "$(dirname "$0")/pids"\nwait\n')

        def defaults():  # as from a shell in the foreground, whatever started this one
            for sig in ENDING:
                signal.signal(sig, signal.SIG_DFL)

        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=sig.name):
                (self.folder / "pids").unlink(missing_ok=True)
                runner = subprocess.Popen([sys.executable, __file__, str(self.binary)],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          preexec_fn=defaults)
                pids = self.pids()
                self.assertTrue(all(alive(pid) for pid in pids))
                runner.send_signal(sig)
                self.assertEqual(runner.wait(timeout=20), 128 + sig)
                self.assertEqual([pid for pid in pids if alive(pid)], [])


def main(argv):
    if argv == ["--self-test"]:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(RunnerTests)
        return 0 if unittest.TextTestRunner(verbosity=1).run(suite).wasSuccessful() else 1
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    # A signal the runner's parent ignores (a shell's background job and SIGINT) stays so.
    for sig in ENDING:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, on_ending_signal)
    try:
        return run(argv)
    except Ended as ended:
        print(f"\nnative_runner: {signal.Signals(ended.signum).name}; stopped {argv[0]}",
              file=sys.stderr, flush=True)
        return 128 + ended.signum


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
