#!/usr/bin/env python3
"""Floors only rise and budgets only fall, unless the same change says why.

    ratchet.py check FILE...    fails when an entry of a ratchet file moved the loose
                                way without a new reason line for it
    ratchet.py base             prints the base the check starts after (below)
    ratchet.py --self-test      the check's own tests (scripts/test_ratchet.py)

The ratchet files and their loose way:
- tests/counts.txt (scripts/counts.py): `SUITE COUNT`, the fewest tests a suite may
  run. Loose: a count goes down, or a suite's line goes (as if it went to 0).
- bench/budgets.txt (scripts/budgets.py): `BUILD BYTES FILES...`, the most a build's
  page may weigh. Loose: the bytes go up, a build's line goes (`none`), or a file
  leaves a build's list (it is no longer weighed).

A loose move passes when the same change adds a reason line for it, naming the entry
and its new value:

    lowered native tests/ledger.rs to 1: the retry tests moved to tests/app.rs
    raised full to 951200: the World's map (+6.1 KB, ARCHITECTURE.md says what bought it)

A reason line must be new in the change (one already in the file before does not count),
so every loosening states its own reason; old reason lines may stay as the history or
go. `counts.py write` keeps them.

What "the change" is, in git:
- the working tree's file against HEAD's, when they differ (a change not yet committed);
- and every commit after the base that touched the file, each against its parent, so a
  floor lowered in one commit and the file touched again in the next still fails.

The base is FAMILIAR_RATCHET_BASE when set, else the commit recorded in `.ci/ratchet-base`
at the checkout's top (.ci/run gives it), else the start of the history. It is read from
the clone's own history, so a clean clone in CI needs no network and no state kept
between runs (a green run cannot record its own commit without making another); checking
every commit since the recorded base costs about a second. The recorded base never moves:
it is the last commit before which the history loosens without a reason (66c500f dropped
`e2e traps` with none), and moving it would hide such commits, so a change of it fails.
A shallow clone that lacks the base or a parent says so.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

REASON = re.compile(r"^(lowered|raised) (.+?) to (\d+|none):(.*)$")
# The word a reason line starts with, by the kind of ratchet.
WORD = {"floor": "lowered", "budget": "raised"}


def kind_of(path):
    """`floor` for counts files, `budget` for budget files, by the file's name."""
    name = Path(path).name
    if name.startswith("counts"):
        return "floor"
    if name.startswith("budgets"):
        return "budget"
    sys.exit(f"ratchet.py: {path}: not a ratchet file (counts*.txt or budgets*.txt)")


def is_reason(line):
    """Whether a line (comments stripped) is a reason line, which readers skip."""
    return REASON.match(line.strip()) is not None


def parse(text, kind, where="<text>"):
    """(entries, reasons, problems): entries maps a name to (value, files); reasons is
    the set of (word, name, value, why) lines; problems are lines that say nothing."""
    entries, reasons, problems = {}, set(), []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        reason = REASON.match(line)
        if reason:
            word, name, value, why = reason.groups()
            if not why.strip():
                problems.append(f"{where}:{number}: a reason line with no reason: {line!r}")
            elif word != WORD[kind]:
                problems.append(f"{where}:{number}: a {kind} file's reason lines start "
                                f"with `{WORD[kind]}`: {line!r}")
            else:
                reasons.add((word, name, value, why.strip()))
            continue
        words = line.split()
        if kind == "floor":  # SUITE (words) COUNT
            name, value, files = " ".join(words[:-1]), words[-1], ()
        else:  # BUILD BYTES FILES...
            name, value, files = words[0], (words[1:2] or [""])[0], words[2:]
        if not name or not value.isdigit():
            problems.append(f"{where}:{number}: not an entry nor a reason line: {line!r}")
            continue
        entries[name] = (int(value), tuple(files))
    return entries, reasons, problems


def loosened(old, new, kind):
    """(name, new value as a reason line names it, what happened) for each entry that
    moved the loose way from `old` to `new` (entries as `parse` returns them)."""
    moves = []
    for name, (before, files_before) in sorted(old.items()):
        if name not in new:
            value = "0" if kind == "floor" else "none"
            moves.append((name, value, f"{name}: its line went (was {before})"))
            continue
        after, files_after = new[name]
        if kind == "floor" and after < before:
            moves.append((name, str(after), f"{name}: floor {before} -> {after}"))
        if kind == "budget" and after > before:
            moves.append((name, str(after), f"{name}: budget {before} -> {after}"))
        dropped = sorted(set(files_before) - set(files_after))
        if dropped:
            moves.append((name, str(after), f"{name}: no longer weighs {', '.join(dropped)}"))
    return moves


def check_change(old_text, new_text, kind, label):
    """Problems of one change of a ratchet file from `old_text` to `new_text`."""
    old, old_reasons, _ = parse(old_text, kind, f"{label} (before)")
    new, new_reasons, problems = parse(new_text, kind, label)
    added = {(name, value) for _, name, value, _ in new_reasons - old_reasons}
    for name, value, what in loosened(old, new, kind):
        if (name, value) not in added:
            problems.append(
                f"{label}: {what} with no reason; add the line "
                f"`{WORD[kind]} {name} to {value}: <why>` in the same change"
            )
    return problems


def git(*args, cwd):
    run = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    return run.returncode, run.stdout, run.stderr.strip()


def at(commit, relative, cwd):
    """The file's text at `commit`, or None when it did not exist there."""
    code, out, _ = git("show", f"{commit}:{relative}", cwd=cwd)
    return out if code == 0 else None


BASE_FILE = ".ci/ratchet-base"


def base_in(text):
    """The commit a base file's text names (its first line that is not a comment)."""
    for line in (text or "").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            return line
    return None


def recorded_base(cwd):
    """(base commit or None, problem): FAMILIAR_RATCHET_BASE, else the commit in
    .ci/ratchet-base, which fails if any commit changed it (the base never moves)."""
    base = os.environ.get("FAMILIAR_RATCHET_BASE", "").strip()
    if base:
        return base, None
    path = Path(cwd) / BASE_FILE
    if not path.exists():
        return None, None
    base = base_in(path.read_text(encoding="utf-8"))
    if not base:
        return None, f"{BASE_FILE}: names no commit"
    _, out, _ = git("rev-list", "HEAD", "--", BASE_FILE, cwd=cwd)
    versions = {base_in(at(commit, BASE_FILE, cwd)) for commit in out.split()}
    moved = sorted(v or "(none)" for v in versions - {base})
    if moved:
        return None, (f"{BASE_FILE}: the base moved (it was {', '.join(moved)}, now {base}); "
                      f"it never moves, or the commits it skips go unchecked")
    return base, None


def changes(path):
    """(label, old text, new text) for each change of the file to check, or a problem."""
    path = Path(path).resolve()
    cwd = path.parent
    code, top, err = git("rev-parse", "--show-toplevel", cwd=cwd)
    if code != 0:
        return None, f"{path}: not in a git checkout, so no earlier version to compare ({err})"
    cwd = Path(top.strip()).resolve()
    relative = path.relative_to(cwd).as_posix()
    found = []
    head = at("HEAD", relative, cwd)
    current = path.read_text(encoding="utf-8")
    if head is not None and head != current:
        found.append((f"{relative} (uncommitted)", head, current))
    base, problem = recorded_base(cwd)
    if problem:
        return None, problem
    if base:
        code, _, _ = git("cat-file", "-e", f"{base}^{{commit}}", cwd=cwd)
        if code != 0:
            return None, (f"{relative}: the base {base[:12]} is not in this clone (a shallow "
                          f"clone: fetch with more depth, or all history)")
    span = [f"{base}..HEAD"] if base else ["HEAD"]
    code, out, err = git("rev-list", *span, "--", relative, cwd=cwd)
    if code != 0:
        return None, f"{relative}: git rev-list failed: {err}"
    for commit in out.split():
        new = at(commit, relative, cwd)
        code, _, _ = git("rev-parse", "--verify", "--quiet", f"{commit}^", cwd=cwd)
        if code != 0:
            _, shallow, _ = git("rev-parse", "--is-shallow-repository", cwd=cwd)
            if shallow.strip() == "true":
                return None, (f"{relative}: the clone is too shallow to see the version "
                              f"before {commit[:12]} (fetch with more depth, or all history)")
            old = ""  # the first commit of the history: everything is new
        else:
            old = at(f"{commit}^", relative, cwd) or ""
        if new is not None:
            found.append((f"{relative} at {commit[:12]}", old, new))
    return found, None


def check(paths):
    problems = []
    for path in paths:
        kind = kind_of(path)
        found, problem = changes(path)
        if problem:
            problems.append(problem)
            continue
        for label, old, new in found:
            problems += check_change(old, new, kind, label)
        if not found:
            print(f"ratchet: {path}: not in git's history yet, nothing to compare")
        for label, _, _ in found:
            print(f"ratchet: {label}: checked")
    for problem in problems:
        print(f"ratchet.py: {problem}", file=sys.stderr)
    return 1 if problems else 0


def main(argv):
    if argv == ["base"]:
        code, top, err = git("rev-parse", "--show-toplevel", cwd=Path.cwd())
        if code != 0:
            sys.exit(f"ratchet.py: not in a git checkout ({err})")
        base, problem = recorded_base(top.strip())
        if problem:
            sys.exit(f"ratchet.py: {problem}")
        print(base or "")
        return 0
    if argv == ["--self-test"]:
        here = Path(__file__).resolve().parent
        return subprocess.run([sys.executable, str(here / "test_ratchet.py")]).returncode
    if len(argv) < 2 or argv[0] != "check":
        sys.exit(__doc__)
    return check(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
