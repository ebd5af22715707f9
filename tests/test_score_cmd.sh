#!/bin/bash
# test_score_cmd — `showdown score` end to end: --offline prints every framework of scoring/ with tiers and
# the snapshot's date; --json writes showdown-scores/1; --mirror-dir + --update-snapshot on a git mirror
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
assert len(d["frameworks"]) == n
for f in d["frameworks"]:
    assert f["tier"] in (1, 2, 3, 4), f
    assert set(f["categories"]) == {"support", "api", "platform"}
    for m in f["missing"]:
        assert m["why"], m
        c = m["criterion"].split(".")
        v = f["criteria"][c[0]] if len(c) == 1 else f["criteria"][c[0]]["parts"][c[1]]
        assert v["raw"] is None and v["missing"] == m["why"]
ov = [f["overall"] for f in d["frameworks"]]
assert ov == sorted(ov, reverse=True)
print("scores JSON ok:", n, "frameworks")
PYEOF

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
git clone -q --mirror "$R" "$T/mirrors/pytorch+pytorch.git" || fail "git clone --mirror"
git clone -q --mirror "$R" "$T/mirrors/eigen.git" || fail "git clone --mirror"

"$PY" tests/replay_server.py --port-file "$T/port" --se-backoff 0 & SRV=$!
for i in $(seq 1 500); do [ -s "$T/port" ] && break; sleep 0.02; done
[ -s "$T/port" ] || fail "replay server did not start"
BASE="http://127.0.0.1:$(cat "$T/port")"

run() { "$SHOWDOWN" score --scoring-dir "$T/sc" --snapshot "$T/snap.json" --cache-dir "$T/cache" --mirror-dir "$T/mirrors" \
        --api-base "$BASE" --se-api-base "$BASE" --timeout 5 --quiet --update-snapshot --json "$T/s.json" "$@" 2>"$T/err.txt" \
        || fail "score --mirror-dir: $(cat "$T/err.txt")"; }
run
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
assert "missing" in s["git"]["github.com/tensorflow/tensorflow"]
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
run --as-of 2024-03-31
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
# 4. Offline with the written snapshot states its date and as-of.
"$SHOWDOWN" score --offline --scoring-dir "$T/sc" --snapshot "$T/snap.json" >"$T/out2.txt" || fail "offline on new snapshot"
grep -q "as of 2024-04-01T00:00:00Z" "$T/out2.txt" || fail "as-of not stated: $(head -2 "$T/out2.txt")"
echo "all score command checks passed"
