#!/usr/bin/env python3
"""A fake Kubernetes API server for cgov's tests: GET /api/v1/pods (list, paginated with limit
and continue) and its watch (watch=1), shaped as the real server answers (v1 PodList, watch
events one JSON object per line, metav1.Status for errors), on 127.0.0.1 only.

  api_server.py SCENARIO.json PORT_FILE LOG_FILE

SCENARIO: {"node": "gpu-node-1", "token": "t0ken" (or null: no auth), "deny": false,
           "resource_version": 1000,
           "pods": [v1 Pod, ...], "generate": N (adds N pods on the node, for scale),
           "watches": [ {"events": [event, ...], "then": "drop"|"hold"|"end"},
                        {"gone": true}, ... ]}
Each watch request takes the next entry of "watches" (the last one repeats): its events are
sent, then the connection is dropped (closed without the chunked terminator: a network
failure), held open until the request's timeoutSeconds, or ended cleanly. {"gone": true}
answers with an ERROR event carrying a 410 Status, as the server does for an expired
resourceVersion. Every request is logged to LOG_FILE as one JSON line (path, query, whether the
bearer token was right) so tests can assert what cgov asked. Test-only; never in the product.
"""
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    scenario_path, port_file, log_file = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(scenario_path) as f:
        scenario = json.load(f)
    node = scenario.get("node", "gpu-node-1")
    pods = list(scenario.get("pods", []))
    for i in range(scenario.get("generate", 0)):
        pods.append({"kind": "Pod", "apiVersion": "v1",
                     "metadata": {"name": f"batch-{i}", "namespace": f"ns-{i % 50}",
                                  "uid": f"00000000-0000-4000-8000-{i:012d}",
                                  "resourceVersion": "1",
                                  "labels": {"project-id": f"p{i % 200}", "team-id": f"t{i % 20}"}},
                     "spec": {"nodeName": node, "containers": [{"name": "main"}]},
                     "status": {"phase": "Running", "containerStatuses": [
                         {"name": "main", "ready": True, "restartCount": 0,
                          "containerID": f"containerd://{i:064x}"}]}})
    version = int(scenario.get("resource_version", 1000))
    watches = scenario.get("watches", [{"events": [], "then": "hold"}])
    state = {"watch": 0}
    lock = threading.Lock()

    def log(entry):
        with lock, open(log_file, "a") as f:
            f.write(json.dumps(entry) + "\n")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send_json(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def status(self, code, reason, message):
            self.send_json(code, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                  "status": "Failure", "message": message, "reason": reason,
                                  "code": code})

        def chunk(self, data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            token = scenario.get("token")
            auth = self.headers.get("Authorization", "")
            authorized = token is None or auth == f"Bearer {token}"
            log({"path": url.path, "query": query, "authorized": authorized})
            if url.path != "/api/v1/pods":
                return self.status(404, "NotFound", "the server could not find the requested resource")
            if not authorized:
                return self.status(401, "Unauthorized", "Unauthorized")
            if scenario.get("deny"):
                return self.status(403, "Forbidden", 'pods is forbidden: User "system:serviceaccount:'
                                   'cgov:cgov" cannot list resource "pods" in API group "" at the '
                                   'cluster scope')
            if query.get("fieldSelector") != f"spec.nodeName={node}":
                return self.status(400, "BadRequest", "cgov asks for this node's pods only")
            mine = [p for p in pods if p["spec"].get("nodeName") == node]
            if query.get("watch") in ("1", "true"):
                return self.watch(query)
            limit = int(query.get("limit", "0")) or len(mine)
            start = int(query.get("continue", "0") or 0)
            page = mine[start:start + limit]
            meta = {"resourceVersion": str(version)}
            if start + limit < len(mine) or scenario.get("endless_continue"):
                # endless_continue: a broken (or hostile) server whose every page has a next one
                meta["continue"] = str(start + limit)
            self.send_json(200, {"kind": "PodList", "apiVersion": "v1", "metadata": meta,
                                 "items": page})

        def watch(self, query):
            with lock:
                entry = watches[min(state["watch"], len(watches) - 1)]
                state["watch"] += 1
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if entry.get("gone"):
                self.chunk((json.dumps({"type": "ERROR", "object": {
                    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": f"too old resource version: {query.get('resourceVersion')} ({version})",
                    "reason": "Expired", "code": 410}}) + "\n").encode())
                self.wfile.write(b"0\r\n\r\n")
                return
            for event in entry.get("events", []):
                self.chunk((json.dumps(event) + "\n").encode())
            then = entry.get("then", "hold")
            if then == "drop":
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if then == "hold":
                deadline = time.time() + int(query.get("timeoutSeconds", "300"))
                while time.time() < deadline:
                    time.sleep(0.2)
            self.wfile.write(b"0\r\n\r\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
