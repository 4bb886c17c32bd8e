#!/usr/bin/env python3
"""compare_cap.py: the rows of cap/ (the calibration's third launch, fused loops up to NB_MAX_ITERS) beside
cap-1000/ (fused loops up to 2^20, no third launch): per point the events' and the in-kernel timer's figure
(µs or ps per operation), their gap, and the change of the events' figure."""
import gzip, json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
def load(p):
    f = gzip.open(p, "rt") if p.endswith(".gz") else open(p)
    out = {}
    for l in f:
        r = json.loads(l)
        if r.get("type") != "point" or r.get("status") != "ok":
            continue
        pr = r["params"]
        if not r.get("kernel_timer"):
            continue
        ev = sorted(r["samples_s"])[len(r["samples_s"]) // 2]
        out[(r["id"], pr.get("size"), pr.get("dtype", ""), pr.get("launch", ""))] = (ev, r["kernel_timer"]["median"], r.get("flags") or [])
    return out
new = load(os.path.join(here, "cap.jsonl.gz"))
old = load(os.path.join(here, "..", "cap-1000", "cap.jsonl.gz"))
print(f"{'id':34s} {'size':>6s} {'dtype':5s} {'launch':6s} {'events s/op':>12s} {'kernel s/op':>12s} {'gap':>7s} {'cap-1000 gap':>12s} {'events vs cap-1000':>18s}")
for k in sorted(new):
    ev, kt, fl = new[k]
    o = old.get(k)
    og = f"{100*(o[0]/o[1]-1):+.1f}%" if o else "–"
    ch = f"{100*(ev/o[0]-1):+.1f}%" if o else "–"
    print(f"{k[0]:34s} {k[1]:6d} {k[2]:5s} {k[3]:6s} {ev:12.4g} {kt:12.4g} {100*(ev/kt-1):+6.1f}% {og:>12s} {ch:>18s}")
