#!/bin/sh
# bf16-convergence — does bf16 train as well as fp32, and is it faster to a target? mnist_mlp and mnist_cnn on
# Fashion-MNIST (the default data of the mnist workloads) for EPOCHS epochs at each seed, fp32 and bf16, on the
# native engine (dnnl) and any framework in IMPLS. Prints per workload and implementation: each seed's final
# accuracy in both precisions, the means and their difference (the check: within 0.5 point), and time to
# accuracy: the epochs and training seconds (validation excluded) until the validation accuracy first reaches the
# workload's expected.target_accuracy, with the bf16 / fp32 speed ratio of the median epoch. A benchmark, not a
# test: run it on a quiet machine (a busy one slows oneDNN's OpenMP threads unevenly).
# Usage: scripts/bf16-convergence.sh [SHOWDOWN]
#   EPOCHS=3 SEEDS="1 2 3" WORKLOADS="mnist_mlp mnist_cnn" IMPLS="native" BATCHES= (cap per epoch, smoke runs)
#   OUT=DIR keeps the results documents (default: a temporary directory). Exit 1 if a mean differs by > 0.5 point.
set -eu
SD=${1:-./showdown}
EPOCHS=${EPOCHS:-3}
SEEDS=${SEEDS:-1 2 3}
WORKLOADS=${WORKLOADS:-mnist_mlp mnist_cnn}
IMPLS=${IMPLS:-native}
BATCHES=${BATCHES:-}
PY=${PYTHON:-/usr/bin/python3}
WDIR=${WORKLOAD_DIR:-workloads}
if [ -n "${OUT:-}" ]; then t=$OUT; mkdir -p "$t"; else t=$(mktemp -d); trap 'rm -rf "$t"' EXIT; fi
cap=""
[ -n "$BATCHES" ] && cap="--batches $BATCHES"
for w in $WORKLOADS; do
  for impl in $IMPLS; do
    for s in $SEEDS; do
      for p in fp32 bf16; do
        f="$t/$w-$impl-$p-$s.json"
        # shellcheck disable=SC2086  # cap is empty or two words
        "$SD" bench --workload "$w" --impl "$impl" --backend dnnl --data real --epochs "$EPOCHS" --seed "$s" \
              --precision "$p" $cap --no-db --quiet --json "$f" > /dev/null
      done
      echo "$w $impl seed $s done" >&2
    done
  done
done
"$PY" - "$t" "$WDIR" "$EPOCHS" "$WORKLOADS" "$IMPLS" "$SEEDS" <<'PY'
import json, statistics, sys
t, wdir, epochs = sys.argv[1], sys.argv[2], int(sys.argv[3])
workloads, impls, seeds = sys.argv[4].split(), sys.argv[5].split(), [int(s) for s in sys.argv[6].split()]
ok = True

def run_of(w, impl, p, s):
    doc = json.load(open(f"{t}/{w}-{impl}-{p}-{s}.json"))
    runs = doc.get("runs") or []
    if not runs:
        sys.exit(f"{w} {impl} {p} seed {s}: no run in the results ({doc.get('failures')})")
    r = runs[0]
    got = r.get("settings", {}).get("precision")
    if got != p:
        sys.exit(f"{w} {impl} seed {s}: asked for {p}, the results record precision {got}")
    return r["samples"][0]["epochs"]

def to_target(eps, target):
    secs = 0.0
    for e in eps:
        secs += e["train_s"]
        if e["accuracy"] >= target:
            return e["epoch"], secs
    return None, None

for w in workloads:
    target = json.load(open(f"{wdir}/{w}.json")).get("expected", {}).get("target_accuracy")
    for impl in impls:
        acc, tta, ep_s = {}, {}, {}
        for p in ("fp32", "bf16"):
            for s in seeds:
                eps = run_of(w, impl, p, s)
                acc[p, s] = eps[-1]["accuracy"]
                tta[p, s] = to_target(eps, target) if target else (None, None)
                ep_s.setdefault(p, []).extend(e["train_s"] for e in eps)
        print(f"\n{w} / {impl}: final accuracy after {epochs} epoch(s)")
        print(f"{'seed':>6} {'fp32':>8} {'bf16':>8} {'diff (points)':>14}")
        for s in seeds:
            print(f"{s:>6} {acc['fp32', s]:8.4f} {acc['bf16', s]:8.4f} {100 * (acc['bf16', s] - acc['fp32', s]):+14.2f}")
        m = {p: statistics.mean(acc[p, s] for s in seeds) for p in ("fp32", "bf16")}
        d = 100 * (m["bf16"] - m["fp32"])
        within = abs(d) <= 0.5
        ok = ok and within
        print(f"{'mean':>6} {m['fp32']:8.4f} {m['bf16']:8.4f} {d:+14.2f}   within 0.5 point: {'yes' if within else 'NO'}")
        med = {p: statistics.median(ep_s[p]) for p in ("fp32", "bf16")}
        print(f"median epoch (training) fp32 {med['fp32']:.2f} s, bf16 {med['bf16']:.2f} s: "
              f"bf16 {med['fp32'] / med['bf16']:.2f}x the speed of fp32")
        if not target:
            print("time to accuracy: the workload states no expected.target_accuracy")
            continue
        print(f"time to accuracy {target:.3f} (training seconds, validation excluded):")
        for p in ("fp32", "bf16"):
            hit = [tta[p, s] for s in seeds if tta[p, s][0] is not None]
            if not hit:
                print(f"  {p}: not reached in {epochs} epoch(s) at any seed")
                continue
            print(f"  {p}: reached at {len(hit)}/{len(seeds)} seeds, median {statistics.median(h[0] for h in hit):g} "
                  f"epoch(s), {statistics.median(h[1] for h in hit):.1f} s")
sys.exit(0 if ok else 1)
PY
