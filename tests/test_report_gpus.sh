#!/bin/bash
# test_report_gpus — the benchmark tables group runs by device type and GPU count as the published multi-GPU
# tables do ("1×V100 | 4×V100"): measured cuDNN runs by their device and settings.gpus, published runs by
# their "gpus", CPU runs stay "CPU"; runs merged from a Slurm matrix over device types share one table.
set -u
SD=$(realpath "${SHOWDOWN:-./showdown}")
cd "$(dirname "$0")/.."
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
run() { # workload backend device gpus first steady
  printf '{"workload": "%s", "implementation": "native", "backend": "%s", "device": "%s", "status": "ok",
    "settings": {"batch": 64, "gpus": %s},
    "samples": [{"repeat": 1, "epochs": [{"epoch": 1, "train_s": %s, "accuracy": 0.9}, {"epoch": 2, "train_s": %s, "accuracy": 0.95}]}],
    "summary": {"first_epoch_s": {"median": %s, "min": %s, "max": %s, "n": 1},
                "steady_epoch_s": {"median": %s, "min": %s, "max": %s, "n": 1}}}' "$1" "$2" "$3" "$4" "$5" "$6" "$5" "$5" "$5" "$6" "$6" "$6"
}
{
  echo '{"schema": "showdown-results/1", "created": "2026-11-20T10:00:00Z",'
  echo ' "tool": {"name": "showdown", "version": "0.1.0", "commit": "abc", "dirty": false},'
  echo ' "environment": {"cpu_model": "Xeon", "gpu": {"count": 4, "name": "Tesla V100-SXM2-16GB"}}, "runs": ['
  run mnist_cnn cudnn "Tesla V100-SXM2-16GB (cc 7.0, 16 GB)" 1 9.5 8; echo ,
  run mnist_cnn cudnn "Tesla V100-SXM2-16GB (cc 7.0, 16 GB)" 4 3.5 2.25; echo ,
  run mnist_cnn cudnn "NVIDIA A100-SXM4-40GB (cc 8.0, 40 GB)" 1 4.5 3.75; echo ,
  run mnist_cnn dnnl "CPU (oneDNN 2.7, 2 threads)" 1 95.5 90
  echo ']}'
} > "$t/r.json"
cat > "$t/p.json" <<'EOF'
{"schema": "showdown-results/1", "published": {"source": "a 2018 publication, table 2", "date": "2018-03-01"},
 "runs": [{"workload": "mnist_cnn", "implementation": "Keras (TF)", "device": "V100", "gpus": 1, "summary": {"total_s": {"median": 300}}},
          {"workload": "mnist_cnn", "implementation": "Keras (TF)", "device": "V100", "gpus": 4, "summary": {"total_s": {"median": 100}}},
          {"workload": "mnist_cnn", "implementation": "Keras (TF)", "device": "K80", "summary": {"total_s": {"median": 900}}}]}
EOF
"$SD" report --no-db --results "$t/r.json" "$t/p.json" --out "$t/o" --format md,csv >"$t/out" 2>&1 || { cat "$t/out"; exit 1; }
hdr=$(grep -m1 '^| Implementation | measured' "$t/o/showdown.md")
echo "table header: $hdr"
for want in "measured here: 1×V100 (s/full epoch) | measured here: 4×V100 (s/full epoch) | measured here: 1×A100 (s/full epoch) | measured here: CPU (s/full epoch)" \
            "published: 1×V100 · 2018  (s) | published: 4×V100 · 2018  (s) | published: K80 · 2018  (s)"; do
  case "$hdr" in *"$want"*) echo "ok: columns $want" ;; *) echo "FAIL: no columns '$want'"; fail=1 ;; esac
done
grep -q 'native · cuDNN on 4×V100 | \*\*3.5\*\*' "$t/o/showdown.md" && echo "ok: 4×V100 is the fastest first epoch" \
  || { echo "FAIL: first/steady row for 4×V100"; grep -n '4×V100' "$t/o/showdown.md"; fail=1; }
grep -q '4×V100' "$t/o/tables/bench-mnist-cnn-table.csv" && echo "ok: CSV carries the GPU-count columns" \
  || { echo "FAIL: CSV"; head -3 "$t/o/tables/bench-mnist-cnn-table.csv"; fail=1; }
# the published DenseNet-121 table (1 and 4 V100): its columns read as the publication's
if [ -f workloads/published/dlf_densenet121_xray.json ]; then
  "$SD" report --no-db --results workloads/published/dlf_densenet121_xray.json --out "$t/d" --format md >"$t/out" 2>&1 \
    || { cat "$t/out"; exit 1; }
  hdr=$(grep -m1 '^| Implementation | published' "$t/d/showdown.md")
  case "$hdr" in
    *"published: per epoch (total ÷ 5): 1×V100 · 2018 · real  (s/epoch) | published: per epoch (total ÷ 5): 4×V100 · 2018 · real  (s/epoch)"*) echo "ok: DenseNet columns 1×V100 | 4×V100, per epoch" ;;
    *) echo "FAIL: DenseNet columns: $hdr"; fail=1 ;;
  esac
fi
exit $fail
