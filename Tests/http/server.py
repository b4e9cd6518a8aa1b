#!/usr/bin/env python3
"""A small HTTP server for camroll's URL-source tests: real sockets on 127.0.0.1.

    server.py DIRECTORY LOG      serves DIRECTORY; prints the port when ready; logs one line
                                 per request to LOG: "PATH STATUS conditional|plain[ USER:PASSWORD]"

Files are served with an ETag (their hash) and Last-Modified, and answered 304 when a
conditional request matches. Paths for the failures a download can meet:
/status/N (that status), /loop (redirects to itself), /redirect/NAME (302 to /NAME),
/short (promises 100000 bytes, sends 100), /slow (headers, then silence), /huge (claims 300 MB),
/hostile (a page whose Content-Type carries a terminal's escape sequence), /trickle (3 bytes a
second), /bigheader (a 1 MB header), /manyheaders (200 000 headers).
"""
import base64
import email.utils
import hashlib
import http.server
import os
import sys
import time

DIRECTORY, LOG = sys.argv[1], sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self, status):
        conditional = "If-None-Match" in self.headers or "If-Modified-Since" in self.headers
        # Basic credentials, when sent, end the line: "… plain USER:PASSWORD".
        credentials = self.headers.get("Authorization", "")
        if credentials.startswith("Basic "):
            credentials = " " + base64.b64decode(credentials[6:]).decode(errors="replace")
        with open(LOG, "a") as log:
            log.write(f"{self.path} {status} {'conditional' if conditional else 'plain'}{credentials}\n")

    def answer(self, status, body=b"", headers=()):
        self.record(status)
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path
        if path.startswith("/status/"):
            return self.answer(int(path.split("/")[2]), b"error page")
        if path == "/loop":
            return self.answer(302, headers=[("Location", "/loop")])
        if path.startswith("/redirect/"):
            return self.answer(302, headers=[("Location", "/" + path.split("/", 2)[2])])
        if path == "/short":
            self.record(200)
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"\xff\xd8" + b"\0" * 98)
            self.wfile.flush()
            self.close_connection = True
            return
        if path == "/slow":
            self.record(200)
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.flush()
            time.sleep(20)
            return
        if path == "/huge":
            self.record(200)
            self.send_response(200)
            self.send_header("Content-Length", str(300 << 20))
            self.end_headers()
            self.close_connection = True
            return
        if path == "/trickle":
            # A 23 kB JPEG at 3 bytes a second: hours, were nothing to stop it.
            self.record(200)
            self.send_response(200)
            self.send_header("Content-Length", "23000")
            self.end_headers()
            self.wfile.write(b"\xff\xd8")
            self.wfile.flush()
            try:
                for _ in range(23000 // 3):
                    time.sleep(1)
                    self.wfile.write(b"\0\0\0")
                    self.wfile.flush()
            except OSError:
                pass
            self.close_connection = True
            return
        if path in ("/bigheader", "/manyheaders"):
            # One 1 MB header, or 200 000 small ones.
            self.record(200)
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            try:
                if path == "/bigheader":
                    self.wfile.write(b"X-Big: " + b"a" * (1 << 20) + b"\r\n")
                else:
                    for n in range(200000):
                        self.wfile.write(b"X-%d: a\r\n" % n)
                self.wfile.write(b"Content-Length: 0\r\n\r\n")
                self.wfile.flush()
            except OSError:
                pass
            self.close_connection = True
            return
        if path == "/hostile":
            return self.answer(200, b"<html>not a picture</html>", headers=[("Content-Type", "text/\x1b[31mhtml\x1b]0;owned\x07")])
        file = os.path.join(DIRECTORY, path.lstrip("/"))
        if not os.path.isfile(file):
            return self.answer(404, b"not found")
        body = open(file, "rb").read()
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        modified = email.utils.formatdate(int(os.stat(file).st_mtime), usegmt=True)
        headers = [("ETag", etag), ("Last-Modified", modified),
                   ("Content-Type", "text/html" if file.endswith(".html") else "image/jpeg")]
        if self.headers.get("If-None-Match") == etag:
            return self.answer(304, headers=headers[:2])
        return self.answer(200, body, headers)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
