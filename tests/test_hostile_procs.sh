#!/bin/bash
# test_hostile_procs — child processes, limits and names: a typo late in --workload costs nothing measured; past
# ulimit -f a write error is reported (no silent SIGXFSZ); an unwritable --json directory is said before measuring;
# fake runners that exit leaving a child on stdout, setsid away, print progress forever, print 1e308, or print the
# token; kill -9 of bench takes its runner group with it and the next run removes its temp dir; the token stays
# on its API path; the HTTP cache never lands in a shared /tmp; SIGTERM while blocked on a FIFO exits 143; a low
# ulimit -v is said up front. Exit code is the verdict.
set -u
SD=${SHOWDOWN:-./showdown}
SD=$(cd "$(dirname "$SD")" && pwd)/$(basename "$SD")
PY=${PYTHON:-/usr/bin/python3}
fail=0; t=$(mktemp -d); chmod 755 "$t"
SRV=
cleanup() { [ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$t"; }
trap cleanup EXIT
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
expect() { # expected-exit description command...
  local want=$1 what=$2; shift 2
  "$@" > "$t/out" 2> "$t/err"; local rc=$?
  if [ $rc -ne "$want" ]; then bad "$what: exit $rc, expected $want: $(head -3 "$t/err")"; else ok "$what (exit $rc)"; fi
}
has() { grep -q -- "$2" "$1" && ok "$3" || bad "$3: no '$2' in: $(head -3 "$1")"; }
alive() { [ -r "/proc/$1/stat" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
Q="--backend ref --data synthetic --batches 2 --epochs 1 --threads 1 --quiet"
bench() { "$SD" bench --workload mnist_mlp $Q "$@"; }
# "<native status> | <pytorch status> | <pytorch error>" of a results file
runs() { "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
by = {r["implementation"]: r for r in d["runs"]}
n, p = by.get("native", {}), by.get("pytorch", {})
print(n.get("status"), "|", p.get("status"), "|", p.get("error", ""))' "$1" 2>&1; }
HELLO='{"event":"hello","protocol":1,"framework":"pytorch","version":"0.fake","device":"fake cpu","parameters":669706}'
EPOCH='{"event":"epoch","epoch":1,"train_s":0.5,"val_s":0.25,"loss":2.0,"val_loss":1.5,"accuracy":0.5,"train_images":256,"test_images":256}'
DONE='{"event":"done"}'
fake() { # name body: a runner script
  printf '#!/bin/sh\n%s\n' "$2" > "$t/$1"; chmod +x "$t/$1"; }
fw() { # runner-script json extra-args...: bench native + the fake pytorch runner
  local prog=$1 out=$2; shift 2
  bench --impl native,pytorch --runner "pytorch=$prog" --no-db --json "$out" "$@"; }

# ---- 6. every name checked before the first measurement ----
nruns() { "$PY" -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from runs").fetchone()[0])' "$1" 2>/dev/null || echo 0; }
expect 2 "bench --workload mnist_mlp,nosuch" bench --workload mnist_mlp,nosuch --db "$t/typo.db" --json "$t/typo.json"
has "$t/err" "nosuch" "the unknown workload is named"
n=$(nruns "$t/typo.db")
[ "$n" = 0 ] && ok "nothing was measured or stored before the typo was found" || bad "$n run(s) stored before the typo was said"
expect 2 "bench --backend ref,nosuch" bench --backend ref,nosuch --db "$t/typo2.db"
has "$t/err" "unknown back-end 'nosuch'" "the unknown back-end is named"
n=$(nruns "$t/typo2.db")
[ "$n" = 0 ] && ok "nothing was measured before the unknown back-end was found" || bad "$n run(s) stored before the back-end typo was said"

# ---- 7. ulimit -f: the write fails with a message, no SIGXFSZ ----
( ulimit -f 1; bench --no-db --json "$t/big.json" > /dev/null 2> "$t/err"; echo $? > "$t/rc" )
[ "$(cat "$t/rc")" = 1 ] && ok "past ulimit -f bench exits 1" || bad "past ulimit -f bench exits $(cat "$t/rc") (153: killed by SIGXFSZ)"
has "$t/err" "File too large" "the error names EFBIG"

# ---- 8. an output directory this user cannot write is said before measuring ----
mkdir "$t/ro"; chmod 555 "$t/ro"
if [ "$(id -u)" -eq 0 ]; then AS=(setpriv --reuid=65534 --regid=65534 --clear-groups); else AS=(); fi
if [ "$(id -u)" -ne 0 ] || setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
  s0=$(date +%s)
  expect 2 "bench --json into a read-only directory" "${AS[@]}" "$SD" bench --workload mnist_mlp $Q --epochs 3 --no-db --json "$t/ro/x.json"
  has "$t/err" "cannot write" "the unwritable output is named"
  ls -A "$t/ro" | grep -q . && bad "files left in the read-only directory" || ok "nothing written there"
else
  echo "skipped: cannot run as an unprivileged user (read-only output case)"
fi

# ---- 14. a runner that says done and exits, leaving children: judged by its exit status ----
fake leaver "echo '$HELLO'; echo '$EPOCH'; echo '$DONE'
sleep 30 &
setsid sh -c 'echo \$\$ > \"$t/escaped.pid\"; exec sleep 300' &
sleep 0.3
exit 0"
s0=$(date +%s)
fw "$t/leaver" "$t/leaver.json" --runner-timeout 6 > /dev/null 2> "$t/err"; rc=$?; s1=$(date +%s)
line=$(runs "$t/leaver.json")
case "$rc|$line" in 0"|ok | ok | "*) ok "runner exited 0 after done with a child on stdout: recorded ok in $((s1 - s0)) s" ;;
  *) bad "leaver: exit $rc, runs '$line'" ;; esac
ep=$(cat "$t/escaped.pid" 2>/dev/null || echo 0)
for _ in $(seq 30); do alive "$ep" || break; sleep 0.1; done
if [ "$ep" = 0 ]; then bad "leaver: its setsid child did not start"
elif alive "$ep"; then bad "the runner's setsid grandchild $ep is still running"; kill "$ep"
else ok "the runner's setsid grandchild was killed"; fi

# ---- 15. runner values bounded as the results reader bounds them ----
fake huge "echo '$HELLO'; echo '{\"event\":\"epoch\",\"epoch\":1,\"train_s\":0.5,\"val_s\":1e308,\"loss\":2.0,\"val_loss\":1.5,\"accuracy\":0.5,\"train_images\":256,\"test_images\":256}'; echo '$DONE'"
fw "$t/huge" "$t/huge.json" > /dev/null 2> "$t/err"; rc=$?
line=$(runs "$t/huge.json")
case "$rc|$line" in 1"|ok | failed | "*val_s*) ok "val_s 1e308 refused at the runner: $line" ;; *) bad "val_s 1e308: exit $rc, runs '$line'" ;; esac

# ---- 18. a timeout on total time: progress forever still ends ----
fake chatty "echo '$HELLO'; while :; do echo '{\"event\":\"progress\",\"epoch\":1,\"batch\":1,\"batches\":2}'; sleep 0.5; done"
s0=$(date +%s)
timeout 60 "$SD" bench --workload mnist_mlp $Q --impl native,pytorch --runner "pytorch=$t/chatty" --no-db \
  --json "$t/chatty.json" --runner-timeout 3 --runner-limit 5 > /dev/null 2> "$t/err"; rc=$?; s1=$(date +%s)
[ $rc -eq 1 ] && [ $((s1 - s0)) -lt 40 ] && ok "a runner printing progress forever killed at the total bound ($((s1 - s0)) s)" \
  || bad "progress forever: exit $rc after $((s1 - s0)) s: $(head -3 "$t/err")"
has "$t/err" "in all" "the message says the total bound"

# ---- 18. kill -9 of bench: the runner's group dies with it; the next run removes the temp dir ----
fake hang "for a in \"\$@\"; do [ \"\$prev\" = --equivalence ] && echo \"\$a\" > \"$t/hang.dir\"; prev=\$a; done
echo '$HELLO'
sleep 1000 &
echo \$\$ \$! > \"$t/hang.pids\"
wait"
rm -f "$t/hang.pids"
"$SD" bench --workload mnist_mlp $Q --impl pytorch --runner "pytorch=$t/hang" --no-db --runner-timeout 600 > /dev/null 2>&1 & bp=$!
for _ in $(seq 300); do [ -s "$t/hang.pids" ] && break; sleep 0.1; done
kill -9 $bp; wait $bp 2>/dev/null
read -r rp sp < "$t/hang.pids" 2>/dev/null || { rp=0; sp=0; }
for _ in $(seq 30); do alive "$rp" || alive "$sp" || break; sleep 0.1; done
if [ "$rp" = 0 ]; then bad "kill -9: the fake runner did not start"
elif alive "$rp" || alive "$sp"; then bad "kill -9 of bench left runner $rp / its child $sp running"; kill "$rp" "$sp" 2>/dev/null
else ok "kill -9 of bench: the runner and its child died with it"; fi
hd=$(cat "$t/hang.dir" 2>/dev/null)
fake good "echo '$HELLO'; echo '$EPOCH'; echo '$DONE'"
fw "$t/good" "$t/good.json" > /dev/null 2>&1 || bad "a good fake runner failed: $(runs "$t/good.json")"
if [ -z "$hd" ]; then bad "kill -9: no runner temp dir seen"
elif [ -e "$hd" ]; then bad "the killed run's temp dir $hd is still there after the next run"; rm -rf "$hd"
else ok "the killed run's temp dir was removed by the next run"; fi
ls -d /tmp/showdown-runner-$$-* > /dev/null 2>&1 && bad "temp dirs of this shell's pid left" || true

# ---- 19. secrets: not in a runner's environment ----
fake leak 'echo "token=$GITHUB_TOKEN other=$SOME_API_TOKEN" >&2; exit 3'
GITHUB_TOKEN=sekrit-gh-123 SOME_API_TOKEN=sekrit-other-456 fw "$t/leak" "$t/leak.json" > /dev/null 2> "$t/err"
grep -q sekrit "$t/leak.json" "$t/err" && bad "a runner saw the token: $(grep -o 'token=[^ ]*' "$t/err" | head -1)" \
  || ok "no *_TOKEN in a runner's environment (nothing of it in the JSON or on stderr)"

# ---- 19. the token only to the API base path; the cache not in /tmp/.cache; 0600 ----
cat > "$t/srv.py" <<'EOF'
import json, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
seen = open(sys.argv[2], "a")
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_GET(self):
        seen.write("%s %s\n" % (self.path, "AUTH" if self.headers.get("Authorization") else "-")); seen.flush()
        if self.path.startswith("/api/"):
            self.send_response(302); self.send_header("Location", "/outside" + self.path[4:])
            self.send_header("Content-Length", "0"); self.end_headers(); return
        body = b'{"items": [], "total_count": 1}'
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("ETag", '"e1"')
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
s = ThreadingHTTPServer(("127.0.0.1", 0), H); s.request_queue_size = 128
open(sys.argv[1], "w").write(str(s.server_address[1])); s.serve_forever()
EOF
"$PY" "$t/srv.py" "$t/port" "$t/seen" & SRV=$!
for _ in $(seq 50); do [ -s "$t/port" ] && break; sleep 0.1; done
P=$(cat "$t/port" 2>/dev/null)
if [ -n "$P" ]; then
  GITHUB_TOKEN=sekrit-gh-123 "$SD" score --api-base "http://127.0.0.1:$P/api" --se-api-base "http://127.0.0.1:$P/se" \
    --timeout 5 --quiet --cache-dir "$t/cache" --json "$t/s.json" > /dev/null 2>&1
  grep -q '^/api/' "$t/seen" || bad "score asked nothing of the API base (the redirect case did not run)"
  grep -q '^/outside.* AUTH' "$t/seen" && bad "the token followed a same-host redirect outside the API base: $(grep -m1 '^/outside.* AUTH' "$t/seen")" \
    || { grep -q '^/outside' "$t/seen" && ok "redirects outside the API base were fetched without the token"; }
  m=$(stat -c %a "$t/cache/http-cache.json" 2>/dev/null || echo none)
  [ "$m" = 600 ] && ok "the HTTP cache file is 0600" || bad "the HTTP cache file mode is $m"
  before=$(stat -c %Y /tmp/.cache/showdown/http-cache.json 2>/dev/null || echo none)
  env -u HOME -u XDG_CACHE_HOME "$SD" score --api-base "http://127.0.0.1:$P/api" --se-api-base "http://127.0.0.1:$P/se" \
    --timeout 5 --quiet --json "$t/s2.json" > /dev/null 2> "$t/err"; rc=$?
  after=$(stat -c %Y /tmp/.cache/showdown/http-cache.json 2>/dev/null || echo none)
  if [ "$before" != "$after" ]; then bad "with HOME unset the HTTP cache went to the shared /tmp/.cache/showdown"
  elif [ $rc -eq 2 ] && grep -q "cache-dir" "$t/err"; then ok "with HOME unset score asks for --cache-dir (exit 2)"
  else bad "with HOME unset: exit $rc: $(head -2 "$t/err")"; fi
  kill $SRV 2>/dev/null; wait $SRV 2>/dev/null; SRV=
else
  bad "the test HTTP server did not start"
fi

# ---- 21. SIGTERM while blocked on a FIFO ----
bench --no-db --json "$t/r.json" > /dev/null 2>&1 || bad "plain bench --json"
mkfifo "$t/fifo"
"$SD" report --results "$t/fifo" --no-db --out "$t/rep" > /dev/null 2> "$t/err" & rp=$!
sleep 1
kill -TERM $rp; wait $rp; rc=$?
[ $rc -eq 143 ] && ok "SIGTERM while report waits on a FIFO: exit 143" || bad "SIGTERM on a FIFO read: exit $rc: $(head -2 "$t/err")"
"$SD" bench --workload "$t/fifo" $Q --no-db > /dev/null 2> "$t/err" & bp=$!
for _ in $(seq 50); do alive $bp || break; sleep 0.1; done
if alive $bp; then bad "bench --workload FIFO blocks"; kill -9 $bp; else wait $bp; rc=$?
  [ $rc -ne 0 ] && grep -q "regular file" "$t/err" && ok "a FIFO as workload spec is refused (exit $rc)" || bad "FIFO spec: exit $rc: $(head -2 "$t/err")"; fi

# ---- 22. the address-space limit is checked up front ----
# a sanitizer build reserves its shadow memory before main: the limits below cannot be said by showdown there
if ! ( ulimit -v 400000; "$SD" env --no-probe > /dev/null 2>&1 ); then
  echo "skipped: showdown does not start under ulimit -v 400000 (a sanitizer build reserves its shadow memory)"
  exit $fail
fi
( ulimit -v 150000; "$SD" report --results "$t/r.json" --no-db --out "$t/rep2" > /dev/null 2> "$t/err"; echo $? > "$t/rc" )
[ "$(cat "$t/rc")" = 1 ] && grep -q "ulimit -v" "$t/err" && ok "report under ulimit -v 150000 says what it needs (exit 1)" \
  || bad "report under ulimit -v 150000: exit $(cat "$t/rc"): $(head -2 "$t/err")"
( ulimit -v 100000; "$SD" bench --workload mnist_mlp --backend dnnl --data synthetic --batches 2 --epochs 1 --quiet --no-db > /dev/null 2> "$t/err"; echo $? > "$t/rc" )
[ "$(cat "$t/rc")" = 1 ] && grep -q "ulimit -v" "$t/err" && ok "bench under ulimit -v 100000 says what it needs (exit 1)" \
  || bad "bench under ulimit -v 100000: exit $(cat "$t/rc"): $(head -2 "$t/err")"

exit $fail
