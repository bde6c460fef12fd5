"""A foreign judge of Konto's webhook signatures: an HTTP receiver that verifies every delivery with the
`standardwebhooks` package from PyPI (the Standard Webhooks reference library), not with Konto's own code.

Run by StandardWebhooksJudgeTests (Tests/NotificationServiceTests/Webhooks/). It listens on a free loopback port and
prints `listening <port>`; the test then points a running webhook dispatcher at it. Environment:

  JUDGE_SECRETS     space-separated `whsec_` secrets; every delivery must verify with EACH of them on its own
                    (during a rotation: the new secret and the old one)
  JUDGE_WRONG       a secret no delivery may verify with (so a judge that accepts anything fails)
  JUDGE_SIGNATURES  how many signatures each `webhook-signature` header must carry
  JUDGE_EXPECT      how many distinct deliveries (by webhook-id) to judge before the verdict
  JUDGE_TIMEOUT     seconds to wait for them (default 60)

Prints one line per delivery and ends with `verdict ok` (exit 0) or `verdict failed: <reasons>` (exit 1).
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

SECRETS = os.environ["JUDGE_SECRETS"].split()
WRONG = os.environ["JUDGE_WRONG"]
SIGNATURES = int(os.environ["JUDGE_SIGNATURES"])
EXPECT = int(os.environ["JUDGE_EXPECT"])
TIMEOUT = float(os.environ.get("JUDGE_TIMEOUT", "60"))

lock = threading.Lock()
judged = set()
failures = []
done = threading.Event()


def verifies(secret, body, headers):
    try:
        Webhook(secret).verify(body, headers)
        return True
    except (WebhookVerificationError, ValueError):
        # ValueError: a malformed header (an entry without its comma, bad base64) is a failure to verify too.
        return False


def judge(body, headers):
    """The problems with one delivery; empty when it is good."""
    problems = []
    lowered = {name.lower(): value for name, value in headers.items()}
    webhook_headers = sorted(name for name in lowered if "webhook" in name)
    if webhook_headers != ["webhook-id", "webhook-signature", "webhook-timestamp"]:
        problems.append(f"webhook headers are {webhook_headers}")
    entries = lowered.get("webhook-signature", "").split(" ")
    if len(entries) != SIGNATURES or not all(entry.startswith("v1,") for entry in entries):
        problems.append(f"{len(entries)} signature(s), expected {SIGNATURES} v1 entries")
    for index, secret in enumerate(SECRETS):
        if not verifies(secret, body, headers):
            problems.append(f"does not verify with secret {index + 1} of {len(SECRETS)}")
    if verifies(WRONG, body, headers):
        problems.append("verifies with an unrelated secret")
    # A changed body must fail the reference library too: the signature covers it.
    if any(verifies(secret, body + b" ", headers) for secret in SECRETS):
        problems.append("verifies with a tampered body")
    try:
        event = json.loads(body)
        if event.get("id", "").lower() != lowered.get("webhook-id", "").lower():
            problems.append("webhook-id is not the event's id")
    except ValueError:
        problems.append("body is not JSON")
    return problems


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {name: value for name, value in self.headers.items()}
        problems = judge(body, headers)
        delivery = {name.lower(): value for name, value in headers.items()}.get("webhook-id", "?")
        with lock:
            # Under the lock, so the lines of concurrent deliveries do not interleave.
            print(f"delivery {delivery}: " + ("ok" if not problems else "; ".join(problems)), flush=True)
            judged.add(delivery)
            failures.extend(f"{delivery}: {problem}" for problem in problems)
            if len(judged) >= EXPECT:
                done.set()
        # 204 either way: a refusal would only bring the same delivery back.
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # Bound before it is announced, so no other process can take the port in between.
    print(f"listening {server.server_address[1]}", flush=True)
    finished = done.wait(TIMEOUT)
    server.shutdown()
    with lock:
        reasons = list(failures)
        count = len(judged)
    if not finished:
        reasons.append(f"{count} of {EXPECT} deliveries within {TIMEOUT:.0f} s")
    if reasons:
        print("verdict failed: " + " | ".join(reasons), flush=True)
        sys.exit(1)
    print(f"verdict ok: {count} deliveries verified by standardwebhooks", flush=True)


if __name__ == "__main__":
    main()
