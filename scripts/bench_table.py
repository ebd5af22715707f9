#!/usr/bin/python3
"""bench_table — `make bench-cpu`: the native engine (`showdown perf --backend dnnl`) against PyTorch, and against
TensorFlow and JAX where their venvs are installed, on every workload, interleaved in one run. Each cell is its
own process, so its peak memory (max RSS) comes from the kernel (wait4) and its CPU time tells how much of the
machine other processes took meanwhile.

Every round runs, per workload in turn: native; where installed, TensorFlow's candidates (scripts/tf_perf.py:
tf.function graph and XLA) and JAX's (scripts/jax_perf.py: jit), a workload their runner cannot build "n/a";
PyTorch as shipped, and every candidate of PyTorch's best setting (scripts/torch_perf.py: eager NCHW,
channels-last, torch.compile where it can pay). Every candidate runs in every round: PyTorch's settings of a
workload differ by less than one round's spread (some run at one of two or three speeds per process), so a
best picked from one round was a different setting in a rerun. Each framework's best per phase is its candidate
with the fastest figure after every round. The best peer of a workload phase is the fastest best over every
framework measured: the ratio the 2x target is read against.
Figures: the hosts of these machines slow both vCPUs by up to 40% for spells of seconds, without steal time, so
a cell times --repeat windows per phase and counts its fastest, and a table figure is the fastest round of the
cell that a second round confirms (within AGREE below it): a cell no two rounds of which agree runs again
(--confirm rounds at most; still unconfirmed: its fastest round, "?" in the table). spread = (max - min) /
median over rounds. A window SLOW_WINDOW or more slower than its cell's fastest counts as slowed; the table says
what share of windows were.
Host canary: a 0.3 s native mnist_mlp cell (canary()) runs three times at the start and before and after every
cell. A cell starts only once the canary is within HOST_SLOW of the reference, the machine's usual speed: the
upper quartile of this run's and this machine's recent canaries (host_ref_io(): showdown keeps them beside bench's
own under another key and computes it by bench's rule), waiting --host-wait s at most; a process whose canary before or after was slow runs once
more (--host-wait-total bounds the waits and these in all for the whole run); still slowed, its cells count
with their figures, but two such rounds do not confirm each other.
Busy machine: before and after every cell /proc/stat gives the CPU time all processes used and the steal
time; what the cell itself did not use was used by others. A row is flagged when others took more than
BUSY_OTHERS of the cores or steal passed BUSY_STEAL during its cells.
--precision bf16: every timed cell in bf16 mixed precision, both sides (native `showdown perf --precision bf16`
on dnnl, PyTorch under torch.autocast, TensorFlow and JAX in their runners' bf16 compute; docs/precision.md);
the host canary and the roofline floors stay fp32. The table's header and cpu.json's "precision" say which.
Prints the table; writes OUT/cpu.json atomically."""
import argparse
import json
import os
import statistics
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BUSY_OTHERS = 0.10   # fraction of all cores used by other processes
BUSY_STEAL = 0.05    # fraction of CPU time stolen by the hypervisor
SLOW_WINDOW = 1.25   # a window this much slower than its cell's fastest ran on a slowed host
AGREE = 0.10         # a cell's round is confirmed by a second one within this below it
HOST_SLOW = 0.90     # a host canary below this fraction of the reference (host["fastest"]) ran in a slow spell
HOST_REF_KEEP = 500  # the machine's recent canaries kept (showdown's SD_HOST_REF_KEEP)
# glibc's malloc maps a block above its dynamic threshold (which grows up to 32 MiB with the blocks freed) and the
# kernel faults it in again on every pass, so PyTorch's CPU speed depends on its allocation history: a fixed
# threshold keeps a pass's tensors in the heap (the allocator advice of PyTorch's CPU tuning guide, with no new
# library). Measured interleaved on mnist_cnn eager: training +20%, inference 2.2-3.5k img/s per process -> 3.5-3.9k.
# TensorFlow and JAX bring their own allocators (no change measured): their cells run without it.
TORCH_MALLOC = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824"
CONV_FREE = ("mnist_mlp", "imdb_gru", "babi_rnn", "mnist_hrnn")   # no convolution: channels-last does not apply
# the other framework peers: venv name, module its python must import, cell script, candidate settings (the
# compiler candidates among them may fail without failing the run, as torch.compile; "nhwc" ones are tried on
# convolution models only, as channels-last), short name in the table
PEERS = {"tensorflow": {"module": "tensorflow", "script": "tf_perf.py", "settings": ("graph", "xla"),
                        "compiler": ("xla",), "short": "TF"},
         "jax": {"module": "jax", "script": "jax_perf.py", "settings": ("jit", "nhwc"), "compiler": (), "short": "JAX"},
         "paddle": {"module": "paddle", "script": "paddle_perf.py", "settings": ("dygraph", "static"),
                    "compiler": ("static",), "short": "PD"},
         "mindspore": {"module": "mindspore", "script": "mindspore_perf.py", "settings": ("pynative", "graph"),
                       "compiler": ("graph",), "short": "MS"},
         "tinygrad": {"module": "tinygrad", "script": "tinygrad_perf.py", "settings": ("jit",), "compiler": (),
                      "short": "TG"}}


def cpu_times():
    """(busy jiffies, steal jiffies, total jiffies) of all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    steal = v[7] if len(v) > 7 else 0
    total = sum(v[:8])
    return total - idle - steal, steal, total


def others_runnable():
    """Other runnable tasks now: the median of five samples of procs_running (as src/main.c decides)."""
    vals = []
    for _ in range(5):
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("procs_running "):
                    vals.append(int(line.split()[1]) - 1)
        time.sleep(0.004)
    vals.sort()
    return max(0, vals[len(vals) // 2]) if vals else 0


def kill_group(pgid):
    """SIGKILL to every process left in the group pgid (none left: nothing to do)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_cell(argv, env, timeout):
    """Run one cell; returns (stdout text, error or None, max RSS MiB, wall s, fraction of the cores others
    used, steal fraction)."""
    hz = os.sysconf("SC_CLK_TCK")
    ncpu = os.cpu_count()
    b0, s0, t0 = cpu_times()
    w0 = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        # its own process group: a cell script that runs its settings in processes of their own (mindspore_perf)
        # is killed whole on a timeout, and nothing it started outlives it
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=env, start_new_session=True)
        err_msg = None
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                break
            if time.monotonic() - w0 > timeout:
                kill_group(p.pid)
                pid, status, ru = os.wait4(p.pid, 0)
                err_msg = "timed out after %.0f s (killed)" % timeout
                break
            time.sleep(0.05)
        kill_group(p.pid)
        p.returncode = 0   # reaped here: keep Popen from waiting again
        wall = time.monotonic() - w0
        b1, s1, t1 = cpu_times()
        out.seek(0)
        err.seek(0)
        text, etext = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if err_msg is None and (os.WIFSIGNALED(status) or os.WEXITSTATUS(status) != 0):
        tail = [l for l in etext.strip().splitlines() if l.strip()]
        err_msg = "exit %s: %s" % (os.WEXITSTATUS(status) if os.WIFEXITED(status) else "signal %d" % os.WTERMSIG(status),
                                   tail[-1][:300] if tail else "(no message)")
    own = (ru.ru_utime + ru.ru_stime) * hz
    capacity = max(1, (t1 - t0))   # jiffies of all cores in the window
    others = max(0.0, (b1 - b0) - own) / capacity
    steal = (s1 - s0) / capacity
    del ncpu
    return text, err_msg, ru.ru_maxrss / 1024.0, wall, others, steal


def take_windows(cell, r):
    """The cell's figures from a cell script's result r: per phase the fastest window (images/s = the median's
    images/s scaled by median / fastest seconds per call, windows ascending), the median kept beside it, and how
    many windows ran SLOW_WINDOW slower than the fastest."""
    for ph in ("train", "infer"):
        ips, w = r.get(ph + "_images_per_s"), r.get(ph + "_windows_s") or []
        if not ips or not w:
            cell[ph] = ips
            continue
        w = sorted(w)
        cell[ph] = ips * w[len(w) // 2] / w[0]
        cell[ph + "_median"] = ips
        cell[ph + "_windows"] = len(w)
        cell[ph + "_slowed"] = sum(1 for t in w if t >= SLOW_WINDOW * w[0])


def native_cell(a, wl, env):
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    argv = [a.showdown, "perf", "--workload", wl, "--backend", "dnnl", "--threads", str(a.threads),
            "--seconds", str(a.seconds), "--repeat", str(a.repeat), "--json", path, "--no-ceiling",
            "--precision", a.precision]
    if a.workloads:
        argv += ["--workloads", a.workloads]
    if wl in a.batches:
        argv += ["--batch", str(a.batches[wl])]
    _, err, rss, wall, others, steal = run_cell(argv, env, a.timeout)
    cell = {"side": "native", "setting": "dnnl", "rss_mib": rss, "wall_s": wall, "others": others, "steal": steal}
    if err is None:
        try:
            doc = json.load(open(path))
            r = doc["runs"][0]
            take_windows(cell, r)
            cell.update(train_gflops=r.get("train_gflops"),
                        infer_gflops=r.get("infer_gflops"), omp=doc.get("environment", {}).get("omp_wait_policy"))
        except (OSError, ValueError, KeyError, IndexError) as e:
            err = "unreadable perf JSON: %s" % e
    os.unlink(path)
    if err:
        cell["error"] = err
    return cell


def short_perf(a, env, seconds, timeout, *extra):
    """A one-window native mnist_mlp `showdown perf` of SECONDS in a process of its own: its JSON document (None
    if it failed), the error, and the share of the cores others and the hypervisor took meanwhile."""
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    argv = [a.showdown, "perf", "--workload", "mnist_mlp", "--backend", "dnnl", "--threads", str(a.threads),
            "--seconds", seconds, "--repeat", "1", "--json", path] + list(extra)
    if a.workloads:
        argv += ["--workloads", a.workloads]
    _, err, _, _, others, steal = run_cell(argv, env, timeout)
    doc = None
    if err is None:
        try:
            doc = json.load(open(path))
        except (OSError, ValueError) as e:
            err = "unreadable perf JSON: %s" % e
    os.unlink(path)
    return doc, err, others, steal


def ceiling_cell(a, env):
    """The sgemm ceiling (GFLOP/s) through `showdown perf`, in a process of its own: its matrices would
    otherwise be a native cell's peak memory."""
    doc, err, others, steal = short_perf(a, env, "0.2", a.timeout)
    g = doc.get("sgemm_gflops") if doc else None
    if doc and g is None:
        err = "unreadable perf JSON: no sgemm_gflops"
    return {"sgemm_gflops": g, "error": err, "others": others, "steal": steal}


def roofline_cells(a, workloads, env):
    """The time floor of each phase of each workload on this machine (`showdown perf --roofline`, docs/roofline.md),
    after every timed cell: {wl: {"train": s, "infer": s per batch, "batch": n} or {"error": why}}. One process per
    batch override (the machine's peak and bandwidth are measured once a process, ~5 s)."""
    by_batch = {}
    for wl in workloads:
        by_batch.setdefault(a.batches.get(wl), []).append(wl)
    floors = {}
    for batch, wls in by_batch.items():
        fd, path = tempfile.mkstemp(suffix=".json")
        os.close(fd)
        argv = [a.showdown, "perf", "--roofline", "--workload", ",".join(wls), "--backend", "dnnl",
                "--threads", str(a.threads), "--seconds", "0.2", "--repeat", "1", "--json", path]
        if a.workloads:
            argv += ["--workloads", a.workloads]
        if batch is not None:
            argv += ["--batch", str(batch)]
        _, err, _, _, _, _ = run_cell(argv, env, a.timeout * len(wls))
        runs = {}
        if err is None:
            try:
                doc = json.load(open(path))
                for r in doc["runs"]:
                    runs[r["workload"]] = {"batch": r["batch"], "machine": doc.get("roofline_machine"),
                                           "train": (r["roofline"]["train"] or {}).get("floor_s"),
                                           "infer": r["roofline"]["inference"]["floor_s"]}
            except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
                err = "unreadable perf --roofline JSON: %s" % e
        os.unlink(path)
        for wl in wls:
            floors[wl] = runs.get(wl) or {"error": err or "perf --roofline wrote no run of %s" % wl}
    return floors


def add_floors(rows, floors):
    """Native % of floor and best peer % of floor per row: the phase's floor over each side's time a batch."""
    for r in rows:
        f = floors.get(r["workload"], {})
        fs, b = f.get(r["phase"]), f.get("batch")
        r["floor_s"] = fs
        r["native_pct_floor"] = 100 * fs * r["native"]["value"] / b if fs and b and r["native"] else None
        r["peer_best_pct_floor"] = 100 * fs * r["peer_best"]["value"] / b if fs and b and r["peer_best"] else None


def print_floors(a, rows, floors):
    pct = lambda v: "%6.1f%%" % v if v is not None else "%7s" % "-"
    print("\nroofline: % of this machine's floor, the sum over kernels of max(FLOPs/peak, bytes/bandwidth) "
          "(docs/roofline.md); 100% is the floor, a fused or Winograd pass can pass it")
    print("%-17s %-5s %10s %9s %11s" % ("workload", "phase", "floor ms", "native",
                                        "best peer" if a.peer_python else "torch best"))
    for r in rows:
        fs = r.get("floor_s")
        print("%-17s %-5s %10s %9s %11s" % (r["workload"], r["phase"], "%.3f" % (1e3 * fs) if fs else "-",
                                            pct(r["native_pct_floor"]), pct(r["peer_best_pct_floor"])))
    for wl, f in floors.items():
        if "error" in f:
            print("  %s roofline failed: %s" % (wl, f["error"]))

def in_slow_spell(v, host):
    """A canary's images/s below HOST_SLOW of the run's reference (host["fastest"]); None (no canary) is not."""
    return v is not None and v < HOST_SLOW * host["fastest"]


def host_ref_key(threads):
    """This canary's key in the file: the CPU (its model name, family and model number: "AMD EPYC" names a Zen 2
    and a Zen 4 alike), the threads and the canary (a perf cell, not showdown's own)."""
    cpu = {"model name": "unknown", "cpu family": "?", "model": "?"}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                field, colon, value = line.partition(":")
                if field.strip() == "processor" and cpu.get("seen"):
                    break   # the first CPU's lines only
                cpu["seen"] = True
                if colon and field.strip() in cpu:
                    cpu[field.strip()] = value.strip()
    except OSError:
        pass
    return "%s (family %s model %s)|%s threads|perf canary|release" % (
        cpu["model name"], cpu["cpu family"], cpu["model"], threads)


def host_ref_io(a, key, recent=None):
    """This machine's recent canaries of KEY as [(unix time, images/s)], oldest first; with RECENT, that list
    becomes KEY's and their usual speed is returned (the reference; None on a failure). The file (shared with
    showdown bench's canary under its own key) and the rule are showdown's (src/bench/host.c): `showdown perf
    --host-ref KEY [--host-ref-save]`. A failure keeps no reference."""
    argv = [a.showdown, "perf", "--host-ref", key] + (["--host-ref-save"] if recent is not None else [])
    text = "".join("%.0f\t%.1f\n" % (t, v) for t, v in recent) if recent is not None else None
    try:
        p = subprocess.run(argv, input=text, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return [] if recent is None else None
    if recent is not None:
        try:
            return float(p.stdout) if p.returncode == 0 and float(p.stdout) > 0 else None
        except ValueError:
            return None
    got = []
    for line in p.stdout.splitlines() if p.returncode == 0 else []:
        try:
            t, v = line.split("\t")
            got.append((float(t), float(v)))
        except ValueError:
            continue
    return got


def canary(a, env):
    """The host's state now: mnist_mlp training images/s of a 0.3 s native cell (about 0.5 s in all). This
    VM's host slows both vCPUs by ~40% for spells of seconds, hitting small cache-bound steps like this one
    hardest while the load, steal time and the sgemm ceiling show nothing; None if the cell failed."""
    doc = short_perf(a, env, "0.3", 120, "--no-ceiling")[0]
    try:
        return doc["runs"][0]["train_images_per_s"] if doc else None
    except (KeyError, IndexError, TypeError):
        return None


def script_cells(a, side, script_name, argv, settings, env):
    """Run a framework's cell script (torch_perf.py, tf_perf.py ...) for SETTINGS, all in one process when there are
    several (--grouped: one import and start for a framework's candidates; each line carries its setting's peak
    RSS, measured in the process): one cell per setting. A workload the runner cannot build comes back as cells
    {"na": reason}, not as errors."""
    text, err, rss, wall, others, steal = run_cell(argv + ["--setting", ",".join(settings)],
                                                   dict(env, SHOWDOWN_CELL_LIMIT_S="%g" % a.timeout), a.timeout)
    # the command that measures these settings again (verify --rerun): the script under the source tree, its
    # arguments but the showdown binary (the rerunning one's), what the environment adds
    args, i = [], 2
    while i < len(argv):
        if argv[i] == "--showdown":
            i += 2
            continue
        args.append(argv[i])
        i += 1
    cmd = {"python": argv[0], "script": os.path.relpath(argv[1], os.path.dirname(HERE)),
           "args": args + ["--setting", ",".join(settings)],
           "env": ["%s=%s" % (k, env[k]) for k in sorted(env) if env[k] != os.environ.get(k)]}
    lines = {}
    for line in text.strip().splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict):
            lines[r.get("setting")] = r
    cells = []
    for st in settings:
        r = lines.get(st)
        if r is None and len(lines) == 1 and ("unsupported" in next(iter(lines.values())) or len(settings) == 1):
            r = next(iter(lines.values()))   # said once for the workload (no setting can build it), or one asked
        cell = {"side": side, "setting": st, "rss_mib": rss, "wall_s": wall / len(settings), "others": others,
                "steal": steal, "cmd": cmd}
        if len(settings) > 1 and r and r.get("peak_rss_mib"):
            cell["rss_mib"] = r["peak_rss_mib"]
            cell["rss_in_process"] = True
        cells.append(cell)
        if r is not None and "unsupported" in r:
            cell["na"] = "unsupported %s" % r["unsupported"]
            continue
        # a setting the process finished before it failed or timed out (its line is out) keeps its figures
        e = err
        if r is None:
            e = e or "unreadable %s output: no line for setting %s" % (script_name, st)
        elif "error" in r:
            e = r["error"]
        elif r.get("setting") == st:
            e = None
        if e is None:
            try:
                take_windows(cell, r)
                cell.update(version=r.get("version") or r["torch"], path=r.get("path") or r["torch_path"],
                            compile_s=r.get("compile_s", 0.0), batch=r["batch"], flush_denormal=r["flush_denormal"])
                if side == "torch":
                    cell.update(torch=r["torch"], torch_path=r["torch_path"])
            except (KeyError, TypeError) as ex:
                e = "unreadable %s output: %s" % (script_name, ex)
        if e:
            cell["error"] = e
    return cells


def torch_cells(a, wl, settings, env):
    argv = [a.torch_python, os.path.join(HERE, "torch_perf.py"), "--workload", wl,
            "--showdown", a.showdown, "--threads", str(a.threads), "--seconds", str(a.seconds),
            "--repeat", str(a.repeat), "--precision", a.precision]
    if a.workloads:
        argv += ["--workloads", a.workloads]
    if "compile" in settings and wl not in CONV_FREE:
        argv.append("--compile-channels-last")
    if wl in a.batches:
        argv += ["--batch", str(a.batches[wl])]
    cells = script_cells(a, "torch", "torch_perf.py", argv, settings, env)
    for c in cells:
        c.update(omp=env.get("OMP_WAIT_POLICY", "(unset)"), malloc=env.get("GLIBC_TUNABLES", "(unset)"))
    return cells


def peer_cells(a, fw, wl, settings, env):
    """The cells of a framework of PEERS."""
    argv = [a.peer_python[fw], os.path.join(HERE, PEERS[fw]["script"]), "--workload", wl,
            "--showdown", a.showdown, "--threads", str(a.threads), "--seconds", str(a.seconds),
            "--repeat", str(a.repeat), "--precision", a.precision]
    if a.workloads:
        argv += ["--workloads", a.workloads]
    if wl in a.batches:
        argv += ["--batch", str(a.batches[wl])]
    return script_cells(a, fw, PEERS[fw]["script"], argv, settings, env)


def primary(wl_mode):
    return "infer" if wl_mode == "inference" else "train"


def phases(wl_mode):
    """Training workloads are compared training and inference; inference workloads inference only."""
    return ["infer"] if wl_mode == "inference" else ["train", "infer"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def describe(c, phase):
    if "na" in c:
        return "n/a: %s" % c["na"]
    if "error" in c:
        return "FAILED (%s)" % c["error"]
    v = c.get(phase)
    return "%9.1f img/s (median window %9.1f, %d of %d slowed)  %6.0f MiB  others %3.0f%% steal %2.0f%%%s" % (
        v or 0, c.get(phase + "_median") or 0, c.get(phase + "_slowed", 0), c.get(phase + "_windows", 0),
        c["rss_mib"], 100 * c["others"], 100 * c["steal"],
        "  compile %.0f s" % c["compile_s"] if c.get("compile_s") else "")


def rounds_of(cs, phase):
    """A cell's rounds for one phase: (figure, whether the host was in a slow spell), the ones that ran."""
    return [(c.get(phase), c.get("host_slowed", False)) for c in cs
            if "error" not in c and "na" not in c and c.get(phase)]


def figure_of(rounds):
    """A cell's figure over its rounds and whether a round confirmed it: the fastest round that a second round
    agrees with (within AGREE below it), where of the rounds that agree at least one ran with the host out of a
    slow spell (two slowed rounds can agree on a slow figure). No such round: the fastest, unconfirmed. A lucky
    round no other reaches does not set the figure while two others agree."""
    for top in sorted({v for v, _ in rounds}, reverse=True):
        agree = [s for v, s in rounds if top >= v and v * (1 + AGREE) >= top]
        if len(agree) >= 2 and not all(agree):
            return top, True
    return max([v for v, _ in rounds], default=None), False


def stats(rounds):
    """A cell's figure over its rounds (rounds_of; each round is its fastest window): "value" the fastest
    round a second one confirms (figure_of()), with the median and spread of all rounds beside it."""
    vals = [v for v, _ in rounds]
    if not vals:
        return None
    m = statistics.median(vals)
    value, conf = figure_of(rounds)
    return {"value": value, "confirmed": conf, "median": m, "min": min(vals), "max": max(vals),
            "n": len(vals), "spread": (max(vals) - min(vals)) / m if m else 0.0,
            "host_slowed": sum(1 for _, s in rounds if s)}


def measure(a):
    workloads = a.workload.split(",")
    modes = {}
    for wl in workloads:
        with open(os.path.join(a.workloads or os.path.join(HERE, "..", "workloads"), wl + ".json")) as f:
            modes[wl] = "inference" if "inference" in json.load(f) else "training"
    compile_ok = set(a.compile.split(",")) if a.compile else set()
    base = dict(os.environ)
    shipped_env = {k: v for k, v in base.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    cells = []
    best = {}
    ceilings = []
    # what each side's process holds before it runs anything: showdown maps the CUDA libraries it links,
    # python maps torch (tensorflow, jax); every cell's max RSS includes this
    baseline = {"native": run_cell([a.showdown, "--version"], base, 60)[2]}
    if a.torch_python:
        baseline["torch"] = run_cell([a.torch_python, "-c", "import torch, numpy"], base, 120)[2]
    for fw in a.peer_python:
        baseline[fw] = run_cell([a.peer_python[fw], "-c", "import %s, numpy" % PEERS[fw]["module"]], base, 120)[2]
    peer_env = dict(shipped_env, TF_CPP_MIN_LOG_LEVEL="2")
    pbest = {}   # (framework, workload, phase) -> its best setting

    # every canary of the run, (seconds since start, images/s); the reference a canary is judged against is the
    # machine's usual speed, of the run's canaries and the machine's recent ones (a spell of minutes can cover a
    # whole run, whose own canaries alone would take its speed for the machine's; a few lucky canaries must not make
    # every cell wait). "fastest" is that reference (the name the results have always used).
    host = {"fastest": 0.0, "samples": [], "waited_s": 0.0, "retried_s": 0.0, "retries": 0}
    ref_key = host_ref_key(a.threads)
    machine = host_ref_io(a, ref_key) if a.host_wait >= 0 else []   # [(unix time, images/s)], oldest first
    host["machine_reference"] = [v for _, v in machine]
    host_state = {}   # --grouped: the canary before each workload's first cell, the others' too
    t_start = time.monotonic()

    def probe(waiting=False):
        """A canary; one taken in a wait for a spell to end is not one of the machine's usual ones (it would weigh
        the spell once per wait step)."""
        v = canary(a, base) if a.host_wait >= 0 else None
        if v:
            host["samples"].append((round(time.monotonic() - t_start, 1), round(v, 1)))
        if v and not waiting:
            machine.append((time.time(), v))
            del machine[:-HOST_REF_KEEP]
            host["fastest"] = host_ref_io(a, ref_key, machine) or host["fastest"]
        return v

    def slow(v):
        return in_slow_spell(v, host)

    def run(wl, side, sts, rnd):
        """The cells of one side for the settings sts (a list), recorded and logged: one process per setting, or
        with --grouped one for all of a side's settings. A candidate is any setting but native's and PyTorch as
        shipped (the ones a best is chosen among). The process starts once a canary finds the host out of a slow
        spell (waiting up to a.host_wait s); a canary after it tells whether a spell began meanwhile, and a process
        that ran in one, all its cells measured, runs once more within the wait budget. --grouped takes the canary
        after a process as the next one's before (host_state)."""
        if not sts:
            return []
        t0 = time.monotonic()
        cs, before, after, waited = measure(wl, side, sts)
        # a spell that began while the process ran: measured once more, within the run's wait budget
        if (slow(before) or slow(after)) and all(not c.get("error") and not c.get("na") for c in cs) and \
                host["waited_s"] + host["retried_s"] + time.monotonic() - t0 < a.host_wait_total:
            host["retries"] += 1
            host["retried_s"] += time.monotonic() - t0
            log("round %d %-17s %-22s ran while the host was at %.0f%% of its speed: measured again" % (
                rnd, wl, side, 100 * min(x for x in (before, after) if x) / host["fastest"]))
            host_state.pop(wl, None)
            cs, before, after, w2 = measure(wl, side, sts)
            waited += w2
        for c in cs:
            c.update(workload=wl, round=rnd, host_before=before, host_after=after, host_wait_s=round(waited, 1))
            # a cell in or beside a slow spell counts with its figure, but two such confirm nothing
            c["host_slowed"] = slow(before) or slow(after)
            if side != "native" and c["setting"] != "shipped":
                c["candidate"] = True
            if rnd > a.rounds:
                c["confirmation"] = True
            cells.append(c)
            if a.give_up and side != "native" and "timed out" in str(c.get("error", "")) and side not in gave_up:
                gave_up[side] = wl
                log("%s timed out on %s: its later workloads are not run (--give-up)" % (side, wl))
            log("round %d %-17s %-22s %s%s" % (rnd, wl, "%s %s" % (side, c["setting"]),
                                               describe(c, primary(modes[wl])),
                                               "  HOST SLOW" if c["host_slowed"] else ""))
        return cs

    def measure(wl, side, sts):
        """One process of a side's settings once the host runs at its speed: (cells, canary before, canary after,
        seconds waited)."""
        if a.grouped and side != "native" and host_state.get(wl) and not slow(host_state[wl]):
            before, waited = host_state[wl], 0.0
        else:
            before = probe()
            w0 = time.monotonic()
            while slow(before) and time.monotonic() - w0 < a.host_wait and \
                    host["waited_s"] + time.monotonic() - w0 < a.host_wait_total:
                time.sleep(0.5)
                before = probe(waiting=True)
            waited = time.monotonic() - w0
            host["waited_s"] += waited
            host_state[wl] = before
        if side == "native":
            cs = [native_cell(a, wl, base)]
        elif side == "torch":
            env = dict(shipped_env)
            # the OpenMP wait policy showdown would choose now (src/main.c): passive beside other work
            if sts != ["shipped"] and others_runnable() > 0:
                env["OMP_WAIT_POLICY"] = "passive"
            if sts != ["shipped"]:
                env["GLIBC_TUNABLES"] = ":".join(filter(None, (env.get("GLIBC_TUNABLES"), TORCH_MALLOC)))
            cs = torch_cells(a, wl, sts, env)
        else:
            cs = peer_cells(a, side, wl, sts, peer_env)
        # the next process's canary (grouped: the workload's next side) is taken now: it tells whether a spell
        # began while this one ran
        after = probe()
        if a.grouped:
            host_state[wl] = after
        return cs, before, after, waited

    chosen = ([] if not a.torch_python else ["torch"]) + list(a.peer_python)   # sides a best is chosen for
    # settings measured elsewhere (the default report's bench cells ran each runner's own mode) and the sides that
    # timed out once under --give-up (the workloads run light to heavy: a later one would time out too)
    skip = {tuple(item.split("=", 1)) for item in a.skip}
    gave_up = a.gave_up_sides = {}   # also in cpu.json

    def candidates(wl, side):
        """A side's candidate settings for a workload: all of them in every round (their speeds differ by less
        than a round's spread, so one round cannot tell the best), but none after the runner found the workload
        n/a, and no candidate again after it failed once (a failing compile costs its whole timeout)."""
        if side == "torch":
            sts = ["eager"] + ([] if wl in CONV_FREE else ["channels_last"]) + (["compile"] if wl in compile_ok else [])
        else:
            sts = [s for s in PEERS[side]["settings"] if not (s == "nhwc" and wl in CONV_FREE)]
        sts = [s for s in sts if (side, s) not in skip]
        mine = [c for c in cells if c["workload"] == wl and c["side"] == side and c.get("candidate")]
        if any("na" in c for c in mine) or side in gave_up:
            return []
        return [s for s in sts if not any("error" in c and c["setting"] == s for c in mine)]

    def counted(c, wl, side, st):   # the cells summarize() reads for this side and setting
        return c["workload"] == wl and c["side"] == side and c["setting"] == st and "error" not in c and \
            "na" not in c and (side != "torch" or st == "shipped" or c.get("candidate"))

    def figures(wl, side, p):
        """Each candidate setting of a side's workload phase with its figure so far (stats), where it has one."""
        sts = dict.fromkeys(c["setting"] for c in cells if c["workload"] == wl and c["side"] == side
                            and c.get("candidate"))
        out = {}
        for st in sts:
            s = stats(rounds_of([c for c in cells if counted(c, wl, side, st)], p))
            if s:
                out[st] = s
        return out

    def choose():
        """Each side's best setting per workload phase: its candidate with the fastest figure over every round
        (a figure no round confirmed counts too: where it is the fastest, the peer is credited with it)."""
        best.clear()
        pbest.clear()
        for wl in workloads:
            for p in phases(modes[wl]):
                for side in chosen:
                    f = figures(wl, side, p)
                    if f:
                        top = max(f, key=lambda st: f[st]["value"])
                        if side == "torch":
                            best[(wl, p)] = top
                        else:
                            pbest[(side, wl, p)] = top

    for _ in range(3):   # the host's state before any cell: the first reference
        probe()
    for rnd in range(1, a.rounds + 1):
        ceilings.append(ceiling_cell(a, base))
        log("round %d sgemm ceiling %s GFLOP/s" % (rnd, "%.0f" % ceilings[-1]["sgemm_gflops"]
                                                   if ceilings[-1]["sgemm_gflops"] else ceilings[-1]["error"]))
        for wl in workloads:
            host_state.pop(wl, None)
            run(wl, "native", ["dnnl"], rnd)
            for fw in a.peer_python:
                if a.grouped:
                    run(wl, fw, candidates(wl, fw), rnd)
                    continue
                for s in candidates(wl, fw):
                    if "na" in run(wl, fw, [s], rnd)[0]:   # the runner cannot build it: no other setting can either
                        break
            if not a.torch_python:
                continue
            if ("torch", "shipped") not in skip and "torch" not in gave_up:
                run(wl, "torch", ["shipped"], rnd)
            if a.grouped:
                run(wl, "torch", candidates(wl, "torch"), rnd)
            else:
                for s in candidates(wl, "torch"):
                    run(wl, "torch", [s], rnd)
    # confirmation: a cell of the table no two rounds of which agree runs again, up to
    # a.confirm more times, so that a rerun of the bench finds the same figure (the host's slow spells last
    # seconds and can cover a whole cell). Of the candidates, every one that could still be its side's best does:
    # one whose figure is unconfirmed and above the fastest confirmed figure of its side's candidates.
    def todo_cells(wl):
        out = []
        for side, st in [("native", "dnnl")] + ([("torch", "shipped")] if a.torch_python else []):
            mine = [c for c in cells if counted(c, wl, side, st)]
            # a cell that never ran has nothing to confirm (its failure is in the table)
            if any(r and not figure_of(r)[1] for r in (rounds_of(mine, p) for p in phases(modes[wl]))):
                out.append((side, st))
        for side in chosen:
            for p in phases(modes[wl]):
                f = figures(wl, side, p)
                floor = max([s["value"] for s in f.values() if s["confirmed"]], default=0.0)
                out += [(side, st) for st, s in f.items() if not s["confirmed"] and s["value"] > floor]
        return list(dict.fromkeys(out))

    for extra in range(1, a.confirm + 1):
        rnd = a.rounds + extra
        todo = [(wl, side, st) for wl in workloads for side, st in todo_cells(wl)]
        if not todo:
            break
        log("confirmation round %d: %d cell(s) no two rounds of which agree within %.0f%%" % (
            rnd, len(todo), 100 * AGREE))
        for wl, side, st in todo:
            run(wl, side, [st], rnd)
    choose()
    return workloads, modes, cells, best, pbest, ceilings, baseline, host


def summarize(a, workloads, modes, cells, best, pbest, load):
    rows = []
    for wl, ph in [(wl, ph) for wl in workloads for ph in phases(modes[wl])]:
        mine = [c for c in cells if c["workload"] == wl]
        nat = [c for c in mine if c["side"] == "native"]
        shp = [c for c in mine if c["side"] == "torch" and c["setting"] == "shipped"]
        bst = [c for c in mine if c["side"] == "torch" and c.get("candidate") and c["setting"] == best.get((wl, ph))]
        row = {"workload": wl, "phase": ph, "best_setting": best.get((wl, ph))}
        for name, cs in (("native", nat), ("torch_shipped", shp), ("torch_best", bst)):
            row[name] = stats(rounds_of(cs, ph))
            row[name + "_rss_mib"] = max([c["rss_mib"] for c in cs if "error" not in c], default=None)
            errs = [c["error"] for c in cs if "error" in c]
            if errs:
                row[name + "_errors"] = errs
        for name in ("torch_shipped", "torch_best"):
            n, t = row["native"], row[name]
            row["native_over_" + name] = n["value"] / t["value"] if n and t else None
        # the best peer over every framework and setting measured: the figure the 2x target is read against
        # (PyTorch as shipped included: where it beats the best candidate, the peer's best is shipped)
        peers = [("torch", row["best_setting"], row["torch_best"], row["torch_best_rss_mib"]),
                 ("torch", "shipped", row["torch_shipped"], row["torch_shipped_rss_mib"])]
        for fw in a.peer_python:
            name, st = fw + "_best", pbest.get((fw, wl, ph))
            cs = [c for c in mine if c["side"] == fw and c["setting"] == st and "error" not in c]
            row[fw + "_best_setting"] = st
            row[name] = stats(rounds_of(cs, ph))
            row[name + "_rss_mib"] = max([c["rss_mib"] for c in cs], default=None)
            row["native_over_" + name] = row["native"]["value"] / row[name]["value"] \
                if row["native"] and row[name] else None
            na = sorted({c["na"] for c in mine if c["side"] == fw and "na" in c})
            if na:
                row[fw + "_na"] = na[0]
            errs = [c["error"] for c in mine if c["side"] == fw and "error" in c]
            if errs:
                row[name + "_errors"] = errs
            peers.append((fw, st, row[name], row[name + "_rss_mib"]))
        peers = [p for p in peers if p[2]]
        top = max(peers, key=lambda p: p[2]["value"]) if peers else None
        row["peer_best"] = {"framework": top[0], "setting": top[1], "value": top[2]["value"],
                            "rss_mib": top[3]} if top else None
        row["native_over_peer_best"] = row["native"]["value"] / top[2]["value"] if top and row["native"] else None
        row["others_max"] = max([c["others"] for c in mine], default=0.0)
        row["steal_max"] = max([c["steal"] for c in mine], default=0.0)
        row["busy"] = row["others_max"] > BUSY_OTHERS or row["steal_max"] > BUSY_STEAL
        # windows of this phase that ran SLOW_WINDOW slower than their cell's fastest: the host slowing
        row["windows"] = sum(c.get(ph + "_windows", 0) for c in mine if "error" not in c)
        row["windows_slowed"] = sum(c.get(ph + "_slowed", 0) for c in mine if "error" not in c)
        row["compile_failed"] = [c["error"] for c in mine if c["setting"] == "compile" and "error" in c]
        rows.append(row)
    return rows


def fmt(s):
    if not s:
        return "%18s" % "-"
    return "%9.1f ±%4.0f%%%s " % (s["value"], 100 * s["spread"] / 2, " " if s["confirmed"] else "?")


def ratio(v):
    return "%6.2fx" % v if v else "%7s" % "-"


def mib(v):
    return "%6.0f" % v if v else "%6s" % "-"


def print_table(a, rows, cells, load, doc):
    torch_versions = sorted({c["torch"] for c in cells if c.get("torch")})
    print()
    print("bench-cpu: precision %s, %d threads, %d round(s), %.1f s timed windows; PyTorch %s (%s)" % (
        a.precision, a.threads, a.rounds, a.seconds, ", ".join(torch_versions) or "not measured", a.torch_python or "-"))
    for fw in a.peer_python:
        vs = sorted({c["version"] for c in cells if c["side"] == fw and c.get("version")})
        print("%s %s (%s)" % (fw, ", ".join(vs) or "(no cell ran)", a.peer_python[fw]))
    for w, n in sorted(doc["batch_overrides"].items()):
        print("%s at batch %d on both sides (not the workload's own batch)" % (w, n))
    g = [c["sgemm_gflops"] for c in doc["sgemm_ceilings"] if c["sgemm_gflops"]]
    if g:
        print("sgemm ceiling (4096^3 through dnnl, once per round): %s GFLOP/s" % ", ".join("%.0f" % v for v in g))
    busy = sorted({r["workload"] for r in rows if r["busy"]})
    print("machine: load average %s (start, end); other processes took up to %.0f%% of the cores during a cell, "
          "steal up to %.0f%%" % (load, 100 * max([r["others_max"] for r in rows], default=0),
                                  100 * max([r["steal_max"] for r in rows], default=0)))
    nw, ns = sum(r["windows"] for r in rows), sum(r["windows_slowed"] for r in rows)
    if nw:
        most = sorted(rows, key=lambda r: -r["windows_slowed"] / max(1, r["windows"]))[:3]
        print("host: %d of %d timed windows (%.0f%%) ran %.0f%% or more slower than their cell's fastest, which is the "
              "figure counted; most in %s" % (ns, nw, 100.0 * ns / nw, 100 * (SLOW_WINDOW - 1), ", ".join(
                  "%s %s %d/%d" % (r["workload"], r["phase"], r["windows_slowed"], r["windows"]) for r in most)))
    hs = doc["host_canary"]["samples"]
    if hs:
        fast = doc["host_canary"]["fastest"]
        waits = [c["host_wait_s"] for c in cells if c.get("host_wait_s", 0) > 0]
        print("host canary (mnist_mlp training, 0.3 s, before and after each cell): reference %.0f img/s (the upper "
              "quartile of this run's and the machine's recent ones, the third fastest at least), %d of %d below %.0f%% of it; %d cell(s) waited "
              "%.0f s in all for a slow spell to end, %d process(es) measured again after one, %d cell(s) ran in or "
              "beside one all the same (they confirm no figure)" % (
                  fast, sum(1 for _, v in hs if v < HOST_SLOW * fast), len(hs), 100 * HOST_SLOW, len(waits),
                  sum(waits), doc["host_canary"].get("retries", 0), sum(1 for c in cells if c.get("host_slowed"))))
    if busy:
        print("BUSY MACHINE: other processes or the hypervisor took CPU during %s (flag *): absolute figures are "
              "low and noisy; the ratios come from interleaved cells and are the figures to read" % ", ".join(busy))
    print()
    print("figures: each cell's fastest of %d windows, its fastest round that another confirms within %.0f%% "
          "(\"?\": none did in %d extra rounds); ± half the spread over rounds" % (a.repeat, 100 * AGREE, a.confirm))
    print("%-17s %-5s %18s %18s %18s %-14s %8s %8s %6s %6s %6s" % (
        "workload", "phase", "native dnnl", "torch shipped", "torch best", "best setting", "nat/shp", "nat/best",
        "RSS n", "RSS s", "RSS b"))
    print("%-17s %-5s %18s %18s %18s %-14s %8s %8s %6s %6s %6s" % ("", "", "fastest window/s", "img/s ±half-spread",
                                                                  "img/s ±half-spread", "",
                                                                  "", "", "MiB", "MiB", "MiB"))
    for r in rows:
        print("%-17s %-5s %s %s %s %-14s %8s %8s %s %s %s%s" % (
            r["workload"], r["phase"], fmt(r["native"]), fmt(r["torch_shipped"]), fmt(r["torch_best"]),
            r["best_setting"] or "-", ratio(r["native_over_torch_shipped"]), ratio(r["native_over_torch_best"]),
            mib(r["native_rss_mib"]), mib(r["torch_shipped_rss_mib"]), mib(r["torch_best_rss_mib"]),
            " *" if r["busy"] else ""))
    for r in rows:
        for k in ("native_errors", "torch_shipped_errors", "torch_best_errors"):
            for e in r.get(k, []):
                print("  %s %s: %s" % (r["workload"], k[:-7], e))
    for wl in dict.fromkeys(r["workload"] for r in rows):   # once per workload, not per phase
        for e in [r for r in rows if r["workload"] == wl][0]["compile_failed"]:
            print("  %s torch.compile candidate failed: %s" % (wl, e))
    if a.peer_python:
        print_peers(a, rows)
        below = ["%s %s (%s %s %.2fx)" % (r["workload"], r["phase"], r["peer_best"]["framework"],
                                          r["peer_best"]["setting"], r["native_over_peer_best"])
                 for r in rows if r["native_over_peer_best"] is not None and r["native_over_peer_best"] < 2]
        if below:
            print("native below 2x the best peer (every framework measured): %s" % ", ".join(below))
    else:
        below = ["%s %s" % (r["workload"], r["phase"]) for r in rows
                 if r["native_over_torch_best"] is not None and r["native_over_torch_best"] < 2]
        if below:
            print("native below 2x PyTorch's best: %s" % ", ".join(below))
    print("max RSS with nothing run (included above): showdown --version %s MiB, python importing torch %s MiB%s" % (
        mib(doc["baseline_rss_mib"].get("native")).strip(), mib(doc["baseline_rss_mib"].get("torch")).strip(),
        "".join(", %s %s MiB" % (fw, mib(doc["baseline_rss_mib"].get(fw)).strip()) for fw in a.peer_python)))
    for wl, p in doc.get("profiles", {}).items():
        print("per-layer profile of %s: %s%s" % (wl, p["file"], " (failed: %s)" % p["error"] if p["error"] else ""))
    for fw, note in doc["other_frameworks"].items():
        print("%s: %s" % (fw, note))


def print_peers(a, rows):
    """The TensorFlow and JAX columns, a table of their own under PyTorch's (each within 130 columns): every
    framework's best setting, native / its best, its peak memory; then the best peer over every framework."""
    fws = list(a.peer_python)

    def fmt15(st):
        return "%9.1f±%3.0f%%%s" % (st["value"], 100 * st["spread"] / 2, " " if st["confirmed"] else "?") \
            if st else "%15s" % "-"
    print()
    head = "%-17s %-5s" % ("workload", "phase")
    unit = "%-17s %-5s" % ("", "")
    for fw in fws:
        head += " %15s %-5s %7s %6s" % (fw, "best", "nat/" + PEERS[fw]["short"], "RSS")
        unit += " %15s %-5s %7s %6s" % ("img/s ±spread/2", "set.", "", "MiB")
    print("The other frameworks at their best setting (the fastest candidate per phase); best peer: the fastest best of "
          "every framework measured")
    print(head + " %-19s %7s" % ("best peer", "nat/pr"))
    print(unit.rstrip())
    notes = []
    for r in rows:
        line = "%-17s %-5s" % (r["workload"], r["phase"])
        for fw in fws:
            v = r.get(fw + "_best")
            if v:
                cell = fmt15(v)
            else:
                na = r.get(fw + "_na")
                if na:   # the op in the cell, the whole reason under the table
                    notes.append("  %s %s: n/a: %s (workloads/runners/%s_runner.py)" % (r["workload"], fw, na, fw))
                    why = "n/a: " + na.replace("unsupported ", "")
                else:
                    why = "FAILED" if r.get(fw + "_best_errors") else "-"
                cell = "%-15s" % (why if len(why) <= 15 else why[:14] + "~")
            line += " %s %-5s %7s %s" % (cell, (r.get(fw + "_best_setting") or "-")[:5],
                                         ratio(r.get("native_over_%s_best" % fw)), mib(r.get(fw + "_best_rss_mib")))
        pb = r.get("peer_best")
        line += " %-19s %7s%s" % ("%s %s" % (pb["framework"], pb["setting"]) if pb else "-",
                                  ratio(r.get("native_over_peer_best")), " *" if r["busy"] else "")
        print(line)
    for r in rows:
        for fw in fws:
            notes += ["  %s %s: %s" % (r["workload"], fw, e) for e in r.get(fw + "_best_errors", [])]
    for n in dict.fromkeys(notes):   # a workload's notes once, not once per phase
        print(n)


def profile(a, rows, host):
    """Where native is below 2x the best peer, what bounds it: `showdown perf --layers` (every layer's share
    of a training step, conv/dense GFLOP/s against the ceiling) of the --profile worst such workloads. A host
    canary before and after each judges it against the run's reference, and a profile taken in a slow spell
    says so at its end (its memory-bound ops suffer most)."""
    below = sorted([r for r in rows if r["native_over_peer_best"] is not None and r["native_over_peer_best"] < 2],
                   key=lambda r: r["native_over_peer_best"])
    seen = []
    for r in below:
        if r["workload"] not in [x["workload"] for x in seen]:
            seen.append(r)
    out = {}
    for r in seen[:a.profile]:
        argv = [a.showdown, "perf", "--layers", "--workload", r["workload"], "--backend", "dnnl", "--threads",
                str(a.threads), "--seconds", str(a.seconds), "--precision", a.precision]
        if a.workloads:
            argv += ["--workloads", a.workloads]
        if r["workload"] in a.batches:   # the batch both sides ran (densenet121_xray's own needs ~25 GB)
            argv += ["--batch", str(a.batches[r["workload"]])]
        env = dict(os.environ)
        before = canary(a, env) if a.host_wait >= 0 else None
        text, err, _, _, others, steal = run_cell(argv, env, a.timeout)
        after = canary(a, env) if a.host_wait >= 0 else None
        slowed = in_slow_spell(before, host) or in_slow_spell(after, host)
        if slowed:
            shown = "/".join("-" if v is None else "%.0f" % v for v in (before, after))
            text += ("host canary before/after: %s img/s, below %d%% of the run's %.0f: taken in a slow spell, the "
                     "figures above may be low\n" % (shown, round(100 * HOST_SLOW), host["fastest"]))
        path = os.path.join(a.out, "profile-%s.txt" % r["workload"])
        with open(path, "w") as fh:
            fh.write(text)
        out[r["workload"]] = {"file": path, "error": err, "others": others, "steal": steal, "host_before": before,
                              "host_after": after, "host_slowed": slowed}
        log("profile of %s (native %.2fx the best peer, %s %s): %s%s" % (
            r["workload"], r["native_over_peer_best"], r["peer_best"]["framework"], r["peer_best"]["setting"], path,
            "  HOST SLOW" if slowed else ""))
    return out


# the workloads whose torch.compile candidate is tried by default: where it can pay (conv nets, the MLP)
COMPILE = ("mnist_mlp", "mnist_cnn", "cifar10_vgg", "resnet18_cifar", "resnet50_features")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--showdown", default="./showdown")
    ap.add_argument("--out", default="out/bench")
    ap.add_argument("--workload", default="mnist_mlp,mnist_cnn,cifar10_vgg,resnet18_cifar,vgg16_cifar,imdb_gru,"
                                          "babi_rnn,mnist_hrnn,densenet121_xray,resnet50_features")
    ap.add_argument("--workloads", default=None, help="directory of workload specs (default ./workloads)")
    ap.add_argument("--torch-python", default="", help="interpreter with torch ('' : no PyTorch columns)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--repeat", type=int, default=7, help="timed windows per phase of a cell; the fastest counts")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--confirm", type=int, default=3, help="extra rounds, at most, of a cell no two rounds "
                    "of which agree within 10%% (default 3)")
    ap.add_argument("--compile", default=",".join(COMPILE),
                    help="workloads whose torch.compile candidate is tried (compiling costs 30-120 s each)")
    ap.add_argument("--host-wait", type=float, default=20.0,
                    help="seconds, at most, a cell waits for a canary to find the host out of a slow spell "
                         "(default 20; negative: no canary)")
    ap.add_argument("--host-wait-total", type=float, default=600.0,
                    help="seconds, at most, all cells of the run wait for slow spells to end (default 600)")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before a cell is killed")
    ap.add_argument("--grouped", action="store_true",
                    help="a framework's candidate settings of a workload in one process (one import, peak memory "
                         "measured in the process) and one host canary per workload: the default report's quick "
                         "pass")
    ap.add_argument("--venvs", default=".venv-frameworks")
    ap.add_argument("--skip", action="append", default=[], metavar="SIDE=SETTING",
                    help="a setting not measured (torch=shipped, mindspore=pynative ...): the default report's bench "
                         "cells measured it, in the runner's own mode")
    ap.add_argument("--give-up", action="store_true",
                    help="a framework that timed out on a workload runs none of the later ones (list the workloads "
                         "light to heavy): the default report's quick pass")
    ap.add_argument("--tf-python", default="auto", help="interpreter with tensorflow (auto: VENVS/tensorflow/bin/python "
                                                        "if it imports tensorflow; '': no TensorFlow columns)")
    ap.add_argument("--jax-python", default="auto", help="interpreter with jax (auto: VENVS/jax/bin/python if it "
                                                         "imports jax; '': no JAX columns)")
    ap.add_argument("--peer-python", action="append", default=[], metavar="FW=PY",
                    help="interpreter of peer FW (paddle, mindspore, tinygrad; FW=auto: VENVS/FW/bin/python if it "
                         "imports FW; default: not measured)")
    ap.add_argument("--batch", action="append", default=[], metavar="W=N",
                    help="run workload W at batch N on both sides (repeatable; default: the workload's batch)")
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                    help="fp32 (default), or bf16 mixed precision on both sides (docs/precision.md)")
    ap.add_argument("--profile", type=int, default=1,
                    help="per-layer profiles of the N workloads furthest below 2x PyTorch's best (default 1)")
    a = ap.parse_args()
    a.batches = {}
    for item in a.batch:
        w, _, n = item.partition("=")
        if not w or not n.isdigit() or int(n) < 1:
            ap.error("--batch %r: expected WORKLOAD=N with N a positive integer" % item)
        a.batches[w] = int(n)
    other = {}
    given_py = dict(item.partition("=")[::2] for item in a.peer_python)
    a.peer_python = {}
    given_py.update(tensorflow=a.tf_python, jax=a.jax_python)
    for fw in PEERS:
        given = given_py.get(fw, "")   # the peers after TensorFlow and JAX only when asked for (bench-cpu.sh does)
        py = os.path.join(a.venvs, fw, "bin", "python") if given == "auto" else given
        if not py:
            other[fw] = "not measured (no interpreter given)"
        elif not os.path.exists(py):
            other[fw] = "not installed (no %s; make deps-frameworks)" % py
        else:
            r = subprocess.run([py, "-c", "import %s, numpy" % PEERS[fw]["module"]], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, universal_newlines=True,
                               env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
            if r.returncode == 0:
                a.peer_python[fw] = py
                other[fw] = "measured (%s)" % py
            else:
                tail = [l for l in r.stderr.strip().splitlines() if l.strip()]
                why = tail[-1][:200] if tail else "exit %d" % r.returncode
                other[fw] = "installed (%s) but does not import %s: %s" % (py, PEERS[fw]["module"], why)
                log("bench-cpu: %s: %s" % (fw, other[fw]))
    os.makedirs(a.out, exist_ok=True)
    load0 = open("/proc/loadavg").read().split()[0]
    t0 = time.monotonic()
    workloads, modes, cells, best, pbest, ceilings, baseline, host = measure(a)
    load = "%s, %s" % (load0, open("/proc/loadavg").read().split()[0])
    rows = summarize(a, workloads, modes, cells, best, pbest, load)
    floors = roofline_cells(a, workloads, dict(os.environ))
    add_floors(rows, floors)
    doc = {"format": "showdown-bench-cpu/4", "threads": a.threads, "batch_overrides": a.batches, "rounds": a.rounds,
           "seconds": a.seconds, "repeat": a.repeat, "slow_window": SLOW_WINDOW,
           "confirm_rounds": a.confirm, "agree": AGREE, "figure": "fastest window of a cell, fastest round another confirms, not both in a host slow spell",
           "load_average": load, "wall_s": time.monotonic() - t0, "busy_thresholds": {"others": BUSY_OTHERS,
           "steal": BUSY_STEAL}, "torch_python": a.torch_python, "peer_python": a.peer_python, "skipped_settings": sorted(a.skip), "gave_up": a.gave_up_sides,
           "compile_not_tried": [wl for wl in workloads if wl in COMPILE and wl not in (a.compile or "").split(",")]
           if a.torch_python else [], "rows": rows, "cells": cells,
           "other_frameworks": other, "sgemm_ceilings": ceilings, "host_slow": HOST_SLOW,
           "host_wait_max_s": a.host_wait, "host_wait_total_s": a.host_wait_total, "host_canary": host,
           "baseline_rss_mib": baseline, "roofline": floors}
    doc["precision"] = a.precision
    doc["profiles"] = profile(a, rows, host)
    print_table(a, rows, cells, load, doc)
    print_floors(a, rows, floors)
    path = os.path.join(a.out, "cpu.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
    os.replace(tmp, path)
    print("\nwritten: %s (%.0f s)" % (path, doc["wall_s"]))
    # a failed compiler candidate (torch.compile, TensorFlow's XLA) is listed and does not fail the run
    failed = any("error" in c and c["setting"] != "compile" and c["setting"] not in PEERS.get(c["side"], {}).get(
        "compiler", ()) for c in cells)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
