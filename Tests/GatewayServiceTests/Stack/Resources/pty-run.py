"""Runs a command on a pseudo-terminal, answering its prompts, and prints what the terminal showed as JSON.

Usage: pty-run.py ANSWERS_JSON COMMAND [ARGUMENTS...]
ANSWERS_JSON is a list of [prompt, answer]: when the prompt appears, the answer and a newline are typed.
Used by KontoCommandTests to prove passwords are read without echo (only a real terminal has echo to turn off).
"""
import json, os, pty, select, sys, time

answers = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])

transcript = b""
deadline = time.monotonic() + 30
while time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], max(0, deadline - time.monotonic()))
    if not ready:
        break
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    transcript += chunk
    while answers and answers[0][0].encode() in transcript.split(b"\x00")[-1]:
        prompt, answer = answers.pop(0)
        # Mark what was answered so a repeated prompt is told apart from this one.
        transcript += b"\x00"
        os.write(fd, answer.encode() + b"\n")
if time.monotonic() >= deadline:
    os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
print(json.dumps({"status": os.waitstatus_to_exitcode(status), "transcript": transcript.replace(b"\x00", b"").decode(errors="replace")}))
