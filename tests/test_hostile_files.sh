#!/bin/bash
# test_hostile_files — nothing a user keeps is lost or overwritten, and what report reads back is what it wrote:
# nightly's pruning of a folder name used again, its lock as a symlink, its exit code when the report step fails;
# an empty file given as the database; concurrent recorded reports; the output set killed or interrupted between
# renames; recorded reports replayed after the database changed, from another directory, tampered with, and with
# options that would change them; `latest` that is not a run number; all method weights 0; Markdown and CSV
# injection through a device string. Verdict: the exit code ("N passed, N failed" on the last line).
set -u
SD=${SHOWDOWN:-./showdown}
SD=$(cd "$(dirname "$SD")" && pwd)/$(basename "$SD")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
npass=0; nfail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok() { echo "ok: $1"; npass=$((npass + 1)); }
bad() { echo "FAIL: $1"; nfail=$((nfail + 1)); }
expect() { # expected-exit description command...
  local want=$1 what=$2; shift 2
  "$@" > "$t/out" 2> "$t/err"; local rc=$?
  if [ $rc -ne "$want" ]; then bad "$what: exit $rc, expected $want: $(head -3 "$t/err")"; else ok "$what (exit $rc)"; fi
}
has() { grep -q -- "$2" "$1" && ok "$3" || bad "$3: no '$2' in: $(head -3 "$1")"; }
RES=$ROOT/tests/fixtures/report/results-synthetic.json
rep() { "$SD" report --no-db --results "$RES" "$@"; }
sum() { (cd "$1" && find . -path ./report-runs -prune -o -type f -print | LC_ALL=C sort | xargs md5sum) 2>/dev/null; }

# ---- nightly: a folder name used again is not pruned with the old run; the lock is never followed ---------------
cat > "$t/cfg.json" <<JSON
{"workloads": "mnist_mlp", "backends": "ref", "data": "synthetic", "epochs": 1, "batches": 2, "repeat": 1,
 "keep": 2, "threshold_pct": 1000, "out": "$t/n"}
JSON
"$SD" nightly --config "$t/cfg.json" > "$t/n1" 2>&1 || bad "nightly 1: exit $?: $(tail -3 "$t/n1")"
day=$(readlink "$t/n/latest")
rm -rf "${t:?}/n/$day"                                  # the user removes the day's folder; the next run takes its name
"$SD" nightly --config "$t/cfg.json" > "$t/n2" 2>&1 || bad "nightly 2: exit $?: $(tail -3 "$t/n2")"
[ "$(readlink "$t/n/latest")" = "$day" ] && ok "run 2 took the folder name $day again" || bad "run 2 in $(readlink "$t/n/latest")"
"$SD" nightly --config "$t/cfg.json" > "$t/n3" 2>&1 || bad "nightly 3: exit $?: $(tail -3 "$t/n3")"
[ -f "$t/n/$day/bench.json" ] && [ -f "$t/n/$day/nightly.log" ] \
  && ok "pruning run 1 (keep 2) leaves $day, which kept run 2 uses" || bad "kept run 2's folder $day was deleted with run 1"
echo precious > "$t/victim"
ln -s "$t/victim" "$t/n/nightly.lock.new"; mv -T "$t/n/nightly.lock.new" "$t/n/nightly.lock"
"$SD" nightly --config "$t/cfg.json" > "$t/n4" 2>&1; rc=$?
[ "$(cat "$t/victim")" = precious ] && ok "a symlink at nightly.lock is not written through (exit $rc)" || bad "the lock symlink's target now holds: $(cat "$t/victim")"
rm -f "$t/n/nightly.lock"
# a report step that fails: a complete bench run in the database that the report cannot read (nightly reads only
# nightly runs)
"$PY" - "$t/n/showdown.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO runs (kind, created, environment, complete) VALUES ('bench', X'C328', '{}', 1)")
c.commit()
PY
"$SD" nightly --config "$t/cfg.json" > "$t/n5" 2>&1; rc=$?
if grep -q "report: failed" "$t/n5"; then
  [ $rc -ne 0 ] && ok "nightly whose report step failed exits $rc" || bad "nightly exits 0 although its report step failed"
else bad "the planted run did not make the report fail: $(grep 'report:' "$t/n5" | head -2)"; fi

# ---- the database: a file that is not ours is never turned into one -------------------------------------------
: > "$t/empty.db"
expect 3 "report --db on an empty file" "$SD" report --db "$t/empty.db" --out "$t/e" --format md
[ ! -s "$t/empty.db" ] && ok "the empty file stays empty" || bad "the empty file became $(head -c 16 "$t/empty.db")"
printf 'my notes\n' > "$t/notes.txt"
expect 3 "report --db on a text file" "$SD" report --db "$t/notes.txt" --out "$t/e" --format md
[ "$(cat "$t/notes.txt")" = "my notes" ] && ok "the text file is untouched" || bad "the text file changed"

# ---- the output set switches as one ---------------------------------------------------------------------------
RES2=$t/res2.json
"$PY" - "$RES" "$RES2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["environment"]["device"] = "another machine"
json.dump(d, open(sys.argv[2], "w"))
PY
setA() { "$SD" report --no-db --results "$RES" --out "$1" --format pdf,svg,md,csv > /dev/null 2>&1; }
setB() { "$SD" report --no-db --results "$RES2" --out "$1" --format pdf,svg,md,csv "${@:2}"; }
setA "$t/A" && setB "$t/B" > /dev/null 2>&1 || bad "reference renders"
mdA=$(md5sum < "$t/A/showdown.md"); mdB=$(md5sum < "$t/B/showdown.md")
figA=$(cd "$t/A/figures" && cat * | md5sum); figB=$(cd "$t/B/figures" && cat * | md5sum)
tabA=$(cd "$t/A/tables" && cat * | md5sum); tabB=$(cd "$t/B/tables" && cat * | md5sum)
# the set in DIR (md, figures, tables) is wholly A or wholly B
which_set() {
  local m f c
  m=$(md5sum < "$1/showdown.md" 2>/dev/null); f=$(cd "$1/figures" 2>/dev/null && cat * | md5sum); c=$(cd "$1/tables" 2>/dev/null && cat * | md5sum)
  if [ "$m" = "$mdA" ] && [ "$f" = "$figA" ] && [ "$c" = "$tabA" ]; then echo A
  elif [ "$m" = "$mdB" ] && [ "$f" = "$figB" ] && [ "$c" = "$tabB" ]; then echo B
  else echo "mixed (md $([ "$m" = "$mdA" ] && echo A || { [ "$m" = "$mdB" ] && echo B || echo none; }), figures $([ "$f" = "$figA" ] && echo A || { [ "$f" = "$figB" ] && echo B || echo none; }), tables $([ "$c" = "$tabA" ] && echo A || { [ "$c" = "$tabB" ] && echo B || echo none; }))"; fi
}
# an earlier version killed between its two renames left the previous figures in .figures.old.PID
setA "$t/k0"; mv "$t/k0/figures" "$t/k0/.figures.old.999999"
rep --out "$t/k0" --format pdf > /dev/null 2>&1
[ -d "$t/k0/figures" ] && [ "$(cd "$t/k0/figures" && cat * | md5sum)" = "$figA" ] \
  && ok "figures left aside by a render killed between renames are put back" || bad "the previous figures are lost: $(ls -a "$t/k0")"
# kill -9 at points inside the switch (a test hook sleeps after each rename); the next render rolls it back
for ms in 150 750 1350 1950; do
  setA "$t/k$ms"
  SHOWDOWN_TEST_SWITCH_SLEEP_MS=300 "$SD" report --no-db --results "$RES2" --out "$t/k$ms" --format pdf,svg,md,csv > /dev/null 2>&1 & r=$!
  for _ in $(seq 200); do ls -a "$t/k$ms" | grep -q '^\.render\.old\.' && break; sleep 0.02; done
  sleep "$(awk "BEGIN {print $ms / 1000}")"
  kill -9 $r 2>/dev/null; wait $r 2>/dev/null
  rep --out "$t/k$ms" --template brief --format pdf > /dev/null 2>&1 || bad "render after the kill"
  s=$(which_set "$t/k$ms")
  case $s in A|B) ok "kill -9 ${ms} ms into the switch: the next render leaves set $s whole";; *) bad "kill -9 ${ms} ms into the switch: $s";; esac
  ls -a "$t/k$ms" | grep -q '^\.render\.' && bad "switch directories left: $(ls -a "$t/k$ms" | grep '^\.render')" || true
done
# SIGINT at points through the render: exit 130 leaves the previous set, exit 0 the new one; never a mix
for d in $(seq 0.02 0.02 0.6); do
  setA "$t/i"
  "$SD" report --no-db --results "$RES2" --out "$t/i" --format pdf,svg,md,csv > /dev/null 2> "$t/ierr" & r=$!
  sleep $d; kill -INT $r 2>/dev/null; wait $r; rc=$?
  s=$(which_set "$t/i"); p=$(cmp -s "$t/i/showdown.pdf" "$t/A/showdown.pdf" && echo A || { cmp -s "$t/i/showdown.pdf" "$t/B/showdown.pdf" && echo B || echo none; })
  if [ $rc -eq 130 ]; then [ "$s" = A ] && [ "$p" = A ] && ok "SIGINT at ${d}s: exit 130, the previous set whole" || bad "SIGINT at ${d}s: exit 130 but set $s, pdf $p"
  elif [ $rc -eq 0 ]; then [ "$s" = B ] && [ "$p" = B ] && ok "SIGINT at ${d}s came after the switch: the new set whole" || bad "SIGINT at ${d}s: exit 0 but set $s, pdf $p"
  else bad "SIGINT at ${d}s: exit $rc: $(cat "$t/ierr")"; fi
done

# ---- recorded reports ------------------------------------------------------------------------------------------
"$SD" bench --workload mnist_mlp --backend ref --data synthetic --batches 2 --epochs 1 --threads 1 --quiet --db "$t/h.db" > /dev/null 2>&1 || bad "bench into h.db"
"$SD" report --db "$t/h.db" --out "$t/r" --format md,csv --record > /dev/null 2> "$t/err" || bad "recorded report: $(cat "$t/err")"
sum "$t/r" > "$t/r.sum"
"$SD" bench --workload mnist_mlp --backend ref --data synthetic --batches 3 --epochs 1 --threads 1 --quiet --db "$t/h.db" > /dev/null 2>&1
expect 0 "a recorded report after the database got another run" "$SD" report --out "$t/r"
sum "$t/r" | cmp -s - "$t/r.sum" && ok "it renders the recorded runs again, byte for byte" || bad "the re-render differs from the recorded report"
rm -f "$t/h.db"*
mkdir "$t/elsewhere"
expect 0 "the recorded report with its database gone, from another directory" sh -c "cd '$t/elsewhere' && '$SD' report --out '$t/r'"
sum "$t/r" | cmp -s - "$t/r.sum" && ok "same bytes without the database" || bad "differs without the database"
expect 2 "--template with a recorded report" "$SD" report --out "$t/r" --template brief
has "$t/err" "template" "the error names --template"
expect 2 "--format with a recorded report" "$SD" report --out "$t/r" --format md
expect 2 "--no-db with a recorded report" "$SD" report --out "$t/r" --no-db
expect 2 "--template with --run" "$SD" report --out "$t/r" --run 1 --template brief
cp "$t/r/report-runs/latest" "$t/latest.keep"
printf '1%070d\n' 0 > "$t/r/report-runs/latest"
expect 3 "a latest longer than a run number" "$SD" report --out "$t/r"
printf '4294967297\n' > "$t/r/report-runs/latest"
expect 3 "latest = 4294967297" "$SD" report --out "$t/r"
cp "$t/latest.keep" "$t/r/report-runs/latest"
# the copies live in the record's db/ folder; a pattern on the whole path would match any file once mktemp's
# random name holds "db"
f=$(find "$t/r/report-runs/1/db" -name '*.json' 2>/dev/null | sort | head -1)
if [ -n "$f" ]; then
  cp "$f" "$t/keep.json"; sed -i 's/"ok"/"OK"/' "$f"
  cmp -s "$f" "$t/keep.json" && bad "the edit changed nothing in $f"
  expect 3 "a recorded database run changed since" "$SD" report --out "$t/r"
  has "$t/err" "changed since it was recorded" "the error says the copy changed"
  cp "$t/keep.json" "$f"
else bad "no database run copied into the record: $(find "$t/r/report-runs/1")"; fi
echo "TOKEN=s3cret-value" > "$t/secret.txt"
"$PY" - "$t/r/report-runs/1/inputs.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["template"]["path"] = "../../../secret.txt"; json.dump(d, open(sys.argv[1], "w"))
PY
expect 3 "a recorded path that leaves the record" "$SD" report --out "$t/r"
grep -q "s3cret" "$t/err" "$t/out" && bad "the outside file's content is quoted" || ok "nothing of the outside file is read or quoted"
# concurrent recorded reports into one folder each get their own number and all render (their output sets switch
# one after another); three rounds, the race is a narrow one
for round in 1 2 3; do
  rm -rf "$t/c"
  for i in 1 2 3 4; do rep --out "$t/c" --format md,pdf --record > "$t/c$i" 2>&1 & done; wait
  n=$(ls "$t/c/report-runs" | grep -c '^[0-9]*$')
  runs=$(cat "$t"/c/report-runs/*/inputs.json 2>/dev/null | grep -c '"run"')
  failed=$(grep -l "showdown report:" "$t"/c[1-4] | wc -l)
  [ "$n" -eq 4 ] && [ "$runs" -eq 4 ] && [ "$failed" -eq 0 ] && ok "4 concurrent --record (round $round): 4 records, 4 renders" \
    || bad "4 concurrent --record (round $round): $n folders, $runs inputs.json, $failed failed: $(cat "$t"/c[1-4] | grep -i 'record\|error\|cannot')"
done

# ---- method.json with every category weight 0 ---------------------------------------------------------------
cp -r "$ROOT/scoring" "$t/scoring"
"$PY" - "$t/scoring/method.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["categories"]: c["weight"] = 0
json.dump(d, open(sys.argv[1], "w"), indent=1)
PY
expect 3 "score with every category weight 0" "$SD" score --offline --quiet --scoring-dir "$t/scoring" --json "$t/s0.json"
has "$t/err" "method.json" "the error names method.json"

# ---- Markdown and CSV injection through a device string ---------------------------------------------------------
"$PY" - "$RES" "$t/evil.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["environment"]["cpu_model"] = "fast\rcpu"   # a CSV field with \r alone must be quoted too
d["environment"]["device"] = "cpu\n# Injected heading\n![x](http://evil.example/x.png)\n<script>alert(1)</script>\n1. item\r\nend"
json.dump(d, open(sys.argv[2], "w"))
PY
expect 0 "report of a hostile device string" "$SD" report --no-db --results "$t/evil.json" --out "$t/md" --format md,csv
if grep -q '^#* *Injected' "$t/md/showdown.md"; then bad "a heading was injected"; else ok "no heading injected"; fi
grep -q '!\[x\](http' "$t/md/showdown.md" && bad "an image was injected" || ok "no image injected"
grep -q '<script>' "$t/md/showdown.md" && bad "raw HTML was injected" || ok "no raw HTML"
grep -q 'evil.example' "$t/md/showdown.md" && ok "the device string is still shown (as text)" || bad "the device string is gone from the Markdown"
"$PY" - "$t/md/tables" <<'PY' && ok "every CSV parses with its header's column count (\\r quoted)" || bad "a CSV row breaks on \\r"
import csv, glob, sys
for p in glob.glob(sys.argv[1] + "/*.csv"):
    rows = list(csv.reader(open(p, newline="")))
    for r in rows:
        assert len(r) == len(rows[0]), (p, r)
PY

echo "$npass passed, $nfail failed"
[ $nfail -eq 0 ]
