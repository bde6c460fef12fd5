"""A relying party built on Authlib, the foreign judge of Konto as an OpenID Provider (docs/OIDC.md).

Run by Tests/EndToEndTests/OpenIDRelyingPartyTests.swift against a whole system whose gateway is the issuer, with
headless Chromium (Selenium) as the person's browser. Authlib makes the authorization requests (PKCE S256, state,
nonce), exchanges and refreshes the tokens and validates every ID token against the JWK Set it fetched itself; this
script only checks what Authlib hands back. A small HTTP server of its own is the relying party's redirect URI.
Environment:
  KONTO_ISSUER        the issuer, the gateway as the browser reaches it (http://localhost:PORT)
  KONTO_RP_PORT       the port of the relying party's own server on 127.0.0.1 (redirect URIs /callback, /signed-out)
  KONTO_RP_SECRET     the confidential client's secret, made by Konto when the test registered it through the admin API (client `rp-dashboard`, client_secret_basic, first party, RS256)
                      the public client is `rp-study` (third party: a consent page; ES256)
  KONTO_USER_ID, KONTO_PASSWORD   an account to sign in with
  KONTO_SCREENSHOTS   a directory for failure.png / failure.html
  KONTO_CHROMEDRIVER  chromedriver (default /usr/bin/chromedriver)
  KONTO_APACHE_URL    Apache httpd with mod_auth_openidc in front of a dashboard (Tests/OIDC/apache), the second,
                      off-the-shelf relying party: signed in through it, then its logout (RP-initiated, with its hint)
One line per step on stdout; exit 0 when every check passed, 1 (with failure.png) when not.
"""

import http.server
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import traceback
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import requests
from authlib.integrations.requests_client import OAuth2Session, OAuthError
from authlib.jose import JsonWebKey, jwt
from authlib.oidc.core import CodeIDToken
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

ISSUER = os.environ["KONTO_ISSUER"].rstrip("/")
RP_PORT = int(os.environ["KONTO_RP_PORT"])
RP = f"http://127.0.0.1:{RP_PORT}"
CALLBACK = RP + "/callback"
SIGNED_OUT = RP + "/signed-out"
SECRET = os.environ["KONTO_RP_SECRET"]
USER_ID = os.environ["KONTO_USER_ID"]
PASSWORD = os.environ["KONTO_PASSWORD"]
SCREENSHOTS = os.environ["KONTO_SCREENSHOTS"]
CHROMEDRIVER = os.environ.get("KONTO_CHROMEDRIVER", "/usr/bin/chromedriver")
APACHE = os.environ.get("KONTO_APACHE_URL", "").rstrip("/")
WAIT_SECONDS = 20
RUN_SECONDS = 150
STARTED = time.monotonic()


class Failure(Exception):
    pass


def step(text):
    print(f"step: [{time.monotonic() - STARTED:5.1f} s] {text}", flush=True)


def expect(condition, message):
    if not condition:
        raise Failure(message)


class Callbacks(http.server.BaseHTTPRequestHandler):
    """The relying party's own pages: every request's path and query is kept, in order."""

    seen = []

    def do_GET(self):  # noqa: N802 — http.server's name
        Callbacks.seen.append(self.path)
        body = b"<!doctype html><title>Relying party</title><main id='relying-party'>back at the relying party</main>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *arguments):
        pass


class Browser:
    def __init__(self, driver):
        self.driver = driver

    def wait(self, condition, what):
        try:
            return WebDriverWait(self.driver, WAIT_SECONDS).until(condition)
        except Exception as error:  # noqa: BLE001
            raise Failure(f"waited {WAIT_SECONDS} s for {what}; at {self.driver.current_url}") from error

    def back_at(self, prefix):
        """Waits until the browser is at the relying party's `prefix`; the query it came back with."""
        self.wait(lambda driver: driver.current_url.startswith(prefix), f"the browser back at {prefix}")
        return {name: values[0] for name, values in parse_qs(urlsplit(self.driver.current_url).query).items()}

    def click(self, element_id):
        self.wait(EC.element_to_be_clickable((By.ID, element_id)), f"#{element_id}").click()

    def sign_in(self):
        self.wait(EC.presence_of_element_located((By.ID, "login-userId")), "the console's sign-in form").send_keys(USER_ID)
        self.driver.find_element(By.ID, "login-password").send_keys(PASSWORD)
        self.click("login-submit")


def discovery():
    step("discovery: the provider's metadata and its JWK Set, read by the relying party itself")
    metadata = requests.get(ISSUER + "/.well-known/openid-configuration", timeout=10).json()
    expect(metadata["issuer"] == ISSUER, f"the metadata's issuer is {metadata['issuer']!r}")
    expect(metadata["code_challenge_methods_supported"] == ["S256"], "only S256 PKCE")
    expect(metadata["response_types_supported"] == ["code"], "only the code flow")
    jwks = requests.get(metadata["jwks_uri"], timeout=10).json()
    algorithms = sorted(key["alg"] for key in jwks["keys"])
    expect(algorithms == ["ES256", "RS256"], f"the JWK Set publishes {algorithms}")
    return metadata, JsonWebKey.import_key_set(jwks)


def validated(id_token, keys, client_id, nonce, algorithm):
    """Authlib's own validation of an ID token: signature (by the published key with the header's kid), iss, aud,
    azp, exp, iat, nonce, auth_time."""
    header = jwt.decode(id_token, keys).header
    expect(header["alg"] == algorithm, f"the ID token is signed {header['alg']}, not {algorithm}")
    claims = jwt.decode(
        id_token, keys, claims_cls=CodeIDToken,
        claims_options={"iss": {"essential": True, "value": ISSUER}, "auth_time": {"essential": True}},
        claims_params={"nonce": nonce, "client_id": client_id},
    )
    claims.validate(leeway=5)
    return claims


def authorize(browser, session, metadata, extra=None, sign_in=False, consent=False):
    """One authorization request through the browser; the query the relying party got back, the verifier, the nonce."""
    verifier = secrets.token_urlsafe(48)
    nonce = secrets.token_urlsafe(16)
    uri, state = session.create_authorization_url(metadata["authorization_endpoint"], code_verifier=verifier, nonce=nonce, **(extra or {}))
    browser.driver.get(uri)
    if sign_in:
        browser.sign_in()
    if consent:
        browser.wait(EC.presence_of_element_located((By.ID, "consent-form")), "the consent page")
        client = browser.driver.find_element(By.ID, "consent-client").text
        expect(client == "Study on the web", f"the consent page names {client!r}")
        browser.click("consent-allow")
    answer = browser.back_at(CALLBACK)
    expect(answer.get("state") == state, f"the state came back as {answer.get('state')!r}")
    expect(answer.get("iss") == ISSUER, f"the iss parameter (RFC 9207) is {answer.get('iss')!r}")
    return answer, verifier, nonce, state


def oauth_error(call):
    try:
        call()
    except OAuthError as error:
        return error.error
    return None


def userinfo_status(metadata, access_token):
    return requests.get(metadata["userinfo_endpoint"], headers={"Authorization": f"Bearer {access_token}"}, timeout=10).status_code


def run(browser):
    metadata, keys = discovery()
    endpoint = metadata["token_endpoint"]
    public = OAuth2Session("rp-study", redirect_uri=CALLBACK, scope="openid email profile offline_access", code_challenge_method="S256",
                           token_endpoint_auth_method="none")

    step("the public client: sign in through the console, consent, back with a code; Authlib exchanges it with the verifier")
    answer, verifier, nonce, state = authorize(browser, public, metadata, sign_in=True, consent=True)
    token = public.fetch_token(endpoint, code=answer["code"], code_verifier=verifier)
    claims = validated(token["id_token"], keys, "rp-study", nonce, "ES256")
    expect(token["token_type"].lower() == "bearer" and token.get("refresh_token"), f"the token response: {sorted(token)}")
    expect(set(token["scope"].split()) == {"openid", "email", "profile", "offline_access"}, f"the scope granted: {token['scope']!r}")

    step("userinfo with the access token: the same sub, the email")
    info = public.get(metadata["userinfo_endpoint"]).json()
    expect(info["sub"] == claims["sub"], "userinfo's sub is the ID token's")
    expect(info.get("email") == USER_ID and info.get("email_verified") in (True, False), f"userinfo: {info}")

    step("Konto's own API with the access token: the account within its scopes (profile, email); nothing else")
    account = public.get(ISSUER + "/v1/account")
    expect(account.status_code == 200 and account.json()["accountId"] == claims["sub"], f"GET /v1/account: {account.status_code}")
    expect(public.get(ISSUER + "/v1/account/sessions").status_code == 403, "the sessions are not within an application's scopes")

    step("refresh: a new refresh token each time; the one rotated out, used again, ends the family")
    first_refresh = token["refresh_token"]
    refreshed = public.refresh_token(endpoint, refresh_token=first_refresh)
    expect(refreshed["refresh_token"] != first_refresh, "the refresh token rotated")
    validated(refreshed["id_token"], keys, "rp-study", None, "ES256")
    expect(userinfo_status(metadata, refreshed["access_token"]) == 200, "the refreshed access token works")
    expect(oauth_error(lambda: public.refresh_token(endpoint, refresh_token=first_refresh)) == "invalid_grant", "the rotated-out token refused")
    expect(oauth_error(lambda: public.refresh_token(endpoint, refresh_token=refreshed["refresh_token"])) == "invalid_grant",
           "after the reuse the current refresh token is refused too")
    expect(userinfo_status(metadata, refreshed["access_token"]) == 401, "after the reuse the family's access token is refused")

    step("the confidential client (first party, client_secret_basic, RS256): no consent, the console's session is used")
    dashboard = OAuth2Session("rp-dashboard", SECRET, redirect_uri=CALLBACK, scope="openid email offline_access", code_challenge_method="S256",
                              token_endpoint_auth_method="client_secret_basic")
    answer, verifier, nonce, _ = authorize(browser, dashboard, metadata)
    token = dashboard.fetch_token(endpoint, code=answer["code"], code_verifier=verifier)
    dashboard_claims = validated(token["id_token"], keys, "rp-dashboard", nonce, "RS256")
    expect(dashboard_claims["sub"] != claims["sub"], "the pairwise sub of the dashboard's sector differs from the public one")

    account = dashboard.get(ISSUER + "/v1/account")
    expect(account.status_code == 403 and "insufficient_scope" in account.headers.get("WWW-Authenticate", ""), "without profile the account is not read")

    step("hostile: the same code again is refused, and the tokens it gave are revoked")
    expect(oauth_error(lambda: dashboard.fetch_token(endpoint, code=answer["code"], code_verifier=verifier)) == "invalid_grant", "a code used twice")
    expect(userinfo_status(metadata, token["access_token"]) == 401, "the first use's access token after the second use")
    expect(oauth_error(lambda: dashboard.refresh_token(endpoint, refresh_token=token["refresh_token"])) == "invalid_grant",
           "the first use's refresh token after the second use")

    step("hostile: one client's refresh token presented by another is refused, and the owner's still works")
    answer, verifier, _, _ = authorize(browser, dashboard, metadata)
    token = dashboard.fetch_token(endpoint, code=answer["code"], code_verifier=verifier)
    expect(oauth_error(lambda: public.refresh_token(endpoint, refresh_token=token["refresh_token"])) == "invalid_grant", "another client's token")
    token = dashboard.refresh_token(endpoint, refresh_token=token["refresh_token"])

    step("introspection by the confidential client, then revocation: the refresh token ends")
    introspection = requests.post(metadata["introspection_endpoint"], data={"token": token["access_token"]}, auth=("rp-dashboard", SECRET), timeout=10).json()
    expect(introspection["active"] is True and introspection["client_id"] == "rp-dashboard", f"introspection: {introspection}")
    revoked = requests.post(metadata["revocation_endpoint"], data={"token": token["refresh_token"], "token_type_hint": "refresh_token"},
                            auth=("rp-dashboard", SECRET), timeout=10)
    expect(revoked.status_code == 200, f"revocation answered {revoked.status_code}")
    expect(oauth_error(lambda: dashboard.refresh_token(endpoint, refresh_token=token["refresh_token"])) == "invalid_grant", "a revoked token")

    step("hostile: a redirect URI one character off is refused on Konto's page, never followed")
    before = len(Callbacks.seen)
    uri, _ = public.create_authorization_url(metadata["authorization_endpoint"], code_verifier=secrets.token_urlsafe(48), redirect_uri=CALLBACK + "x")
    browser.driver.get(uri)
    browser.wait(EC.presence_of_element_located((By.ID, "form-error")), "the refusal page")
    expect(browser.driver.current_url.startswith(ISSUER), f"the browser left Konto for {browser.driver.current_url}")
    expect(len(Callbacks.seen) == before, "the relying party was called")

    step("hostile: no PKCE, or plain PKCE: invalid_request back to the client")
    for name, parameters in [("no PKCE", {}), ("plain PKCE", {"code_challenge": "a" * 43, "code_challenge_method": "plain"})]:
        plain = OAuth2Session("rp-study", redirect_uri=CALLBACK, scope="openid email")
        uri, state = plain.create_authorization_url(metadata["authorization_endpoint"], nonce="n", **parameters)
        browser.driver.get(uri)
        answer = browser.back_at(CALLBACK)
        expect(answer.get("error") == "invalid_request" and answer.get("state") == state and "code" not in answer, f"{name}: {answer}")

    step("RP-initiated logout with an ID token as the hint: signed out at once, back with the state")
    hint = fresh_id_token(dashboard, browser, metadata, keys)
    browser.driver.get(metadata["end_session_endpoint"] + "?" + urlencode({"id_token_hint": hint, "post_logout_redirect_uri": SIGNED_OUT, "state": "bye"}))
    answer = browser.back_at(SIGNED_OUT)
    expect(answer == {"state": "bye"}, f"back from the logout with {answer}")

    step("hostile: prompt=none without a session: login_required")
    answer, _, _, _ = authorize(browser, public, metadata, extra={"prompt": "none"})
    expect(answer.get("error") == "login_required" and "code" not in answer, f"prompt=none: {answer}")


def apache(browser):
    step("mod_auth_openidc in front of a dashboard: the protected page sends the browser to Konto; signed in, back with the claims")
    browser.driver.get(APACHE + "/dashboard/index.shtml")
    browser.sign_in()
    user = browser.wait(EC.presence_of_element_located((By.ID, "remote-user")), "the dashboard behind mod_auth_openidc")
    expect(user.text == USER_ID, f"mod_auth_openidc's REMOTE_USER (the email claim) is {user.text!r}")
    name = browser.driver.find_element(By.ID, "claim-name").text
    expect(name == "Grace Hopper", f"the name claim from userinfo is {name!r}")

    step("the dashboard's logout: mod_auth_openidc sends its ID token as the hint; Konto signs out at once and sends it back")
    browser.driver.get(APACHE + "/dashboard/redirect_uri?logout=" + quote(APACHE + "/signed-out.html", safe=""))
    browser.wait(EC.presence_of_element_located((By.ID, "signed-out")), "the dashboard's signed-out page")
    expect(browser.driver.current_url.startswith(APACHE + "/signed-out.html"), f"after the logout at {browser.driver.current_url}")

    step("signed out of Konto too: the dashboard asks again, and Konto asks for a sign-in")
    browser.driver.get(APACHE + "/dashboard/index.shtml")
    browser.wait(EC.presence_of_element_located((By.ID, "login-userId")), "Konto's sign-in form")


def fresh_id_token(dashboard, browser, metadata, keys):
    """A fresh ID token of the dashboard's, for the logout's hint."""
    answer, verifier, nonce, _ = authorize(browser, dashboard, metadata)
    token = dashboard.fetch_token(metadata["token_endpoint"], code=answer["code"], code_verifier=verifier)
    validated(token["id_token"], keys, "rp-dashboard", nonce, "RS256")
    return token["id_token"]


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", RP_PORT), Callbacks)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def out_of_time(*_):
        raise Failure(f"the relying party's run took more than {RUN_SECONDS} s")

    signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(RUN_SECONDS)
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--lang=en-US", "--no-first-run",
                     "--disable-extensions", "--disable-background-networking", "--disable-component-update", "--disable-sync"]:
        options.add_argument(argument)
    step(f"start headless Chromium through {CHROMEDRIVER}")
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER, log_output=subprocess.DEVNULL), options=options)
    driver.set_page_load_timeout(WAIT_SECONDS)
    try:
        browser = Browser(driver)
        run(browser)
        if APACHE:
            apache(browser)
        signal.alarm(0)
        step("done: the relying parties accepted everything they should and nothing they should not")
        return 0
    except BaseException as error:  # noqa: BLE001 — every failure ends the same way
        signal.alarm(0)
        if not isinstance(error, Failure):
            traceback.print_exc(file=sys.stdout)
        print(f"failure: {error}", flush=True)
        try:
            print(f"  at {driver.current_url}", flush=True)
            driver.save_screenshot(os.path.join(SCREENSHOTS, "failure.png"))
            with open(os.path.join(SCREENSHOTS, "failure.html"), "w", encoding="utf-8") as page:
                page.write(driver.page_source)
        except Exception:  # noqa: BLE001
            pass
        return 1
    finally:
        driver.quit()
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
