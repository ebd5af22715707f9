#!/usr/bin/env python3
"""fuzz-corpus — assembles the seed corpus of every fuzz target (fuzz/fuzz_<target>.c) into OUT/<target>/
from real files of the repository and the tests: workloads, published results, templates, scoring data,
test fixtures and, when present, the recorded GitHub exchanges ($SHARED/fixtures/github). Small binary
seeds (idx, CIFAR-10) are made here, and OUT/<target>.dict for libFuzzer (-dict): the keys and short strings of
that target's JSON seeds, so mutations speak the schema. Usage: fuzz-corpus.py OUT"""
import glob, gzip, hashlib, json, os, struct, sys

out = sys.argv[1]
shared = os.environ.get("SHARED") or "../shared"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def read(p):
    with open(p, "rb") as f:
        return f.read()


json_files = sorted(glob.glob("workloads/*.json") + glob.glob("workloads/published/*.json") +
                    glob.glob("templates/*.json") + glob.glob("scoring/*.json") +
                    glob.glob("scoring/frameworks/*.json") + glob.glob("tests/fixtures/*/*.json"))
for p in json_files:
    put("jv", read(p))
for p in sorted(glob.glob("workloads/*.json")):
    put("spec", read(p))
for p in sorted(glob.glob("workloads/published/*.json") + glob.glob("tests/fixtures/report/*.json")):
    put("published", read(p))
    put("results", read(p))
for p in sorted(glob.glob("templates/*.json")):
    put("template", read(p))
for p in sorted(glob.glob("scoring/frameworks/*.json")):
    put("score", b"\0" + read(p))
if os.path.exists("scoring/snapshot.json"):
    put("score", b"\1" + read("scoring/snapshot.json"))
if os.path.exists("scoring/method.json"):
    put("score", b"\2" + read("scoring/method.json"))

# idx: 3 images of 4x5 and their labels, plain and gzip; the 4-byte prefix says where images end
img = struct.pack(">IIII", 0x803, 3, 4, 5) + bytes(range(60))
lab = struct.pack(">II", 0x801, 3) + bytes([0, 1, 2])
for a, b in ((img, lab), (gzip.compress(img, mtime=0), gzip.compress(lab, mtime=0)), (img, gzip.compress(lab, mtime=0))):
    put("idx", struct.pack("<I", len(a)) + a + b)
# tokens: the showdown-tokens/1 file of the IMDB workloads (src/data/imdb.c), with a comment and a blank line
put("tokens", "showdown-tokens/1\n# label then ids\n1 1 14 22 16 43 530\n\n0 1 2 2 9 30001 4\n")
put("tokens", "showdown-tokens/1\n0\n1\t1\t5\n")
# cifar10: two records
put("cifar10", bytes([3]) + bytes(i % 256 for i in range(3072)) + bytes([9]) + bytes(3072))

# runner: a well-behaved run of 2 epochs and 3 classes
lines = [{"event": "hello", "protocol": 1, "framework": "pytorch", "version": "0.fake", "device": "cpu",
          "parameters": 669706, "threads": 2},
         {"event": "progress", "epoch": 1, "batch": 1, "batches": 2}]
for e in (1, 2):
    lines.append({"event": "epoch", "epoch": e, "train_s": 0.5, "val_s": 0.25, "loss": 2.0, "val_loss": 1.5,
                  "accuracy": 0.5, "train_images": 256, "test_images": 256})
lines.append({"event": "done", "confusion": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "peak_bytes": 1000})
text = "".join(json.dumps(l) + "\n" for l in lines)
put("runner", b"\x05" + text.encode())
put("runner", b"\x00" + (json.dumps({"event": "error", "message": "no torch", "kind": "unavailable"}) + "\n").encode())

# http: Link headers, numeric headers, answers and a cache file from the recorded exchanges
put("http", b"\0" + b'<https://api.github.com/repositories/1/issues?page=2>; rel="next", '
                    b'<https://api.github.com/repositories/1/issues?page=5>; rel="last"')
for v in (b"60", b"1700000000", b"1.5e3 ", b"-1"):
    put("http", b"\1" + v)
put("http", b"\4" + json.dumps({"items": [{"name": "pytorch", "count": 1007}], "backoff": 2}).encode())
put("http", b"\3" + json.dumps({"total_count": 500, "incomplete_results": False, "items": []}).encode())
put("http", b"\5" + json.dumps({"schema": "showdown-http-cache/1", "entries": {
    "http://127.0.0.1/search?q=x": {"etag": '"e1"', "body": '{"total_count": 5}', "fetched": "2026-01-01T00:00:00Z",
                                    "link": ""}}}).encode())
for p in sorted(glob.glob(os.path.join(shared, "fixtures", "github", "*.json"))):
    try:
        exchanges = json.load(open(p))
    except Exception:
        continue
    for ex in exchanges[:20]:
        body = json.dumps(ex.get("response")).encode()
        path = ex.get("path", "")
        put("http", (b"\2" if path.startswith("/repos/") else b"\3") + body)
        link = ex.get("headers", {}).get("link")
        if link:
            put("http", b"\0" + str(link).encode())
        for k in ("x-ratelimit-reset", "retry-after"):
            if k in ex.get("headers", {}):
                put("http", b"\1" + str(ex["headers"][k]).encode())

# db: a run row and its result rows, as fuzz_db.c splits them (newline-separated; JSON kept on one line)
for p in sorted(glob.glob("tests/fixtures/report/results-*.json")):
    doc = json.load(open(p))
    tool = doc.get("tool", {})
    fields = ["bench", doc.get("created", ""), tool.get("version", ""), tool.get("commit", ""),
              json.dumps(doc.get("environment", {})), "out/2026-01-01"]
    fields += [json.dumps(r) for r in doc.get("runs", [])]
    put("db", "\n".join(fields))
put("db", "nightly\n2026-01-01T00:00:00Z\n0.1.0\nabc\n{}\n../../etc\n{\"workload\": \"w\"}")


# dictionaries: JSON keys and short string values of each target's seeds, quoted as JSON tokens
def tokens(v, out):
    if isinstance(v, dict):
        for k, x in v.items():
            out.add(json.dumps(k)); out.add(json.dumps(k) + ":")
            tokens(x, out)
    elif isinstance(v, list):
        for x in v:
            tokens(x, out)
    elif isinstance(v, str) and len(v) <= 40:
        out.add(json.dumps(v))


def dict_escape(t):
    return "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "\\x%02x" % ord(c) for c in t)


for target in sorted(os.listdir(out)):
    d = os.path.join(out, target)
    if not os.path.isdir(d):
        continue
    toks = set()
    for name in os.listdir(d):
        raw = read(os.path.join(d, name))
        for cand in (raw, raw[1:]):
            for part in cand.split(b"\n") if target in ("runner", "db") else [cand]:
                try:
                    tokens(json.loads(part), toks)
                except Exception:
                    pass
    if toks:
        toks |= {"4096", "1e9", "-1", "0", "1.5", "[]", "{}", "null", "true", "false", "\"\\u0000\""}
        with open(os.path.join(out, target + ".dict"), "w") as f:
            for t in sorted(toks):
                f.write('"%s"\n' % dict_escape(t))
