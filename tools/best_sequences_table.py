#!/usr/bin/env python3
"""Turns a best-sequences file (phaseloop search --best-out) into a policy
table phaseloop-cc and phaseloop eval run as `table:FILE`: one row per
module, its best sequence as a pipeline, optionally with code generator
options appended (e.g. --codegen machine-outliner).

  tools/best_sequences_table.py BEST.json --phaseloop BIN [--objective alloc_size]
      [--codegen machine-outliner] --out TABLE

BIN is the phaseloop binary (its `actions --json` maps action indices to
pipelines). Modules whose best sequence is empty get the plain -Oz row
(default<Oz>), so a table entry exists for every searched module.
"""
import argparse
import json
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("best")
    ap.add_argument("--phaseloop", required=True)
    ap.add_argument("--objective", default="alloc_size",
                    help="the search's objective (alloc_size, text_size, ir_count)")
    ap.add_argument("--codegen", default="")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    actions = json.loads(subprocess.run(
        [args.phaseloop, "actions", "--json"], check=True,
        capture_output=True, text=True).stdout)
    if isinstance(actions, dict):
        actions = actions.get("actions", [])
    pipeline_of = {a["index"]: a["pipeline"] for a in actions}
    with open(args.best) as f:
        best = json.load(f)
    rows = []
    for s in best.get("sequences", []):
        if s.get("objective") != args.objective:
            continue
        seq = [pipeline_of[a] for a in s.get("actions", [])]
        pipeline = ",".join(seq) if seq else "default<Oz>"
        if args.codegen:
            pipeline += ",codegen<%s>" % args.codegen
        rows.append((s["module_hash"], pipeline))
    if not rows:
        sys.exit("no %s sequences in %s" % (args.objective, args.best))
    with open(args.out, "w") as f:
        f.write("# phaseloop policy table v1\n")
        for h, p in sorted(rows):
            f.write("%s\t%s\n" % (h, p))
    print("%d rows written to %s" % (len(rows), args.out))


if __name__ == "__main__":
    main()
