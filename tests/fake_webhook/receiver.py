#!/usr/bin/env python3
"""A webhook receiver on 127.0.0.1 for the notification tests (tests/e2e/notify_test.cc).

It answers every POST as the first word of MODE_FILE says at that moment, so a test can switch
it while cgov runs:
  ok         200
  fail       503
  ratelimit  429 with Retry-After: 2
  hang       holds the connection, answering nothing, until the client gives up (or 60 s)
  bad        400 (a body the receiver refuses)
Each request is appended to LOG as one JSON line: {"time", "path", "mode", "status", "idempotency_key",
"content_type", "body"} (body parsed when it is JSON). The chosen port is written to PORT_FILE.
Stops by itself after --max-seconds, so a test that died leaves nothing behind for long.
"""
import argparse
import http.server
import json
import os
import threading
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--max-seconds", type=float, default=300)
    args = p.parse_args()
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            try:
                with open(args.mode_file) as f:
                    mode = (f.read().split() or ["ok"])[0]
            except OSError:
                mode = "ok"
            status = {"ok": 200, "fail": 503, "ratelimit": 429, "bad": 400, "hang": 0}.get(mode, 200)
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
            with lock, open(args.log, "a") as log:
                log.write(json.dumps({"time": time.time(), "path": self.path,
                                      "mode": mode, "status": status,
                                      "idempotency_key": self.headers.get("Idempotency-Key"),
                                      "content_type": self.headers.get("Content-Type"),
                                      "body": body}) + "\n")
            if mode == "hang":
                time.sleep(60)
                return
            self.send_response(status)
            if mode == "ratelimit":
                self.send_header("Retry-After", "2")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok" if status == 200 else b"no")

        def log_message(self, *unused):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    threading.Timer(args.max_seconds, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
