"""A real OpenID Connect provider for the sign-in tests: PyPI's oidc-provider-mock (0.3.4, built on Authlib), which
no one here wrote, run by this thin wrapper.

Usage: oidc_provider.py [--port PORT] [--optional-nonce] [--require-registration] [--token-max-age SECONDS] [--verbose]
  --port 0 (the default) picks a free port. Prints `listening PORT ISSUER` once serving (ISSUER is
  http://127.0.0.1:PORT: the package takes its issuer from the Host header, so always call it by that address).
  Runs until SIGTERM/SIGINT, or until stdin closes when stdin is a pipe (not when it is /dev/null or a terminal).

The package's own endpoints (its discovery at /.well-known/openid-configuration lists them):
  GET/POST /oauth2/authorize   the authorization page: a form with <input name="sub"> and a submit button "Authorize",
                               and a second form with <button name="action" value="deny">; POSTing `sub=...` to the
                               same URL (query string kept) answers 302 to redirect_uri?code=...&state=...
  POST /oauth2/token           authorization_code (+ PKCE) and refresh_token grants; client_secret_basic, _post or none
  GET  /jwks                   the current signing key (RS256, kid = its RFC 7638 thumbprint)
  PUT  /users/<sub>            a user's claims, a JSON object (e.g. {"email": .., "email_verified": false, "name": ..});
                               replaces them all. An unknown sub typed on the page becomes a user with {"email": sub}.
                               email/email_verified reach the ID token only with scope `email`, name with `profile`.
  GET  /userinfo, POST /oauth2/clients (dynamic registration), /oauth2/end_session
What this wrapper changes, each through the package's or Authlib's own code:
  - PKCE: Authlib's RFC 7636 CodeChallenge extension is enabled on the package's grant (S256 only; the package itself
    accepts and ignores code_challenge). A code asked for with a challenge needs the right code_verifier.
  - kid: the ID token's header names the signing key's kid (the package leaves it out though its JWKS has one).
  - The page's stylesheet link to a CDN is dropped (no network here); the page is otherwise the package's.
  - nonce is required at the authorization endpoint unless --optional-nonce (the package's require_nonce option).
Control API (JSON in and out):
  POST /_control/rotate     {} -> {"old_kid", "kid"}: a new RSA key signs from now on; the old one leaves the JWKS.
  POST /_control/clients    {"client_id", "client_secret", "redirect_uris": [..],
                             "token_endpoint_auth_method": "client_secret_basic"|"client_secret_post"|"none"} -> {}
                            registers a client: its secret, redirect URIs and auth method are then enforced. Clients
                            not registered are accepted with any secret and redirect URI (the package's default),
                            unless --require-registration.
  POST /_control/id-token   {"sub", "aud", "nonce"?, "scope"? (default "openid email profile"), any claims such as
                             "email", "email_verified", "name"} -> {"id_token", "access_token", "refresh_token"}:
                            sets the claims given (merged into the user's), then drives the package's own authorization
                            and token endpoints over HTTP as client `aud`: the token comes from the provider.
"""
import argparse
import base64
import hashlib
import json
import os
import re
import signal
import stat
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
import warnings
from datetime import timedelta

import authlib.deprecate  # noqa: E402 (it turns its own deprecation notices on: about Authlib's modules, not ours)

warnings.simplefilter("ignore", authlib.deprecate.AuthlibDeprecationWarning)
warnings.simplefilter("ignore", DeprecationWarning)
os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")  # plain http on loopback, as the package's CLI sets

import flask  # noqa: E402
import jinja2  # noqa: E402
import werkzeug.serving  # noqa: E402
from authlib import jose  # noqa: E402
from authlib.oauth2.rfc7636 import CodeChallenge  # noqa: E402
from oidc_provider_mock import _app, _storage  # noqa: E402

# PKCE: the package keeps codes in a frozen dataclass without the challenge, so the challenge is kept here, by code.
challenges = {}


class S256CodeChallenge(CodeChallenge):
    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def get_authorization_code_challenge(self, authorization_code):
        return challenges.get(authorization_code.code, (None, None))[0]

    def get_authorization_code_challenge_method(self, authorization_code):
        return challenges.get(authorization_code.code, (None, None))[1]


class AuthorizationCodeGrant(_app.AuthorizationCodeGrant):
    def __init__(self, request, server):
        super().__init__(request, server)
        S256CodeChallenge(required=True)(self)  # required: a public client (auth method none) must send a verifier

    def save_authorization_code(self, code, request):
        super().save_authorization_code(code, request)
        data = request.payload.data
        challenges[code] = (data.get("code_challenge"), data.get("code_challenge_method"))


_app.AuthorizationCodeGrant = AuthorizationCodeGrant  # looked up by name when the package registers its grants

package_encode_header = _app.OpenIDCode.get_encode_header


def encode_header_with_kid(self, client):
    key = self._compatible_resolve_jwt_config(None, client)["key"]  # the package's key, as the package hands it over
    return {**package_encode_header(self, client), "kid": key["kid"]}


_app.OpenIDCode.get_encode_header = encode_header_with_kid


def storage():
    return flask.g.oidc_provider_mock_storage


def make_app(arguments):
    app = _app.app(
        require_client_registration=arguments.require_registration,
        require_nonce=not arguments.optional_nonce,
        access_token_max_age=timedelta(seconds=arguments.token_max_age),
    )
    loader = app.jinja_env.loader
    base = loader.get_source(app.jinja_env, "_base.html")[0]
    base = re.sub(r"<link[^>]*https://[^>]*>", "", base)
    app.jinja_env.loader = jinja2.ChoiceLoader([jinja2.DictLoader({"_base.html": base}), loader])

    @app.after_request
    def advertise_pkce(response):
        if flask.request.path == "/.well-known/openid-configuration" and response.status_code == 200:
            document = json.loads(response.get_data())
            document["code_challenge_methods_supported"] = ["S256"]
            response.set_data(json.dumps(document))
        return response

    @app.post("/_control/rotate")
    def rotate():
        old = storage().jwk.as_dict()["kid"]
        storage().jwk = jose.RSAKey.generate_key(is_private=True)
        return {"old_kid": old, "kid": storage().jwk.as_dict()["kid"]}

    @app.post("/_control/clients")
    def register_client():
        body = flask.request.get_json(force=True)
        storage().store_client(_storage.Client(
            id=body["client_id"], secret=body["client_secret"], redirect_uris=list(body["redirect_uris"]),
            allowed_scopes=_storage.Client.SCOPES_SUPPORTED,
            token_endpoint_auth_method=body.get("token_endpoint_auth_method", "client_secret_basic")))
        return {}

    @app.post("/_control/id-token")
    def id_token():
        body = dict(flask.request.get_json(force=True))
        sub, aud, nonce = body.pop("sub"), body.pop("aud"), body.pop("nonce", None)
        scope = body.pop("scope", "openid email profile")
        user = storage().get_user(sub)
        claims = {**(user.claims if user else {"email": sub}), **body}
        storage().store_user(_storage.User(sub=sub, claims=claims))
        client = storage().get_client(aud)
        registered = client is not None and isinstance(client.secret, str)
        return drive_code_flow(
            flask.request.host_url.rstrip("/"), sub, aud, nonce, scope,
            redirect_uri=client.redirect_uris[0] if registered else "http://127.0.0.1/native",
            secret=client.secret if registered else "unused",
            method=client.token_endpoint_auth_method if registered else "client_secret_basic")

    return app


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


def drive_code_flow(issuer, sub, aud, nonce, scope, redirect_uri, secret, method):
    """The authorization code flow against the package's own endpoints, as a browser and a client would."""
    verifier = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    query = {"response_type": "code", "client_id": aud, "redirect_uri": redirect_uri, "scope": scope, "state": "x",
             "code_challenge": challenge, "code_challenge_method": "S256"}
    if nonce is not None:
        query["nonce"] = nonce
    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(f"{issuer}/oauth2/authorize?{urllib.parse.urlencode(query)}",
                    urllib.parse.urlencode({"sub": sub}).encode())
        return {"error": "the authorization endpoint did not redirect"}, 500
    except urllib.error.HTTPError as answer:
        location, page = answer.headers.get("Location", ""), answer.read().decode(errors="replace")
    code = urllib.parse.parse_qs(urllib.parse.urlparse(location).query).get("code")
    if not code:  # the provider refused: its redirect carries `error`, or its page says why
        return {"error": "no authorization code", "location": location, "page": page[:2000]}, 400
    form = {"grant_type": "authorization_code", "code": code[0], "redirect_uri": redirect_uri,
            "code_verifier": verifier}
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if method == "client_secret_basic":
        pair = f"{urllib.parse.quote(aud, safe='')}:{urllib.parse.quote(secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    else:
        form["client_id"] = aud
        if method == "client_secret_post":
            form["client_secret"] = secret
    request = urllib.request.Request(f"{issuer}/oauth2/token", urllib.parse.urlencode(form).encode(), headers)
    try:
        with urllib.request.urlopen(request) as response:
            token = json.load(response)
    except urllib.error.HTTPError as error:
        return json.loads(error.read() or b"{}"), error.code
    return {key: token.get(key) for key in ("id_token", "access_token", "refresh_token")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--optional-nonce", action="store_true", help="do not require nonce at authorization")
    parser.add_argument("--require-registration", action="store_true", help="refuse clients not registered")
    parser.add_argument("--token-max-age", type=int, default=3600, help="seconds until access and ID tokens expire")
    parser.add_argument("--verbose", action="store_true", help="log each request to stderr")
    arguments = parser.parse_args()
    if not arguments.verbose:
        import logging
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        logging.getLogger("oidc_provider_mock").setLevel(logging.ERROR)  # its warnings name each refusal

    server = werkzeug.serving.make_server("127.0.0.1", arguments.port, make_app(arguments), threaded=True)
    port = server.server_port
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"listening {port} http://127.0.0.1:{port}", flush=True)

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
