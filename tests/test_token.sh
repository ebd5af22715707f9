#!/bin/bash
# test_token — GITHUB_TOKEN never appears in logs, results, the database, the report, the HTTP cache
# or error messages. Runs score (network refresh against tests/replay_server.py, HTTP log on stderr), an
# error path (a GitHub API that refuses connections), bench into a database and report, all with a known
# fake token; checks the server did receive the token (so the search below can fail), then searches every
# stdout/stderr, every file written and a dump of the database for it.
set -u
SD=${SHOWDOWN:-./showdown}
PY=${PYTHON:-python3}
T=$(mktemp -d)
SRV=""
cleanup() { [ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
TOK="ghp_FAKEtoken4test0123456789abcdefSECRET"
export GITHUB_TOKEN=$TOK

FX="${SHARED:-../shared}/fixtures/github"
if [ -d "$FX" ]; then "$PY" tests/replay_server.py --port-file "$T/port" --se-backoff 0 --fixtures "$FX" & SRV=$!
else "$PY" tests/replay_server.py --port-file "$T/port" --se-backoff 0 & SRV=$!; fi
for i in $(seq 1 500); do [ -s "$T/port" ] && break; sleep 0.02; done
[ -s "$T/port" ] || fail "replay server did not start"
BASE="http://127.0.0.1:$(cat "$T/port")"
mkdir -p "$T/out" "$T/mirrors"
cp -r scoring "$T/sc"

# 1. score with the network refresh (not quiet: the HTTP log goes to stderr)
"$SD" score --scoring-dir "$T/sc" --snapshot "$T/out/snap.json" --cache-dir "$T/out/cache" --mirror-dir "$T/mirrors" \
  --api-base "$BASE" --se-api-base "$BASE" --timeout 5 --update-snapshot --json "$T/out/scores.json" \
  >"$T/score.out" 2>"$T/score.err" || fail "score: $(tail -3 "$T/score.err")"
[ -s "$T/out/cache/http-cache.json" ] || fail "no HTTP cache written"
"$PY" - "$BASE" "$TOK" <<'PYEOF' || fail "the replay server never received the token (the search below would prove nothing)"
import json, sys, urllib.request
stats = json.load(urllib.request.urlopen(sys.argv[1] + "/_stats"))
sent = [p for p, a in stats["auth"].items() if a == "Bearer " + sys.argv[2]]
assert sent, stats["auth"]
print("token received by the server on", len(sent), "path(s)")
PYEOF

# 2. an error path: GitHub refuses connections (messages name URLs and reasons, never headers)
"$SD" score --scoring-dir "$T/sc" --snapshot "$T/out/snap.json" --cache-dir "$T/out/cache2" --mirror-dir "$T/mirrors" \
  --api-base "http://127.0.0.1:1" --se-api-base "http://127.0.0.1:1" --timeout 2 --update-snapshot \
  --json "$T/out/scores2.json" >"$T/score2.out" 2>"$T/score2.err"
grep -q "127.0.0.1:1" "$T/score2.err" || fail "the error run logged no failed request: $(tail -3 "$T/score2.err")"

# 3. bench into a database, then the report from both
"$SD" bench --workload mnist_mlp --backend ref --data synthetic --epochs 1 --batches 2 --threads 1 \
  --db "$T/out/showdown.db" --json "$T/out/bench.json" >"$T/bench.out" 2>"$T/bench.err" || fail "bench: $(tail -3 "$T/bench.err")"
"$SD" report --results "$T/out/bench.json" --scores "$T/out/scores.json" --out "$T/out/report" --format pdf,svg,md,csv \
  >"$T/report.out" 2>"$T/report.err" || fail "report: $(tail -3 "$T/report.err")"
sqlite3 "$T/out/showdown.db" .dump >"$T/db.dump" 2>&1 || "$PY" -c 'import sqlite3,sys; [print(l) for l in sqlite3.connect(sys.argv[1]).iterdump()]' "$T/out/showdown.db" >"$T/db.dump"
grep -q "INSERT INTO" "$T/db.dump" || fail "empty database dump"

# 4. the search: every output stream, every file written (binary too), the database dump
n=$(find "$T/out" -type f | wc -l)
hits=$(grep -rlaF "$TOK" "$T/out" "$T"/*.out "$T"/*.err "$T/db.dump" 2>/dev/null)
[ -z "$hits" ] || fail "the token appears in: $hits"
# also a part of it (a truncated or quoted token)
hits=$(grep -rlaF "${TOK:4:20}" "$T/out" "$T"/*.out "$T"/*.err "$T/db.dump" 2>/dev/null)
[ -z "$hits" ] || fail "part of the token appears in: $hits"
echo "token absent from 8 output streams, $n files written and the database dump"
