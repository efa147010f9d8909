"""Fuzz targets (issue 19; README "Fuzzing").

phaseloop_fuzz_target(name, srcs, deps, corpus) declares, in the package of
the parser it fuzzes:
  <name>        the fuzzer: with --config=fuzz (clang-16) a libFuzzer
                binary, otherwise the same target linked with the
                standalone driver (common/fuzzing/standalone_main.cc);
  <name>_test   a bounded run over the seed corpus (tag "fuzz"): libFuzzer
                with a fixed seed and run count under --config=fuzz, else
                the standalone driver's deterministic mutations. A crash or
                failed invariant fails the test and leaves its input in the
                test's outputs (crash-input).
`corpus` is a directory of seed inputs beside the target, kept in the tree;
every crash found becomes a file there (a regression input).
"""

def phaseloop_fuzz_target(name, srcs, deps, corpus, seeds = [], runs = 3000, max_len = 4096, size = "small"):
    """Declares a fuzzer and its bounded CI run.

    Args:
      name: the fuzzer's name (<name>_test is its CI run).
      srcs: the file defining LLVMFuzzerTestOneInput.
      deps: what it links.
      corpus: the seed corpus directory, relative to this package.
      seeds: more seed files, as labels (e.g. a shipped config), read in
        place rather than copied into the corpus.
      runs: inputs to try beyond the seeds in a CI run.
      max_len: the longest input tried.
      size: the test's size.
    """
    native.cc_binary(
        name = name,
        srcs = srcs,
        testonly = True,
        deps = deps + ["//common/fuzzing:fuzz_target"] + select({
            "//common/sanitizers:libfuzzer": [],
            "//conditions:default": ["//common/fuzzing:standalone_main"],
        }),
        linkopts = select({
            "//common/sanitizers:libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
    )
    native.sh_test(
        name = name + "_test",
        size = size,
        srcs = ["//common/fuzzing:run_fuzz_target.sh"],
        args = [
            "$(location :%s)" % name,
            native.package_name() + "/" + corpus,
            str(runs),
            str(max_len),
        ] + select({
            "//common/sanitizers:libfuzzer": ["libfuzzer"],
            "//conditions:default": ["standalone"],
        }) + ["$(rootpaths %s)" % seed for seed in seeds],
        data = [":" + name] + native.glob([corpus + "/**"]) + seeds,
        tags = ["fuzz"],
    )
