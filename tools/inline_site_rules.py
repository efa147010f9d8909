#!/usr/bin/env python3
"""Can a rule over call-site features tell which inlining reversal pays?

    tools/inline_site_rules.py DIR

DIR holds train.jsonl, validation.jsonl and test.jsonl written by
`inline_site_headroom --sites-out` (one line per call site the -Oz inliner
asked about, with its features and the allocated bytes of the object when
that site alone is reversed). Every rule of a grid ("reverse where LLVM's
answer is D, the cost estimate is at most / at least C, the callee has at
most U uses and I instructions") is scored on train by the bytes its single
reversals save together; the eight best are printed with the same score on
validation and test as (sites reversed, of which shrank, bytes saved).
Measures; chooses nothing that ships.
"""
import json, os, sys
if len(sys.argv) != 2 or sys.argv[1] in ('-h', '--help'):
    print(__doc__.strip())
    sys.exit(0 if len(sys.argv) == 2 else 2)
def load(split):
    path = os.path.join(sys.argv[1], split + '.jsonl')
    rows = [json.loads(line) for line in open(path)]
    return [r for r in rows if r['reversed_bytes'] > 0]
train, validation, test = load('train'), load('validation'), load('test')
def score(rows, rule):
    n = shrank = saved = 0
    for r in rows:
        if rule(r):
            d = r.get('base_bytes', r['oz_bytes']) - r['reversed_bytes']
            n, shrank, saved = n + 1, shrank + (d > 0), saved + d
    return n, shrank, saved
def make(d, c, at_least, u, i):
    def rule(r):
        cost = r['cost_estimate']
        return (r['default_inlines'] == d and cost is not None and
                (cost >= c if at_least else cost <= c) and
                r['callee_uses'] <= u and r['callee_instructions'] <= i)
    return rule
scored = []
for d in (True, False):
    for c in (-40, -30, -25, -20, -15, -10, -5, 0, 5, 10, 20, 30, 40, 60, 100):
        for u in (1, 2, 3, 4, 6, 10, 1000):
            for i in (2, 4, 6, 8, 12, 20, 40, 1000):
                for at_least in (False, True):
                    rule = make(d, c, at_least, u, i)
                    n, shrank, saved = score(train, rule)
                    if n:
                        scored.append((saved, n, shrank, d, c, at_least, u, i, rule))
scored.sort(key=lambda x: -x[0])
print(f'{len(train)} train sites, {sum(r["reversed_bytes"] < r.get("base_bytes", r["oz_bytes"]) for r in train)} shrink alone')
for saved, n, shrank, d, c, at_least, u, i, rule in scored[:8]:
    print(f'train saves {saved} ({n} reversed, {shrank} shrank) | LLVM inlines: {d}, '
          f'cost {">=" if at_least else "<="} {c}, uses <= {u}, instructions <= {i} | '
          f'validation {score(validation, rule)} test {score(test, rule)}')
