"""Reads the rehearsal mail catcher's log (aiosmtpd's Debugging handler) on stdin and prints the first link containing
PATH in the text part of the last mail whose subject is SUBJECT, as Python's email package decodes it (quoted-printable
lines joined, encoded words read). Exits 1 when there is none yet.

Usage: mail-link.py SUBJECT PATH
"""
import email
import email.policy
import re
import sys

subject, path = sys.argv[1], sys.argv[2]
log = sys.stdin.read()
found = None
for block in re.findall(r"-{10} MESSAGE FOLLOWS -{10}\n(.*?)\n-{12} END MESSAGE -{12}", log, re.S):
    message = email.message_from_string(block, policy=email.policy.default)
    if str(message["subject"]) != subject:
        continue
    text = message.get_body(preferencelist=("plain",))
    for word in (text.get_content() if text else "").split():
        if word.startswith(("http://", "https://")) and path in word:
            found = word
            break
if not found:
    sys.exit(1)
print(found)
