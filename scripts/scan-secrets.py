#!/usr/bin/env python3
"""Fails when the repository or a built bundle holds a provider key or a service-role
JWT: no API key ever lives in the page, nor in the code that builds it.

Usage: scan-secrets.py [PATH ...]   the git-tracked files, plus PATHs (files or dirs)
       scan-secrets.py --self-test   plants keys of every kind and checks each is found

A line may hold a deliberately fake key (a test of the key checks) only when it says
so with the marker `fake-key` on the same line.
"""
import base64
import json
import re
import subprocess
import sys
from pathlib import Path

PATTERNS = {
    "OpenAI-style key": re.compile(rb"\bsk-(?:proj-|svcacct-|admin-|ant-(?:api\d+-)?)?([A-Za-z0-9_-]{20,})"),
    "Supabase secret key": re.compile(rb"\bsb_secret_([A-Za-z0-9_-]{16,})"),
    "Google API key": re.compile(rb"\bAIza[0-9A-Za-z_-]{35}\b"),
    "AWS access key": re.compile(rb"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "GitHub token": re.compile(rb"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),
    "Slack token": re.compile(rb"\bxox[abpsr]-[A-Za-z0-9-]{10,}"),
    "private key": re.compile(rb"-----BEGIN (?:RSA |EC |OPENSSH )?PRIVATE KEY-----"),
}
JWT = re.compile(rb"\beyJ[A-Za-z0-9_-]{8,}\.(eyJ[A-Za-z0-9_-]{8,})\.[A-Za-z0-9_-]{8,}")
MARKER = b"fake-key"


def looks_random(match: re.Match) -> bool:
    """A key's body is random: long, with upper and lower case letters and digits. (The
    key checks' own prefix tables, packed in the bundle's data, are not.)"""
    if not match.groups():
        return True
    body = match.group(1)
    return (len(body) >= 20 and any(c in b"0123456789" for c in body)
            and any(97 <= c <= 122 for c in body) and any(65 <= c <= 90 for c in body))


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
        if MARKER in line:
            continue
        for what, pattern in PATTERNS.items():
            if any(looks_random(m) for m in pattern.finditer(line)):
                yield number, what
        for match in JWT.finditer(line):
            if jwt_role(match.group(1)) == "service_role":
                yield number, "service-role JWT"


def tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], capture_output=True, check=True).stdout
    return [Path(p.decode()) for p in out.split(b"\0") if p]


def self_test() -> int:
    """The check is not vacuous: a planted key of each kind is found, a marked one is not."""
    import tempfile

    def b64(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    body = "Ab3dEf9hIjK2mNoPqRsTuVwXyZ012345"
    planted = {
        "OpenAI-style key": f"sk-proj-{body}",
        "Supabase secret key": f"sb_secret_{body}",
        "Google API key": "AIza" + body + "abc",
        "AWS access key": "AKIA" + "ABCDEFGHIJKLMNOP",
        "GitHub token": "ghp_" + body + "abcd",
        "service-role JWT": f"{b64({'alg': 'HS256'})}.{b64({'role': 'service_role'})}.{body}",
    }
    with tempfile.TemporaryDirectory() as root:
        path = Path(root, "planted.txt")
        lines = [f"key = '{key}'" for key in planted.values()]
        lines.append(f"key = 'sk-proj-{body}'  # fake-key")
        lines.append(f"anon = '{b64({'alg': 'HS256'})}.{b64({'role': 'anon'})}.{body}'")
        path.write_text("\n".join(lines) + "\n")
        found = {what for _, what in findings(path)}
        count = len(list(findings(path)))
    missed = set(planted) - found
    if missed or count != len(planted):
        print(f"self-test failed: missed {sorted(missed)}, {count} finding(s) for {len(planted)} keys")
        return 1
    print(f"self-test: all {len(planted)} planted kinds found; the marked key and the anon JWT passed")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    files = tracked()
    for root in map(Path, sys.argv[1:]):
        files += [root] if root.is_file() else [p for p in root.rglob("*") if p.is_file()]
    bad = [(path, number, what) for path in files for number, what in findings(path)]
    for path, number, what in bad:
        print(f"{path}:{number}: {what}")
    print(f"scanned {len(files)} files: {len(bad)} secret(s) found")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
