#!/usr/bin/env python3
"""Write workloads/published/dlf_*.json from a git mirror of ilkarman/DeepLearningFrameworks.

The published figure of each cell is the README's. Beside it, each run carries the evidence of the
notebook the README links, at the same commit: the GPU the notebook printed, CUDA/cuDNN, the
framework version, the wall time of its longest timed cell and the last accuracy/AUC it printed; and a
"published_check" list naming where the README and its own notebook disagree (another GPU than the
column says, or a notebook time that is not the README's figure). `showdown verify` prints those.

usage: scripts/published_dlf.py GIT_DIR [COMMIT] [OUT_DIR]
  GIT_DIR: a bare or normal clone (e.g. from the search tool's fetch); nothing of it is committed.
"""
import json
import os
import re
import subprocess
import sys

SOURCE = "https://github.com/ilkarman/DeepLearningFrameworks"

# README table title -> (out file, workload, metric, unit factor, settings, data, note)
TABLES = [
    ("### 1. Training Time(s): CNN", "dlf_cifar10_vgg.json", "cifar10_vgg", "train_total_s", 1.0,
     {"batch": 64, "epochs": 10, "precision": "fp32"},
     {"kind": "real", "source": "CIFAR-10 (python version), 781 batches of 64 per epoch"},
     "seconds for 10 epochs of training as published"),
    ("**Train+Val w/ data-loader", "dlf_densenet121_xray.json", "densenet121_xray", "train_total_s", 60.0,
     {"batch": 64, "epochs": 5, "precision": "fp32"},
     {"kind": "real", "source": "ChestX-ray14, 112,120 PNGs resized to 264, random crop 224 + flip; data loader on SSD"},
     "training + validation with the data loader, published in minutes (x60 here); batch 64 per GPU"),
    ("**Train w/ synthetic-data in RAM", "dlf_densenet121_xray.json", "densenet121_xray", "train_total_s", 60.0,
     {"batch": 64, "epochs": 5, "precision": "fp32"},
     {"kind": "synthetic", "source": "synthetic data in RAM (training only)"},
     "training alone on synthetic data in RAM, published in minutes (x60 here); batch 64 per GPU"),
    ("### 3. Avg Time(s) for 1000 images", "dlf_resnet50_features.json", "resnet50_features", "infer_s_per_1000", 1.0,
     {"batch": 32, "precision": "fp32"},
     {"kind": "synthetic", "source": "fake data, 1,280 images in 40 batches of 32 after one untimed pass"},
     "seconds per 1,000 images (forward to the 2,048-d pooled features, copied to the host)"),
    ("### 4. Training Time(s): RNN (GRU)", "dlf_imdb_gru.json", "imdb_gru", "train_total_s", 1.0,
     {"batch": 64, "epochs": 3, "precision": "fp32"},
     {"kind": "real", "source": "IMDB, Keras conventions, vocabulary 30,000, 150 tokens"},
     "seconds for 3 epochs of training as published"),
]

TITLES = {
    "dlf_cifar10_vgg.json": "DeepLearningFrameworks: VGG-style CNN on CIFAR-10, training time for 10 epochs",
    "dlf_densenet121_xray.json": "DeepLearningFrameworks: DenseNet-121 on ChestX-ray14, training time on 1 and 4 V100",
    "dlf_resnet50_features.json": "DeepLearningFrameworks: ResNet-50 feature extraction, seconds per 1,000 images",
    "dlf_imdb_gru.json": "DeepLearningFrameworks: GRU on IMDB, training time for 3 epochs",
}

IMPL = {  # README row label -> (implementation id, framework name)
    "Caffe2": ("caffe2", "Caffe2"), "Chainer": ("chainer", "Chainer"), "CNTK": ("cntk", "CNTK"),
    "MXNet(Gluon)": ("gluon", "MXNet Gluon"), "MXNet(Gluon API)": ("gluon", "MXNet Gluon"),
    "Keras(CNTK)": ("keras-cntk", "Keras"), "Keras(TF)": ("keras-tensorflow", "Keras"),
    "Keras(Theano)": ("keras-theano", "Keras"), "Tensorflow": ("tensorflow", "TensorFlow"),
    "Lasagne(Theano)": ("lasagne", "Lasagne"), "MXNet(Module API)": ("mxnet", "MXNet"),
    "PyTorch": ("pytorch", "PyTorch"), "Pytorch": ("pytorch", "PyTorch"),
    "Julia - Knet": ("knet", "Knet"), "R - Keras(TF)": ("r-keras-tensorflow", "Keras (R)"),
    "R - MXNet": ("r-mxnet", "MXNet (R)"),
}

VERSION_KEYS = ["PyTorch", "Tensorflow", "TensorFlow", "Keras", "MXNet", "CNTK", "Chainer", "CuPy", "Caffe2",
                "Theano", "Lasagne", "Knet"]


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True, text=True).stdout


def column_env(header):
    """'K80/CUDA 8/CuDNN 6' or '4xV100/CUDA 9/CuDNN 7' -> (gpu name, count, cuda, cudnn)."""
    parts = [p.strip() for p in header.split("/")]
    m = re.match(r"(?:(\d+)x)?(\w+)", parts[0])
    count = int(m.group(1) or 1)
    names = {"K80": ("Tesla K80", 12884901888), "P100": ("Tesla P100-PCIE-16GB", 17179869184),
             "V100": ("Tesla V100-PCIE-16GB", 17179869184)}
    name, mem = names[m.group(2)]
    cuda = parts[1].split()[-1] if len(parts) > 1 else None
    cudnn = parts[2].split()[-1] if len(parts) > 2 else None
    return name, mem, count, cuda, cudnn


def parse_tables(readme):
    """{title prefix: (headers, [(label, notebook path or None, [cells])])}"""
    out = {}
    lines = readme.splitlines()
    for title, *_ in TABLES:
        i = next(k for k, l in enumerate(lines) if l.startswith(title))
        while not lines[i].startswith("|"):
            i += 1
        headers = [h.strip() for h in lines[i].strip().strip("|").split("|")]
        rows = []
        i += 2
        while i < len(lines) and lines[i].startswith("|"):
            cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
            m = re.match(r"\[(.*?)\]\((.*?)\)", cells[0])
            label, link = (m.group(1), m.group(2)) if m else (cells[0], None)
            rows.append((label, link, cells[1:]))
            i += 1
        out[title] = (headers[1:], rows)
    return out


def number(cell):
    m = re.match(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(min)?\s*$", cell)
    return float(m.group(1)) if m else None


def wall_seconds(text):
    """'Wall time: 1min 9s' / '51.2 s' / '212 µs' / '8min 36s' -> seconds."""
    t = 0.0
    for val, unit in re.findall(r"([0-9.]+)\s*(h|min|s|ms|µs|us|ns)\b", text):
        t += float(val) * {"h": 3600, "min": 60, "s": 1, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}[unit]
    return t


def notebook_evidence(gitdir, commit, path):
    try:
        nb = json.loads(git(gitdir, "show", f"{commit}:{path}"))
    except subprocess.CalledProcessError:
        return None
    texts = []
    cells = []
    for c in nb.get("cells", []):
        if c.get("cell_type") == "code":
            src = c.get("source", [])
            cells.append(("".join(src) if isinstance(src, list) else src,))
        for o in c.get("outputs", []):
            t = o.get("text") or o.get("data", {}).get("text/plain") or []
            texts.append("".join(t) if isinstance(t, list) else t)
    alltext = "\n".join(texts)
    ev = {"notebook": path, "commit": commit, "cells": cells}
    m = re.search(r"GPU:\s*\[?'?([^'\]\n]+)", alltext)
    if m:
        ev["gpu"] = m.group(1).strip()
    m = re.search(r"GPUs:\s*(\d+)", alltext)
    if m:
        ev["gpu_count"] = int(m.group(1))
    m = re.search(r"CUDA Version\s*([0-9.]+)", alltext)
    if m:
        ev["cuda"] = m.group(1)
    m = re.search(r"CuDNN Version\s*([0-9.]+)", alltext)
    if m:
        ev["cudnn"] = m.group(1)
    for k in VERSION_KEYS:
        m = re.search(r"^%s:\s*([0-9][^\s]*)" % re.escape(k), alltext, re.M)
        if m:
            ev.setdefault("versions", {})[k] = m.group(1)
    walls = [wall_seconds(w) for w in re.findall(r"Wall time:\s*([^\n]+)", alltext)]
    if walls:
        ev["longest_timed_cell_s"] = round(max(walls), 3)
    accs = re.findall(r"^Accuracy:\s*([0-9.]+)", alltext, re.M)
    if accs:
        ev["accuracy"] = round(float(accs[-1]), 4)
    aucs = re.findall(r"^AUC:\s*([0-9.]+)", alltext, re.M)
    if aucs:
        ev["auc"] = round(float(aucs[-1]), 4)
    return ev


def col_short(gname):
    return gname.split()[1].split("-")[0]          # "Tesla P100-PCIE-16GB" -> "P100"


def comment_times(src):
    """'# 1 GPU - Main training loop: 26min 50s' / '# 4 GPU = 8min 25s' -> {1: s, 4: s}"""
    out = {}
    for n, t in re.findall(r"#\s*(\d)\s*GPU[^:=\n]*[:=]\s*([0-9][^\n#]*)", src):
        if re.search(r"\d\s*(min|s)\b", t):
            out[int(n)] = wall_seconds(t)
    return out


def check_cell(ev, headers, header, gname, gcount, v, factor, metric, workload, kind, run):
    """Compare one README cell with its notebook; return the disagreements (or a 'not checked' reason)."""
    col = col_short(gname)
    nb_gpu = ev.get("gpu", "")
    cols = [col_short(column_env(h)[0]) for h in headers if "/" in h]
    if nb_gpu and col not in nb_gpu:
        other = [c for c in cols if c in nb_gpu]
        if other:
            return [f"not checked: the notebook at this commit is the {other[0]} run"]
        if col != cols[-1]:   # an older column: the notebook may have been rerun since; only the newest is checked
            return [f"not checked: the notebook at this commit ran on {nb_gpu}"]
        return [f"column says {col}, but the notebook ran on {nb_gpu}"]
    if not nb_gpu:
        return ["not checked: the notebook does not name its GPU"]
    checks = []
    if ev.get("versions"):
        fw = run["framework"]["name"].split()[0]
        run["framework"]["version"] = ev["versions"].get(fw) or next(iter(ev["versions"].values()))
    if workload == "densenet121_xray":
        # The training cells' comments record both runs: '# 1 GPU - Synthetic data: 25min 14s # 4 GPU - ...'
        timed = [c for c in ev["cells"] if comment_times(c[0])]
        if kind == "synthetic":
            cell = next((c for c in timed if "Synthetic" in c[0]), timed[-1] if len(timed) > 1 else None)
        else:
            cell = timed[0] if timed else None
        nb = comment_times(cell[0]).get(gcount) if cell else None
        if nb is None:
            return ["not checked: the notebook records no time for this GPU count"]
        if abs(nb / 60 - v) > 0.5 + 1e-9:
            checks.append(f"README {v:g} min, the notebook's comment {nb / 60:.1f} min")
        aucs = re.findall(r"#\s*%d GPU AUC:\s*([0-9.]+)" % gcount, "\n".join(c[0] for c in ev["cells"]))
        if aucs:
            run["summary"]["accuracy"] = stat(float(aucs[0]))
            run["summary"]["accuracy"]["what"] = "mean per-class ROC-AUC"
        return checks
    nb_s = ev.get("longest_timed_cell_s")
    pub_s = v * factor * (1.28 if metric == "infer_s_per_1000" else 1)
    # 10% plus half a unit of the README's rounding (it gives whole seconds, or tenths below 100)
    half_unit = (0.05 if v != int(v) or v < 30 else 0.5) * factor * (1.28 if metric == "infer_s_per_1000" else 1)
    if nb_s and abs(nb_s - pub_s) > 0.1 * pub_s + half_unit:
        per = " per 1,000 images" if metric == "infer_s_per_1000" else ""
        checks.append(f"README {v:g} s{per}, the notebook's timed cell {nb_s:g} s"
                      f"{' for 1,280 images' if per else ''}")
    if ev.get("accuracy") is not None:
        run["summary"]["accuracy"] = stat(ev["accuracy"])
    return checks


def stat(v):
    return {"median": v, "min": v, "max": v, "n": 1}


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) >= 2 else 2
    gitdir = sys.argv[1]
    commit = sys.argv[2] if len(sys.argv) > 2 else git(gitdir, "rev-parse", "HEAD").strip()
    outdir = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(__file__), "..", "workloads", "published")
    date = git(gitdir, "show", "-s", "--format=%cI", commit).strip()
    tables = parse_tables(git(gitdir, "show", f"{commit}:README.md"))
    docs = {}
    for title, fname, workload, metric, factor, settings, data, note in TABLES:
        headers, rows = tables[title]
        doc = docs.setdefault(fname, {
            "schema": "showdown-results/1", "created": date, "environment": {},
            "published": {"title": TITLES[fname], "source": f"{SOURCE} (README at commit {commit[:12]})",
                          "commit": commit,
                          "notes": ["Figures are the README's, one published run each (n = 1).",
                                    "Each run's 'evidence' is what the linked notebook printed at the same commit; "
                                    "'published_check' lists where the README and its notebook disagree.",
                                    "Written by scripts/published_dlf.py from a mirror of the repository."]},
            "runs": []})
        for label, link, cells in rows:
            if label not in IMPL:
                raise SystemExit(f"published_dlf: unknown row label {label!r} in table {title!r}")
            impl, fwname = IMPL[label]
            ev = notebook_evidence(gitdir, commit, link) if link and link.endswith(".ipynb") and "/." not in link else None
            for header, cell in zip(headers, cells):
                if "/" not in header:
                    continue          # e.g. "Using CuDNN?"
                v = number(cell)
                if v is None:
                    continue          # '??', 'TBA' or empty: nothing was published
                gname, gmem, gcount, cuda, cudnn = column_env(header)
                run = {
                    "workload": workload, "implementation": impl, "backend": "cudnn",
                    "device": f"{gcount}x {gname} (GPU)" if gcount > 1 else f"{gname} (GPU)",
                    "framework": {"name": fwname, "version": None},
                    "environment": {"gpu": {"name": gname, "count": gcount, "memory_bytes": gmem},
                                    "libraries": {"cuda_runtime": cuda, "cudnn": cudnn}},
                    "settings": dict(settings, gpus=gcount),
                    "data": data,
                    "summary": {metric: stat(round(v * factor, 3))},
                    "note": f"{note}; README cell '{cell}' under '{header}'",
                }
                if workload == "densenet121_xray":
                    run["settings"]["learning_rate"] = 1e-4 * gcount
                checks = []
                if ev:
                    run["evidence"] = {key: val for key, val in ev.items() if key != "cells"}
                    checks = check_cell(ev, headers, header, gname, gcount, v, factor, metric, workload,
                                        data["kind"], run)
                else:
                    checks.append("not checked: no notebook linked at this commit")
                run["published_check"] = checks
                doc["runs"].append(run)
    for fname, doc in docs.items():
        path = os.path.join(outdir, fname)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=2, sort_keys=True, ensure_ascii=False)
            f.write("\n")
        os.replace(tmp, path)
        print(f"{path}: {len(doc['runs'])} runs, "
              f"{sum(1 for r in doc['runs'] if r['published_check'] and not r['published_check'][0].startswith('not checked'))} "
              f"with a README/notebook disagreement")
    return 0


if __name__ == "__main__":
    sys.exit(main())
