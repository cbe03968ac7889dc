#!/usr/bin/env python3
"""Where a wasm build's bytes go: code bytes per crate, per module of ours, and the
largest functions, read from the module's name section (rustc keeps it in the wasm it
writes, before wasm-bindgen and wasm-opt strip it). The figures are code bytes before
wasm-opt: what ships is smaller, in about the same proportions.

    bench/wasm_sizes.py target/wasm32-unknown-unknown/release/familiar.wasm [--top N]

A generic function is counted where its type lives (`<serde_json::Map as
Serialize>::serialize` is serde_json's), or its trait's when the type is a parameter;
a closure is its function's. No dependencies beyond Python 3.
"""

import re
import sys
from collections import Counter

OURS = "familiar"


def leb(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def sections(data):
    if data[:4] != b"\0asm":
        sys.exit(f"not a wasm module: {sys.argv[1]}")
    at = 8
    while at < len(data):
        kind = data[at]
        size, at = leb(data, at + 1)
        yield kind, at, size
        at += size


def imported_functions(data, start):
    """How many functions the import section brings (they come first in the index)."""
    count, at = leb(data, start)
    functions = 0
    for _ in range(count):
        for _ in range(2):  # module and field names
            length, at = leb(data, at)
            at += length
        kind = data[at]
        at += 1
        if kind == 0:  # function: a type index
            _, at = leb(data, at)
            functions += 1
        elif kind in (1, 2):  # table (with its element type) or memory: limits
            at += kind == 1
            flags, at = leb(data, at)
            _, at = leb(data, at)
            if flags & 1:
                _, at = leb(data, at)
        elif kind == 3:  # global: type and mutability
            at += 2
        elif kind == 4:  # tag
            at += 1
            _, at = leb(data, at)
    return functions


def body_sizes(data, start):
    count, at = leb(data, start)
    sizes = []
    for _ in range(count):
        size, at = leb(data, at)
        sizes.append(size)
        at += size
    return sizes


def function_names(data, start, size):
    length, at = leb(data, start)
    if data[at : at + length] != b"name":
        return None
    at += length
    end = start + size
    names = {}
    while at < end:
        sub = data[at]
        length, at = leb(data, at + 1)
        if sub == 1:
            inner = at
            count, inner = leb(data, inner)
            for _ in range(count):
                index, inner = leb(data, inner)
                name_length, inner = leb(data, inner)
                names[index] = data[inner : inner + name_length].decode("utf-8", "replace")
                inner += name_length
        at += length
    return names


ESCAPES = {
    "$LT$": "<", "$GT$": ">", "$u20$": " ", "$C$": ",", "$RF$": "&", "$BP$": "*",
    "$u7b$": "{", "$u7d$": "}", "$u5b$": "[", "$u5d$": "]", "$u27$": "'", "$u3b$": ";",
    "$u21$": "!", "$u22$": '"', "$u2b$": "+", "$u7e$": "~", "$u3d$": "=",
}


V0_CRATE = re.compile(r"C(?:s[0-9a-zA-Z]*_)?(\d+)([A-Za-z_][A-Za-z0-9_]*)")


def demangle(symbol):
    """A legacy-mangled Rust symbol (`_ZN…E`) as its path, without the hash; a
    v0-mangled one (`_R…`, the precompiled standard library's) as its crate and the
    symbol, which is enough to count it."""
    if symbol.startswith("_R"):
        found = V0_CRATE.search(symbol)
        if found:
            length, rest = int(found.group(1)), found.group(2)
            return f"{rest[:length]}::{symbol}"
        return symbol
    if not symbol.startswith("_ZN"):
        return symbol
    at, parts = 3, []
    while at < len(symbol) and symbol[at].isdigit():
        digits = re.match(r"\d+", symbol[at:]).group()
        at += len(digits)
        part = symbol[at : at + int(digits)]
        at += int(digits)
        if re.fullmatch(r"h[0-9a-f]{16}", part):
            continue
        if part.startswith("_$"):
            part = part[1:]
        for code, text in ESCAPES.items():
            part = part.replace(code, text)
        parts.append(part.replace("..", "::"))
    return "::".join(parts)


PRIMITIVE = re.compile(r"^(?:[A-Z]|str|bool|char|[iuf](?:8|16|32|64|128|size)|\(.*\)|fn.*|dyn .*)$")


def owner(path):
    """The path a function's bytes are counted under."""
    if not path.startswith("<"):
        return path
    depth, split = 0, None
    for at, char in enumerate(path):
        depth += char == "<"
        depth -= char == ">"
        if depth == 1 and path.startswith(" as ", at):
            split = at
            break
    inner = path[1:split] if split else path[1 : path.find(">") if ">" in path else None]
    subject = inner.lstrip("&*[ ").removeprefix("mut ").removeprefix("const ")
    subject = re.split(r"[<;\]]", subject, maxsplit=1)[0]
    if split and (PRIMITIVE.match(subject) or "::" not in subject):
        trait = path[split + 4 :]
        return trait.lstrip("&*[ ")
    return subject


def module(path):
    """The module of one of our functions: its snake_case segments, with the code of
    a `const _` block (serde's derived `Serialize`, `read_fields!` and
    `read_variants!`) named as such."""
    segments = []
    for segment in path:
        if segment == "_":
            return "::".join(segments) + " (serde: derives, read_fields!)"
        if not re.fullmatch(r"[a-z][a-z0-9_]*", segment):
            break
        segments.append(segment)
    return "::".join(segments[:3])


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 12
    data = open(sys.argv[1], "rb").read()
    imports, sizes, names, data_bytes = 0, [], None, 0
    for kind, start, size in sections(data):
        if kind == 2:
            imports = imported_functions(data, start)
        elif kind == 10:
            sizes = body_sizes(data, start)
        elif kind == 11:
            data_bytes = size
        elif kind == 0:
            names = function_names(data, start, size) or names
    if names is None:
        sys.exit(f"{sys.argv[1]} has no name section: build it without stripping")
    crates, modules, functions = Counter(), Counter(), Counter()
    for offset, size in enumerate(sizes):
        path = demangle(names.get(imports + offset, f"function[{imports + offset}]"))
        where = owner(path).split("::")
        crate = where[0] if len(where) > 1 else "(no crate: libc, allocator, glue)"
        crates[crate] += size
        if crate == OURS:
            modules[module(where)] += size
        functions[re.sub(r"::\{\{closure\}\}", "", path)[:110]] += size
    code = sum(sizes)

    def table(title, counts, limit):
        print(f"{title:<78} {'bytes':>9} {'share':>6}")
        for name, size in counts.most_common(limit):
            print(f"  {name:<76} {size:>9,} {100 * size / code:>5.1f}%")

    print(f"code {code:,} bytes in {len(sizes):,} functions; data {data_bytes:,} bytes")
    table("by crate", crates, top)
    table(f"by module of {OURS} (its {crates[OURS]:,} bytes)", modules, 2 * top)
    table("largest functions (closures with their function)", functions, top)


if __name__ == "__main__":
    main()
