#!/usr/bin/env python3
"""A fake kubelet pod-resources endpoint for cgov's tests: a real gRPC server (Debian's
python3-grpcio) on a unix socket, serving v1.PodResourcesLister/List as the kubelet does.

  pod_resources_server.py SOCKET ANSWER.textproto LOG_FILE

Every call answers ANSWER.textproto (re-read each time, so a test can change the allocations
while cgov runs), encoded as a v1.ListPodResourcesResponse by protoc from
podresources_v1.proto beside this script: the bytes are protobuf's own, not a hand encoding.
An ANSWER whose first line is "# status: CODE MESSAGE" answers that gRPC status instead
(PERMISSION_DENIED, UNAVAILABLE, ...). Each call is logged to LOG_FILE as one JSON line (the
method, the request's size, the caller's content-type and user-agent). Test-only.
"""
import json
import os
import signal
import subprocess
import sys
import threading

import grpc

HERE = os.path.dirname(os.path.abspath(__file__))


def encode(answer_path):
    with open(answer_path, "rb") as f:
        text = f.read()
    return subprocess.run(
        ["protoc", "--encode=v1.ListPodResourcesResponse", "-I", HERE,
         os.path.join(HERE, "podresources_v1.proto")],
        input=text, capture_output=True, check=True).stdout


def main():
    socket_path, answer_path, log_path = sys.argv[1], sys.argv[2], sys.argv[3]
    log_lock = threading.Lock()

    def list_pod_resources(request, context):
        metadata = {k: v for k, v in context.invocation_metadata()}
        with log_lock, open(log_path, "a") as log:
            log.write(json.dumps({"method": "/v1.PodResourcesLister/List",
                                  "request_bytes": len(request),
                                  "user_agent": metadata.get("user-agent", "")}) + "\n")
        with open(answer_path) as f:
            first = f.readline()
        if first.startswith("# status:"):
            code, _, message = first[len("# status:"):].strip().partition(" ")
            context.abort(getattr(grpc.StatusCode, code), message)
        return encode(answer_path)

    handler = grpc.method_handlers_generic_handler("v1.PodResourcesLister", {
        # No (de)serializers: the request and the answer pass as bytes.
        "List": grpc.unary_unary_rpc_method_handler(list_pod_resources),
    })
    server = grpc.server(__import__("concurrent.futures").futures.ThreadPoolExecutor(4))
    server.add_generic_rpc_handlers((handler,))
    if server.add_insecure_port("unix:" + socket_path) == 0:
        sys.exit(f"pod_resources_server: cannot listen on {socket_path}")
    server.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    stop.wait()
    server.stop(0)


if __name__ == "__main__":
    main()
