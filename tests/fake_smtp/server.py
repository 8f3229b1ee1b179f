#!/usr/bin/env python3
"""An SMTP server on loopback for the end-to-end tests of cgov's e-mail sink: Debian's aiosmtpd
(python3-aiosmtpd), a real SMTP implementation, with STARTTLS and AUTH when asked for. Each
message it takes is one JSON line in --log (envelope sender, recipients, the message). What it
does with the next message is read from --mode-file at each command:
  ok        takes it (250)
  refuse    refuses the recipients (550: permanent)
  tempfail  refuses the data for now (451)
  take N    takes messages until it has taken N in all, then refuses the data for now (451)
  drop      closes the connection when the data arrives, answering nothing
--stall is another server: it accepts connections and never says a word.

Usage: server.py --mode-file F --log F --port-file F [--tls CERT KEY] [--auth USER:PASSWORD]
                 [--stall] [--max-seconds N]
"""
import argparse
import asyncio
import json
import os
import socket
import ssl
import threading
import time
import warnings

warnings.simplefilter("ignore")  # aiosmtpd's deprecation notes are not the test's


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode-file", default="")
    p.add_argument("--log", default="")
    p.add_argument("--port-file", required=True)
    p.add_argument("--tls", nargs=2)
    p.add_argument("--auth")
    p.add_argument("--stall", action="store_true")
    p.add_argument("--max-seconds", type=float, default=240)
    a = p.parse_args()
    if a.stall:
        stall(a)
        return
    serve(a)


def log_event(path, event):
    """What the server did instead of taking a message: a line without "message"."""
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"event": event, "time": time.time()}) + "\n")


def write_port(path, port):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(port))
    os.rename(tmp, path)


def stall(a):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    write_port(a.port_file, s.getsockname()[1])
    held = []
    s.settimeout(0.5)
    end = time.time() + a.max_seconds
    while time.time() < end:
        try:
            conn, _ = s.accept()
            held.append(conn)  # never answered, never closed
            log_event(a.log, "stalled")
        except socket.timeout:
            pass


def serve(a):
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    def mode():
        try:
            with open(a.mode_file) as f:
                return f.read().strip() or "ok"
        except OSError:
            return "ok"

    class Handler:
        taken = 0

        async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
            if mode() == "refuse":
                log_event(a.log, "refused")
                return "550 5.1.1 mailbox unavailable"
            envelope.rcpt_tos.append(address)
            return "250 OK"

        async def handle_DATA(self, server, session, envelope):
            m = mode()
            if m.startswith("take "):
                m = "ok" if Handler.taken < int(m.split()[1]) else "tempfail"
            if m == "tempfail":
                log_event(a.log, "tempfail")
                return "451 4.3.0 try again later"
            if m == "drop":
                log_event(a.log, "dropped")
                server.transport.close()
                return "421 closing"
            with open(a.log, "a") as f:
                f.write(json.dumps({"from": envelope.mail_from, "to": envelope.rcpt_tos,
                                    "tls": session.ssl is not None,
                                    "login": bool(getattr(session, "authenticated", False)),
                                    "message": envelope.content.decode("utf-8", "replace")}) + "\n")
            Handler.taken += 1
            return "250 OK"

    kwargs = {}
    if a.tls:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
        kwargs.update(tls_context=ctx, require_starttls=True)
    if a.auth:
        user, password = a.auth.split(":", 1)

        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = auth_data.login == user.encode() and auth_data.password == password.encode()
            return AuthResult(success=ok)
        kwargs.update(authenticator=authenticator, auth_required=True,
                      auth_require_tls=bool(a.tls))
    # Port 0 is not aiosmtpd's to take: a free one is found first.
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    controller = Controller(Handler(), hostname="127.0.0.1", port=port, **kwargs)
    controller.start()
    write_port(a.port_file, port)
    time.sleep(a.max_seconds)
    controller.stop()


if __name__ == "__main__":
    main()
