"""A stand-in for Sign in with Apple's REST endpoints, for the sign-in tests (standard library, PyJWT 2.15.1 and
cryptography 50.0.2). Apple's service cannot be reached from here; this follows the shapes Apple documents:

  GET  /auth/authorize  client_id, redirect_uri, response_type (code | code id_token), scope (name email),
                        response_mode (query | fragment | form_post; form_post required once name or email is asked),
                        state, nonce; PKCE code_challenge/code_challenge_method=S256 kept when sent. The answer goes to
                        redirect_uri: code, state, id_token (response_type code id_token), and user, a JSON string
                        {"name":{"firstName":..,"lastName":..},"email":..}, ONLY on the first authorization of a
                        (client, user) pair, or error=user_cancelled_authorize on cancel.
  POST /auth/token      form: client_id, client_secret, grant_type=authorization_code with code [redirect_uri, when
                        given at authorize; code_verifier, when a challenge was], or grant_type=refresh_token with
                        refresh_token. Answers {access_token, token_type: "Bearer", expires_in: 3600, refresh_token,
                        id_token} (a refresh answers no refresh_token), or 400 {"error": invalid_request |
                        invalid_client | invalid_grant | unsupported_grant_type}. Codes are single-use, valid 5 min.
  POST /auth/revoke     form: client_id, client_secret, token, token_type_hint (refresh_token | access_token); 200.
  GET  /auth/keys       JWKS: {"keys": [{kty: RSA, kid, use: sig, alg: RS256, n, e}]}
  client_secret         an ES256 JWT: header {alg: ES256, kid: the key id}, claims {iss: team id, iat, exp (at most
                        15777000 s after iat, not past), aud: "https://appleid.apple.com", sub: the client id}, signed
                        with the developer's P-256 key. Apple reads it from the form only (client_secret_post).
  ID token (RS256)      iss, aud (the client id), exp (iat + 1 day), iat, sub, auth_time, nonce (as the client sent it),
                        nonce_supported: true, at_hash (beside an access token), and with the email scope email,
                        email_verified and is_private_email, which Apple sends as the STRINGS "true"/"false".
The issuer is http://127.0.0.1:PORT rather than https://appleid.apple.com.

Usage: apple_standin.py --port 0 --team-id TEAM --key-id KEYID --public-key KEY.pem --client-id ID [--client-id ID2]
                        [--redirect-uri URI ...] [--verbose]
  --public-key: a PEM P-256 public key (or the private key, whose public half is used). --redirect-uri: when given,
  the only redirect URIs accepted. Prints `listening PORT ISSUER`; runs until SIGTERM/SIGINT, or until stdin closes
  when stdin is a pipe. The authorization page: <input id="apple-sub" name="sub"> (a user's sub or email; unknown
  ones become a user with that sub and email), <button id="apple-continue">, <button id="apple-cancel">.
Control API (JSON):
  POST /_control/users  {"sub", "email"?, "email_verified"? ("true"/"false" or a bool, sent as given; default "true"),
                        "is_private_email"? (likewise; default "false"), "name"? {"firstName", "lastName"} (sent in
                        `user`; default Test User), "reset_consent"? (true: the next authorization sends `user`
                        again)} -> the user
  POST /_control/id-token {"sub", "aud", "nonce"?, "email"?, "email_verified"?, "exp_in"? (s, default 86400),
                        "iat_offset"? (s, default 0)} -> {"id_token", "authorization_code"}: what the native
                        flow hands an app; the code is exchangeable once at /auth/token without redirect_uri.
  POST /_control/rotate {} -> {"old_kid", "kid"}: a new RSA key signs from now on; the old one leaves the JWKS.
  POST /_control/fail-revocations {"count": N} -> {}: the next N revocations answer 500 and are not recorded as done.
  GET  /_control/revocations -> {"revocations": [{client_id, token, token_type_hint}], "failed": N}
  GET  /_control/client-secrets -> {"client_secrets": [{endpoint, client_id, header, claims, valid, error}]}
"""
import argparse
import base64
import hashlib
import html
import json
import os
import secrets
import signal
import stat
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

APPLE_AUDIENCE = "https://appleid.apple.com"
MAX_SECRET_LIFETIME = 15777000
CODE_LIFETIME = 300

arguments = None
issuer = ""
lock = threading.Lock()
signing = {}  # {"kid", "key"}: the current RSA key
users, consented, codes, refresh_tokens, access_tokens = {}, set(), {}, {}, {}
revocations, secrets_seen = [], []
revocation_failures = {"pending": 0, "failed": 0}


class Refusal(Exception):
    def __init__(self, error, status=400):
        super().__init__(error)
        self.error, self.status = error, status


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def new_key():
    signing.update(kid=secrets.token_urlsafe(6), key=rsa.generate_private_key(public_exponent=65537, key_size=2048))


def jwks():
    jwk = jwt.algorithms.RSAAlgorithm.to_jwk(signing["key"].public_key(), as_dict=True)
    return {"keys": [{"kty": "RSA", "kid": signing["kid"], "use": "sig", "alg": "RS256", "n": jwk["n"], "e": jwk["e"]}]}


def user_for(value):
    """The user with this sub, else the one with this email, else a new one with this sub and email."""
    if value in users:
        return users[value]
    for user in users.values():
        if user.get("email") == value:
            return user
    return set_user({"sub": value, "email": value})


def set_user(body):
    user = users.setdefault(body["sub"], {"sub": body["sub"], "email_verified": "true", "is_private_email": "false"})
    user.update({key: body[key] for key in ("email", "email_verified", "is_private_email", "name") if key in body})
    if body.get("reset_consent"):
        consented.difference_update({pair for pair in consented if pair[1] == body["sub"]})
    return user


def id_token(sub, aud, nonce=None, scope=None, access_token=None, exp_in=86400, iat_offset=0):
    user, now = users[sub], int(time.time())
    claims = {"iss": issuer, "aud": aud, "exp": now + iat_offset + exp_in, "iat": now + iat_offset, "sub": sub,
              "auth_time": now, "nonce_supported": True}
    if nonce is not None:
        claims["nonce"] = nonce
    if access_token:
        claims["at_hash"] = b64url(hashlib.sha256(access_token.encode()).digest()[:16])
    if (scope is None or "email" in scope.split()) and user.get("email"):
        claims.update(email=user["email"], email_verified=user["email_verified"],
                      is_private_email=user["is_private_email"])
    return jwt.encode(claims, signing["key"], algorithm="RS256", headers={"kid": signing["kid"], "typ": None})


def verify_client_secret(form, endpoint):
    """Checks client_id and client_secret as Apple does; records what was seen. Raises Refusal("invalid_client")."""
    client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
    record = {"endpoint": endpoint, "client_id": client_id, "header": None, "claims": None, "valid": False}
    secrets_seen.append(record)
    try:
        record["header"] = jwt.get_unverified_header(secret)
        record["claims"] = jwt.decode(secret, options={"verify_signature": False})
        header, claims, now = record["header"], record["claims"], time.time()
        checks = [
            (client_id in arguments.client_id, "unknown client_id"),
            (header.get("alg") == "ES256", "alg is not ES256"),
            (header.get("kid") == arguments.key_id, "kid is not the configured key id"),
            (claims.get("iss") == arguments.team_id, "iss is not the team id"),
            (claims.get("sub") == client_id, "sub is not client_id"),
            (claims.get("aud") == APPLE_AUDIENCE, f"aud is not {APPLE_AUDIENCE}"),
            (isinstance(claims.get("iat"), int) and claims["iat"] <= now, "iat missing or in the future"),
            (isinstance(claims.get("exp"), int) and claims["exp"] > now, "exp missing or past"),
            (isinstance(claims.get("exp"), int) and isinstance(claims.get("iat"), int)
             and claims["exp"] - claims["iat"] <= MAX_SECRET_LIFETIME, "exp more than 15777000 s after iat"),
        ]
        for passed, problem in checks:
            if not passed:
                raise Refusal(problem)
        jwt.decode(secret, arguments.public_key, algorithms=["ES256"], audience=APPLE_AUDIENCE,
                   issuer=arguments.team_id, options={"require": ["iss", "sub", "aud", "iat", "exp"]})
    except (jwt.InvalidTokenError, Refusal) as error:
        record["error"] = str(error) or type(error).__name__
        raise Refusal("invalid_client")
    record.update(valid=True, error=None)
    return client_id


def issue(client_id, sub, scope, nonce=None, with_refresh=True):
    access = secrets.token_urlsafe(24)
    access_tokens[access] = {"client_id": client_id, "sub": sub}
    answer = {"access_token": access, "token_type": "Bearer", "expires_in": 3600,
              "id_token": id_token(sub, client_id, nonce, scope, access)}
    if with_refresh:
        refresh = secrets.token_urlsafe(32)
        refresh_tokens[refresh] = {"client_id": client_id, "sub": sub, "scope": scope, "revoked": False}
        answer["refresh_token"] = refresh
    return answer


def token(form):
    client_id = verify_client_secret(form, "token")
    grant_type = form.get("grant_type")
    if grant_type == "authorization_code":
        code = codes.pop(form.get("code", ""), None)  # single use: gone once presented
        if not code or code["client_id"] != client_id or code["expires"] < time.time():
            raise Refusal("invalid_grant")
        if code["redirect_uri"] is not None and form.get("redirect_uri") != code["redirect_uri"]:
            raise Refusal("invalid_grant")
        verifier = form.get("code_verifier")
        if code["challenge"] is not None:
            if not verifier or b64url(hashlib.sha256(verifier.encode()).digest()) != code["challenge"]:
                raise Refusal("invalid_grant")
        elif verifier:
            raise Refusal("invalid_grant")
        return issue(client_id, code["sub"], code["scope"], code["nonce"])
    if grant_type == "refresh_token":
        refresh = refresh_tokens.get(form.get("refresh_token", ""))
        if not refresh or refresh["revoked"] or refresh["client_id"] != client_id:
            raise Refusal("invalid_grant")
        return issue(client_id, refresh["sub"], refresh["scope"], with_refresh=False)
    raise Refusal("unsupported_grant_type" if grant_type else "invalid_request")


def revoke(form):
    client_id = verify_client_secret(form, "revoke")
    if not form.get("token"):
        raise Refusal("invalid_request")
    if revocation_failures["pending"] > 0:
        revocation_failures["pending"] -= 1
        revocation_failures["failed"] += 1
        raise Refusal("server_error", 500)
    token_value, hint = form["token"], form.get("token_type_hint")
    if refresh_tokens.get(token_value, {}).get("client_id") == client_id:
        refresh_tokens[token_value]["revoked"] = True
    if access_tokens.get(token_value, {}).get("client_id") == client_id:
        del access_tokens[token_value]
    revocations.append({"client_id": client_id, "token": token_value, "token_type_hint": hint})
    return None


AUTHORIZE_PARAMETERS = ("client_id", "redirect_uri", "response_type", "scope", "response_mode", "state", "nonce",
                        "code_challenge", "code_challenge_method")


def check_authorization_request(query):
    scope = query.get("scope", "").split()
    mode = query.get("response_mode", "query")
    problems = [
        (query.get("client_id") in arguments.client_id, "invalid_client"),
        (query.get("redirect_uri", "").startswith(("http://", "https://")), "invalid_request: redirect_uri"),
        (not arguments.redirect_uri or query.get("redirect_uri") in arguments.redirect_uri,
         "invalid_request: redirect_uri not registered"),
        (query.get("response_type") in ("code", "code id_token"), "unsupported_response_type"),
        (set(scope) <= {"openid", "name", "email"}, "invalid_scope"),
        (mode in ("query", "fragment", "form_post"), "invalid_request: response_mode"),
        (mode == "form_post" or not {"name", "email"} & set(scope),
         "invalid_request: response_mode must be form_post when name or email is requested"),
        (not query.get("code_challenge") or query.get("code_challenge_method") == "S256",
         "invalid_request: code_challenge_method must be S256"),
    ]
    for passed, problem in problems:
        if not passed:
            raise Refusal(problem)


def page(title, body):
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title></head>'
            f"<body>{body}</body></html>")


def authorization_page(query):
    hidden = "".join(f'<input type="hidden" name="{name}" value="{html.escape(query[name])}">'
                     for name in AUTHORIZE_PARAMETERS if name in query)
    return page("Sign in with Apple", f"""
<h1 id="apple-title">Sign in with Apple</h1><p>to <code>{html.escape(query["client_id"])}</code></p>
<form id="apple-signin" method="post" action="/auth/authorize">{hidden}
<label for="apple-sub">Apple ID (sub or email)</label> <input id="apple-sub" name="sub" required autofocus>
<button id="apple-continue" type="submit" name="action" value="continue">Continue</button>
<button id="apple-cancel" type="submit" name="action" value="cancel" formnovalidate>Cancel</button>
</form>""")


def authorization_answer(query, form):
    """What Apple sends back to redirect_uri once the person chose: (status, headers, body)."""
    answer = {"state": query["state"]} if "state" in query else {}
    scope = query.get("scope", "")
    if form.get("action") == "cancel":
        answer["error"] = "user_cancelled_authorize"
    else:
        if not form.get("sub", "").strip():
            raise Refusal("invalid_request: sub")
        user = user_for(form["sub"].strip())
        code = secrets.token_urlsafe(24)
        codes[code] = {"client_id": query["client_id"], "sub": user["sub"], "redirect_uri": query["redirect_uri"],
                       "nonce": query.get("nonce"), "challenge": query.get("code_challenge"), "scope": scope,
                       "expires": time.time() + CODE_LIFETIME}
        answer["code"] = code
        if "id_token" in query["response_type"].split():
            answer["id_token"] = id_token(user["sub"], query["client_id"], query.get("nonce"), scope)
        if (query["client_id"], user["sub"]) not in consented and {"name", "email"} & set(scope.split()):
            consented.add((query["client_id"], user["sub"]))
            shared = {}
            if "name" in scope.split():
                shared["name"] = user.get("name") or {"firstName": "Test", "lastName": "User"}
            if "email" in scope.split():
                shared["email"] = user.get("email")
            answer["user"] = json.dumps(shared)
    mode = query.get("response_mode", "query")
    if mode == "form_post":
        fields = "".join(f'<input type="hidden" name="{name}" value="{html.escape(value)}">'
                         for name, value in answer.items())
        body = (f'<form id="apple-redirect" method="post" action="{html.escape(query["redirect_uri"])}">{fields}'
                '<noscript><button type="submit">Continue</button></noscript></form>'
                "<script>document.getElementById('apple-redirect').submit()</script>")
        return 200, {}, page("Signing in", body)
    separator = "#" if mode == "fragment" else ("&" if "?" in query["redirect_uri"] else "?")
    return 302, {"Location": query["redirect_uri"] + separator + urllib.parse.urlencode(answer)}, ""


def control(path, body):
    if path == "/_control/users":
        return set_user(body)
    if path == "/_control/id-token":
        user = set_user({key: body[key] for key in ("sub", "email", "email_verified") if key in body})
        code = secrets.token_urlsafe(24)
        codes[code] = {"client_id": body["aud"], "sub": user["sub"], "redirect_uri": None, "nonce": body.get("nonce"),
                       "challenge": None, "scope": None, "expires": time.time() + CODE_LIFETIME}
        return {"id_token": id_token(user["sub"], body["aud"], body.get("nonce"), exp_in=body.get("exp_in", 86400),
                                     iat_offset=body.get("iat_offset", 0)), "authorization_code": code}
    if path == "/_control/rotate":
        old = signing["kid"]
        new_key()
        return {"old_kid": old, "kid": signing["kid"]}
    if path == "/_control/fail-revocations":
        revocation_failures["pending"] = int(body.get("count", 1))
        return {}
    raise Refusal("not_found", 404)


class Handler(BaseHTTPRequestHandler):
    def answer(self, status, body, content_type="application/json", headers=None):
        data = (json.dumps(body) if content_type == "application/json" else body).encode() if body is not None else b""
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if data or content_type != "application/json":
            self.send_header("Content-Type", content_type + ("; charset=utf-8" if "html" in content_type else ""))
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        with lock:
            if url.path == "/.well-known/openid-configuration":
                return self.answer(200, discovery())
            if url.path == "/auth/keys":
                return self.answer(200, jwks())
            if url.path == "/auth/authorize":
                try:
                    check_authorization_request(query)
                except Refusal as refusal:
                    return self.answer(400, page("Error", f'<p id="apple-error">{refusal.error}</p>'), "text/html")
                return self.answer(200, authorization_page(query), "text/html")
            if url.path == "/_control/revocations":
                return self.answer(200, {"revocations": revocations, "failed": revocation_failures["failed"]})
            if url.path == "/_control/client-secrets":
                return self.answer(200, {"client_secrets": secrets_seen})
        self.answer(404, {"error": "not_found"})

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        with lock:
            try:
                if path.startswith("/_control/"):
                    return self.answer(200, control(path, json.loads(raw or "{}")))
                form = dict(urllib.parse.parse_qsl(raw))
                if path == "/auth/token":
                    return self.answer(200, token(form))
                if path == "/auth/revoke":
                    return self.answer(200, revoke(form))
                if path == "/auth/authorize":
                    query = {name: form[name] for name in AUTHORIZE_PARAMETERS if name in form}
                    check_authorization_request(query)
                    status, headers, body = authorization_answer(query, form)
                    return self.answer(status, body, "text/html", headers)
            except Refusal as refusal:
                return self.answer(refusal.status, {"error": refusal.error})
            except (KeyError, ValueError, TypeError) as error:  # a control request without a field it needs
                return self.answer(400, {"error": f"invalid_request: {type(error).__name__} {error}"})
        self.answer(404, {"error": "not_found"})

    def log_message(self, format, *args):
        if arguments.verbose:
            super().log_message(format, *args)


def discovery():
    return {
        "issuer": issuer, "authorization_endpoint": f"{issuer}/auth/authorize",
        "token_endpoint": f"{issuer}/auth/token", "revocation_endpoint": f"{issuer}/auth/revoke",
        "jwks_uri": f"{issuer}/auth/keys",
        "response_types_supported": ["code"], "response_modes_supported": ["query", "fragment", "form_post"],
        "subject_types_supported": ["pairwise"], "id_token_signing_alg_values_supported": ["RS256"],
        "scopes_supported": ["openid", "email", "name"],
        "token_endpoint_auth_methods_supported": ["client_secret_post"],
        "claims_supported": ["aud", "email", "email_verified", "exp", "iat", "is_private_email", "iss", "nonce",
                             "nonce_supported", "real_user_status", "sub", "transfer_sub"],
    }


def main():
    global arguments, issuer
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--team-id", required=True)
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--public-key", required=True, help="PEM file: the P-256 key client secrets are signed with")
    parser.add_argument("--client-id", action="append", required=True)
    parser.add_argument("--redirect-uri", action="append", default=[])
    parser.add_argument("--verbose", action="store_true")
    arguments = parser.parse_args()
    with open(arguments.public_key, "rb") as file:
        pem = file.read()
    key = (serialization.load_pem_public_key(pem) if b"PUBLIC KEY" in pem
           else serialization.load_pem_private_key(pem, password=None).public_key())
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
        parser.error("--public-key must be a P-256 key")
    arguments.public_key = key
    new_key()
    server = ThreadingHTTPServer(("127.0.0.1", arguments.port), Handler)
    server.daemon_threads = True
    port = server.server_address[1]
    issuer = f"http://127.0.0.1:{port}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"listening {port} {issuer}", flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        stdin_is_pipe = stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        stdin_is_pipe = False
    if stdin_is_pipe:
        threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    stop.wait()
    server.shutdown()


if __name__ == "__main__":
    main()
