#!/usr/bin/env python3
"""Per group of rows, how a compare's moved rows moved: reads the markdown
tables `nvshbench compare --format markdown` wrote (compare.sh) and prints,
per group (the ID without its last part; NCCL rows apart), the rows, the
rows the Mann-Whitney test calls moved, and the median and range of their
change in time per operation (+ slower: new/old - 1 for a time, old/new - 1
for a bandwidth or rate), from the table's two medians."""
import re, statistics, sys
from collections import defaultdict

def rows(path):
    for line in open(path, encoding="utf-8"):
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) < 7 or not re.match(r"^[a-z]+/", c[0]):
            continue
        try:
            old, new = float(c[4]), float(c[5])
        except ValueError:
            continue
        yield c[0], c[1], c[2], c[3], old, new, c[6]

def group(id_):
    parts = id_.split("/")
    g = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
    lib = "nccl" if any(p.startswith("nccl") for p in parts) else ("limit" if parts[0] == "limit" else "nvshmem")
    if parts[0] == "collectives":
        g = "collectives/" + ("nccl" if lib == "nccl" else "nvshmem")
    return f"{g} [{lib}]"

for path in sys.argv[1:]:
    print(f"== {path}")
    stats = defaultdict(lambda: [0, []])
    for id_, size, params, metric, old, new, delta in rows(path):
        g = group(id_)
        stats[g][0] += 1
        if delta.strip() == "~" or not delta or old <= 0 or new <= 0:
            continue
        slow = new / old - 1 if metric.startswith(("µs", "us", "ms")) else old / new - 1
        stats[g][1].append(100 * slow)
    print(f"{'group':44} {'rows':>5} {'moved':>6} {'median':>8} {'min':>8} {'max':>8}   (time per operation, + slower)")
    for g in sorted(stats):
        n, ch = stats[g]
        if ch:
            print(f"{g:44} {n:5d} {len(ch):6d} {statistics.median(ch):+7.1f}% {min(ch):+7.1f}% {max(ch):+7.1f}%")
        else:
            print(f"{g:44} {n:5d} {0:6d}")
