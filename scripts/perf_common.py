"""perf_common — what the TensorFlow and JAX cells of `make bench-cpu` (scripts/tf_perf.py, scripts/jax_perf.py)
share: torch_perf.py's command line and JSON contract, the workload built by a framework runner of
workloads/runners from showdown's layer plan, one resident synthetic batch, denormals flushed, and the median of
timed windows. A workload the runner cannot build prints {"unsupported": reason} and exits 4 (bench_table: n/a).
Imports nothing but the standard library until flush_denormals() has run, so every thread pool created later
(numpy's OpenBLAS, TensorFlow's and XLA's Eigen pools) inherits the flushing MXCSR."""
import argparse
import ctypes
import json
import os
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNERS = os.path.join(HERE, "..", "workloads", "runners")
EXIT_UNSUPPORTED = 4   # runner_common's code for an op the framework lacks


def flush_denormals():
    """Set FTZ and DAZ in this thread's MXCSR (x86-64 glibc fenv_t: mxcsr at byte 28), as
    torch.set_flush_denormal does; threads created afterwards inherit it (pthread_create copies the floating-point
    environment). Returns whether the bits are set now."""
    try:
        libm = ctypes.CDLL("libm.so.6")
        env = ctypes.create_string_buffer(64)   # fenv_t is 32 bytes here; room to spare
        if libm.fegetenv(env) != 0:
            return False
        raw = bytearray(env.raw)
        struct.pack_into("<I", raw, 28, struct.unpack_from("<I", raw, 28)[0] | 0x8040)   # FTZ | DAZ
        if libm.fesetenv(ctypes.create_string_buffer(bytes(raw), len(raw))) != 0:
            return False
        libm.fegetenv(env)
        return struct.unpack_from("<I", env.raw, 28)[0] & 0x8040 == 0x8040
    except (OSError, AttributeError):
        return False


def parse_args(doc, settings):
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--setting", type=setting_list(settings), default=[settings[0]],
                    help="one of %s, or a comma list of them: each in turn in this process, one JSON line each "
                         "(the default report's quick figures)" % ", ".join(settings))
    ap.add_argument("--workloads", default=os.path.join(HERE, "..", "workloads"))
    ap.add_argument("--showdown", help="the showdown binary that gives the layer plan (default $SHOWDOWN, ./showdown)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--batch", type=int, default=0, help="batch size (default: the workload's)")
    ap.add_argument("--seconds", type=float, default=4.0, help="time budget of the timed training steps")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                    help="bf16: the runner's own mixed precision in training and a bf16 inference forward")
    return ap.parse_args()


def setting_list(choices):
    """An argparse type: a comma list of settings, each one of choices."""
    def parse(text):
        names = [t for t in text.split(",") if t]
        bad = [t for t in names if t not in choices]
        if bad or not names:
            raise argparse.ArgumentTypeError("%r: expected one of %s, or a comma list of them"
                                             % (text, ", ".join(choices)))
        return names
    return parse


def reset_peak_rss():
    """Start a new peak (VmHWM) at the current resident size (Linux 4.0+): each setting of a list gets its own
    peak, which includes what the settings before it left resident."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def peak_rss_mib():
    """This process's peak resident size since the last reset_peak_rss, MiB (None where /proc says nothing)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return None


def each_setting(a, run_one):
    """run_one(a) for every setting of a.setting (a list), in order, printing one JSON line each with its peak
    RSS; a setting that raises prints {"setting", "error"} and the others go on. Exit status 0, or 4 when the
    workload is unsupported (said once: no setting can build it)."""
    sys.path.insert(0, RUNNERS)
    import runner_common as rc
    settings = list(a.setting)
    for st in settings:
        a.setting = st
        reset_peak_rss()
        try:
            out = run_one(a)
        except rc.Unsupported as e:
            json.dump({"workload": a.workload, "setting": st, "unsupported": str(e)}, sys.stdout)
            sys.stdout.write("\n")
            print("unsupported: %s" % e, file=sys.stderr)
            return EXIT_UNSUPPORTED
        except Exception as e:  # noqa: BLE001 - one setting failing (a compiler) must not cost the others
            if len(settings) == 1:
                raise
            msg = (str(e).strip().splitlines() or [""])[-1][:300]
            out = {"workload": a.workload, "setting": st, "error": "%s: %s" % (type(e).__name__, msg)}
            print("setting %s failed: %s" % (st, out["error"]), file=sys.stderr)
        out["peak_rss_mib"] = peak_rss_mib()
        json.dump(out, sys.stdout)
        sys.stdout.write("\n")
        sys.stdout.flush()
    return 0


def median_time(fn, seconds, repeat):
    """Median seconds per call over `repeat` windows of k calls, k filling seconds/repeat (at least 1); fn must
    return only once its work is done. The first call (tracing, compilation) is timed apart: returns (median,
    windows, first call s)."""
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-6)
    k = max(1, min(1000, int(seconds / repeat / once)))
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(k):
            fn()
        ts.append((time.perf_counter() - t0) / k)
    ts.sort()
    return ts[len(ts) // 2], ts, first


class Cell:
    """One workload for one framework runner class: spec, plan layers, native initial weights, the spec's
    optimizer (runner_common.Optimizer: the arithmetic every runner trains with), batch size, a synthetic batch
    (NCHW numpy; token ids for an embedding model) and labels."""

    def __init__(self, a, runner_cls):
        sys.path.insert(0, RUNNERS)
        import numpy as np
        import runner_common as rc
        self.np, self.rc = np, rc
        self.spec_path = os.path.join(a.workloads, a.workload + ".json")
        with open(self.spec_path) as f:
            self.spec = spec = json.load(f)
        self.inference = "inference" in spec
        self.B = a.batch or int((spec.get("inference") or spec.get("training"))["batch"])
        self.ns = argparse.Namespace(plan=None, showdown=a.showdown, spec=self.spec_path, threads=a.threads,
                                     device="cpu", precision=getattr(a, "precision", "fp32"),
                                     cudnn_benchmark=0, seed=42)
        self.layers = rc.load_plan(self.ns, spec)
        self.loss = spec["model"].get("loss", "softmax_cross_entropy")
        if not self.inference and self.loss not in getattr(runner_cls, "LOSSES", ("softmax_cross_entropy",)):
            raise rc.Unsupported("loss " + self.loss)
        self.opt = None if self.inference else rc.Optimizer(spec["training"]["optimizer"])
        self.params = rc.init_params(self.layers, spec, 42)
        self.drops = [L for L in self.layers if L.op == "dropout" and L.rate > 0]
        shape = tuple(int(v) for v in spec["data"]["shape"])
        rng = np.random.default_rng(12345)
        emb = [L for L in self.layers if L.op == "embedding"]
        if emb:
            self.x = rng.integers(0, emb[0].vocab, (self.B,) + shape).astype(np.float32)
        else:
            self.x = rng.random((self.B,) + shape, dtype=np.float32)
        self.classes = int(spec["data"].get("classes", 0) or 1)
        self.y = (np.arange(self.B) % self.classes).astype(np.int32)

    def result(self, a, framework, version, path, flushed):
        return {"format": "showdown-%s-cell/1" % framework, "workload": a.workload, "setting": a.setting,
                "batch": self.B, "threads": a.threads, "framework": framework, "version": version, "path": path,
                "flush_denormal": flushed, "mode": "inference" if self.inference else "training",
                "precision": self.ns.precision,
                "train_images_per_s": None, "infer_images_per_s": None, "compile_s": 0.0}


def time_phases(cell, out, a, train, infer):
    """Times train() (training workloads) and infer() as torch_perf does: inference gets half the window budget
    of a training workload, all of it for an inference workload."""
    if not cell.inference:
        ts, windows, first = median_time(train, a.seconds, a.repeat)
        out["train_images_per_s"], out["train_windows_s"] = cell.B / ts, windows
        out["compile_s"] += first
    ti, windows, first = median_time(infer, a.seconds if cell.inference else a.seconds / 2, a.repeat)
    out["infer_images_per_s"], out["infer_windows_s"] = cell.B / ti, windows
    out["compile_s"] += first
    return out


def each_setting_apart(a):
    """Each setting of a.setting in a process of its own (this script again with that one setting), its lines passed
    on: for a framework whose settings fix process-wide state on first use (MindSpore: oneDNN's ISA cap, the
    operator thread count). Exit status as each_setting's."""
    import subprocess
    argv, i = [], 1
    while i < len(sys.argv):
        if sys.argv[i] == "--setting":
            i += 2
            continue
        if not sys.argv[i].startswith("--setting="):
            argv.append(sys.argv[i])
        i += 1
    # the caller's time limit for the whole cell (bench_table sets it), shared by the settings: one that cannot finish
    # in its share (MindSpore's PyNative on a large CNN) leaves the others theirs
    limit = float(os.environ.get("SHOWDOWN_CELL_LIMIT_S") or 0)
    share = max(5.0, (limit - 10) / len(a.setting)) if limit > 0 else None
    for st in a.setting:
        try:
            r = subprocess.run([sys.executable, sys.argv[0]] + argv + ["--setting", st], stdout=subprocess.PIPE,
                               universal_newlines=True, timeout=share)
        except subprocess.TimeoutExpired:
            line = json.dumps({"workload": a.workload, "setting": st,
                               "error": "timed out after %.0f s (its share of the cell's %.0f s)" % (share, limit)})
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
            continue
        line = next((ln for ln in r.stdout.splitlines() if ln.startswith("{")), None)
        if r.returncode == EXIT_UNSUPPORTED:
            sys.stdout.write(r.stdout)
            return EXIT_UNSUPPORTED
        if r.returncode != 0 or line is None:   # its traceback went to stderr
            line = json.dumps({"workload": a.workload, "setting": st,
                               "error": "its process exited %d with no result" % r.returncode})
        sys.stdout.write(line + "\n")
        sys.stdout.flush()
    return 0


def exit_now(code):
    """sys.exit(code) without the framework's teardown (runner_common.exit_now)."""
    sys.path.insert(0, RUNNERS)
    import runner_common as rc
    rc.exit_now(code)


def main(doc, settings, run, apart=False):
    """run(a, flushed) -> the result dict, for each setting of --setting (each_setting); apart: each setting in a
    process of its own (each_setting_apart)."""
    a = parse_args(doc, settings)
    if apart and len(a.setting) > 1:
        return each_setting_apart(a)
    flushed = flush_denormals()
    return each_setting(a, lambda a: run(a, flushed))
