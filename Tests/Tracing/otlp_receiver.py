"""An OTLP/HTTP trace receiver for Konto's tests, judged by OpenTelemetry's own protobuf definitions.

Decodes every export with the `opentelemetry-proto` package (PyPI; the generated code of the OTLP .proto files, the
same messages a Collector reads) and prints one JSON line per span on stdout, for the test to read:
{"traceId", "spanId", "parentSpanId" (hex, "" for a root), "name", "kind", "service", "host", "attributes", "status"}.

Usage: otlp_receiver.py HOST PORT (0 for any free port). Prints "ready PORT" once it listens. An export that does not decode is answered 400 and
reported as a line starting with "refused", so a test sees a malformed export rather than missing spans.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest, ExportTraceServiceResponse

MAXIMUM_BODY = 8 * 1024 * 1024
# Handlers run on threads, and print() writes a line's end separately: two exports' lines could run together (seen:
# a span of each lost to one undecodable line). Every line goes out whole, under this lock.
OUTPUT_LOCK = threading.Lock()


def emit(text):
    with OUTPUT_LOCK:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def value(any_value):
    kind = any_value.WhichOneof("value")
    return "" if kind is None else str(getattr(any_value, kind))


def attributes(pairs):
    return {pair.key: value(pair.value) for pair in pairs}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if self.path != "/v1/traces" or length > MAXIMUM_BODY:
            self.send_response(404 if self.path != "/v1/traces" else 413)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self.rfile.read(length)
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/x-protobuf":
            emit("refused content type %s" % self.headers.get("Content-Type"))
            self.send_response(415)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except DecodeError as error:
            emit("refused %s" % error)
            self.send_response(400)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        lines = []
        for resource_spans in request.resource_spans:
            resource = attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    lines.append(json.dumps({
                        "traceId": span.trace_id.hex(),
                        "spanId": span.span_id.hex(),
                        "parentSpanId": span.parent_span_id.hex(),
                        "name": span.name,
                        "kind": span.kind,
                        "service": resource.get("service.name", ""),
                        "host": resource.get("host.name", ""),
                        "attributes": attributes(span.attributes),
                        "status": span.status.code,
                    }, sort_keys=True))
        if lines:
            emit("\n".join(lines))
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format, *args):
        pass


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    server = ThreadingHTTPServer((host, port), Handler)
    print("ready %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
