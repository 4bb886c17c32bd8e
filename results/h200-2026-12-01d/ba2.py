#!/usr/bin/env python3
"""ba2.py DIR: the ba2 step's points old/new/old/new, medians side by side
(µs per operation; a rate's time per operation is 1 / rate), the spread of
the two old runs and of the two new, and new against old (mean of each pair)."""
import gzip, json, sys, os
d = sys.argv[1] if len(sys.argv) > 1 else "."
def load(n):
    p = os.path.join(d, n)
    f = gzip.open(p + ".gz", "rt") if os.path.exists(p + ".gz") else open(p)
    out = {}
    for l in f:
        r = json.loads(l)
        if r.get("type") != "point" or r.get("status") != "ok":
            continue
        pr = r["params"]
        key = (r["id"], pr.get("size"), pr.get("launch", ""), pr.get("dtype", ""))
        m = r["metrics"]
        if "latency" in m:
            v = m["latency"]["median"] * 1e6
        else:
            v = 1e6 / m["rate"]["median"]  # µs per operation
        out[key] = v
    return out
runs = [load(n) for n in ("ba2-before-1.jsonl", "ba2-after-1.jsonl", "ba2-before-2.jsonl", "ba2-after-2.jsonl")]
print(f"{'id':42s} {'size':>8s} {'launch':6s} {'old1':>9s} {'new1':>9s} {'old2':>9s} {'new2':>9s} {'old/old':>8s} {'new/new':>8s} {'new/old':>8s}")
for k in sorted(set(runs[0]) & set(runs[1]) & set(runs[2]) & set(runs[3])):
    o1, n1, o2, n2 = (r[k] for r in runs)
    print(f"{k[0]:42s} {k[1]:8d} {k[2]:6s} {o1:9.3f} {n1:9.3f} {o2:9.3f} {n2:9.3f} {100*(o2/o1-1):+7.1f}% {100*(n2/n1-1):+7.1f}% {100*((n1+n2)/(o1+o2)-1):+7.1f}%")
