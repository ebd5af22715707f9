#!/bin/bash
# test_report_default — the default report (`make report`'s inputs) as a reader gets it: from a results file
# recorded by `bench --impl all` (native on oneDNN beside Debian's PyTorch, Fashion-MNIST and synthetic CIFAR-10),
# the committed published tables, their verify verdicts and the offline scores. Page 1 names the CPU, the
# back-end, each framework measured with its version, the data sets and which are synthetic; a framework-vs-native
# table exists; no word of any table is drawn below 7 pt (pdftotext -bbox-layout word heights), and a table
# longer than a page continues with its header repeated; the recorded inputs render again byte for byte.
set -u
SD=$(realpath "${SHOWDOWN:-./showdown}")
cd "$(dirname "$0")/.."
for tool in pdftotext pdfinfo pdffonts python3; do
  command -v $tool >/dev/null || { echo "skipped: $tool not installed"; exit 77; }
done
fail=0; t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; fail=1; }
has() { grep -q -- "$2" "$1" && ok "$3" || { bad "$3: no '$2' in $1"; head -40 "$1"; }; }
RUN=tests/fixtures/report/default-run.json

# ---- the inputs make report gives the renderer -------------------------------------------------------------
mkdir -p "$t/verify"
for f in workloads/published/*.json; do
  n=$(basename "$f" .json)
  "$SD" verify "$f" --results "$RUN" --quiet --json "$t/verify/$n.json" > /dev/null 2> "$t/err"
  rc=$?; case $rc in 0|5|9) ;; *) bad "verify $f: exit $rc: $(head -2 "$t/err")";; esac
done
"$SD" score --offline --json "$t/scores.json" > /dev/null 2> "$t/err" || bad "score --offline: $(head -2 "$t/err")"
render() { "$SD" report --no-db --results "$RUN" workloads/published/*.json --verify "$t"/verify/*.json \
             --scores "$t/scores.json" --format pdf,svg,md,csv "$@"; }
render --out "$t/o" --record > "$t/out" 2> "$t/err" || { bad "report: $(cat "$t/err")"; exit 1; }
pages=$(pdfinfo "$t/o/showdown.pdf" | awk '/^Pages:/ {print $2}')
echo "report: $pages pages"

# ---- page 1: what was measured, where, on what data -----------------------------------------------------------
pdftotext -f 1 -l 1 "$t/o/showdown.pdf" "$t/p1.txt"
tr '\n' ' ' < "$t/p1.txt" | tr -s ' ' > "$t/p1.flat"   # wrapped cells join again
cpu=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["environment"]["cpu_model"])' "$RUN")
has "$t/p1.flat" "$cpu, 2 cores" "page 1 names the CPU ($cpu)"
has "$t/p1.flat" "no GPU" "page 1 says there is no GPU"
has "$t/p1.flat" "Back-ends oneDNN" "page 1 names the back-end"
python3 - "$RUN" > "$t/fws" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
libs = d["environment"].get("libraries", {})
for r in d["runs"]:
    if r["implementation"] != "native" and r.get("status") == "ok":
        print(r["implementation"], libs.get(r["implementation"], "").split("+")[0])
EOF
sort -u "$t/fws" -o "$t/fws"
[ -s "$t/fws" ] && ok "the fixture has $(wc -l < "$t/fws") measured framework(s)" || bad "no framework run in $RUN"
while read -r fw ver; do has "$t/p1.flat" "$fw $ver" "page 1 names framework $fw $ver"; done < "$t/fws"
has "$t/p1.flat" "not the current release" "page 1 says Debian's PyTorch is not current"
has "$t/p1.flat" "make deps-frameworks" "page 1 says how to get the others"
has "$t/p1.flat" "Fashion-MNIST (real" "page 1 names Fashion-MNIST as real data"
has "$t/p1.flat" "cifar10_vgg: synthetic" "page 1 says cifar10_vgg ran on synthetic data"
has "$t/p1.flat" "each cut to at most 10 batches of" "page 1 gives the run length"
has "$t/p1.flat" "make report FULL=1" "page 1 says how to get the full-length run"
has "$t/p1.flat" "can check 0 of the 87 published cells" "page 1 says which published numbers this machine can check"
has "$t/p1.flat" "Frameworks ranked 1. pytorch" "page 1 ranks each framework by its time over native"
# the ranking follows the lower bounds, so each score shows its range: a higher midpoint ranked lower is explained
python3 - "$t/p1.flat" <<'EOF' && ok "page 1 gives each ranked score its range, lower bounds in rank order" || bad "page 1's score ranking"
import re, sys
r = re.findall(r"(\d+)\. ([A-Za-z]+) ([\d.]+) \((\d+)–(\d+)\)", open(sys.argv[1]).read())
print(r)
lows = [int(x[3]) for x in r]
sys.exit(0 if len(r) >= 3 and lows == sorted(lows, reverse=True) and all(int(a) <= float(m) <= int(b) + 0.5 for _, _, m, a, b in r) else 1)
EOF
# commands are set as code: the backticks of the template's `code` spans are not drawn, the monospace face is used
if grep -q '`' "$t/p1.txt"; then bad "page 1 shows literal backticks: $(grep -m1 '`' "$t/p1.txt")"
else ok "page 1 draws no literal backtick"; fi
pdffonts -l 1 "$t/o/showdown.pdf" | grep -q 'Mono' && ok "page 1 sets commands in a monospace face" \
  || bad "page 1 uses no monospace face: $(pdffonts -l 1 "$t/o/showdown.pdf" | tail -n +3 | awk '{print $1}' | paste -sd' ')"

# ---- the framework-vs-native table ------------------------------------------------------------------------------
pdftotext -layout "$t/o/showdown.pdf" "$t/all.txt"
has "$t/all.txt" "Frameworks against the native floor: training throughput" "framework-vs-native table in the PDF"
csv="$t/o/tables/frameworks-table.csv"
if [ -f "$csv" ]; then
  python3 - "$csv" "$t/fws" <<'EOF' && ok "frameworks-table.csv: native row at 1.00x, each framework with images/s and its ratio" || fail=1
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
fws = [l.split()[0] for l in open(sys.argv[2])]
body = {r[0].split()[0]: r for r in rows[1:]}
assert rows[1][0].startswith("native · oneDNN"), rows[1]
for c in range(2, len(rows[0]) - 1, 2):
    assert float(rows[1][c]) == 1.0, ("native is the floor", rows[0][c], rows[1][c])
for fw in fws:
    r = body[fw]
    for c in range(1, len(rows[0]) - 1, 2):
        ips, ratio = float(r[c]), float(r[c + 1])
        want = float(rows[1][c]) / ips
        assert ips > 0 and abs(ratio - want) < 1e-6 * want, (fw, rows[0][c], ips, ratio, want)
    assert r[-1].startswith("passed"), (fw, "same-model check", r[-1])
EOF
else bad "no $csv"; fi

# ---- no table text below 7 pt; a long table continues with its header ------------------------------------------
# pdftotext word boxes are the font's ascent + descent: 1.164 em for DejaVu Sans, so 7 pt is 8.15 high. A word
# belongs to the table or figure whose title ("Table N." / "Figure N.") last preceded it.
cat > "$t/sizes.py" <<'EOF'
import re, sys
s = open(sys.argv[1]).read()
words = []
for p, page in enumerate(s.split("<page ")[1:]):
    for m in re.finditer(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>', page):
        words.append((p, float(m.group(2)), float(m.group(1)), float(m.group(4)) - float(m.group(2)), m.group(5)))
words.sort()
owner, small, n, heads = None, [], 0, {}
for i, (p, y, x, h, w) in enumerate(words):
    nxt = words[i + 1] if i + 1 < len(words) else None
    if w in ("Table", "Figure") and nxt and nxt[0] == p and abs(nxt[1] - y) < 1 and re.fullmatch(r"\d+\.", nxt[4]):
        owner = w + " " + nxt[4]
    if y < 50 or y > 780:   # running header and footer
        continue
    if owner and owner.startswith("Table"):
        n += 1
        if h < 7 * 1.164 - 0.05:
            small.append((p + 1, owner, w, round(h / 1.164, 1)))
        if w == sys.argv[2]:
            heads.setdefault(owner, set()).add(p + 1)
print(n, len(small), max((len(v) for v in heads.values()), default=0))
for x in small[:10]:
    print("  page %d, %s: '%s' at %.1f pt" % x, file=sys.stderr)
EOF
pdftotext -bbox-layout "$t/o/showdown.pdf" "$t/bb.html"
read -r nwords nsmall _ < <(python3 "$t/sizes.py" "$t/bb.html" Implementation 2> "$t/small")
if [ "${nwords:-0}" -gt 500 ] && [ "${nsmall:-1}" -eq 0 ]; then ok "$nwords words in tables, none below 7 pt"
else bad "$nwords table words, $nsmall below 7 pt:"; cat "$t/small"; fi
# a results file with 90 more environment keys: its environment table runs over pages, at full size
python3 - "$RUN" > "$t/long.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for i in range(90):
    d["environment"]["key_%03d" % i] = "value %d" % i
print(json.dumps(d))
EOF
"$SD" report --no-db --results "$t/long.json" --out "$t/l" --format pdf > /dev/null 2> "$t/err" || bad "long report: $(cat "$t/err")"
pdftotext -bbox-layout "$t/l/showdown.pdf" "$t/lbb.html"
read -r nwords nsmall npages < <(python3 "$t/sizes.py" "$t/lbb.html" Key 2> "$t/small")
if [ "${nsmall:-1}" -eq 0 ] && [ "${npages:-0}" -ge 2 ]; then ok "a 100-row table spans $npages pages, header on each, none below 7 pt ($nwords words)"
else bad "long table: $nsmall words below 7 pt, header on $npages page(s)"; cat "$t/small"; fi
pdftotext "$t/l/showdown.pdf" "$t/l.txt"
has "$t/l.txt" "Environment of each results file (continued)" "the continuation is titled as such"
# its first part fills the rest of the page its section starts on (heading and paragraph), not a fresh page
first=$(for p in $(seq 1 "$(pdfinfo "$t/l/showdown.pdf" | awk '/^Pages:/ {print $2}')"); do
          pdftotext -f "$p" -l "$p" "$t/l/showdown.pdf" - | grep -q "Environment of each results file$" && { echo "$p"; break; }; done)
pdftotext -f "${first:-1}" -l "${first:-1}" "$t/l/showdown.pdf" - | grep -q "^Methodology and environment" \
  && ok "a long table starts under its section's heading (page $first), continued after" \
  || bad "the long table's first part (page ${first:-none}) is not on its section's first page"
grep -q "key_000" "$t/l.txt" && grep -q "key_089" "$t/l.txt" && ok "the first and last rows are drawn" || bad "key_000 or key_089 missing from the PDF"

# ---- the recorded inputs render again, byte for byte ------------------------------------------------------------
has "$t/out" "inputs recorded in $t/o/report-runs/1/" "the inputs are recorded"
cp -r "$t/o" "$t/first"
"$SD" report --out "$t/o" > "$t/out2" 2> "$t/err" || bad "report with no arguments: $(cat "$t/err")"
has "$t/out2" "recorded report 1" "no arguments: the last recorded report"
if diff -r -x report-runs "$t/first" "$t/o" > "$t/diff"; then ok "re-render byte-identical ($(find "$t/o" -type f -not -path '*report-runs*' | wc -l) files)"
else bad "re-render differs:"; head "$t/diff"; fi
render --out "$t/o" --record --template brief > /dev/null 2> "$t/err" || bad "second recorded report: $(cat "$t/err")"
"$SD" report --out "$t/o" --run 1 > /dev/null 2> "$t/err" || bad "--run 1: $(cat "$t/err")"
diff -r -x report-runs "$t/first" "$t/o" > /dev/null && ok "--run 1 renders the first again after a second was recorded" \
  || bad "--run 1 differs from the first render"
"$SD" report --out "$t/o" --run 7 > /dev/null 2> "$t/err"; rc=$?
[ $rc -eq 2 ] && grep -q "no recorded report" "$t/err" && ok "--run of an unknown report: exit 2, says so" \
  || bad "--run 7: exit $rc: $(cat "$t/err")"

# ---- the showdown on pages 1-2: every framework measured and every workload -----------------------------------
# A results file as the default `make report` writes it with all ten frameworks installed: every workload of
# workloads/*.json on native and each framework (one cell unsupported). Pages 1-2 must name every framework that
# ran and every workload; the check is shown to fail on the same text with one framework and one workload dropped.
# REPORT_PDF=out/showdown.pdf REPORT_RESULTS=out/bench/report-bench.json: the same check on a real report.
cat > "$t/p12.py" <<'EOF'
import json, re, sys
text, results = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
flat = re.sub(r"\s+", " ", text)
def named(name):
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), flat) is not None
fws = sorted({r["implementation"] for r in results["runs"] if r["implementation"] != "native" and r.get("status") == "ok"})
wls = sorted({r["workload"] for r in results["runs"]})
missing = [f for f in fws if not named(f)] + [w for w in wls if not named(w)]
print("%d frameworks, %d workloads; missing from pages 1-2: %s" % (len(fws), len(wls), ", ".join(missing) or "none"))
sys.exit(1 if missing or not fws else 0)
EOF
python3 - "$RUN" workloads > "$t/all10.json" <<'EOF'
import copy, glob, json, os, sys
d = json.load(open(sys.argv[1]))
nat = next(r for r in d["runs"] if r["workload"] == "mnist_cnn" and r["implementation"] == "native")
fwr = next(r for r in d["runs"] if r["workload"] == "mnist_cnn" and r["implementation"] == "pytorch")
fws = ["pytorch", "tensorflow", "keras-tensorflow", "keras-jax", "keras-torch", "jax", "paddle", "mindspore",
       "tinygrad", "chainer"]
runs = []
for w in sorted(os.path.basename(p)[:-5] for p in glob.glob(sys.argv[2] + "/*.json")):
    for impl in ["native"] + fws:
        if (w, impl) == ("imdb_gru", "mindspore"):
            runs.append({"workload": w, "implementation": impl, "backend": "cpu", "status": "unsupported",
                         "error": "unsupported: gru"})
            continue
        r = copy.deepcopy(nat if impl == "native" else fwr)
        r["workload"], r["implementation"] = w, impl
        runs.append(r)
for i, f in enumerate(fws):
    d["environment"]["libraries"][f] = "1.%d.0" % i
d["runs"] = runs
print(json.dumps(d))
EOF
if "$SD" report --no-db --results "$t/all10.json" --out "$t/a10" --format pdf > /dev/null 2> "$t/err"; then
  pdftotext -f 1 -l 2 "$t/a10/showdown.pdf" "$t/a10.txt"
  python3 "$t/p12.py" "$t/a10.txt" "$t/all10.json" > "$t/p12" && ok "pages 1-2: $(cat "$t/p12")" || bad "pages 1-2: $(cat "$t/p12")"
  # the check itself fails when a framework or a workload is dropped from the pages
  sed 's/tinygrad//g' "$t/a10.txt" > "$t/drop1.txt"
  sed 's/resnet18_cifar//g' "$t/a10.txt" > "$t/drop2.txt"
  if ! python3 "$t/p12.py" "$t/drop1.txt" "$t/all10.json" > /dev/null && ! python3 "$t/p12.py" "$t/drop2.txt" "$t/all10.json" > /dev/null
  then ok "the pages 1-2 check fails when tinygrad or resnet18_cifar is dropped"
  else bad "the pages 1-2 check passes with a framework or workload dropped"; fi
else
  bad "report of ten frameworks x every workload: $(head -3 "$t/err")"
fi
# what the best-setting pass did not try (scripts/report_best.py records it) is said under the per-phase tables
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d["environment"]["best_not_tried"] = "densenet121_xray (the quick pass leaves it to FULL=1)"
json.dump(d, open(sys.argv[2], "w"))' "$t/all10.json" "$t/untried.json"
if "$SD" report --no-db --results "$t/untried.json" --out "$t/u" --format md > /dev/null 2> "$t/err"; then
  n=$(grep -c "Best settings not tried: densenet121_xray (the quick pass leaves it to FULL=1)\." "$t/u/showdown.md")
  [ "$n" = 2 ] && ok "the training and inference tables say which best settings were not tried" \
    || bad "best_not_tried said $n times (expected 2: training and inference tables)"
else bad "report with best_not_tried: $(head -3 "$t/err")"; fi
if [ -n "${REPORT_PDF:-}" ]; then
  pdftotext -f 1 -l 2 "$REPORT_PDF" "$t/real.txt"
  python3 "$t/p12.py" "$t/real.txt" "${REPORT_RESULTS:-out/bench/report-bench.json}" > "$t/p12r" \
    && ok "$REPORT_PDF pages 1-2: $(cat "$t/p12r")" || bad "$REPORT_PDF pages 1-2: $(cat "$t/p12r")"
fi
exit $fail
