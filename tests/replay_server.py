#!/usr/bin/env python3
"""replay_server — loopback HTTP/1.1 server for the http client tests.

Replays recorded GitHub exchanges (shared/fixtures/github/*.json: method, path, status, headers,
response), rewriting https://api.github.com to its own address, answering 304 when If-None-Match
matches the recorded ETag; plus crafted exchanges under /crafted/ and a StackExchange-like
/2.3/tags/{tag}/info that always answers gzip with a `backoff` field (--se-backoff), 2 MiB answers
(/crafted/big with a length, /crafted/big-chunked without) for the body bound, and
/search/repositories?q=... answering total_count 500, and GitHub statistics (tests/fixtures/github-stats)
under /crafted/stats/ with 202 "computing", a 403 rate limit and 304 (and as /repos/{o}/{r}/stats/{which}). /_stats gives per-path hit
counts and the last Authorization header seen per path. Writes its port to --port-file.
"""
import argparse, gzip, json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
HITS = {}        # path -> number of requests
NOT_MOD = {}     # path -> number of 304 answers
AUTH = {}        # path -> last Authorization header (or None)
EXCHANGES = {}   # (method, path) -> exchange
BASE = ""
SE_BACKOFF = 2   # the `backoff` field of StackExchange answers (0: none)


def load_fixtures(d):
    for name in sorted(os.listdir(d)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(d, name)) as f:
            for ex in json.load(f):
                EXCHANGES[(ex["method"].upper(), ex["path"])] = ex


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body, headers=None, raw=False):
        data = body if raw else json.dumps(body).encode() if not isinstance(body, (bytes, str)) else (
            body.encode() if isinstance(body, str) else body)
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if not any(k.lower() == "content-type" for k in (headers or {})):
            self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def do_GET(self):
        path = self.path
        with LOCK:
            n = HITS.get(path, 0) + 1
            HITS[path] = n
            AUTH[path] = self.headers.get("Authorization")
        inm = self.headers.get("If-None-Match")
        if path.startswith("/_stats"):
            with LOCK:
                return self.send(200, {"hits": HITS, "not_modified": NOT_MOD, "auth": AUTH})
        if path.startswith("/crafted/"):
            return self.crafted(path, n, inm)
        if path.startswith("/2.3/tags/"):
            tag = path.split("/")[3]
            body = {"items": [{"name": tag, "count": 1000 + len(tag)}], "has_more": False,
                    "quota_max": 300, "quota_remaining": 299}
            if SE_BACKOFF:
                body["backoff"] = SE_BACKOFF
            data = gzip.compress(json.dumps(body).encode())
            return self.send(200, data, {"Content-Encoding": "gzip"}, raw=True)
        parts = path.split("?")[0].split("/")
        if len(parts) == 6 and parts[1] == "repos" and parts[4] == "stats":   # statistics of any repository
            return self.stats("/crafted/stats/repos/ok/%s/stats/%s" % (parts[3], parts[5]), n, inm)
        ex = EXCHANGES.get(("GET", path))
        if ex is None and path.startswith("/search/repositories?"):
            return self.send(200, {"total_count": 500, "incomplete_results": False, "items": []})
        if ex is None:
            return self.send(404, {"message": "Not Found", "path": path})
        headers = {}
        for k, v in ex["headers"].items():
            if k.lower() in ("content-length", "connection", "transfer-encoding", "content-encoding"):
                continue
            headers[k] = str(v).replace("https://api.github.com", BASE)
        etag = ex["headers"].get("etag")
        if etag and inm == etag:
            with LOCK:
                NOT_MOD[path] = NOT_MOD.get(path, 0) + 1
            return self.send(304, b"", {"ETag": etag}, raw=True)
        body = json.dumps(ex["response"]).replace("https://api.github.com", BASE)
        return self.send(ex["status"], body, headers)

    def crafted(self, path, n, inm):
        kind = path.split("/")[2].split("?")[0]
        good = {"total_count": 7, "items": []}
        if kind == "retry-after":        # 403 + Retry-After: 2, then 200
            if n == 1:
                return self.send(403, {"message": "secondary rate limit"}, {"Retry-After": "2"})
            return self.send(200, good, {"ETag": '"ra"'})
        if kind == "retry-after-long":   # 403 + Retry-After: 3600 always
            return self.send(403, {"message": "secondary rate limit"}, {"Retry-After": "3600"})
        if kind == "ratelimit":          # 200 with the limit exhausted (reset in 3 s), then 200
            reset = str(int(time.time()) + 3)
            return self.send(200, good, {"X-RateLimit-Remaining": "0" if n == 1 else "10", "X-RateLimit-Reset": reset})
        if kind == "500-then-200":
            if n == 1:
                return self.send(500, {"message": "server error"})
            return self.send(200, {"total_count": 42}, {"ETag": '"v42"'})
        if kind == "good-then-500":      # first answer good, then only 500s
            if n == 1:
                return self.send(200, {"total_count": 11}, {"ETag": '"v11"'})
            return self.send(500, {"message": "down"})
        if kind == "good-then-malformed":
            if n == 1:
                return self.send(200, {"total_count": 12}, {"ETag": '"v12"'})
            return self.send(200, '{"total_count": 13,', {})
        if kind == "malformed":
            return self.send(200, '{"total_count": ', {})
        if kind == "good-then-hang":
            if n == 1:
                return self.send(200, {"total_count": 14}, {"ETag": '"v14"'})
            time.sleep(5)
            return self.send(200, {"total_count": 15})
        if kind == "big":                # 2 MiB answer with its Content-Length (the client bounds bodies)
            try:
                self.send(200, b'{"pad": "' + b"x" * (2 << 20) + b'"}', raw=True)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return None
        if kind == "big-chunked":        # 2 MiB answer, chunked: no length known in advance
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for part in [b'{"pad": "'] + [b"x" * 65536] * 32 + [b'"}']:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            return None
        if kind == "stats":              # /crafted/stats/repos/{owner}/{name}/stats/{which}: GitHub statistics
            return self.stats(path, n, inm)
        if kind == "etag":               # 304 when the client presents the ETag
            if inm == '"e1"':
                with LOCK:
                    NOT_MOD[path] = NOT_MOD.get(path, 0) + 1
                return self.send(304, b"", {"ETag": '"e1"'}, raw=True)
            return self.send(200, {"total_count": 5}, {"ETag": '"e1"'})
        return self.send(404, {"message": "unknown crafted path"})


STATS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "github-stats")


def _stats(self, path, n, inm):
    """Owner ok: the fixture with an ETag (304 when presented); computing: 202 {} twice, then the fixture;
    busy: always 202; limited: the fixture once, then 403 with the rate limit exhausted for an hour."""
    parts = path.split("?")[0].split("/")      # '', crafted, stats, repos, owner, name, stats, which
    owner, which = parts[4], parts[7]
    with open(os.path.join(STATS_DIR, which + ".json")) as f:
        body = f.read()
    etag = '"s-%s"' % which
    if owner == "busy" or (owner == "computing" and n <= 2):
        return self.send(202, {})
    if owner == "limited" and n > 1:
        return self.send(403, {"message": "API rate limit exceeded for 127.0.0.1.",
                               "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"},
                         {"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0",
                          "X-RateLimit-Reset": str(int(time.time()) + 3600), "X-RateLimit-Resource": "core"})
    if inm == etag:
        with LOCK:
            NOT_MOD[path] = NOT_MOD.get(path, 0) + 1
        return self.send(304, b"", {"ETag": etag}, raw=True)
    return self.send(200, body, {"ETag": etag, "X-RateLimit-Remaining": "59"})


Handler.stats = _stats


def main():
    global BASE, SE_BACKOFF
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", default=None)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--se-backoff", type=int, default=2)
    a = ap.parse_args()
    SE_BACKOFF = a.se_backoff
    if a.fixtures:
        load_fixtures(a.fixtures)
    ThreadingHTTPServer.request_queue_size = 128
    ThreadingHTTPServer.daemon_threads = True
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    BASE = "http://127.0.0.1:%d" % srv.server_address[1]
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
