#!/usr/bin/env python3
"""How much per-call-site inlining decisions could shrink objects below -Oz.

    tools/inline_site_headroom.py SPLIT MAX_SITES MAX_IR [CORPUS]

For each module of the corpus split (at most MAX_IR unoptimised IR
instructions), each of its first MAX_SITES calls to a function the module
defines is forced `noinline`, then `alwaysinline` (a call-site attribute,
one site at a time); each variant runs `opt-16 -passes='default<Oz>'` and
`llc-16`, and the object's allocated bytes (every SHF_ALLOC section) are
compared with plain -Oz's. The flips that shrink the object are then added
greedily, biggest first, each kept only if the whole still shrinks. Prints
one line per module and the geomean of -Oz's bytes over the result: a lower
bound on what per-call-site decisions are worth (only the first sites, one
flip at a time, greedy). Measures; trains and chooses nothing. CORPUS
defaults to ~/.cache/phaseloop/corpus-debian (phaseloop corpus fetch-debian).
"""
import json, os, re, subprocess, sys, tempfile, math
if len(sys.argv) > 1 and sys.argv[1] in ('-h', '--help'):
    print(__doc__.strip())
    sys.exit(0)
if len(sys.argv) < 4:
    print('usage: tools/inline_site_headroom.py SPLIT MAX_SITES MAX_IR [CORPUS] (--help)',
          file=sys.stderr)
    sys.exit(2)
root = os.path.expanduser(sys.argv[4] if len(sys.argv) > 4 else '~/.cache/phaseloop/corpus-debian')
m = json.load(open(root + '/manifest.json'))
split, max_sites, max_ir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
mods = [x for x in m['modules'] if x['split'] == split and 0 < x['ir_count_o0'] <= max_ir]
def alloc(obj):
    out = subprocess.run(['llvm-readelf-16', '-S', '-W', obj], capture_output=True, text=True).stdout
    t = 0
    for line in out.splitlines():
        mm = re.match(r'\s*\[\s*\d+\]\s+(\S*)\s+(\S+)\s+\S+\s+\S+\s+(\S+)\s+\S+\s+(\S*)\s', line)
        if mm and 'A' in mm.group(4): t += int(mm.group(3), 16)
    return t
def size_of(ll, d):
    open(d + '/x.ll', 'w').write(ll)
    r = subprocess.run(['opt-16', '-passes=default<Oz>', d + '/x.ll', '-o', d + '/x.bc'], capture_output=True)
    if r.returncode: return None
    r = subprocess.run(['llc-16', '-filetype=obj', d + '/x.bc', '-o', d + '/x.o'], capture_output=True)
    if r.returncode: return None
    return alloc(d + '/x.o')
def sites(ll):
    defined = set(re.findall(r'^define [^@]*@([\w.$]+)\(', ll, re.M))
    out = []
    for mt in re.finditer(r'(?:call|invoke) [^@\n]*@([\w.$]+)\(', ll):
        if mt.group(1) not in defined: continue
        i, depth = mt.end() - 1, 0
        while i < len(ll):
            if ll[i] == '(': depth += 1
            elif ll[i] == ')':
                depth -= 1
                if depth == 0: break
            elif ll[i] == '\n': i = -1; break
            i += 1
        if i > 0: out.append(i + 1)
    return out
def flip(ll, positions, attr):
    for p in sorted(positions, reverse=True): ll = ll[:p] + ' ' + attr + ll[p:]
    return ll
tot = []
for x in mods:
    bc = os.path.join(root, x['bitcode_path'])
    d = tempfile.mkdtemp(prefix='inline-sites-')
    ll = subprocess.run(['llvm-dis-16', bc, '-o', '-'], capture_output=True, text=True).stdout
    base = size_of(ll, d)
    if not base: continue
    ss = sites(ll)[:max_sites]
    gains = {}
    for attr in ('noinline', 'alwaysinline'):
        for p in ss:
            v = size_of(flip(ll, [p], attr), d)
            if v and v < base: gains.setdefault(attr, []).append((base - v, p))
    # combine: each site's better flip, greedily in order of gain, kept if it helps
    best, chosen = base, {}
    cands = sorted([(g, p, a) for a, l in gains.items() for g, p in l], reverse=True)
    for g, p, a in cands:
        if p in chosen: continue
        trial = dict(chosen); trial[p] = a
        ll2 = ll
        for q in sorted(trial, reverse=True): ll2 = ll2[:q] + ' ' + trial[q] + ll2[q:]
        v = size_of(ll2, d)
        if v and v < best: best, chosen = v, trial
    tot.append(base / best)
    print(x['name'], len(ss), base, best, round(base / best, 4), {a: len(l) for a, l in gains.items()}, flush=True)
    subprocess.run(['rm', '-rf', d])
print('modules', len(tot), 'geomean gain vs Oz', math.exp(sum(map(math.log, tot)) / len(tot)))
