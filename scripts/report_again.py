#!/usr/bin/env python3
"""report_again — the default report's cells that ran while the host was slow, measured again at the end of the
bench step. A cell's host_speed (its canaries over the machine's reference, src/bench/host.c) below HOST_SLOW says
a spell slowed it even after the cell's own wait and second try; such a figure is not one a rerun on the same
machine reproduces. The report measures those cells once more after the last group (the spells last minutes), and
keeps whichever of the two ran on the faster host.
Usage: report_again.py slow PART            cells to measure again: lines "workload<TAB>impl,impl..."
       report_again.py replace PART AGAIN   AGAIN's runs in place of PART's where their host was faster"""
import json
import os
import sys

HOST_SLOW = 0.90   # as src/bench/host.c


def key(r):
    return r.get("workload"), r.get("implementation"), (r.get("settings") or {}).get("precision", "fp32")


def speed(r):
    v = r.get("host_speed")
    return v if isinstance(v, (int, float)) else None


def slow(part):
    by_wl = {}
    for r in json.load(open(part))["runs"]:
        if r.get("status") == "ok" and speed(r) is not None and speed(r) < HOST_SLOW:
            impls = by_wl.setdefault(r["workload"], [])
            if r["implementation"] not in impls:   # one bench runs each implementation once
                impls.append(r["implementation"])
    return ["%s\t%s" % (wl, ",".join(impls)) for wl, impls in by_wl.items()]


def replace(part, again):
    doc, new = json.load(open(part)), json.load(open(again))["runs"]
    fresh = {key(r): r for r in new if r.get("status") == "ok" and speed(r) is not None}
    replaced = 0
    for i, r in enumerate(doc["runs"]):
        n = fresh.get(key(r))
        if n is not None and speed(r) is not None and speed(n) > speed(r):
            doc["runs"][i] = n
            replaced += 1
    tmp = part + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
    os.replace(tmp, part)
    os.remove(again)
    return replaced, len(new)


def main(argv):
    if len(argv) == 3 and argv[1] == "slow":
        for line in slow(argv[2]):
            print(line)
        return 0
    if len(argv) == 4 and argv[1] == "replace":
        replaced, n = replace(argv[2], argv[3])
        print("report: %d of %d cell(s) measured again ran on a faster host: their figures replace the first ones"
              % (replaced, n))
        return 0
    print("\n".join(__doc__.strip().splitlines()[-2:]), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
