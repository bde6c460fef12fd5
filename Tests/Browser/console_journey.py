"""A user's journey through the web console (/account/) in headless Chromium, driven by Selenium.

Run by Tests/EndToEndTests/ConsoleBrowserTests.swift against a whole system (EndToEndSystem), with the Selenium
that scripts/test.sh installs. Environment:
  KONTO_GATEWAY_URL   the gateway, e.g. http://127.0.0.1:8080
  KONTO_SCREENSHOTS   a directory for the screenshots (and failure.png / failure.html on a failure)
  KONTO_CHROMEDRIVER  chromedriver (default /usr/bin/chromedriver)
  KONTO_CHROMIUM      the browser (optional; chromedriver finds Debian's /usr/bin/chromium)
  KONTO_CONSOLE_PRIVILEGED_SECONDS  the Identity's privileged window (the test sets 0, so that every
                      security-related change asks for the current password at once, without waiting)
  KONTO_PROVIDER_NAME a configured OpenID Connect provider (oidc-provider-mock): the journey ends signing in through it
  KONTO_JOURNEY       `passkeys`: the passkey journey instead (Chromium's virtual authenticator; the gateway must be
                      addressed as http://localhost:PORT, the origin its Identity allows); `admin`: the admin console's
                      (KONTO_GATEWAY_URL the admin listener; KONTO_ADMIN_KEY, KONTO_READER_KEY, KONTO_ADA_ID,
                      KONTO_ADA_USER_ID, KONTO_BOB_ID, KONTO_BOB_USER_ID: see admin())

Protocol with the driver: one line per step ("step: ...") on stdout; when it needs the password-reset token the
webhook received, it prints `need-reset-token <userId>` and reads the token from one line of stdin.
Every page must load with no SEVERE entry in the browser's console (a script error, a resource that failed to load),
except a form answered with a 4xx status for a refused submission (Chromium logs that as a failed load) where the
step expects one. Exit 0 when the whole journey passed, 1 (with failure.png and failure.html) when not.
"""

import base64
import hashlib
import hmac
import os
import re
import secrets
import signal
import struct
import subprocess
import sys
import time
import traceback
import json
import urllib.error
import urllib.request
from urllib.parse import urljoin

from selenium import webdriver
from selenium.common.exceptions import (NoAlertPresentException, StaleElementReferenceException, TimeoutException,
                                        UnexpectedAlertPresentException, WebDriverException)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions
from selenium.webdriver.support.ui import Select, WebDriverWait

GATEWAY = os.environ["KONTO_GATEWAY_URL"].rstrip("/")
SCREENSHOTS = os.environ["KONTO_SCREENSHOTS"]
# Where the browser saves what it downloads (the console's "Download my data").
DOWNLOADS = os.path.join(SCREENSHOTS, "downloads")
CHROMEDRIVER = os.environ.get("KONTO_CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM = os.environ.get("KONTO_CHROMIUM")
PRIVILEGED_SECONDS = int(os.environ.get("KONTO_CONSOLE_PRIVILEGED_SECONDS", "0"))
# How long one element or page may take to appear, and the whole journey (about 45 s alone, several times that
# beside the rest of the suite on CI's two cores; the Swift test's own bound is longer, so a hang here still ends
# with failure.png, the step it hung in and a clean browser shutdown).
WAIT_SECONDS = 20
JOURNEY_SECONDS = 240

DESKTOP = (1280, 900)
PHONE = (390, 844)

HANDLE_MESSAGE = "Use 3 to 20 lowercase letters, digits or underscores."
# Answers a refused form may come with (Chromium logs each as a SEVERE "Failed to load resource").
REFUSAL_STATUSES = {400, 401, 403, 409, 422, 429}


class JourneyFailure(Exception):
    pass


STARTED = time.monotonic()


def step(text):
    print(f"step: [{time.monotonic() - STARTED:5.1f} s] {text}", flush=True)


def expect(condition, message):
    if not condition:
        raise JourneyFailure(message)


def replaced(element):
    """A condition: `element` (a page's <html>) is no longer in the document, a new page has come. Like Selenium's
    staleness_of, but also taking Chromium's other answer for a node of a page being replaced."""
    def condition(driver):
        try:
            element.is_enabled()
            return False
        except StaleElementReferenceException:
            return True
        except WebDriverException as error:
            if "does not belong to the document" in (error.msg or ""):
                return True
            raise
    return condition


class Console:
    """The browser on the console, with checks that every page passes."""

    def __init__(self, driver):
        self.driver = driver

    # MARK: Waiting and checking

    def wait(self, condition, what, seconds=WAIT_SECONDS):
        try:
            return WebDriverWait(self.driver, seconds).until(condition)
        except TimeoutException:
            raise JourneyFailure(f"not within {seconds} s: {what} (at {self.driver.current_url})") from None

    def element(self, element_id):
        """The element with `element_id`, once it is shown."""
        return self.wait(EC.visibility_of_element_located((By.ID, element_id)), f"#{element_id} is shown")

    def present(self, element_id):
        """The element with `element_id`, once it is in the page (shown or not, e.g. a checkbox styled away)."""
        return self.wait(EC.presence_of_element_located((By.ID, element_id)), f"#{element_id} is in the page")

    def exists(self, element_id):
        return bool(self.driver.find_elements(By.ID, element_id))

    def text(self, element_id):
        return self.element(element_id).text.strip()

    def value(self, element_id):
        return self.present(element_id).get_attribute("value")

    def page(self, landmark, allowed_refusal=None):
        """Waits for the page that has `landmark` (a CSS selector: its main#ID, or a form#ID where the contract names
        no <main>), then checks it."""
        # The pages are rendered by the server: once one has loaded, its landmark is there or it is another page.
        self.wait(lambda d: d.execute_script("return document.readyState") == "complete", "the page has loaded")
        try:
            self.wait(EC.presence_of_element_located((By.CSS_SELECTOR, landmark)), f"the page with {landmark}", seconds=3)
        except JourneyFailure as missing:
            # Say what came instead: the page's <main> and text, and what the browser's console saw.
            came = self.driver.execute_script(
                "const m = document.querySelector('main'); return [m ? 'main#' + m.id : 'no <main>', "
                "(document.body ? document.body.innerText : '').trim().slice(0, 300)]")
            logs = [entry.get("message") for entry in self.driver.get_log("browser") if entry.get("level") == "SEVERE"]
            raise JourneyFailure(f"{missing}; the page has {came[0]}, says {came[1]!r}; console: {logs}") from None
        self.check_page(landmark, allowed_refusal)

    def check_console(self, where, allowed_refusal=None):
        """Fails on any SEVERE entry of the browser's console since the last check. `allowed_refusal` is a URL whose
        refused answer (a 4xx in REFUSAL_STATUSES) the step expects."""
        severe = []
        for entry in self.driver.get_log("browser"):
            if entry.get("level") != "SEVERE":
                continue
            if allowed_refusal and entry.get("source") == "network":
                match = re.match(r"^(\S+) - Failed to load resource: the server responded with a status of (\d{3})", entry["message"])
                if match and match.group(1).split("?")[0] == allowed_refusal.split("?")[0] and int(match.group(2)) in REFUSAL_STATUSES:
                    print(f"  (the refused form's answer, expected: {entry['message']})", flush=True)
                    continue
            severe.append(entry)
        if severe:
            for entry in severe:
                print(f"  SEVERE in the browser's console ({entry.get('source')}): {entry.get('message')}", flush=True)
            raise JourneyFailure(f"{where}: {len(severe)} SEVERE entr{'y' if len(severe) == 1 else 'ies'} in the browser's console: "
                                 + "; ".join(entry.get("message", "") for entry in severe))

    def check_no_alert(self, where):
        try:
            alert = self.driver.switch_to.alert
            text = alert.text
            alert.dismiss()
        except NoAlertPresentException:
            return
        raise JourneyFailure(f"{where}: an alert opened ({text!r}): markup from the user's input ran as script")

    def check_page(self, where, allowed_refusal=None):
        """What every console page must pass: no alert, no console error, every control labelled, every form a POST
        with a CSRF token."""
        self.check_no_alert(where)
        self.check_console(where, allowed_refusal)
        unlabelled = self.driver.execute_script("""
            return Array.from(document.querySelectorAll('input, select, textarea'))
                .filter(c => !['hidden', 'submit', 'button', 'reset', 'image'].includes(c.type))
                .filter(c => !c.id || !document.querySelector('label[for="' + CSS.escape(c.id) + '"]'))
                .map(c => c.id || c.name || c.outerHTML.slice(0, 80));
        """)
        expect(not unlabelled, f"{where}: inputs without a <label for>: {unlabelled}")
        forms = self.driver.execute_script("""
            return Array.from(document.forms).map(f => ({
                id: f.id, method: (f.getAttribute('method') || 'get').toLowerCase(), query: f.hasAttribute('data-query'),
                csrf: (f.querySelector('input[type=hidden][name=_csrf]') || {}).value || ''
            }));
        """)
        for form in forms:
            if form["method"] == "get" and form["query"]:
                continue  # a search (data-query): it changes nothing
            expect(form["method"] == "post", f"{where}: form #{form['id']} is not method=post ({form['method']})")
            expect(form["csrf"], f"{where}: form #{form['id']} has no hidden _csrf with a value")

    # MARK: Navigating

    def open(self, path, landmark):
        self.driver.get(GATEWAY + path)
        self.page(landmark)

    def follow(self, link_id, landmark):
        link = self.element(link_id)
        old = self.driver.find_element(By.TAG_NAME, "html")
        link.click()
        self.wait(replaced(old), f"#{link_id} leads to a new page")
        self.page(landmark)

    def form_action(self, button_id):
        return self.driver.execute_script(
            "const b = document.getElementById(arguments[0]); return b.form ? b.form.action : location.href;", button_id)

    def submit(self, button_id, landmark, refused=False):
        """Clicks the form's button and waits for the page it leads to. `refused`: the answer is the form again, with
        an error (which may come with a 4xx status)."""
        button = self.element(button_id)
        action = self.form_action(button_id)
        old = self.driver.find_element(By.TAG_NAME, "html")
        button.click()
        self.wait(replaced(old), f"#{button_id} submits its form")
        self.page(landmark, allowed_refusal=action if refused else None)

    def submit_refused(self, button_id, identifier, landmark):
        """Clicks the form's button when a field is invalid: #error-`identifier` is then shown, by the page's own
        validation (no round trip) or by the server's answer (the form again, maybe with a 4xx status)."""
        action = self.form_action(button_id)
        self.element(button_id).click()
        self.wait(EC.visibility_of_element_located((By.ID, f"error-{identifier}")), f"#error-{identifier} is shown")
        self.page(landmark, allowed_refusal=action)

    # MARK: Filling in

    def fill(self, element_id, value):
        field = self.element(element_id)
        field.clear()
        # Typed, then left with Tab as a user would: the page validates a field when it is left, and an error it then
        # shows moves what is below, so the next click must come after that, not be the blur's cause.
        field.send_keys(value + Keys.TAB)
        expect(field.get_attribute("value") == value, f"#{element_id} holds {field.get_attribute('value')!r}, not the typed {value!r}")

    def set_date(self, element_id, value):
        # A date input's typing order follows the browser's locale; its value is always yyyy-MM-dd, so it is set as
        # the date picker would set it (with the events a user's choice fires).
        field = self.element(element_id)
        expect(field.get_attribute("type") == "date", f"#{element_id} is type={field.get_attribute('type')}, not date")
        self.driver.execute_script("""
            const f = arguments[0]; f.value = arguments[1];
            f.dispatchEvent(new Event('input', {bubbles: true})); f.dispatchEvent(new Event('change', {bubbles: true}));
        """, field, value)
        expect(field.get_attribute("value") == value, f"#{element_id} holds {field.get_attribute('value')!r}, not {value!r}")

    def check(self, element_id, on=True):
        box = self.present(element_id)
        expect(box.get_attribute("type") == "checkbox", f"#{element_id} is type={box.get_attribute('type')}, not a checkbox")
        if box.is_selected() != on:
            self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", box)
            label = self.driver.find_elements(By.CSS_SELECTOR, f'label[for="{element_id}"]')
            (box if box.is_displayed() else label[0]).click()
        expect(box.is_selected() == on, f"#{element_id} is {'not ' if on else ''}checked after a click")

    def fill_list(self, identifier, values):
        """A string list: its inputs field-ID-0, field-ID-1, …, more added with #add-ID."""
        for index, value in enumerate(values):
            element_id = f"field-{identifier}-{index}"
            if not self.exists(element_id):
                count = len(self.driver.find_elements(By.CSS_SELECTOR, f'[id^="field-{identifier}-"]'))
                self.element(f"add-{identifier}").click()
                self.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, f'[id^="field-{identifier}-"]')) > count,
                          f"#add-{identifier} adds an input")
            self.fill(element_id, value)
        # Inputs beyond the values are emptied (an empty item is no item).
        index = len(values)
        while self.exists(f"field-{identifier}-{index}"):
            self.fill(f"field-{identifier}-{index}", "")
            index += 1

    def list_values(self, identifier):
        values, index = [], 0
        while self.exists(f"field-{identifier}-{index}"):
            values.append(self.value(f"field-{identifier}-{index}"))
            index += 1
        return values

    # MARK: Errors

    def check_field_error(self, identifier, message=None, control_prefix=None):
        """#error-ID is shown right after the field's input(s), which are aria-invalid."""
        error = self.element(f"error-{identifier}")
        expect("field-error" in (error.get_attribute("class") or "").split(), f"#error-{identifier} has no class field-error")
        if message:
            expect(message in error.text, f"#error-{identifier} says {error.text!r}, not {message!r}")
        prefix = control_prefix or f"field-{identifier}"
        preceding = self.driver.execute_script("""
            const error = arguments[0];
            let last = null;
            for (const c of document.querySelectorAll('input:not([type=hidden]), select, textarea')) {
                if (c.compareDocumentPosition(error) & Node.DOCUMENT_POSITION_FOLLOWING) last = c;
            }
            return last ? last.id : null;
        """, error)
        expect(preceding == prefix or (preceding or "").startswith(prefix + "-"),
               f"#error-{identifier} follows #{preceding}, not the field's input(s) #{prefix}…")
        invalid = self.driver.execute_script(
            "return Array.from(document.querySelectorAll('[id=\"' + arguments[0] + '\"], [id^=\"' + arguments[0] + '-\"]'))"
            ".filter(c => c.matches('input, select, textarea')).map(c => [c.id, c.getAttribute('aria-invalid')]);", prefix)
        # A single input is aria-invalid; of a list's or a name's inputs, at least one (the item at fault).
        marked = [state == "true" for _, state in invalid]
        expect(invalid and (all(marked) if len(invalid) == 1 else any(marked)),
               f"the inputs of {identifier} are not aria-invalid=\"true\": {invalid}")
        return error.text

    # MARK: Screenshots

    def screenshot(self, name, size=DESKTOP, whole_page=True):
        """`name`.png at `size`; `whole_page` grows the window to the page's height so that nothing is cut off."""
        width, height = size
        self.driver.set_window_size(width, height)
        if whole_page:
            page_height = self.driver.execute_script("return document.documentElement.scrollHeight")
            chrome = self.driver.execute_script("return window.outerHeight - window.innerHeight")
            self.driver.set_window_size(width, max(height, page_height + chrome))
        path = os.path.join(SCREENSHOTS, name + ".png")
        expect(self.driver.save_screenshot(path), f"could not save {path}")
        self.driver.set_window_size(*DESKTOP)
        print(f"  screenshot {path}", flush=True)

    def check_fits(self, width, where):
        """No horizontal scrolling at `width`."""
        self.driver.set_window_size(width, PHONE[1])
        overflow = self.driver.execute_script("""
            const width = document.documentElement.clientWidth;
            return Array.from(document.querySelectorAll('main *'))
                .filter(e => e.getBoundingClientRect().right > width + 1)
                .slice(0, 5).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : ''));
        """)
        scroll = self.driver.execute_script("return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        expect(scroll[0] <= scroll[1] + 1, f"{where} scrolls sideways at {width} px (content {scroll[0]} px wide): {overflow}")


def journey(console):
    driver = console.driver
    suffix = secrets.token_hex(3)
    user_id = f"ada.{suffix}@example.org"
    new_user_id = f"countess.{suffix}@example.org"
    handle = f"ada_{suffix}"
    passwords = ["analytical engine 1843", "difference engine 1822", "jacquard loom 1804"]
    # A name that is markup: it must come back as text, everywhere.
    given = "Ada<script>alert(1)</script>"
    family = "<img src=x onerror=alert(2)>"
    biography = 'Wrote the first program. "Notes" & <b>more</b>.'

    step(f"open {GATEWAY}/account/ signed out: the account setup page (user {user_id})")
    console.open("/account/", "main#account-setup")
    for element_id in ["login-form", "login-userId", "login-password", "login-submit", "signup-link", "reset-link"]:
        console.present(element_id)
    console.screenshot("setup")

    step("follow the sign-up link: one field per required and collected key, grouped by category")
    console.follow("signup-link", "main#signup")
    for category in ["credentials", "name", "contactDetails", "personalDetails", "other"]:
        expect(console.exists(f"category-{category}"), f"no fieldset #category-{category} on the sign-up page")
        expect(console.present(f"category-{category}").tag_name == "fieldset", f"#category-{category} is no fieldset")
    for element_id, kind in {"field-userId": "email", "field-password": "password", "field-newsletter": "checkbox"}.items():
        actual = console.present(element_id).get_attribute("type")
        expect(actual == kind, f"#{element_id} is type={actual}, not {kind}")
    for element_id in ["field-name-givenName", "field-name-familyName", "field-email", "field-biography", "field-handle"]:
        console.present(element_id)
    for other in ["dateOfBirth", "genderIdentity", "heightCentimetres", "languages", "memberSince", "plan"]:
        expect(not console.exists(f"field-{other}") and not console.exists(f"field-{other}-0"),
               f"the sign-up form asks for {other}, which is only supported (or manual)")

    step("fill in every field, with a name that is markup; screenshot signup.png")
    console.fill("field-userId", user_id)
    console.fill("field-password", passwords[0])
    console.fill("field-name-givenName", given)
    console.fill("field-name-familyName", family)
    console.fill("field-email", user_id)
    console.fill("field-biography", biography)
    console.fill("field-handle", handle)
    console.check("field-newsletter")
    expect(not driver.find_elements(By.CSS_SELECTOR, ".field-error"), "a field error on a form filled in well")
    console.screenshot("signup")

    step("a handle the rule refuses: its error is shown next to it, and everything typed is still there")
    console.fill("field-handle", "Bad Handle!")
    console.submit_refused("signup-submit", "handle", "main#signup")
    console.check_field_error("handle", HANDLE_MESSAGE)
    kept = {
        "field-userId": user_id, "field-name-givenName": given, "field-name-familyName": family,
        "field-email": user_id, "field-biography": biography, "field-handle": "Bad Handle!",
    }
    for element_id, typed in kept.items():
        actual = console.value(element_id)
        expect(actual == typed, f"after the refusal #{element_id} holds {actual!r}, not the typed {typed!r}")
    expect(console.present("field-newsletter").is_selected(), "after the refusal the newsletter box is no longer checked")
    others = [e.get_attribute("id") for e in driver.find_elements(By.CSS_SELECTOR, ".field-error") if e.get_attribute("id") != "error-handle"]
    expect(not others, f"errors for fields that were fine: {others}")
    console.screenshot("signup-error")
    password_kept = console.value("field-password") == passwords[0]
    print(f"  the password was {'kept' if password_kept else 'not kept (typed again)'}", flush=True)

    step("a required name left empty: its error is shown next to the name, inside its fieldset; the handle corrected by typing and the button clicked straight away (the click is not lost as the handle's message goes)")
    if not password_kept:
        console.fill("field-password", passwords[0])
    driver.find_element(By.ID, "field-name-givenName").clear()
    driver.find_element(By.ID, "field-name-familyName").clear()
    # No Tab: the field is left by the click on the button itself, as a person does it.
    field = console.element("field-handle")
    field.clear()
    field.send_keys(handle)
    console.submit_refused("signup-submit", "name", "main#signup")
    expect(driver.find_elements(By.CSS_SELECTOR, "fieldset#name-name #error-name"), "the name's error is not inside the name's fieldset")

    step("fill in the name again and sign up: the overview shows every value, the name's markup as text")
    console.fill("field-name-givenName", given)
    console.fill("field-name-familyName", family)
    if console.value("field-password") != passwords[0]:
        console.fill("field-password", passwords[0])
    console.submit("signup-submit", "main#overview")
    expected_name = f"{given} {family}"
    expect(console.text("value-name") == expected_name, f"#value-name shows {console.text('value-name')!r}, not {expected_name!r}")
    injected = driver.execute_script("return document.querySelectorAll('main img, main script, main b').length")
    expect(injected == 0, f"the overview has {injected} element(s) made from the user's markup")
    for element_id, value in {"value-userId": user_id, "value-email": user_id, "value-handle": handle, "value-biography": biography, "value-newsletter": "Yes"}.items():
        expect(console.text(element_id) == value, f"#{element_id} shows {console.text(element_id)!r}, not {value!r}")
    for category, identifier in [("credentials", "userId"), ("name", "name"), ("name", "handle"), ("contactDetails", "email"),
                                 ("personalDetails", "biography"), ("other", "newsletter")]:
        inside = driver.find_elements(By.CSS_SELECTOR, f"section#category-{category} dl #value-{identifier}")
        expect(inside, f"#value-{identifier} is not in the <dl> of section#category-{category}")
    for element_id in ["edit-link", "password-link", "userid-link", "delete-link", "logout-form", "logout-everywhere-form"]:
        console.present(element_id)
    cookies = driver.get_cookies()
    expect(cookies, "signed in without a cookie")
    expect(any(c.get("httpOnly") for c in cookies), f"no HttpOnly cookie holds the session: {cookies}")
    for cookie in cookies:
        expect(cookie.get("sameSite") in ("Lax", "Strict"), f"cookie {cookie['name']} has SameSite={cookie.get('sameSite')}")
    console.screenshot("overview")

    step("the address awaits its confirmation: open the link from the captured mail, confirm with the button")
    console.present("verification-notice")
    print(f"need-verification-link {user_id}", flush=True)
    link = sys.stdin.readline().strip()
    expect(link.startswith(GATEWAY + "/account/verify?token="), f"the mail's link is {link!r}, not one to this console's verify page")
    driver.get(link)
    console.page("form#verify-form")
    console.submit("verify-submit", "main#verified")
    console.screenshot("verified")
    console.follow("account-link", "main#overview")
    expect(not console.exists("verification-notice"), "the overview still asks for the address's confirmation")

    step("log out and sign in again with a code by mail: the address, then the code from the captured mail")
    console.submit("logout-submit", "main#account-setup")
    console.follow("email-code-link", "form#email-code-request-form")
    console.fill("email-code-userId", user_id)
    console.submit("email-code-request-submit", "form#email-code-form")
    expect(console.value("email-code-entry-userId") == user_id, "the code page lost the address")
    print(f"need-sign-in-code {user_id}", flush=True)
    code = sys.stdin.readline().strip()
    expect(len(code) == 8 and code.isdigit(), f"no sign-in code came on stdin ({code!r})")
    console.fill("email-code", code)
    console.screenshot("email-code")
    console.submit("email-code-submit", "main#overview")

    step("the overview at a phone's width (390 px): nothing scrolls sideways; screenshot overview-phone.png")
    console.check_fits(PHONE[0], "the overview")
    console.screenshot("overview-phone", size=PHONE)

    step("a form without its CSRF token is refused: log out with the token removed, still signed in")
    driver.execute_script("document.querySelector('#logout-form input[name=_csrf]').remove()")
    action = console.form_action("logout-submit")
    old = driver.find_element(By.TAG_NAME, "html")
    console.element("logout-submit").click()
    console.wait(replaced(old), "the logout form is submitted")
    console.wait(lambda d: d.execute_script("return document.readyState") == "complete", "the answer has loaded")
    console.check_console("the logout without a CSRF token", allowed_refusal=action)
    console.open("/account/", "main#overview")

    step("edit: the form is prefilled; add a date, an enum, numbers and lists, remove the biography")
    console.follow("edit-link", "main#edit")
    prefilled = {"field-name-givenName": given, "field-name-familyName": family, "field-email": user_id,
                 "field-biography": biography, "field-handle": handle}
    for element_id, value in prefilled.items():
        expect(console.value(element_id) == value, f"the edit form's #{element_id} holds {console.value(element_id)!r}, not {value!r}")
    expect(console.present("field-newsletter").is_selected(), "the edit form's newsletter box is not checked")
    for element_id in ["field-userId", "field-password", "field-memberSince", "field-plan"]:
        expect(not console.exists(element_id), f"the edit form offers #{element_id}")
    for element_id, kind, step_attribute in [("field-heightCentimetres", "number", "1"), ("field-shoeSize", "number", "any"),
                                             ("field-dateOfBirth", "date", None)]:
        field = console.present(element_id)
        expect(field.get_attribute("type") == kind, f"#{element_id} is type={field.get_attribute('type')}, not {kind}")
        if step_attribute:
            expect(field.get_attribute("step") == step_attribute, f"#{element_id} has step={field.get_attribute('step')}, not {step_attribute}")
    expect(console.present("field-genderIdentity").tag_name == "select", "#field-genderIdentity is not a <select>")
    console.set_date("field-dateOfBirth", "1815-12-10")
    Select(console.element("field-genderIdentity")).select_by_value("female")
    console.fill("field-heightCentimetres", "165")
    console.fill("field-shoeSize", "38.5")
    console.fill_list("phoneNumbers", ["+41791234567", "+41441234567"])
    console.fill_list("languages", ["en", "fr"])
    console.fill_list("interests", ["mathematics", "poetry 2"])
    console.fill("field-biography", "")

    step("submit with an interest the rule refuses: its error is next to the list, every item kept")
    console.submit_refused("edit-submit", "interests", "main#edit")
    console.check_field_error("interests")
    for identifier, values in [("interests", ["mathematics", "poetry 2"]), ("languages", ["en", "fr"]),
                               ("phoneNumbers", ["+41791234567", "+41441234567"])]:
        kept_values = [v for v in console.list_values(identifier) if v]
        expect(kept_values == values, f"after the refusal {identifier} holds {kept_values}, not the typed {values}")
    for element_id, value in [("field-dateOfBirth", "1815-12-10"), ("field-heightCentimetres", "165"), ("field-shoeSize", "38.5"),
                              ("field-biography", ""), ("field-genderIdentity", "female")]:
        expect(console.value(element_id) == value, f"after the refusal #{element_id} holds {console.value(element_id)!r}, not {value!r}")

    step("correct it and save; screenshot edit.png: the overview shows the new values with a notice")
    console.fill_list("interests", ["mathematics", "poetry"])
    console.screenshot("edit")
    console.submit("edit-submit", "main#overview")
    console.element("notice")
    shown = {
        "value-dateOfBirth": "1815-12-10", "value-heightCentimetres": "165", "value-shoeSize": "38.5",
        "value-phoneNumbers": "+41791234567, +41441234567", "value-languages": "en, fr",
        "value-interests": "mathematics, poetry", "value-name": expected_name, "value-handle": handle,
    }
    for element_id, value in shown.items():
        expect(console.text(element_id) == value, f"#{element_id} shows {console.text(element_id)!r}, not {value!r}")
    expect("female" in console.text("value-genderIdentity").lower(), f"#value-genderIdentity shows {console.text('value-genderIdentity')!r}")
    expect(not console.exists("value-biography"), "the removed biography is still shown")

    step("log out: the account setup page again, also when the overview is asked for")
    console.submit("logout-submit", "main#account-setup")
    console.open("/account/", "main#account-setup")

    step("sign up again with the same userId: the server refuses it next to the field, everything typed kept")
    console.follow("signup-link", "main#signup")
    again = {"field-userId": user_id, "field-password": passwords[0], "field-name-givenName": "Augusta",
             "field-name-familyName": "King", "field-email": user_id, "field-biography": biography, "field-handle": handle + "_2"}
    for element_id, value in again.items():
        console.fill(element_id, value)
    console.submit("signup-submit", "main#signup", refused=True)
    console.check_field_error("userId")
    for element_id, value in again.items():
        if element_id != "field-password":
            expect(console.value(element_id) == value, f"after the refusal #{element_id} holds {console.value(element_id)!r}, not the typed {value!r}")
    console.open("/account/", "main#account-setup")

    step("log in with a wrong password: a form error, the userId kept; then with the right one")
    console.fill("login-userId", user_id)
    console.fill("login-password", "not the password")
    console.submit("login-submit", "main#account-setup", refused=True)
    console.element("form-error")
    expect(console.value("login-userId") == user_id, f"after the refusal #login-userId holds {console.value('login-userId')!r}")
    console.fill("login-password", passwords[0])
    console.submit("login-submit", "main#overview")
    expect(console.text("value-handle") == handle, "the overview after logging in shows another account")

    step(f"change the password: the privileged window ({PRIVILEGED_SECONDS} s) has closed, so the current one is asked for")
    console.follow("password-link", "form#password-form")
    expect(console.present("field-newPassword").get_attribute("type") == "password", "#field-newPassword is not type=password")
    expect(not console.exists("field-currentPassword"), "the current password is asked for before it is needed")
    console.fill("field-newPassword", passwords[1])
    console.submit("password-submit", "form#password-form", refused=True)
    console.element("form-error")
    # No password is written back into a page: the new one is typed again with the current one.
    expect(console.value("field-newPassword") == "", "the typed new password was written back into the page")
    console.fill("field-newPassword", passwords[1])
    console.fill("field-currentPassword", "not the password")
    console.submit("password-submit", "form#password-form", refused=True)
    console.check_field_error("currentPassword")
    if console.value("field-newPassword") != passwords[1]:
        console.fill("field-newPassword", passwords[1])
    console.fill("field-currentPassword", passwords[0])
    console.screenshot("password")
    console.submit("password-submit", "main#overview")
    console.element("notice")

    step("change the userId: the current password is asked for; the overview then shows the new one")
    expect(console.text("userid-link") == "Change email address", f"the userId's link says {console.text('userid-link')!r}")
    console.follow("userid-link", "form#userid-form")
    expect(driver.find_element(By.TAG_NAME, "h1").text == "Change your email address", "the userId's page is not named after an email address")
    console.fill("field-userId", new_user_id)
    console.submit("userid-submit", "form#userid-form", refused=True)
    console.element("form-error")
    expect(console.value("field-userId") == new_user_id, "the typed userId was not kept when the current password was asked for")
    console.fill("field-currentPassword", passwords[1])
    console.submit("userid-submit", "main#overview")
    expect(console.text("notice") == "Your email address is changed.", f"after the change the notice says {console.text('notice')!r}")
    console.element("notice")
    expect(console.text("value-userId") == new_user_id, f"#value-userId shows {console.text('value-userId')!r}, not {new_user_id!r}")

    step("log out and reset the password through the link the mailer webhook received")
    console.submit("logout-submit", "main#account-setup")
    console.follow("reset-link", "form#reset-request-form")
    console.fill("field-userId", new_user_id)
    console.submit("reset-request-submit", "main#reset-requested")
    console.screenshot("reset")
    print(f"need-reset-token {new_user_id}", flush=True)
    token = sys.stdin.readline().strip()
    expect(token, "no reset token came on stdin")
    console.open(f"/account/reset/confirm?token={token}", "form#reset-confirm-form")
    expect(driver.find_elements(By.CSS_SELECTOR, "#reset-confirm-form input[type=hidden][name=token]"),
           "the reset form carries no hidden token")
    console.fill("field-newPassword", passwords[2])
    console.submit("reset-confirm-submit", "main#reset-done")
    console.screenshot("reset-done")
    console.follow("login-link", "main#account-setup")

    step("the token is single use: a second reset with it is refused")
    console.open(f"/account/reset/confirm?token={token}", "form#reset-confirm-form")
    console.fill("field-newPassword", "another password 1")
    console.submit("reset-confirm-submit", "#form-error", refused=True)

    step("log in with the reset password (the one before it no longer works)")
    console.open("/account/", "main#account-setup")
    console.fill("login-userId", new_user_id)
    console.fill("login-password", passwords[1])
    console.submit("login-submit", "main#account-setup", refused=True)
    console.element("form-error")
    console.fill("login-password", passwords[2])
    console.submit("login-submit", "main#overview")

    if os.environ.get("KONTO_PROVIDER_NAME"):
        link_identity(console, suffix, passwords[2])
    sessions(console, new_user_id, passwords[2])
    export(console, new_user_id, passwords[2])

    step("delete the account: confirmed, with the current password")
    console.follow("delete-link", "form#delete-form")
    expect(console.present("field-confirm").get_attribute("type") == "checkbox", "#field-confirm is not a checkbox")
    console.check("field-confirm")
    console.fill("field-currentPassword", passwords[2])
    console.screenshot("delete")
    console.submit("delete-submit", "main#deleted")
    console.screenshot("deleted")

    step("the account is gone: its login is refused like any wrong one")
    console.open("/account/", "main#account-setup")
    console.fill("login-userId", new_user_id)
    console.fill("login-password", passwords[2])
    console.submit("login-submit", "main#account-setup", refused=True)
    console.element("form-error")

    app_verification(console, suffix)
    second_factor(console, suffix)
    if os.environ.get("KONTO_PROVIDER_NAME"):
        provider(console, suffix)


def app_verification(console, suffix):
    """The app's path: an account signed up through the API (the app keeps its session); its verification link opened
    in a browser that has no session, on a phone. Signing in there comes back to the link, and confirming then ends
    nothing: the app's session and the password stay. Then a squatter's account: "I did not create this account" ends
    the squatter's session and password."""
    driver = console.driver
    user_id = f"otto.{suffix}@example.org"
    password = "engine of difference 1834"
    details = {"name": {"givenName": "Otto", "familyName": "Lilienthal"}, "handle": f"otto_{suffix}"}
    step("the app's sign-up through the API; its link opened on the phone without a session: sign in to confirm, or secure the account")
    status, answer = api("POST", "/v1/accounts", {"userId": user_id, "password": password, "details": details})
    expect(status == 201, f"the app's sign-up answered {status}")
    app = answer["session"]["token"]
    print(f"need-verification-link {user_id}", flush=True)
    link = sys.stdin.readline().strip()
    expect(link.startswith(GATEWAY + "/account/verify?token="), f"the mail's link is {link!r}, not one to this console's verify page")
    driver.set_window_size(*PHONE)
    driver.get(link)
    console.page("main#verify")
    for element_id in ["verify-sign-in-submit", "verify-secure-submit"]:
        console.present(element_id)
    expect(not console.exists("verify-submit"), "signed out, the page offers a button that confirms outright")
    console.check_fits(PHONE[0], "the verify page")
    console.screenshot("verify-signed-out", size=PHONE)
    driver.set_window_size(*PHONE)

    step("sign in to confirm: the setup page says why (no code by mail offered), the password brings the page back, confirming ends nothing")
    console.submit("verify-sign-in-submit", "main#account-setup")
    notice = console.text("notice")
    expect("confirm your email address" in notice, f"the setup page's notice says {notice!r}")
    expect(not console.exists("email-code-link"), "a code by mail is offered, which would be the address's proof and end the password")
    console.fill("login-userId", user_id)
    console.fill("login-password", password)
    console.submit("login-submit", "main#verify")
    console.submit("verify-submit", "main#verified")
    text = console.text("notice")
    expect("Nothing else on your account changed" in text, f"the confirmation says {text!r}")
    console.screenshot("verified-signed-in", size=PHONE)
    driver.set_window_size(*DESKTOP)
    status, account = api("GET", "/v1/account", token=app)
    expect(status == 200, f"the app's session answers {status} after the confirmation in the browser: it was lost")
    expect(account["details"].get("emailVerified") is True, f"the app reads emailVerified={account['details'].get('emailVerified')!r}")
    status, _ = api("POST", "/v1/sessions", {"userId": user_id, "password": password})
    expect(status == 200, f"the password signs in no more ({status})")
    console.follow("account-link", "main#overview")
    console.submit("logout-submit", "main#account-setup")

    step("a squatter signed up with someone's address; its owner opens the link and chooses \"I did not create this account\"")
    squatted = f"nora.{suffix}@example.org"
    status, answer = api("POST", "/v1/accounts", {"userId": squatted, "password": "the squatter's password 1",
                                                  "details": {"name": {"givenName": "Eve", "familyName": "Squatter"}, "handle": f"eve_{suffix}"}})
    expect(status == 201, f"the squatter's sign-up answered {status}")
    squatter = answer["session"]["token"]
    print(f"need-verification-link {squatted}", flush=True)
    link = sys.stdin.readline().strip()
    expect(link.startswith(GATEWAY + "/account/verify?token="), f"the mail's link is {link!r}")
    driver.get(link)
    console.page("main#verify")
    console.submit("verify-secure-submit", "main#verified")
    expect(console.text("notice").startswith("Your email address is confirmed, and whatever was set up"), f"the page says {console.text('notice')!r}")
    console.present("account-link")
    console.screenshot("secured")
    status, _ = api("GET", "/v1/account", token=squatter)
    expect(status == 401, f"the squatter's session still answers {status}")
    status, _ = api("POST", "/v1/sessions", {"userId": squatted, "password": "the squatter's password 1"})
    expect(status == 401, f"the squatter's password still signs in ({status})")
    console.open("/account/", "main#account-setup")


def api(method, path, body=None, token=None, user_agent=None):
    """One call of the gateway's HTTP API: its status and JSON answer."""
    request = urllib.request.Request(GATEWAY + path, method=method, data=json.dumps(body).encode() if body is not None else None)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if user_agent:
        request.add_header("User-Agent", user_agent)
    try:
        with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as answer:
            data = answer.read()
            return answer.status, json.loads(data) if data else None
    except urllib.error.HTTPError as refusal:
        return refusal.code, None


def link_identity(console, suffix, password):
    """The identities page: the provider linked through its own sign-in page (the password asked for on the way back,
    the privileged window being shut), listed, then unlinked with the password."""
    driver = console.driver
    name = os.environ["KONTO_PROVIDER_NAME"]
    step("link the provider from the identities page: its own sign-in, then the password; listed; unlinked again")
    console.follow("identities-link", "main#identities")
    console.present("no-identities")
    old = driver.find_element(By.TAG_NAME, "html")
    console.element(f"link-{name}").click()
    console.wait(replaced(old), "the provider's page comes")
    field = console.wait(EC.visibility_of_element_located((By.NAME, "sub")), "the provider's sign-in field")
    expect(not driver.current_url.startswith(GATEWAY), f"still on the console ({driver.current_url}), not at the provider")
    # The provider's page is not ours to judge: what its console said stays there.
    driver.get_log("browser")
    field.send_keys(f"lovelace.{suffix}")
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.XPATH, "//button[normalize-space()='Authorize']").click()
    console.wait(replaced(old), "the provider sends the browser back")
    # The callback answers the password form with a 401 (the window is shut): the step expects it.
    callback = f"{GATEWAY}/account/oidc/{name}/callback"
    console.page("form#link-form", allowed_refusal=callback)
    console.fill("field-currentPassword", password)
    console.submit("link-submit", "main#identities")
    expect(console.text("notice").startswith("Linked"), f"after linking the notice says {console.text('notice')!r}")
    rows = driver.find_elements(By.CSS_SELECTOR, "#identity-list li.identity")
    expect(len(rows) == 1, f"the identities page lists {len(rows)} identities, not 1")
    console.screenshot("identities")
    identity_id = rows[0].get_attribute("id").removeprefix("identity-")
    console.submit(f"unlink-{identity_id}", "form#unlink-form", refused=True)
    console.fill("field-currentPassword", password)
    console.submit("unlink-submit", "main#identities")
    expect(console.text("notice") == "Unlinked.", f"after unlinking the notice says {console.text('notice')!r}")
    console.present("no-identities")
    console.follow("home-link", "main#overview")


def sessions(console, user_id, password):
    """Where the account is signed in: a phone's session (signed in through the API) beside this browser's; the phone
    is signed out from the page with the password (the privileged window is shut), and its token stops at once."""
    step("the sessions page lists this browser and a phone signed in through the API; sign the phone out with the password")
    status, answer = api("POST", "/v1/sessions", {"userId": user_id, "password": password}, user_agent="Spezi Study/2.1 (iPhone)")
    expect(status == 200, f"the phone's login answered {status}")
    phone = answer["session"]["token"]
    console.follow("sessions-link", "main#sessions")
    rows = console.driver.find_elements(By.CSS_SELECTOR, "#session-list li.session")
    expect(len(rows) == 2, f"the sessions page lists {len(rows)} sessions, not 2")
    texts = [row.text for row in rows]
    expect("(this device)" in texts[0] and "Chrome on Linux" in texts[0], f"this browser's session reads {texts[0]!r}")
    expect("Spezi Study/2.1 (iPhone)" in texts[1] and "(this device)" not in texts[1], f"the phone's session reads {texts[1]!r}")
    console.screenshot("sessions")
    phone_id = rows[1].get_attribute("id").removeprefix("session-")
    console.submit(f"end-{phone_id}", "form#end-session-form", refused=True)
    console.fill("field-currentPassword", password)
    console.submit("end-session-submit", "main#sessions")
    expect(console.text("notice") == "Signed out of that device.", f"after signing the phone out the notice says {console.text('notice')!r}")
    expect(len(console.driver.find_elements(By.CSS_SELECTOR, "#session-list li.session")) == 1, "the phone's session is still listed")
    status, _ = api("GET", "/v1/account", token=phone)
    expect(status == 401, f"the phone's ended session still answers {status}")
    console.follow("home-link", "main#overview")


def export(console, user_id, password):
    """Download my data: the password asked for (the window is shut), then the browser saves the account's document,
    which names the account and this browser's session alone (the phone's was ended)."""
    step("download my data: the password first, then the browser saves one JSON document about the account")
    for name in os.listdir(DOWNLOADS):
        os.remove(os.path.join(DOWNLOADS, name))
    console.follow("export-link", "main#export")
    console.submit("export-submit", "form#export-password-form", refused=True)
    console.fill("field-currentPassword", password)
    # The answer is a file: the page stays, the download comes.
    console.element("export-password-submit").click()

    def saved(_driver):
        names = [name for name in os.listdir(DOWNLOADS) if name.endswith(".json")]
        return names[0] if names else False
    name = console.wait(saved, "the downloaded konto-account-*.json")
    expect(name.startswith("konto-account-"), f"the download is named {name!r}")
    with open(os.path.join(DOWNLOADS, name), encoding="utf-8") as file:
        document = json.load(file)
    expect(document["credential"]["userId"] == user_id, f"the document names {document['credential'].get('userId')!r}")
    expect(len(document["sessions"]) == 1 and document["sessions"][0]["current"], "the document's sessions are not this browser's alone")
    expect(document["audit"]["entries"][0]["type"] == "account.exported", "the document's newest audit entry is not the export")
    expect("sealedToken" not in json.dumps(document), "a sealed token in the document")
    console.open("/account/", "main#overview")


def totp(secret, offset=0):
    """The authenticator app: RFC 6238's code of the base32 secret for the step `offset` steps from now."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    counter = int(time.time()) // 30 + offset
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    start = mac[-1] & 0x0F
    return "%06d" % ((struct.unpack(">I", mac[start:start + 4])[0] & 0x7FFFFFFF) % 1000000)


def second_factor(console, suffix):
    """A second account adds an authenticator app from the console's QR code; its next login asks for a code."""
    driver = console.driver
    user_id = f"grace.{suffix}@example.org"
    password = "nanosecond wire 1952"
    step(f"sign up {user_id}, then add an authenticator app: the window has closed, so the password is asked first")
    console.follow("signup-link", "main#signup")
    console.fill("field-userId", user_id)
    console.fill("field-password", password)
    console.fill("field-name-givenName", "Grace")
    console.fill("field-name-familyName", "Hopper")
    console.fill("field-handle", f"grace_{suffix}")
    console.submit("signup-submit", "main#overview")
    console.follow("factors-link", "main#factors")
    console.present("no-factors")
    console.submit("totp-start-submit", "form#totp-password-form", refused=True)
    console.fill("field-currentPassword", password)
    console.submit("totp-password-submit", "form#totp-form")
    modules = driver.find_elements(By.CSS_SELECTOR, "#totp-qr svg path")
    expect(modules and len(modules[0].get_attribute("d")) > 100, "no QR code on the enrolment page")
    console.screenshot("totp")
    secret = console.text("totp-secret")

    step("a wrong code is refused next to the field, its own refusal, with the QR code and the secret still shown; the app's code confirms the app")
    console.fill("field-code", "000000" if totp(secret) != "000000" else "111111")
    console.submit("totp-submit", "form#totp-form", refused=True)
    expect("The code is wrong" in console.text("error-code"), f"the wrong code's message: {console.text('error-code')!r}")
    modules = driver.find_elements(By.CSS_SELECTOR, "#totp-qr svg path")
    expect(modules and len(modules[0].get_attribute("d")) > 100, "the retry page lost the QR code")
    expect(console.text("totp-secret") == secret, "the retry page shows another secret, or none")
    console.screenshot("totp-retry")
    console.fill("field-code", totp(secret))
    console.submit("totp-submit", "main#factors")
    console.present("factor-list")
    console.element("notice")

    step("log out and in: the password alone leads to the code page; the app's next code signs in")
    console.follow("home-link", "main#overview")
    console.submit("logout-submit", "main#account-setup")
    console.fill("login-userId", user_id)
    console.fill("login-password", password)
    console.submit("login-submit", "form#second-factor-form")
    console.screenshot("second-factor")
    console.fill("field-code", totp(secret, 1))
    console.submit("second-factor-submit", "main#overview")
    expect(console.text("value-userId") == user_id, "the overview after the second factor shows another account")


def provider(console, suffix):
    """Sign-in through a real OpenID Connect provider (the test runs PyPI's oidc-provider-mock): "Continue with …" on
    the setup page, the provider's own sign-in page, back to the console; the provider does not vouch for the address,
    so the console asks for the userId and the name, then signs in; the next time, straight to the overview."""
    driver = console.driver
    name = os.environ["KONTO_PROVIDER_NAME"]
    subject = f"hopper.{suffix}"
    user_id = f"hopper.{suffix}@example.org"
    step(f"log out; the setup page offers the provider: continue with it as {subject} on the provider's own page")
    console.open("/account/", "main#overview")
    console.submit("logout-submit", "main#account-setup")
    link = console.element(f"oidc-{name}")
    expect(link.text.startswith("Continue with "), f"the provider's link says {link.text!r}")
    console.screenshot("setup-providers")
    old = driver.find_element(By.TAG_NAME, "html")
    link.click()
    console.wait(replaced(old), "the provider's page comes")
    field = console.wait(EC.visibility_of_element_located((By.NAME, "sub")), "the provider's sign-in field")
    expect(not driver.current_url.startswith(GATEWAY), f"still on the console ({driver.current_url}), not at the provider")
    field.send_keys(subject)
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.XPATH, "//button[normalize-space()='Authorize']").click()
    console.wait(replaced(old), "the provider sends the browser back")
    # The provider's page is not ours to judge: what its console said stays there.
    driver.get_log("browser")
    step("back on the console: the account needs a userId, a name and a handle the provider did not give")
    console.page("main#external-signup")
    console.screenshot("provider-signup")
    console.fill("field-userId", user_id)
    console.fill("field-name-givenName", "Grace")
    console.fill("field-name-familyName", "Hopper")
    console.fill("field-handle", f"hopper_{suffix}")
    console.submit("external-signup-submit", "main#overview")
    expect(console.text("value-userId") == user_id, "the overview after the provider's sign-up shows another account")

    step("log out; continue with the provider again: straight to the same account")
    console.submit("logout-submit", "main#account-setup")
    old = driver.find_element(By.TAG_NAME, "html")
    console.element(f"oidc-{name}").click()
    console.wait(replaced(old), "the provider's page comes")
    field = console.wait(EC.visibility_of_element_located((By.NAME, "sub")), "the provider's sign-in field")
    field.send_keys(subject)
    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.XPATH, "//button[normalize-space()='Authorize']").click()
    console.wait(replaced(old), "the provider sends the browser back")
    driver.get_log("browser")
    console.page("main#overview")
    expect(console.text("value-userId") == user_id, "the provider signed in to another account")
    console.screenshot("provider-overview")


def passkeys(console):
    """Passkeys in the console with Chromium's virtual authenticator (a platform authenticator that verifies the user):
    add one, confirm it is you with it, make recovery codes, sign in with the passkey alone, as the second factor
    after the password, and with a recovery code; then remove it after confirming with it."""
    driver = console.driver
    suffix = secrets.token_hex(3)
    user_id = f"ada.{suffix}@example.org"
    password = "analytical engine 1843"
    step(f"sign up {user_id} and add a passkey from the factors page (the sign-up's window is open: no password asked)")
    console.open("/account/", "main#account-setup")
    console.follow("signup-link", "main#signup")
    console.fill("field-userId", user_id)
    console.fill("field-password", password)
    console.fill("field-name-givenName", "Ada")
    console.fill("field-name-familyName", "Lovelace")
    console.fill("field-handle", f"ada_{suffix}")
    console.submit("signup-submit", "main#overview")
    console.follow("factors-link", "main#factors")
    console.submit("passkey-start-submit", "main#passkey")
    console.fill("field-passkey-name", "Laptop")
    console.screenshot("passkey")
    console.submit("passkey-create", "main#factors")
    console.element("notice")
    names = [element.text for element in driver.find_elements(By.CSS_SELECTOR, "#factor-list .factor-name")]
    expect(names == ["Laptop"], f"the factors after adding the passkey are {names}")
    credentials = driver.get_credentials()
    expect(len(credentials) == 1 and credentials[0].is_resident_credential, f"the authenticator holds {len(credentials)} credential(s)")

    step("new recovery codes need the passkey now: confirm with it on the reauthentication page, then make them")
    console.submit("codes-submit", "main#reauthenticate")
    console.submit("passkey-reauthenticate", "main#factors")
    console.submit("codes-submit", "main#codes")
    codes = [element.text for element in driver.find_elements(By.CSS_SELECTOR, "#code-list code")]
    expect(len(codes) == 10, f"{len(codes)} recovery codes shown")

    step("log out; the passkey alone signs in")
    console.follow("factors-link", "main#factors")
    console.follow("home-link", "main#overview")
    console.submit("logout-submit", "main#account-setup")
    console.submit("passkey-login", "main#overview")
    expect(console.text("value-userId") == user_id, "the passkey signed in to another account")

    step("log out; the password alone asks for the second factor, and the passkey answers it")
    console.submit("logout-submit", "main#account-setup")
    console.fill("login-userId", user_id)
    console.fill("login-password", password)
    console.submit("login-submit", "form#second-factor-form")
    console.submit("passkey-factor", "main#overview")

    step("log out; the password and a recovery code sign in once")
    console.submit("logout-submit", "main#account-setup")
    console.fill("login-userId", user_id)
    console.fill("login-password", password)
    console.submit("login-submit", "form#second-factor-form")
    console.fill("field-code", codes[0])
    console.submit("second-factor-submit", "main#overview")

    step("remove the passkey after confirming with it: the password alone signs in again")
    console.open("/account/reauthenticate", "main#reauthenticate")
    console.submit("passkey-reauthenticate", "main#factors")
    remove = driver.find_elements(By.CSS_SELECTOR, "#factor-list li")
    passkey_row = [row for row in remove if row.find_element(By.CSS_SELECTOR, ".factor-name").text == "Laptop"]
    expect(len(passkey_row) == 1, "the passkey is not in the list")
    button = passkey_row[0].find_element(By.CSS_SELECTOR, "button").get_attribute("id")
    console.submit(button, "main#factors")
    expect("No second factor" in console.text("notice"), f"after removing the passkey the notice says {console.text('notice')!r}")
    console.follow("home-link", "main#overview")
    console.submit("logout-submit", "main#account-setup")
    console.fill("login-userId", user_id)
    console.fill("login-password", password)
    console.submit("login-submit", "main#overview")


def admin(console):
    """The admin console on the admin listener (KONTO_GATEWAY_URL is then the admin listener's URL): sign in with an
    operator key, find an account, look at it, disable and enable it, end its sessions, read its audit trail and the
    log, look at failed deliveries, delete another account, a key without the scope refused, sign out."""
    key = os.environ["KONTO_ADMIN_KEY"]
    reader = os.environ["KONTO_READER_KEY"]
    ada_id, ada = os.environ["KONTO_ADA_ID"], os.environ["KONTO_ADA_USER_ID"]
    bob_id, bob = os.environ["KONTO_BOB_ID"], os.environ["KONTO_BOB_USER_ID"]

    step("the console asks for a key; a wrong one is refused, the page kept")
    console.open("/admin/console/", "main#admin-sign-in")
    console.screenshot("admin-01-sign-in")
    console.fill("key", "kop_not-a-real-key")
    console.submit("admin-sign-in-submit", "main#admin-sign-in", refused=True)
    expect("not a valid operator key" in console.text("form-error"), f"the refusal says {console.text('form-error')!r}")
    expect(console.value("key") == "", "the refused key is not written back into the page")

    step("signed in with the key: the accounts, the key named in the header")
    console.fill("key", key)
    console.submit("admin-sign-in-submit", "main#admin-accounts")
    expect("bootstrap" in console.text("signed-in-key"), f"the header names {console.text('signed-in-key')!r}")
    expect(not console.driver.execute_script("return document.cookie"), "no cookie of the console is readable by a script")

    step("search by part of the userId, then open the account")
    console.fill("q", ada.split("@")[0].upper())
    console.submit("search", "main#admin-accounts")
    rows = console.driver.find_elements(By.CSS_SELECTOR, "#accounts tbody tr")
    expect([row.get_attribute("data-account") for row in rows] == [ada_id], f"the search found {[row.text for row in rows]}")
    console.screenshot("admin-02-search")
    rows[0].find_element(By.TAG_NAME, "a").click()
    console.page("main#admin-account")
    expect(console.text("account-user-id") == ada and console.text("account-id") == ada_id, "the account's page shows it")
    expect("Ada" in console.text("account-details"), f"the details show {console.text('account-details')!r}")
    expect(len(console.driver.find_elements(By.CSS_SELECTOR, "#sessions tbody tr")) >= 1, "the account's session is listed")
    console.screenshot("admin-03-account")

    step("disable: the state says so; enable again")
    console.submit("disable", "main#admin-account")
    expect("disabled" in console.text("notice") and console.text("account-state").startswith("disabled since"), console.text("account-state"))
    expect(not console.driver.find_elements(By.CSS_SELECTOR, "#sessions tbody tr"), "disabling ended the sessions")
    console.submit("enable", "main#admin-account")
    expect(console.text("account-state") == "enabled", console.text("account-state"))

    step("the account's audit trail has what was done, by this key")
    trail = console.text("account-audit")
    expect("account.disabled" in trail and "account.enabled" in trail, f"the trail shows {trail[:400]!r}")

    step("the audit log, filtered by type")
    console.follow("nav-audit", "main#admin-audit")
    console.fill("type", "account.disabled")
    console.submit("audit-search", "main#admin-audit")
    expect(ada_id in console.text("audit"), "the log lists the disabling of the account")

    step("failed deliveries of a webhook: none")
    console.follow("nav-deliveries", "main#admin-deliveries")
    console.fill("group", "webhook:audit")
    console.submit("deliveries-search", "main#admin-deliveries")
    expect(console.exists("no-deliveries"), "the webhook has no failed delivery")

    step("delete another account: refused until its id is typed, then done")
    console.open(f"/admin/console/accounts/{bob_id}", "main#admin-account")
    console.fill("confirm", "not its id")
    console.submit("delete", "main#admin-account", refused=True)
    expect("Type the account's id" in console.text("form-error"), console.text("form-error"))
    console.fill("confirm", bob_id)
    console.submit("delete", "main#admin-done")
    console.open(f"/admin/console/accounts?q={bob.split('@')[0]}", "main#admin-accounts")
    expect(console.exists("no-accounts"), "the deleted account is found no more")

    step("a new account: bad details refused with the values kept, then made, verified")
    console.follow("nav-new", "main#admin-account-form")
    console.fill("userId", "cleo.admin@example.org")
    console.fill("password", "the new owner's own password")
    console.driver.find_element(By.ID, "details").send_keys('{"name": ')
    console.submit("account-form-submit", "main#admin-account-form", refused=True)
    expect("JSON object" in console.text("form-error"), console.text("form-error"))
    expect(console.value("userId") == "cleo.admin@example.org" and console.value("password") == "", "the userId kept, the password not")
    details = console.element("details")
    details.clear()
    details.send_keys('{"name": {"givenName": "Cleo"}, "handle": "cleo_admin"}')
    console.check("verified")
    console.submit("account-form-submit", "main#admin-account")
    expect("made" in console.text("notice") and console.text("account-user-id") == "cleo.admin@example.org", console.text("notice"))
    expect(console.text("account-verified") != "no", "made with its address verified")

    step("change its name")
    console.follow("edit", "main#admin-account-form")
    console.element("details").send_keys('{"name": {"givenName": "Cleopatra"}}')
    console.submit("account-form-submit", "main#admin-account")
    expect("Cleopatra" in console.text("account-details"), console.text("account-details"))

    step("import two lines: one made, one refused, each reported")
    console.follow("nav-import", "main#admin-import")
    console.element("ndjson").send_keys('{"userId": "dora.admin@example.org", "details": {"handle": "dora_admin", "name": {"givenName": "Dora"}}}\n{"userId": "not an address"}')
    console.submit("import", "main#admin-import")
    expect("1 made, 1 refused" in console.text("notice"), console.text("notice"))
    rows = console.driver.find_elements(By.CSS_SELECTOR, "#import-report tbody tr")
    expect(len(rows) == 2 and "account.validationFailed" in rows[1].text, [row.text for row in rows])

    step("a webhook endpoint: added with a secret made and shown once, listed, removed")
    console.follow("nav-webhooks", "main#admin-webhooks")
    expect("the deployment's file" in console.text("webhooks"), "the file's endpoints are listed")
    console.fill("name", "crm")
    console.fill("url", "https://crm.example.org/konto")
    console.fill("types", "accountDisabled, accountEnabled")
    console.submit("add-webhook", "main#admin-webhooks")
    expect(console.text("made-secret").startswith("whsec_"), "the secret made is shown")
    expect(console.driver.find_elements(By.CSS_SELECTOR, "#webhooks tr[data-webhook=crm]"), "the endpoint is listed")
    console.driver.find_element(By.CSS_SELECTOR, "#webhooks tr[data-webhook=crm] button").click()
    console.page("main#admin-webhooks")
    expect("Removed crm" in console.text("notice") and not console.exists("made-secret"), console.text("notice"))

    step("signed out: the console asks for a key again")
    console.submit("sign-out", "main#admin-sign-in")
    console.open("/admin/console/accounts", "main#admin-sign-in")

    step("a key without accounts:write sees the account but may not disable it")
    console.fill("key", reader)
    console.submit("admin-sign-in-submit", "main#admin-accounts")
    console.open(f"/admin/console/accounts/{ada_id}", "main#admin-account")
    console.submit("disable", "main#admin-problem", refused=True)
    expect("scope" in console.text("form-error"), f"the refusal says {console.text('form-error')!r}")
    console.screenshot("admin-04-refused")
    console.open(f"/admin/console/accounts/{ada_id}", "main#admin-account")
    expect(console.text("account-state") == "enabled", "the refused key changed nothing")


def main():
    os.makedirs(SCREENSHOTS, exist_ok=True)
    os.makedirs(DOWNLOADS, exist_ok=True)

    def out_of_time(signum, frame):
        raise JourneyFailure(f"the journey took longer than {JOURNEY_SECONDS} s")

    def terminated(signum, frame):
        raise JourneyFailure("terminated (the test's bound ran out)")

    signal.signal(signal.SIGALRM, out_of_time)
    signal.signal(signal.SIGTERM, terminated)
    signal.alarm(JOURNEY_SECONDS)

    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--lang=en-US",
                     f"--window-size={DESKTOP[0]},{DESKTOP[1]}", "--no-first-run", "--disable-extensions",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync"]:
        options.add_argument(argument)
    if CHROMIUM:
        options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.add_experimental_option("prefs", {"download.default_directory": DOWNLOADS, "download.prompt_for_download": False})
    service = Service(executable_path=CHROMEDRIVER, log_output=subprocess.DEVNULL)
    step(f"start headless Chromium through {CHROMEDRIVER}")
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(WAIT_SECONDS)
    # Headless Chromium saves downloads only where it is told to.
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": DOWNLOADS})
    console = Console(driver)
    try:
        if os.environ.get("KONTO_JOURNEY") == "passkeys":
            step("add Chromium's virtual authenticator: internal, resident keys, the user verified")
            driver.add_virtual_authenticator(VirtualAuthenticatorOptions(
                protocol=VirtualAuthenticatorOptions.Protocol.CTAP2, transport=VirtualAuthenticatorOptions.Transport.INTERNAL,
                has_resident_key=True, has_user_verification=True, is_user_consenting=True, is_user_verified=True))
            passkeys(console)
        elif os.environ.get("KONTO_JOURNEY") == "admin":
            admin(console)
        else:
            journey(console)
        signal.alarm(0)
        step("done: the whole journey passed")
        return 0
    except BaseException as error:  # noqa: BLE001 — every failure, also the alarm's and SIGTERM's, ends the same way
        signal.alarm(0)
        if isinstance(error, UnexpectedAlertPresentException):
            reason = f"an alert opened ({error.alert_text!r}): markup from the user's input ran as script"
        elif isinstance(error, JourneyFailure):
            reason = str(error)
        else:
            reason = f"{type(error).__name__}: {error}"
            traceback.print_exc(file=sys.stdout)
        print(f"failure: {reason}", flush=True)
        try:
            try:
                driver.switch_to.alert.dismiss()
            except Exception:  # noqa: BLE001
                pass
            print(f"  at {driver.current_url}", flush=True)
            driver.save_screenshot(os.path.join(SCREENSHOTS, "failure.png"))
            with open(os.path.join(SCREENSHOTS, "failure.html"), "w", encoding="utf-8") as page:
                page.write(driver.page_source)
            print(f"  saved failure.png and failure.html in {SCREENSHOTS}", flush=True)
        except Exception as saving:  # noqa: BLE001
            print(f"  could not save the failure's page: {saving}", flush=True)
        return 1
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
