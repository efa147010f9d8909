#!/usr/bin/env python3
"""Dev aid: tries a workload YAML the way the staging harness will use it.

    tools/try_workload.py configs/workloads/bzip2.yaml [--cc PATH] [--reps N]
                          [--also-cc clang-16] [--keep]

Builds a fresh copy of the workload's source with CC=--cc (default: the
phaseloop-cc wrapper under bazel-bin) and CFLAGS=-O3, generates its inputs
(sh -c, $SEED and $OUTPUT set, in the run directory), copies the artifacts
into the run directory at their relative paths, runs every run command
--reps times with sh -c, checks the runs agree (stdout, exit status, check
files) and prints build time, run times and output sizes. --also-cc builds
a second time with another compiler and checks its outputs are the same.

Not the harness (staging_harness/ is): it does no timing statistics, no
time limits beyond the YAML's, and trusts the YAML (LoadWorkload validates
it). A `debian:<pkg>` source must already be in the Debian source cache
(tools/fetch_sources.sh PKG). Needs python3-yaml.
"""

import argparse
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import yaml


def source_tree(path, source):
    if source.startswith("debian:"):
        cache = os.environ.get("PHASELOOP_CACHE",
                               os.path.expanduser("~/.cache/phaseloop"))
        tree = os.path.join(cache, "debian-src", source[len("debian:"):])
        if not os.path.exists(os.path.join(tree, ".phaseloop-unpacked")):
            sys.exit(f"{path}: {source} is not in the cache; run "
                     f"tools/fetch_sources.sh {source[len('debian:'):]}")
        return tree
    return os.path.join(os.path.dirname(path), source)


def build(workload, tree, cc, work):
    copy = os.path.join(work, "src")
    shutil.copytree(tree, copy, symlinks=True)
    env = dict(os.environ, CC=cc, CXX=cc.replace("-cc", "-c++"),
               CFLAGS="-O3", CXXFLAGS="-O3")
    spec = workload["build"]
    start = time.monotonic()
    done = subprocess.run(["sh", "-c", spec["command"]], cwd=copy, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=spec.get("timeout_s", 600))
    seconds = time.monotonic() - start
    if done.returncode != 0:
        sys.stdout.write(done.stdout.decode(errors="replace")[-4000:])
        sys.exit(f"build with CC={cc} failed (exit {done.returncode})")
    return copy, seconds


def run_dir(workload, tree, built, work):
    rundir = os.path.join(work, "run")
    os.makedirs(rundir)
    for artifact in workload["build"]["artifacts"]:
        target = os.path.join(rundir, artifact)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(built, artifact), target)
    for spec in workload.get("inputs", []):
        target = os.path.join(rundir, spec["file"])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if "generate" in spec:
            env = dict(os.environ, SEED=str(spec["seed"]), OUTPUT=target)
            subprocess.run(["sh", "-c", spec["generate"]], cwd=rundir,
                           env=env, check=True)
        else:
            shutil.copy2(os.path.join(tree, spec["file"]), target)
    return rundir


def digest(data):
    return hashlib.sha256(data).hexdigest()[:16]


def run_once(command, check, rundir, timeout):
    for name in check.get("files", []):
        path = os.path.join(rundir, name)
        if os.path.exists(path):
            os.remove(path)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(["sh", "-c", command], cwd=rundir,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout)
    seconds = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime +
                                               before.ru_stime)
    files = {}
    for name in check.get("files", []):
        with open(os.path.join(rundir, name), "rb") as f:
            files[name] = digest(f.read())
    outcome = (done.returncode, digest(done.stdout), files)
    if done.returncode != check.get("exit_status", 0):
        sys.stderr.write(done.stderr.decode(errors="replace")[-2000:])
        sys.exit(f"{command!r} exited {done.returncode}")
    return outcome, seconds, len(done.stdout), cpu


def try_compiler(workload, tree, cc, reps, keep):
    work = tempfile.mkdtemp(prefix="try_workload.")
    try:
        return build_and_run(workload, tree, cc, reps, work)
    finally:
        if keep:
            print(f"  kept {work}")
        else:
            shutil.rmtree(work)


def build_and_run(workload, tree, cc, reps, work):
    built, build_s = build(workload, tree, cc, work)
    rundir = run_dir(workload, tree, built, work)
    default_check = workload.get("check", {})
    outcomes = {}
    print(f"  CC={cc}: build {build_s:.1f} s")
    for i, run in enumerate(workload["run"]):
        name = run.get("name", f"run[{i}]")
        check = run.get("check", default_check)
        results = [run_once(run["command"], check, rundir, run["timeout_s"])
                   for _ in range(reps)]
        distinct = {repr(r[0]) for r in results}
        times = [r[1] for r in results]
        cpus = [r[3] for r in results]
        print(f"    {name}: median {statistics.median(times):.3f} s "
              f"(min {min(times):.3f}, max {max(times):.3f}; "
              f"cpu median {statistics.median(cpus):.3f} s), "
              f"stdout {results[0][2]} bytes, "
              f"{'deterministic' if len(distinct) == 1 else 'DIFFERS'}")
        if len(distinct) != 1:
            sys.exit(f"{name}: runs disagree: {distinct}")
        outcomes[name] = results[0][0]
    return outcomes


def main():
    default_cc = os.path.abspath(
        "bazel-bin/compiler_driver/cc_wrapper/phaseloop-cc")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("yaml")
    parser.add_argument("--cc", default=default_cc)
    parser.add_argument("--also-cc", default="")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    with open(args.yaml) as f:
        workload = yaml.safe_load(f)
    tree = source_tree(args.yaml, workload["source"])
    print(f"{workload['name']} ({workload['source']}, {workload['split']})")
    first = try_compiler(workload, tree, args.cc, args.reps, args.keep)
    if args.also_cc:
        second = try_compiler(workload, tree, args.also_cc, 1, args.keep)
        if first != second:
            sys.exit(f"outputs differ between {args.cc} and {args.also_cc}")
        print(f"  same outputs with {args.also_cc}")


if __name__ == "__main__":
    main()
