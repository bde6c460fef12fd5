"""Self-test of the sign-in tests' two identity providers: oidc_provider.py (PyPI's oidc-provider-mock) and
apple_standin.py, each started as the Swift tests start them and driven over HTTP with urllib alone.

Usage: .build/oidc-provider-mock-0.3.4/bin/python Tests/OIDC/selftest.py   (that venv also holds PyJWT and cryptography)
Prints one line per check and closes with `N passed, N failed`; exits non-zero when a check failed.
"""
import base64
import hashlib
import html.parser
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

HERE = os.path.dirname(os.path.abspath(__file__))
results = {"passed": 0, "failed": 0}


def check(condition, what):
    results["passed" if condition else "failed"] += 1
    print(("ok   " if condition else "FAIL ") + what, flush=True)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


opener = urllib.request.build_opener(NoRedirect)


def call(method, url, form=None, json_body=None, headers=None):
    """(status, headers, body text) of one request; redirects are not followed."""
    data, headers = None, dict(headers or {})
    if form is not None:
        data = urllib.parse.urlencode(form).encode()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    if json_body is not None:
        data = json.dumps(json_body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data, headers, method=method)
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode()


def call_json(method, url, **options):
    status, _, body = call(method, url, **options)
    return status, (json.loads(body) if body.strip() else None)


def start(arguments):
    process = subprocess.Popen([sys.executable, *arguments], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline().split()
    assert line and line[0] == "listening", f"{arguments[0]} did not start: {line}"
    return process, line[2]


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def verify(token, jwks_uri, audience, issuer):
    """The ID token checked by PyJWT against the provider's JWKS, found by the token's kid."""
    key = jwt.PyJWKClient(jwks_uri, cache_keys=False, cache_jwk_set=False).get_signing_key_from_jwt(token)
    return jwt.decode(token, key.key, algorithms=["RS256"], audience=audience, issuer=issuer)


class HiddenFields(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__()
        self.fields, self.ids = {}, set()
        self.feed(text)

    def handle_starttag(self, tag, attributes):
        attributes = dict(attributes)
        if "id" in attributes:
            self.ids.add(attributes["id"])
        if tag == "input" and attributes.get("type") == "hidden":
            self.fields[attributes["name"]] = attributes.get("value", "")


def test_oidc_provider():
    process, issuer = start([os.path.join(HERE, "oidc_provider.py"), "--port", "0"])
    try:
        status, discovery = call_json("GET", f"{issuer}/.well-known/openid-configuration")
        check(status == 200 and discovery["issuer"] == issuer, "oidc: discovery names the issuer")
        check(discovery["code_challenge_methods_supported"] == ["S256"], "oidc: discovery advertises PKCE S256")
        redirect_uri = "http://127.0.0.1:9/callback"
        status, _ = call_json("POST", f"{issuer}/_control/clients", json_body={
            "client_id": "konto", "client_secret": "s3cret", "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": "client_secret_basic"})
        check(status == 200, "oidc: client registered")
        status, _, _ = call("PUT", f"{issuer}/users/alice", json_body={
            "email": "alice@example.com", "email_verified": False, "name": "Alice Example"})
        check(status == 204, "oidc: user claims set with the package's PUT /users/<sub>")

        def authorize(challenge, nonce="n-123", state="st-1"):
            query = urllib.parse.urlencode({
                "response_type": "code", "client_id": "konto", "redirect_uri": redirect_uri,
                "scope": "openid email profile", "state": state, "nonce": nonce,
                "code_challenge": challenge, "code_challenge_method": "S256"})
            url = f"{issuer}/oauth2/authorize?{query}"
            status, _, page = call("GET", url)
            assert status == 200 and 'name="sub"' in page, page[:500]
            status, headers, _ = call("POST", url, form={"sub": "alice"})
            answer = urllib.parse.parse_qs(urllib.parse.urlparse(headers.get("Location", "")).query)
            return status, answer

        basic = "Basic " + base64.b64encode(b"konto:s3cret").decode()
        verifier, challenge = pkce()
        status, answer = authorize(challenge)
        check(status == 302 and answer.get("state") == ["st-1"] and "code" in answer, "oidc: code and state come back")
        status, error = call_json("POST", f"{issuer}/oauth2/token", headers={"Authorization": basic}, form={
            "grant_type": "authorization_code", "code": answer["code"][0], "redirect_uri": redirect_uri,
            "code_verifier": pkce()[0]})
        check(status == 400 and error["error"] == "invalid_grant", "oidc: a wrong code_verifier is refused")

        status, answer = authorize(challenge)
        status, error = call_json("POST", f"{issuer}/oauth2/token", form={
            "grant_type": "authorization_code", "code": answer["code"][0], "redirect_uri": redirect_uri,
            "code_verifier": verifier}, headers={"Authorization": "Basic " + base64.b64encode(b"konto:no").decode()})
        check(status == 401 and error["error"] == "invalid_client", "oidc: a wrong client secret is refused")

        status, answer = authorize(challenge)
        status, tokens = call_json("POST", f"{issuer}/oauth2/token", headers={"Authorization": basic}, form={
            "grant_type": "authorization_code", "code": answer["code"][0], "redirect_uri": redirect_uri,
            "code_verifier": verifier})
        check(status == 200 and {"id_token", "access_token", "refresh_token"} <= set(tokens), "oidc: code exchanged")
        claims = verify(tokens["id_token"], discovery["jwks_uri"], "konto", issuer)
        check(claims["sub"] == "alice" and claims["nonce"] == "n-123" and claims["email_verified"] is False
              and claims["name"] == "Alice Example", "oidc: ID token verified by PyJWT with the JWKS, claims as set")
        old_kid = jwt.get_unverified_header(tokens["id_token"])["kid"]

        status, rotated = call_json("POST", f"{issuer}/_control/rotate")
        _, keys = call_json("GET", discovery["jwks_uri"])
        kids = [key["kid"] for key in keys["keys"]]
        check(rotated["old_kid"] == old_kid and kids == [rotated["kid"]], "oidc: rotated, the old key left the JWKS")
        status, refreshed = call_json("POST", f"{issuer}/oauth2/token", headers={"Authorization": basic},
                                      form={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]})
        check(status == 200 and "access_token" in refreshed, "oidc: refresh token grant")

        status, minted = call_json("POST", f"{issuer}/_control/id-token", json_body={
            "sub": "bob", "aud": "konto", "nonce": "native-1", "email": "bob@example.com", "email_verified": True})
        claims = verify(minted["id_token"], discovery["jwks_uri"], "konto", issuer)
        check(jwt.get_unverified_header(minted["id_token"])["kid"] == rotated["kid"] and claims["sub"] == "bob"
              and claims["nonce"] == "native-1" and claims["email_verified"] is True,
              "oidc: /_control/id-token, signed with the new key through the provider's code flow")
        status, error = call_json("POST", f"{issuer}/_control/id-token", json_body={"sub": "bob", "aud": "konto"})
        check(status == 400, "oidc: nonce required by default")
    finally:
        process.stdin.close()  # closing stdin stops it
        check(process.wait(timeout=10) == 0, "oidc: stops when stdin closes")


def client_secret(key, team="TEAM123456", kid="KEY1234567", client="com.example.konto", **overrides):
    now = int(time.time())
    claims = {"iss": team, "iat": now, "exp": now + 3600, "aud": "https://appleid.apple.com", "sub": client}
    claims.update(overrides.pop("claims", {}))
    return jwt.encode(claims, key, algorithm="ES256", headers={"kid": kid, **overrides})


def test_apple_standin(directory):
    key = ec.generate_private_key(ec.SECP256R1())
    pem = os.path.join(directory, "apple.pem")
    with open(pem, "wb") as file:
        file.write(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                 serialization.PublicFormat.SubjectPublicKeyInfo))
    process, issuer = start([os.path.join(HERE, "apple_standin.py"), "--port", "0", "--team-id", "TEAM123456",
                             "--key-id", "KEY1234567", "--public-key", pem, "--client-id", "com.example.konto",
                             "--client-id", "com.example.other"])
    try:
        client = "com.example.konto"
        status, discovery = call_json("GET", f"{issuer}/.well-known/openid-configuration")
        check(status == 200 and discovery["jwks_uri"] == f"{issuer}/auth/keys", "apple: discovery")
        call_json("POST", f"{issuer}/_control/users", json_body={
            "sub": "001234.abcd", "email": "a@privaterelay.appleid.com", "is_private_email": "true",
            "name": {"firstName": "Ann", "lastName": "Apple"}})
        redirect_uri = "http://127.0.0.1:9/apple/callback"

        def authorize(challenge, sub="001234.abcd"):
            query = {"client_id": client, "redirect_uri": redirect_uri, "response_type": "code",
                     "scope": "name email", "response_mode": "form_post", "state": "st-a", "nonce": "n-apple",
                     "code_challenge": challenge, "code_challenge_method": "S256"}
            status, _, page = call("GET", f"{issuer}/auth/authorize?{urllib.parse.urlencode(query)}")
            form = HiddenFields(page)
            assert status == 200 and {"apple-sub", "apple-continue", "apple-cancel"} <= form.ids, page
            status, _, page = call("POST", f"{issuer}/auth/authorize", form={**form.fields, "sub": sub,
                                                                              "action": "continue"})
            return status, HiddenFields(page).fields

        verifier, challenge = pkce()
        status, first = authorize(challenge)
        user = json.loads(first.get("user", "null"))
        check(status == 200 and first["state"] == "st-a" and user == {
            "name": {"firstName": "Ann", "lastName": "Apple"}, "email": "a@privaterelay.appleid.com"},
            "apple: form_post answer with code, state and the user JSON the first time")
        status, second = authorize(challenge)
        check("user" not in second and "code" in second, "apple: no user JSON the second time")

        good = {"client_id": client, "client_secret": client_secret(key)}
        status, error = call_json("POST", f"{issuer}/auth/token", form={
            **good, "grant_type": "authorization_code", "code": second["code"], "redirect_uri": redirect_uri,
            "code_verifier": pkce()[0]})
        check(status == 400 and error == {"error": "invalid_grant"}, "apple: a wrong code_verifier is refused")
        status, tokens = call_json("POST", f"{issuer}/auth/token", form={
            **good, "grant_type": "authorization_code", "code": first["code"], "redirect_uri": redirect_uri,
            "code_verifier": verifier})
        check(status == 200 and tokens["token_type"] == "Bearer" and tokens["expires_in"] == 3600
              and {"access_token", "refresh_token", "id_token"} <= set(tokens), "apple: code exchanged")
        claims = verify(tokens["id_token"], discovery["jwks_uri"], client, issuer)
        check(claims["nonce"] == "n-apple" and claims["email_verified"] == "true" and claims["nonce_supported"] is True
              and claims["is_private_email"] == "true", "apple: ID token verified by PyJWT, Apple's string booleans")
        status, error = call_json("POST", f"{issuer}/auth/token", form={
            **good, "grant_type": "authorization_code", "code": first["code"], "redirect_uri": redirect_uri,
            "code_verifier": verifier})
        check(status == 400 and error == {"error": "invalid_grant"}, "apple: a code is single-use")

        now = int(time.time())
        bad_secrets = {
            "wrong kid": client_secret(key, kid="OTHERKEY00"),
            "wrong team": client_secret(key, team="OTHERTEAM0"),
            "wrong aud": client_secret(key, claims={"aud": "https://example.com"}),
            "expired": client_secret(key, claims={"iat": now - 7200, "exp": now - 60}),
            "iat in the future": client_secret(key, claims={"iat": now + 600, "exp": now + 1200}),
            "exp beyond 15777000 s": client_secret(key, claims={"exp": now + 15777001}),
            "another key": client_secret(ec.generate_private_key(ec.SECP256R1())),
            "sub not client_id": client_secret(key, client="com.example.other"),
        }
        for name, secret in bad_secrets.items():
            status, error = call_json("POST", f"{issuer}/auth/token", form={
                "client_id": client, "client_secret": secret, "grant_type": "refresh_token",
                "refresh_token": tokens["refresh_token"]})
            check(status == 400 and error == {"error": "invalid_client"}, f"apple: client secret refused: {name}")
        status, error = call_json("POST", f"{issuer}/auth/token", form={**good, "grant_type": "password"})
        check(status == 400 and error == {"error": "unsupported_grant_type"}, "apple: unsupported_grant_type")

        status, rotated = call_json("POST", f"{issuer}/_control/rotate")
        _, keys = call_json("GET", discovery["jwks_uri"])
        check([k["kid"] for k in keys["keys"]] == [rotated["kid"]] and rotated["old_kid"] != rotated["kid"],
              "apple: rotated, the old key left the JWKS")
        status, refreshed = call_json("POST", f"{issuer}/auth/token", form={
            **good, "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]})
        check(status == 200 and "refresh_token" not in refreshed
              and jwt.get_unverified_header(refreshed["id_token"])["kid"] == rotated["kid"],
              "apple: refresh grant answers a new ID token signed with the new key")

        call_json("POST", f"{issuer}/_control/fail-revocations", json_body={"count": 1})
        revocation = {**good, "token": tokens["refresh_token"], "token_type_hint": "refresh_token"}
        status, _, _ = call("POST", f"{issuer}/auth/revoke", form=revocation)
        check(status == 500, "apple: a failing revocation answers 500")
        status, _, body = call("POST", f"{issuer}/auth/revoke", form=revocation)
        check(status == 200 and body == "", "apple: revocation answers 200, empty")
        _, recorded = call_json("GET", f"{issuer}/_control/revocations")
        check(recorded == {"revocations": [{"client_id": client, "token": tokens["refresh_token"],
                                            "token_type_hint": "refresh_token"}], "failed": 1},
              "apple: the revocation is recorded, the failed attempt counted")
        status, error = call_json("POST", f"{issuer}/auth/token", form={
            **good, "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]})
        check(status == 400 and error == {"error": "invalid_grant"}, "apple: a revoked refresh token is refused")

        status, native = call_json("POST", f"{issuer}/_control/id-token", json_body={
            "sub": "000999.native", "aud": client, "nonce": "hashed-nonce", "email": "n@example.com",
            "email_verified": True})
        claims = verify(native["id_token"], discovery["jwks_uri"], client, issuer)
        check(claims["email_verified"] is True and claims["nonce"] == "hashed-nonce", "apple: native ID token")
        exchange = {**good, "grant_type": "authorization_code", "code": native["authorization_code"]}
        status, tokens = call_json("POST", f"{issuer}/auth/token", form=exchange)
        check(status == 200 and "refresh_token" in tokens, "apple: the native code exchanged without redirect_uri")
        status, _ = call_json("POST", f"{issuer}/auth/token", form=exchange)
        check(status == 400, "apple: the native code exchanged only once")

        _, seen = call_json("GET", f"{issuer}/_control/client-secrets")
        first_seen = seen["client_secrets"][0]
        check(first_seen["valid"] and first_seen["header"] == {"alg": "ES256", "kid": "KEY1234567", "typ": "JWT"}
              and first_seen["claims"]["sub"] == client, "apple: client secrets recorded with header and claims")
        check(sum(not record["valid"] for record in seen["client_secrets"]) == len(bad_secrets),
              "apple: each refused client secret recorded with its error")
    finally:
        process.terminate()  # SIGTERM stops it
        check(process.wait(timeout=10) == 0, "apple: stops on SIGTERM")


def main():
    with tempfile.TemporaryDirectory() as directory:
        for test in (test_oidc_provider, lambda: test_apple_standin(directory)):
            try:
                test()
            except Exception as error:  # a check that could not even run
                check(False, f"{getattr(test, '__name__', 'apple')}: {type(error).__name__}: {error}")
    print(f"{results['passed']} passed, {results['failed']} failed")
    sys.exit(1 if results["failed"] else 0)


if __name__ == "__main__":
    main()
