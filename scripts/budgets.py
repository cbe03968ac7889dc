#!/usr/bin/env python3
"""Fails when a build's page weight (gzip -9 of its wasm and js) is over its budget in
bench/budgets.txt; prints each build's figure either way.

    scripts/budgets.py bench/budgets.txt

A budget raised, a build's line removed or a file taken off a build's list needs a
reason line in the same change (`raised BUILD to BYTES: why`; scripts/ratchet.py).
"""

import subprocess
import sys
from pathlib import Path

import ratchet


def gzipped(path):
    """Bytes of `gzip -9` of the file, as a static host would serve it."""
    out = subprocess.run(["gzip", "-9", "-c", "-n", path], check=True, capture_output=True)
    return len(out.stdout)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    over = []
    for line in Path(sys.argv[1]).read_text().splitlines():
        if not line.strip() or line.startswith("#") or ratchet.is_reason(line):
            continue
        build, budget, *patterns = line.split()
        # A pattern may name several files (the demo's shared chunks, dist/chunk_*.wasm,
        # numbered by wasm-split); each must match at least one.
        missing = [p for p in patterns if not any(f.is_file() for f in Path().glob(p))]
        if missing:
            sys.exit(f"{build}: no {', '.join(missing)} (build it first)")
        files = sorted({f for p in patterns for f in Path().glob(p) if f.is_file()})
        weight = sum(gzipped(f) for f in files)
        verdict = "ok" if weight <= int(budget) else "OVER"
        print(f"{build:<8} {weight:>9,} B gzip -9, budget {int(budget):>9,} B  {verdict}")
        if weight > int(budget):
            over.append(build)
    if over:
        sys.exit(f"over budget: {', '.join(over)} (see bench/budgets.txt)")


if __name__ == "__main__":
    main()
