#!/bin/bash
# test_score_cmd — `showdown score` end to end: --offline prints every framework of scoring/ with ranges,
# coverage and the snapshot's date, and no archived or inactive framework above an active one with measured
# activity; --json writes showdown-scores/1 (method v2 ranges; --method v1 the earlier table); --mirror-dir + --update-snapshot on a git mirror
# made here at fixed dates, with the GitHub/StackExchange counts from tests/replay_server.py, writes a
# snapshot whose git metrics and the resulting Activity/Ecosystem raw values match hand-computed numbers.
set -u
SHOWDOWN=${SHOWDOWN:-./showdown}
PY=${PYTHON:-python3}
T=$(mktemp -d)
SRV=""
cleanup() { [ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

nfw=$(ls scoring/frameworks/*.json | wc -l)
[ "$nfw" -ge 17 ] || fail "expected >= 17 framework files, found $nfw"

# 1. Offline: every framework, a tier each, the snapshot date stated.
"$SHOWDOWN" score --offline --json "$T/scores.json" >"$T/out.txt" 2>"$T/err.txt" || fail "score --offline: $(cat "$T/err.txt")"
date=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["date"])' scoring/snapshot.json)
grep -q "snapshot of $date" "$T/out.txt" || fail "snapshot date $date not stated"
rows=$(grep -cE '^[0-9]+ +[A-Za-z0-9]' "$T/out.txt")
[ "$rows" -eq "$nfw" ] || fail "table has $rows rows, expected $nfw"
"$PY" - "$T/scores.json" "$nfw" <<'PYEOF' || fail "scores JSON"
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2])
assert d["schema"] == "showdown-scores/1", d["schema"]
assert d["method"]["version"] == 2
assert len(d["frameworks"]) == n
for f in d["frameworks"]:
    assert f["tier"] in (1, 2, 3, 4, None), f
    r = f["overall_range"]
    assert r["lower"] <= f["overall"] <= r["upper"] and abs(f["overall"] - (r["lower"] + r["upper"]) / 2) < 1e-6, f
    cov = f["coverage"]
    assert cov["measured"] + cov["hand_entered"] + cov["missing"] == 18, cov   # 12 criteria, numerics 3 parts, activity 5
    assert set(f["categories"]) == {"support", "api", "platform"}
    for m in f["missing"]:
        assert m["why"], m
        c = m["criterion"].split(".")
        v = f["criteria"][c[0]] if len(c) == 1 else f["criteria"][c[0]]["parts"][c[1]]
        assert v["raw"] is None and v["missing"] == m["why"]
lo = [f["overall_range"]["lower"] for f in d["frameworks"]]
assert lo == sorted(lo, reverse=True), lo
# The reader's test: no archived or inactive framework above an active one whose activity was measured.
fs = d["frameworks"]
for i, a in enumerate(fs):
    if a["status"] not in ("archived", "inactive"): continue
    for b in fs[i + 1:]:
        assert not (b["status"] == "active" and b["coverage"]["measured"] > 0), (a["name"], "above", b["name"])
print("scores JSON ok:", n, "frameworks")
PYEOF

grep -q "score \[lower, upper\]" "$T/out.txt" || fail "no ranges in the table"
grep -qE '^[0-9]+ +Keras +[0-9-] +[0-9.]+ \[ *[0-9.]+, +[0-9.]+\] .* [0-9]+/[0-9]+/[0-9]+ +active' "$T/out.txt" \
    || fail "Keras row without range, coverage and derived status: $(grep Keras "$T/out.txt" | head -1)"
# --method v1 keeps the earlier method: every category a mean of the criteria with data, sorted by overall.
"$SHOWDOWN" score --offline --method v1 --json "$T/v1.json" >/dev/null 2>"$T/err.txt" || fail "--method v1: $(cat "$T/err.txt")"
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); ov=[f["overall"] for f in d["frameworks"]]
assert d["method"]["version"] == 1 and ov == sorted(ov, reverse=True) and "overall_range" not in d["frameworks"][0]' "$T/v1.json" \
    || fail "--method v1 JSON"
"$SHOWDOWN" score --offline --method v3 >/dev/null 2>"$T/err.txt"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--method expects v1 or v2, got 'v3'" "$T/err.txt" || fail "--method v3: exit $rc, $(cat "$T/err.txt")"

# The scoring pages of the report: how to read, a glossary of every criterion, ranges and coverage in the
# table, the overall bar drawn with its range; from v1 scores (no ranges) no bar repeating the table's column.
"$SHOWDOWN" report --scores "$T/scores.json" --no-db --out "$T/rep" --format svg,md >/dev/null 2>"$T/err.txt" \
    || fail "report from v2 scores: $(cat "$T/err.txt")"
for want in "How to read these scores" "Sponsor: who funds" "Activity: maintenance" "ONNX: exchange of models" \
            "| Range (0–100) |" "| Coverage (meas./hand/miss.) |" "(figures/podium-chart.svg)"; do
    grep -qF "$want" "$T/rep/showdown.md" || fail "report lacks '$want'"
done
grep -qE '^\| Keras \| .*\| [0-9]+/[0-9]+/[0-9]+ \|$' "$T/rep/showdown.md" || fail "no coverage in Keras's row"
"$SHOWDOWN" report --scores "$T/v1.json" --no-db --out "$T/rep1" --format svg,md >/dev/null 2>"$T/err.txt" \
    || fail "report from v1 scores: $(cat "$T/err.txt")"
! grep -q "podium-chart" "$T/rep1/showdown.md" || fail "v1 report still has the bar repeating the overall column"
grep -q "How to read these scores" "$T/rep1/showdown.md" && fail "v1 report claims ranges"

# 2. Bad data is a positioned input error (exit 3).
cp -r scoring "$T/sc"
sed -i 's/"in_2018": true/"in_2018": true, "bogus": 1/' "$T/sc/frameworks/caffe.json"
"$SHOWDOWN" score --offline --scoring-dir "$T/sc" >/dev/null 2>"$T/err.txt"; rc=$?
[ $rc -eq 3 ] || fail "bad framework file: exit $rc, expected 3"
grep -qE 'caffe.json:[0-9]+:[0-9]+: unknown key .bogus.' "$T/err.txt" || fail "message: $(cat "$T/err.txt")"
cp scoring/frameworks/caffe.json "$T/sc/frameworks/caffe.json"

# 3. Mirrors + replayed network -> snapshot with exact numbers.
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_COMMITTER_NAME=CI GIT_COMMITTER_EMAIL=ci@x.org
R="$T/src"; mkdir -p "$R" "$T/mirrors"
git -C "$R" init -q -b main .
c() { GIT_AUTHOR_NAME=$1 GIT_AUTHOR_EMAIL=$2 GIT_AUTHOR_DATE=$3 GIT_COMMITTER_DATE=$3 git -C "$R" commit -q --allow-empty -m "$4"; }
c A a@x.org 2024-03-01T12:00:00+0000 "start"
c B b@x.org 2024-03-10T12:00:00+0000 "Feature (#5)"
c a A@X.ORG 2024-03-20T12:00:00+0000 "Fix (#6)"
git -C "$R" tag v1.0 HEAD~1
git clone -q --mirror "$R" "$T/mirrors/pytorch+pytorch.git" || fail "git clone --mirror"
git clone -q --mirror "$R" "$T/mirrors/eigen.git" || fail "git clone --mirror"

"$PY" tests/replay_server.py --port-file "$T/port" --se-backoff 0 & SRV=$!
for i in $(seq 1 500); do [ -s "$T/port" ] && break; sleep 0.02; done
[ -s "$T/port" ] || fail "replay server did not start"
BASE="http://127.0.0.1:$(cat "$T/port")"

run() { "$SHOWDOWN" score --scoring-dir "$T/sc" --snapshot "$T/snap.json" --cache-dir "$T/cache" --mirror-dir "$T/mirrors" \
        --api-base "$BASE" --se-api-base "$BASE" --timeout 5 --quiet --update-snapshot --json "$T/s.json" "$@" 2>"$T/err.txt" \
        || fail "score --mirror-dir: $(cat "$T/err.txt")"; }
run --method v1
"$PY" - "$T/snap.json" "$T/s.json" <<'PYEOF' || fail "snapshot from mirrors (default as-of)"
import json, sys, math
s = json.load(open(sys.argv[1])); sc = json.load(open(sys.argv[2]))
# newest HEAD commit 2024-03-20T12:00Z -> as of the end of that day
assert s["as_of"] == "2024-03-21T00:00:00Z", s["as_of"]
g = s["git"]["github.com/pytorch/pytorch"]
want = {"commits_total": 3, "commits_30": 3, "commits_90": 3, "prs_merged_30": 2, "authors_90": 2,
        "last_commit": "2024-03-20T12:00:00Z", "mirror": "pytorch+pytorch.git"}
for k, v in want.items():
    assert g[k] == v, (k, g[k], v)
# TensorFlow has no mirror: its figures come from GitHub's statistics (the replay server's fixture).
assert s["git"]["github.com/tensorflow/tensorflow"]["source"] == "github-stats", s["git"]["github.com/tensorflow/tensorflow"]
assert "gitlab.com/libeigen/eigen" in s["git"] and "missing" not in s["git"]["gitlab.com/libeigen/eigen"]
assert s["stackoverflow_questions"]["pytorch"]["value"] == 1007
assert s["github_repo_counts"]["pytorch"]["value"] == 500
pt = [f for f in sc["frameworks"] if f["id"] == "pytorch"][0]
# 12 h since the last commit < 1 week -> 1/1 + 2 PRs
assert abs(pt["criteria"]["activity"]["raw"] - 3.0) < 1e-9, pt["criteria"]["activity"]
eco = math.log10(501) + math.log10(1008)
assert abs(pt["criteria"]["ecosystem"]["raw"] - eco) < 1e-9, pt["criteria"]["ecosystem"]
assert "activity" not in [m["criterion"] for m in pt["missing"]]
print("mirror snapshot ok")
PYEOF
run --as-of 2024-03-31 --method v1
"$PY" - "$T/s.json" <<'PYEOF' || fail "as-of 2024-03-31"
import json, sys
sc = json.load(open(sys.argv[1]))
assert sc["as_of"] == "2024-04-01T00:00:00Z", sc["as_of"]
pt = [f for f in sc["frameworks"] if f["id"] == "pytorch"][0]
# 11.5 days since the last commit -> 1/(11.5/7) + 2 PRs (window from 2024-03-02)
want = 7 / 11.5 + 2
assert abs(pt["criteria"]["activity"]["raw"] - want) < 1e-9, (pt["criteria"]["activity"], want)
tf = [f for f in sc["frameworks"] if f["id"] == "tensorflow"][0]
# TensorFlow has no mirror; its numerics repository (Eigen) does.
assert tf["criteria"]["activity"]["raw"] is None
assert tf["criteria"]["numerics"]["parts"]["activity"]["raw"] is not None
print("as-of ok")
PYEOF
# Method v2 on the same mirror as of 2024-03-21: commits 0.5, 10.5 and 19.5 days back -> weeks 0, 1, 2 of 13
# (23.08); authors a and b (10 of 20); 365 days: a 2 of 3 commits -> bus factor 1 (20); tag v1.0 on the
# 03-10 commit: 1 release (25), 10.5 days old -> 100 (1 - 10.5/365). Status: 3 weeks < 7 -> maintenance.
run
"$PY" - "$T/snap.json" "$T/s.json" <<'PYEOF' || fail "method v2 from mirrors"
import json, sys
s = json.load(open(sys.argv[1])); sc = json.load(open(sys.argv[2]))
g = s["git"]["github.com/pytorch/pytorch"]
want = {"weeks_active_13": 3, "commits_365": 3, "bus_factor_365": 1, "releases_365": 1,
        "last_release": "2024-03-10T12:00:00Z", "newest_commit": "2024-03-20T12:00:00Z"}
for k, v in want.items():
    assert g[k] == v, (k, g[k], v)
pt = [f for f in sc["frameworks"] if f["id"] == "pytorch"][0]
parts = pt["criteria"]["activity"]["parts"]
norms = {k: v["normalised"] for k, v in parts.items()}
want = {"weeks_active": 300 / 13, "contributors": 10, "bus_factor": 20, "releases": 25, "release_age": 100 * (1 - 10.5 / 365)}
for k, v in want.items():
    assert abs(norms[k] - v) < 1e-6, (k, norms[k], v)
assert abs(pt["criteria"]["activity"]["normalised"] - sum(want.values()) / 5) < 1e-6
assert pt["status"] == "maintenance", pt["status"]
# Eigen is shared: TensorFlow's numerics activity is read from TensorFlow's own repository (no mirror here).
tf = [f for f in sc["frameworks"] if f["id"] == "tensorflow"][0]
na = tf["criteria"]["numerics"]["parts"]["activity"]
# No mirror of TensorFlow: GitHub statistics (tests/fixtures/github-stats) as of 2024-03-21: one week of
# 13 with commits (2024-01-07, 10), bob (2023-12-31) and carol (03-03) in 90 days, bob 50 of 54 commits
# -> bus factor 1; no release tags there, so those two parts are missing; numerics reads the same figures.
g = s["git"]["github.com/tensorflow/tensorflow"]
want = {"source": "github-stats", "weeks_active_13": 1, "commits_365": 10, "authors_90": 2, "bus_factor_365": 1}
for k, v in want.items():
    assert g[k] == v, (k, g[k], v)
tp = tf["criteria"]["activity"]["parts"]
assert abs(tp["weeks_active"]["normalised"] - 100 / 13) < 1e-6 and abs(tp["bus_factor"]["normalised"] - 20) < 1e-6, tp
assert "no release tags" in tp["releases"]["missing"] and "no release tags" in tp["release_age"]["missing"], tp
assert "GitHub statistics fetched" in tp["weeks_active"]["from"], tp
assert abs(na["normalised"] - 100 / 13) < 1e-6 and "framework's own repository" in na["from"], na
assert tf["status"] == "maintenance", (tf["status"], tf["status_why"])
print("method v2 ok")
PYEOF
# 4. Offline with the written snapshot states its date and as-of.
"$SHOWDOWN" score --offline --scoring-dir "$T/sc" --snapshot "$T/snap.json" >"$T/out2.txt" || fail "offline on new snapshot"
grep -q "as of 2024-03-21T00:00:00Z" "$T/out2.txt" || fail "as-of not stated: $(head -2 "$T/out2.txt")"
echo "all score command checks passed"
