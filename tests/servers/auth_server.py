"""A small Supabase Auth (GoTrue) stand-in for tests, on loopback.

Answers the endpoints Familiar's client uses, with Supabase's request and response
shapes:
  POST /auth/v1/signup                          {} or {"data": {...}}: an anonymous user;
                                                {"email", "password"}: a confirmed user
  POST /auth/v1/token?grant_type=password       {"email", "password"}
  POST /auth/v1/token?grant_type=refresh_token  {"refresh_token"} (rotated: each works once)
  GET  /auth/v1/user                            the bearer's user
  POST /auth/v1/logout                          ends the bearer's sessions (204)
  GET  /auth/v1/settings                        {"mailer_autoconfirm", "external", …}
  GET  /auth/v1/verify?token=…&type=signup      the confirmation link a sign-up mails
The project confirms emails or not, as Supabase's "Confirm email" setting says: off by
default here; on, as a hosted project has it by default, a sign-up with an email answers
the user and no session, mails a confirmation link, and signing in before the link is
followed is refused ("Email not confirmed"); signing up with an address already taken
answers an obfuscated user, as for a new one, so no one learns the address is taken.
Tests switch it, and read the mail, through routes no Supabase project has:
  POST /__stand-in/settings {"mailer_autoconfirm": bool}
  GET  /__stand-in/mail?email=…                 {"link": the last confirmation link}
Each success is a session: access_token (an HS256 JWT with role `authenticated`, `sub`,
`exp`, signed with the secret postrust verifies), token_type, expires_in, expires_at,
refresh_token and user. Errors are Supabase's: {"code", "error_code", "msg"}. Every
request needs an `apikey` header; CORS is open.

With a REST URL it is also the project's gateway, as Supabase's is: requests under
/rest/v1/ go on to that PostgREST server unchanged, so one project URL serves both.

Usage: auth_server.py PORT SECRET [ACCESS_TOKEN_SECONDS [REST_URL]]  (PORT 0 picks one;
prints `listening on PORT` once ready). Standard library only; state lives in memory.
"""

import base64
import hashlib
import hmac
import json
import secrets
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

SECRET = b""
LIFETIME = 3600
REST = None  # the PostgREST server behind /rest/v1/, if any
LOCK = threading.Lock()
USERS = {}  # id -> user record
BY_EMAIL = {}  # email -> id
REFRESH = {}  # refresh token -> user id (removed when used or signed out)
SETTINGS = {"mailer_autoconfirm": True}  # False: emails confirmed before the first sign-in
MAIL = {}  # email -> the confirmation link last sent to it
CONFIRM = {}  # confirmation token -> user id


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def sign(claims):
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps(claims).encode())
    mac = hmac.new(SECRET, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(mac)}"


def verify(token):
    """The claims of a valid, unexpired token, or None."""
    try:
        head, body, mac = token.split(".")
        want = hmac.new(SECRET, f"{head}.{body}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(want, unb64(mac)):
            return None
        claims = json.loads(unb64(body))
    except (ValueError, json.JSONDecodeError):
        return None
    if claims.get("exp", 0) <= time.time():
        return None
    return claims


def public(user):
    return {
        "id": user["id"],
        "aud": "authenticated",
        "role": "authenticated",
        "email": user["email"] or "",
        "phone": "",
        "is_anonymous": user["email"] is None,
        "user_metadata": user["data"],
        "app_metadata": {"provider": "email" if user["email"] else "anonymous"},
        "created_at": user["created_at"],
    }


def session(user):
    now = int(time.time())
    claims = {
        "aud": "authenticated",
        "iat": now,
        "exp": now + LIFETIME,
        "sub": user["id"],
        "email": user["email"] or "",
        "role": "authenticated",
        "is_anonymous": user["email"] is None,
        "session_id": str(uuid.uuid4()),
    }
    refresh = secrets.token_urlsafe(24)
    REFRESH[refresh] = user["id"]
    return {
        "access_token": sign(claims),
        "token_type": "bearer",
        "expires_in": LIFETIME,
        "expires_at": now + LIFETIME,
        "refresh_token": refresh,
        "user": public(user),
    }


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def unconfirmed(user, identities):
    """A sign-up's answer when emails are confirmed first: the user, no session."""
    return {**public(user), "confirmation_sent_at": now(), "identities": identities}


def hashed(password, salt):
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 10_000).hex()


def new_user(email=None, password=None, data=None):
    salt = secrets.token_bytes(16)
    user = {
        "id": str(uuid.uuid4()),
        "email": email,
        "salt": salt,
        "password": hashed(password, salt) if password else None,
        "data": data or {},
        "created_at": now(),
        "confirmed_at": now() if SETTINGS["mailer_autoconfirm"] or not email else None,
    }
    USERS[user["id"]] = user
    if email:
        BY_EMAIL[email] = user["id"]
    return user


class Refusal(Exception):
    def __init__(self, status, code, msg):
        super().__init__(msg)
        self.status, self.code, self.msg = status, code, msg


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def cors(self):
        self.send_header("access-control-allow-origin", "*")
        self.send_header("access-control-allow-methods", "GET, POST, PATCH, DELETE, OPTIONS")
        self.send_header(
            "access-control-allow-headers",
            "authorization, apikey, content-type, x-client-info, x-supabase-api-version, "
            "prefer, accept-profile, content-profile, range",
        )

    def reply(self, status, body=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.cors()
        if body is not None:
            self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_OPTIONS(self):
        self.reply(204)

    def body(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw.strip():
            return {}
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            raise Refusal(400, "bad_json", "Could not parse request body as JSON")
        if not isinstance(value, dict):
            raise Refusal(400, "bad_json", "The request body must be a JSON object")
        return value

    def bearer(self):
        auth = self.headers.get("authorization") or ""
        claims = verify(auth[7:]) if auth.lower().startswith("bearer ") else None
        if claims is None or claims.get("sub") not in USERS:
            raise Refusal(
                403, "bad_jwt",
                "invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired",
            )
        return USERS[claims["sub"]]

    def forward(self, method, path):
        """Passes a /rest/v1/ request on to PostgREST and its answer back."""
        length = int(self.headers.get("content-length") or 0)
        data = self.rfile.read(length) if length else None
        request = urllib.request.Request(REST + path, data=data, method=method)
        for name, value in self.headers.items():
            if name.lower() not in ("host", "content-length", "connection", "origin"):
                request.add_header(name, value)
        try:
            answer = urllib.request.urlopen(request, timeout=30)
        except urllib.error.HTTPError as error:
            answer = error
        body = answer.read()
        self.send_response(answer.status)
        self.cors()
        self.send_header("access-control-expose-headers", "content-range")
        for name, value in answer.headers.items():
            if name.lower() in ("content-type", "content-range", "preference-applied"):
                self.send_header(name, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self, method):
        url = urlparse(self.path)
        if REST and url.path.startswith("/rest/v1/"):
            self.forward(method, self.path[len("/rest/v1"):])
            return
        route = (method, url.path)
        query = parse_qs(url.query)
        if route == ("GET", "/auth/v1/verify"):  # a link in a mail: no apikey
            with LOCK:
                user_id = CONFIRM.pop(query.get("token", [""])[0], None)
                if user_id in USERS:
                    USERS[user_id]["confirmed_at"] = now()
            if user_id is None:
                self.reply(403, {"code": 403, "error_code": "otp_expired",
                                 "msg": "Email link is invalid or has expired"})
            else:
                self.reply(200, {"msg": "Email confirmed"})
            return
        if not self.headers.get("apikey"):
            self.reply(401, {"message": "No API key found in request"})
            return
        grant = query.get("grant_type", [""])[0]
        try:
            with LOCK:
                if route == ("GET", "/auth/v1/settings"):
                    self.reply(200, {"mailer_autoconfirm": SETTINGS["mailer_autoconfirm"],
                                     "external": {"email": True, "anonymous_users": True},
                                     "disable_signup": False})
                elif route == ("POST", "/__stand-in/settings"):
                    SETTINGS["mailer_autoconfirm"] = bool(self.body().get("mailer_autoconfirm"))
                    self.reply(200, dict(SETTINGS))
                elif route == ("GET", "/__stand-in/mail"):
                    link = MAIL.get(query.get("email", [""])[0])
                    if link is None:
                        raise Refusal(404, "not_found", "no mail to that address")
                    self.reply(200, {"link": link})
                elif route == ("POST", "/auth/v1/signup"):
                    self.reply(200, self.signup(self.body()))
                elif route == ("POST", "/auth/v1/token") and grant == "password":
                    self.reply(200, self.password(self.body()))
                elif route == ("POST", "/auth/v1/token") and grant == "refresh_token":
                    self.reply(200, self.refresh(self.body()))
                elif route == ("GET", "/auth/v1/user"):
                    self.reply(200, public(self.bearer()))
                elif route == ("POST", "/auth/v1/logout"):
                    user = self.bearer()
                    for token in [t for t, u in REFRESH.items() if u == user["id"]]:
                        del REFRESH[token]
                    self.reply(204)
                else:
                    raise Refusal(404, "not_found", f"no route for {method} {url.path}")
        except Refusal as refusal:
            self.reply(refusal.status, {
                "code": refusal.status, "error_code": refusal.code, "msg": refusal.msg,
            })

    def signup(self, body):
        email, password = body.get("email"), body.get("password")
        if not email and not password:
            return session(new_user(data=body.get("data")))
        if not email or "@" not in email:
            raise Refusal(400, "validation_failed", "Unable to validate email address: invalid format")
        if not password or len(password) < 6:
            raise Refusal(422, "weak_password", "Password should be at least 6 characters.")
        if email in BY_EMAIL:
            if SETTINGS["mailer_autoconfirm"]:
                raise Refusal(422, "user_already_exists", "User already registered")
            # A stranger with the same address, as Supabase answers: no identities.
            fake = {"id": str(uuid.uuid4()), "email": email, "data": {}, "created_at": now()}
            return unconfirmed(fake, [])
        user = new_user(email, password, body.get("data"))
        if user["confirmed_at"]:
            return session(user)
        token = secrets.token_urlsafe(24)
        CONFIRM[token] = user["id"]
        MAIL[email] = f"/auth/v1/verify?token={token}&type=signup"
        return unconfirmed(user, [{"provider": "email", "identity_id": str(uuid.uuid4())}])

    def password(self, body):
        user = USERS.get(BY_EMAIL.get(body.get("email") or "", ""))
        given = body.get("password") or ""
        if user is None or not hmac.compare_digest(user["password"], hashed(given, user["salt"])):
            raise Refusal(400, "invalid_credentials", "Invalid login credentials")
        if not user["confirmed_at"]:
            raise Refusal(400, "email_not_confirmed", "Email not confirmed")
        return session(user)

    def refresh(self, body):
        user_id = REFRESH.pop(body.get("refresh_token") or "", None)
        if user_id is None or user_id not in USERS:
            raise Refusal(400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found")
        return session(USERS[user_id])

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_DELETE(self):
        self.handle_any("DELETE")


def main():
    global SECRET, LIFETIME, REST
    port = int(sys.argv[1])
    SECRET = sys.argv[2].encode()
    if len(sys.argv) > 3:
        LIFETIME = int(sys.argv[3])
    if len(sys.argv) > 4:
        REST = sys.argv[4].rstrip("/")
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
