#!/usr/bin/env python3
"""Why staging's speedup interval is not a bootstrap (BENCHMARKS.md "Staging").

Simulates the harness's timing loop (one ratio per pair, stop once the
interval of the median ratio is within +-1 % of the median, at least
MIN pairs, at most 40) on log-normal noise of SD 1.6 % per ratio, with
("tail 0.1") or without one ratio in ten drawn with 5x that SD, and counts
how often an A/A comparison's interval holds 1 with |median - 1| < 1 % and
how often a 3 % slowdown's lies below 1: for a 95 % percentile bootstrap
("boot") and for the order-statistic interval ("ostat") at 95 %. Staging
now uses the order-statistic interval at 99 %; the C++ harness's own loop
is measured by //staging_harness/staging:interval_coverage_benchmark, and
this script keeps the comparison with the bootstrap it replaced.
Standard library only; slow (minutes). Usage:
  tools/interval_coverage_sim.py [--runs 400]
Each output row: method, min pairs, SD, tail share, A/A hit rate, 3 %
detection rate, mean pairs of the A/A stagings.
"""
import argparse
import math
import random
import statistics as st
from math import comb


def boot(r, rng, B=2000, conf=0.95):
    n = len(r)
    ms = []
    for _ in range(B):
        s = sorted(r[rng.randrange(n)] for _ in range(n))
        ms.append(st.median(s))
    ms.sort()
    lo = ms[int((1 - conf) / 2 * (B - 1))]
    hi = ms[int((1 + conf) / 2 * (B - 1))]
    return st.median(r), lo, hi


def ostat(r, conf=0.95):
    n = len(r)
    s = sorted(r)
    a = (1 - conf) / 2
    # the largest k (1-based) with P(Binomial(n, 1/2) <= k - 1) <= a
    cdf = 0
    k = 0
    for j in range(n + 1):
        cdf += comb(n, j) / 2**n
        if cdf > a:
            break
        k = j + 1
    if k < 1:
        return st.median(r), s[0], s[-1]
    return st.median(r), s[k - 1], s[n - k]


def run(method, sd, tail, rng, true=1.0, minp=5, maxp=40, hw=0.01):
    r = []
    while True:
        e = rng.gauss(0, sd) if rng.random() > tail else rng.gauss(0, sd * 5)
        r.append(true * math.exp(e))
        if len(r) < minp:
            continue
        m, lo, hi = method(r)
        if (hi / m - 1 < hw and 1 - lo / m < hw) or len(r) >= maxp:
            return m, lo, hi, len(r)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=400)
    args = parser.parse_args()
    rng = random.Random(1)
    N = args.runs
    for name, meth in [("boot", lambda r: boot(r, rng)), ("ostat", ostat)]:
        for minp in (5, 10, 20):
            for sd, tail in ((0.016, 0.0), (0.016, 0.1)):
                hits = det = pairs = 0
                for _ in range(N):
                    m, lo, hi, n = run(meth, sd, tail, rng, minp=minp)
                    pairs += n
                    hits += lo <= 1 <= hi and abs(m - 1) < 0.01
                for _ in range(N):
                    m, lo, hi, n = run(meth, sd, tail, rng, true=1 / 1.03, minp=minp)
                    det += hi < 1
                print(name, minp, sd, tail, "AA", hits / N, "sens", det / N,
                      "pairs", pairs / N, flush=True)


if __name__ == "__main__":
    main()
