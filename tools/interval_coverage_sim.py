#!/usr/bin/env python3
"""Why staging's speedup interval is not a bootstrap (BENCHMARKS.md "Staging").

Simulates the harness's timing loop (pairs of runs, stop once the interval
of the median per-pair ratio is within +-1 % of the median, at least
--min-pairs, at most 40) on log-normal noise, and counts how often an A/A
comparison's interval holds 1 with |median - 1| < 1 % and how often a 3 %
slowdown's lies below 1, for a 95 % percentile bootstrap and for the
order-statistic interval staging uses (stats/speedup.h) at 95 and 99 %.
The C++ harness's own loop is measured by
//staging_harness/staging:interval_coverage_benchmark; this script keeps
the comparison with the bootstrap, which the harness no longer has.
Standard library only. Usage: tools/interval_coverage_sim.py [--runs 400]
"""
import argparse
import math
import random
import statistics
from math import comb


def bootstrap(ratios, rng, resamples=2000, confidence=0.95):
    n = len(ratios)
    medians = sorted(
        statistics.median(ratios[rng.randrange(n)] for _ in range(n))
        for _ in range(resamples))
    low = medians[int((1 - confidence) / 2 * (resamples - 1))]
    high = medians[int((1 + confidence) / 2 * (resamples - 1))]
    return statistics.median(ratios), low, high, True


def order_statistics(ratios, confidence):
    n, s = len(ratios), sorted(ratios)
    alpha, cdf, k = (1 - confidence) / 2, 0.0, 0
    for j in range(n):
        if 2 * j >= n:
            break
        cdf += comb(n, j) / 2**n
        if cdf > alpha:
            break
        k = j + 1
    if k == 0:
        return statistics.median(ratios), s[0], s[-1], False
    return statistics.median(ratios), s[k - 1], s[n - k], True


def staging(interval, sd, true, rng, min_pairs, max_pairs=40):
    ratios = []
    while True:
        ratios.append(true * math.exp(rng.gauss(0, sd)))
        if len(ratios) < min_pairs:
            continue
        median, low, high, reached = interval(ratios)
        narrow = reached and high / median - 1 < 0.01 and 1 - low / median < 0.01
        if narrow or len(ratios) >= max_pairs:
            return median, low, high


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    methods = [
        ("bootstrap 95 %", lambda r: bootstrap(r, rng)),
        ("order stats 95 %", lambda r: order_statistics(r, 0.95)),
        ("order stats 99 %", lambda r: order_statistics(r, 0.99)),
    ]
    print(f"{'interval':18} {'min pairs':>9} {'ratio SD':>8} {'A/A holds 1':>12} {'3 % found':>10}")
    for name, interval in methods:
        for min_pairs in (5, 10):
            for sd in (0.016, 0.025):
                aa = found = 0
                for _ in range(args.runs):
                    m, lo, hi = staging(interval, sd, 1.0, rng, min_pairs)
                    aa += lo <= 1 <= hi and abs(m - 1) < 0.01
                    m, lo, hi = staging(interval, sd, 1 / 1.03, rng, min_pairs)
                    found += hi < 1
                print(f"{name:18} {min_pairs:9} {sd:8.3f} {aa / args.runs:12.3f} {found / args.runs:10.3f}",
                      flush=True)


if __name__ == "__main__":
    main()
