import json,statistics,sys
def load(f):
    pts={}
    for l in open(f):
        d=json.loads(l)
        if d.get('type')!='point' or d.get('status')!='ok': continue
        p=d['params']
        launch=p.get('launch') or ('fused' if d['id'].startswith('collectives/') else '')
        pts[(d['id'],p.get('size'),launch)]=d
    return pts
d=sys.argv[1]
b1=load(d+'/before-1.jsonl'); a=load(d+'/after.jsonl'); b2=load(d+'/before-2.jsonl')
for k in sorted(b1):
    if k not in a or k not in b2: continue
    o1,o2=statistics.median(b1[k]['samples_s']),statistics.median(b2[k]['samples_s'])
    n=statistics.median(a[k]['samples_s']); o=(o1+o2)/2
    print(f"{k[0]:34s} {k[1]:>10} {k[2]:5s} old {o*1e6:10.3f} new {n*1e6:10.3f} {(n/o-1)*100:+7.1f}%  old/old {(o2/o1-1)*100:+5.1f}% {'L2' if a[k].get('l2_resident') else ''}")
