"""A real SMTP server for the courier's tests: aiosmtpd (PyPI), which no one here wrote.

Usage: smtp_server.py PORT MODE [CERT KEY]   (KontoTestSupport's MailCatcher runs it)
  MODE  plain        no TLS, no AUTH (a local mail catcher)
        starttls     STARTTLS required (with CERT and KEY), AUTH PLAIN/LOGIN as konto / s3cret required after it
        reject-rcpt  every recipient refused with 550
        later        every message refused with 451
        flaky        a message's first delivery refused with 451, a repeat (the same Message-ID) accepted
        hold         a message's first delivery never answered (`held <Message-ID>` printed), a repeat accepted
Prints `ready` once listening, then one JSON line per message as it is received: the envelope, whether TLS and AUTH
were used, the client's port (one per connection), the raw data, and what Python's `email` package reads from it (subject, text and HTML parts, Message-ID,
defects). Runs until SIGTERM.
"""
import asyncio
import email
import email.policy
import json
import os
import signal
import ssl
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

arguments = sys.argv[1:]
port, mode = int(arguments[0]), arguments[1]
seen = set()
lock = threading.Lock()


def read(data):
    """What a mail reader sees: Python's email package, with the default (strict, modern) policy."""
    message = email.message_from_bytes(data, policy=email.policy.default)
    parts = {}
    for part in message.walk():
        if part.get_content_maintype() == "text":
            parts[part.get_content_type()] = part.get_content()
    defects = [type(d).__name__ for d in message.defects]
    for part in message.walk():
        defects += [type(d).__name__ for d in part.defects]
    return {
        "subject": str(message["subject"]), "messageId": str(message["message-id"]), "toHeader": str(message["to"]),
        "fromHeader": str(message["from"]), "text": parts.get("text/plain"), "html": parts.get("text/html"),
        "headers": [name.lower() for name in message.keys()], "defects": defects,
    }


class Handler:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if mode == "reject-rcpt":
            return "550 5.1.1 no such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if mode == "later":
            return "451 4.3.0 try again later"
        parsed = read(envelope.original_content)
        if mode in ("flaky", "hold"):
            with lock:
                first = parsed["messageId"] not in seen
                seen.add(parsed["messageId"])
            if first and mode == "flaky":
                return "451 4.3.0 try again later"
            if first:
                print("held " + parsed["messageId"], flush=True)
                await asyncio.sleep(3600)
                return "451 4.3.0 held"
        line = json.dumps({
            "from": envelope.mail_from, "to": envelope.rcpt_tos, "tls": session.ssl is not None,
            "authenticated": bool(session.authenticated), "data": envelope.original_content.decode("utf-8", "replace"),
            # The client's port: mails with the same one came over one connection.
            "peerPort": session.peer[1] if session.peer else None,
            # And its address: which host's courier sent it (the multi-host rehearsal).
            "peer": session.peer[0] if session.peer else None,
            **parsed,
        })
        print(line, flush=True)
        return "250 OK queued"


def authenticator(server, session, envelope, mechanism, auth_data):
    # handled=False: aiosmtpd answers a failure with its 535 (with the default, it would answer nothing).
    return AuthResult(success=isinstance(auth_data, LoginPassword) and auth_data.login == b"konto" and auth_data.password == b"s3cret", handled=False)


options = {}
if mode == "starttls":
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(arguments[2], arguments[3])
    options = {"tls_context": context, "require_starttls": True, "authenticator": authenticator, "auth_required": True, "auth_require_tls": True}
# Loopback unless SMTP_SERVER_HOST names another address (a virtual network's bridge, for couriers on its hosts).
controller = Controller(Handler(), hostname=os.environ.get("SMTP_SERVER_HOST", "127.0.0.1"), port=port, **options)
controller.start()
print("ready", flush=True)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
signal.signal(signal.SIGINT, lambda *_: stop.set())
while not stop.wait(1):
    pass
controller.stop()
print("done", flush=True)
