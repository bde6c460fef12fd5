"""A real SMTP server for the courier's tests: aiosmtpd (PyPI), which no one here wrote.

Usage: smtp_server.py PORT MODE [CERT KEY]
  MODE  plain        no TLS, no AUTH (a local mail catcher)
        starttls     STARTTLS required (with CERT and KEY), AUTH PLAIN/LOGIN as konto / s3cret required after it
        reject-rcpt  every recipient refused with 550
        later        every message refused with 451
Prints `ready` once listening, then one JSON line per message received; reads stdin and exits at its first line.
"""
import asyncio
import json
import ssl
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

port, mode = int(sys.argv[1]), sys.argv[2]
received = []


class Handler:
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if mode == "reject-rcpt":
            return "550 5.1.1 no such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if mode == "later":
            return "451 4.3.0 try again later"
        received.append({
            "from": envelope.mail_from, "to": envelope.rcpt_tos, "tls": session.ssl is not None,
            "authenticated": bool(session.authenticated), "data": envelope.original_content.decode("utf-8", "replace"),
        })
        return "250 OK queued"


def authenticator(server, session, envelope, mechanism, auth_data):
    # handled=False: aiosmtpd answers a failure with its 535 (with the default, it would answer nothing).
    return AuthResult(success=isinstance(auth_data, LoginPassword) and auth_data.login == b"konto" and auth_data.password == b"s3cret", handled=False)


options = {}
if mode == "starttls":
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(sys.argv[3], sys.argv[4])
    options = {"tls_context": context, "require_starttls": True, "authenticator": authenticator, "auth_required": True, "auth_require_tls": True}
controller = Controller(Handler(), hostname="127.0.0.1", port=port, **options)
controller.start()
print("ready", flush=True)
sys.stdin.readline()
controller.stop()
for message in received:
    print(json.dumps(message), flush=True)
print("done", flush=True)
