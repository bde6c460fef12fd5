"""konto-bench mail's SMTP sink and its baseline client: aiosmtpd (PyPI) accepting every mail, and Python's smtplib.

  smtp_sink.py sink PORT         prints `ready`, then `<unix ns> <Message-ID>` per mail received, until SIGTERM
  smtp_sink.py send PORT COUNT FILE
                                 sends FILE's message COUNT times over one connection with smtplib (the minimal
                                 client the courier is measured beside); prints the seconds it took
"""
import re
import signal
import smtplib
import sys
import threading
import time

mode = sys.argv[1]
if mode == "send":
    port, count, path = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    message = open(path, "rb").read()
    started = time.monotonic()
    with smtplib.SMTP("127.0.0.1", port) as client:
        client.ehlo("localhost")
        for _ in range(count):
            client.sendmail("accounts@bench.test", ["ada@bench.test"], message)
    print(f"{time.monotonic() - started:.6f}", flush=True)
    sys.exit(0)

from aiosmtpd.controller import Controller

message_id = re.compile(rb"^Message-ID: *(\S+)", re.M | re.I)


class Sink:
    async def handle_DATA(self, server, session, envelope):
        found = message_id.search(envelope.original_content[:4096])
        print(f"{time.time_ns()} {found.group(1).decode() if found else '-'}", flush=True)
        return "250 OK"


controller = Controller(Sink(), hostname="127.0.0.1", port=int(sys.argv[2]))
controller.start()
print("ready", flush=True)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
signal.signal(signal.SIGINT, lambda *_: stop.set())
while not stop.wait(1):
    pass
controller.stop()
