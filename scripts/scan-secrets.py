#!/usr/bin/env python3
"""Fails when the repository or a built bundle holds a provider key or a service-role
JWT: no API key ever lives in the page, nor in the code that builds it.

Usage: scan-secrets.py [PATH ...]   the git-tracked files, plus PATHs (files or dirs)
       scan-secrets.py --self-test   plants keys of every kind and checks each is found

The key shapes are src/base/key_shapes.txt, the list the header check reads too. A
deliberately fake key (a test of the key checks) passes only when the marker
`fake-key` stands within 200 bytes of it on the same line (a minified bundle is one
line: a marker elsewhere in it exempts nothing).
"""
import base64
import json
import re
import subprocess
import sys
from pathlib import Path

# The provider key shapes, shared with the header check (src/base/secret.rs).
SHAPES_FILE = Path(__file__).resolve().parent.parent / "src" / "base" / "key_shapes.txt"


def shapes() -> dict[str, tuple[str, re.Pattern]]:
    """Each shape of SHAPES_FILE by name: its prefix, and the pattern PREFIX then BODY.
    No word boundary before the prefix: a bundle's data packs strings with nothing
    between them."""
    found = {}
    for line in SHAPES_FILE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        prefix, body, name = line.split(None, 2)
        found[name.strip()] = prefix, re.compile(re.escape(prefix).encode() + body.encode())
    return found


PATTERNS = {
    **{name: pattern for name, (_, pattern) in shapes().items()},
    "private key": re.compile(rb"-----BEGIN (?:RSA |EC |OPENSSH )?PRIVATE KEY-----"),
}
JWT = re.compile(rb"eyJ[A-Za-z0-9_-]{8,}\.(eyJ[A-Za-z0-9_-]{8,})\.[A-Za-z0-9_-]{8,}")
MARKER = b"fake-key"
# How near a match the marker must be: on a minified bundle's one long line, a marker
# elsewhere exempts nothing.
MARKER_REACH = 200


def looks_random(match: re.Match) -> bool:
    """A key's body is random: at least 20 characters with upper and lower case letters
    and digits, or 30 with two of them (lower-case hex keys, letter-only tokens). (The
    key checks' own tables, packed in the bundle's data, are not.)"""
    if not match.groups():
        return True
    body = match.group(1)
    kinds = sum([any(48 <= c <= 57 for c in body), any(97 <= c <= 122 for c in body),
                 any(65 <= c <= 90 for c in body)])
    return len(body) >= 20 and (kinds == 3 or (kinds == 2 and len(body) >= 30))


def marked(line: bytes, match: re.Match) -> bool:
    """Whether the marker stands near the match, saying the key is a deliberate fake."""
    near = line[max(0, match.start() - MARKER_REACH):match.end() + MARKER_REACH]
    return MARKER in near


def jwt_role(payload: bytes) -> str:
    padded = payload + b"=" * (-len(payload) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, json.JSONDecodeError):
        return ""
    return str(claims.get("role", "")) if isinstance(claims, dict) else ""


def findings(path: Path):
    try:
        data = path.read_bytes()
    except OSError:
        return
    for number, line in enumerate(data.splitlines(), 1):
        for what, pattern in PATTERNS.items():
            if any(looks_random(m) and not marked(line, m) for m in pattern.finditer(line)):
                yield number, what
        for match in JWT.finditer(line):
            if jwt_role(match.group(1)) == "service_role" and not marked(line, match):
                yield number, "service-role JWT"


def tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True).stdout
    return [Path(p.decode()) for p in out.split(b"\0") if p]


def self_test() -> int:
    """The check is not vacuous: a planted key of every shape is found, in a file of one
    key a line and packed into one minified line (with a marker elsewhere on it); a
    marked key, an anon JWT and the shapes file itself are not."""
    import tempfile

    def b64(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    body = "Ab3dEf9hIjK2mNoPqRsTuVwXyZ012345abcdEFGH"
    planted = {}
    for name, (prefix, pattern) in shapes().items():
        for candidate in (body, body * 2, "ABCDEFGHIJKLMNOP"):
            match = pattern.search((prefix + candidate).encode())
            if match and looks_random(match):
                planted[name] = match.group(0).decode()
                break
        else:
            print(f"self-test failed: no key planted for the shape {name!r}")
            return 1
    planted["lower-case hex sk- key"] = "sk-" + "0123456789abcdef" * 2
    planted["service-role JWT"] = f"{b64({'alg': 'HS256'})}.{b64({'role': 'service_role'})}.{body}"
    kinds = {"lower-case hex sk- key": "OpenAI-style key"}
    passing = [
        f"key = 'sk-proj-{body}'  # fake-key",
        f"anon = '{b64({'alg': 'HS256'})}.{b64({'role': 'anon'})}.{body}'",
    ]
    failed = []
    with tempfile.TemporaryDirectory() as root:
        for name, key in planted.items():
            kind = kinds.get(name, name)
            alone = Path(root, "alone.txt")
            alone.write_text(f"key = '{key}'\n")
            # A minified bundle: one line, the key packed between letters, the marker
            # far from it.
            bundle = Path(root, "bundle.min.js")
            bundle.write_text("/* fake-key */" + " " * 300 + f"var a=\"x\";data{key}end\n")
            for path in (alone, bundle):
                if kind not in {what for _, what in findings(path)}:
                    failed.append(f"{name} in {path.name}")
        passed = Path(root, "passing.txt")
        passed.write_text("\n".join(passing) + "\n")
        failed += [f"{what} on passing line {n}" for n, what in findings(passed)]
        failed += [f"{what} in the shapes file" for _, what in findings(SHAPES_FILE)]
    if failed:
        print(f"self-test failed: {failed}")
        return 1
    print(f"self-test: all {len(planted)} planted keys found, alone on a line and packed in "
          "a minified line; the marked key, the anon JWT and the shapes file passed")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    files = tracked()
    for root in map(Path, sys.argv[1:]):
        files += [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
    # Model weights (the local model's GGUF, linked into dist/models/) are a
    # publisher's numbers, not ours: 100 MB of them would only give false alarms.
    files = [p for p in files if p.suffix != ".gguf"]
    bad = [(path, number, what) for path in files for number, what in findings(path)]
    for path, number, what in bad:
        print(f"{path}:{number}: {what}")
    print(f"scanned {len(files)} files: {len(bad)} secret(s) found")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
