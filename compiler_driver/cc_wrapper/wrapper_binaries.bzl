"""The wrapper's binaries: the launcher (phaseloop-cc, phaseloop-c++) and
the optimizer (phaseloop-cc-opt) it execs from its own directory.

Macros, so that a test wrapper (//compiler_driver/testing/miscompile) is
built from the same sources, dependencies and link options as the product,
plus the test-only passes it links, and nothing else.
"""

_PKG = "//compiler_driver/cc_wrapper"

def launcher_binary(name, data, **kwargs):
    """A launcher; `data` must hold the phaseloop-cc-opt it will exec."""
    native.cc_binary(
        name = name,
        srcs = [_PKG + ":launcher_main.cc"],
        data = data,
        # Fully static: no dynamic loader work, ~0.5 ms to start
        # (pass-through target: within 3 % of plain clang).
        linkopts = _static(["-static"]),
        deps = [
            _PKG + ":argument_processing",
            _PKG + ":clang_exec",
            _PKG + ":response_file",
            _PKG + ":spool_writer",
            _PKG + ":wrapper_config",
        ],
        **kwargs
    )

# Fully static. Dynamically linked, ~15 ms of CPU per compile went to the
# loader (40 shared libraries to map and relocate; perf); static, a start
# costs ~1 ms. The group repeats the static archives of the libraries the
# dependencies name, which static linking needs in one group.
_OPTIMIZER_LINKOPTS = [
    "-static",
    "-Wl,--start-group",
    "-labsl_bad_optional_access",
    "-labsl_bad_variant_access",
    "-labsl_base",
    "-labsl_city",
    "-labsl_cord",
    "-labsl_cord_internal",
    "-labsl_cordz_functions",
    "-labsl_cordz_handle",
    "-labsl_cordz_info",
    "-labsl_debugging_internal",
    "-labsl_demangle_internal",
    "-labsl_exponential_biased",
    "-labsl_graphcycles_internal",
    "-labsl_hash",
    "-labsl_int128",
    "-labsl_log_severity",
    "-labsl_low_level_hash",
    "-labsl_malloc_internal",
    "-labsl_raw_hash_set",
    "-labsl_raw_logging_internal",
    "-labsl_spinlock_wait",
    "-labsl_stacktrace",
    "-labsl_status",
    "-labsl_statusor",
    "-labsl_str_format_internal",
    "-labsl_strerror",
    "-labsl_strings",
    "-labsl_strings_internal",
    "-labsl_symbolize",
    "-labsl_synchronization",
    "-labsl_throw_delegate",
    "-labsl_time",
    "-labsl_time_zone",
    "-lprotobuf",
    "-lz",
    "-lzstd",
    "-ltinfo",
    "-Wl,--end-group",
]

def _static(linkopts):
    """`linkopts` without "-static" in sanitizer builds (gcc refuses
    -static with -fsanitize=address/thread; .bazelrc's asan and tsan
    configs set --define=sanitizer=...)."""
    dynamic = [opt for opt in linkopts if opt != "-static"]
    return select({
        "//common/sanitizers:asan": dynamic,
        "//common/sanitizers:tsan": dynamic,
        "//conditions:default": linkopts,
    })

def optimizer_binary(name, extra_deps = [], **kwargs):
    """phaseloop-cc-opt; `extra_deps`: test-only passes (alwayslink)."""
    native.cc_binary(
        name = name,
        srcs = [_PKG + ":optimizer_main.cc"],
        linkopts = _static(_OPTIMIZER_LINKOPTS),
        deps = [
            _PKG + ":argument_processing",
            "//common/process:child_process",
            "//common/protobuf:protobuf_logs",
            "//common/protobuf:utf8_strings",
            "//common/signing:signature",
            _PKG + ":clang_exec",
            _PKG + ":in_process_frontend",
            _PKG + ":interrupt_cleanup",
            _PKG + ":new_file",
            _PKG + ":object_cache",
            _PKG + ":outcome_cache",
            _PKG + ":policy",
            _PKG + ":response_file",
            _PKG + ":spool_space",
            _PKG + ":spool_writer",
            _PKG + ":stage_trace",
            _PKG + ":stderr_capture",
            _PKG + ":tu_optimizer",
            _PKG + ":wrapper_config",
            "//compiler_driver/ir:collected_diagnostics",
            "//compiler_driver/passes:pipeline_check",
            "//compiler_driver/policy_runtime:topk_defaults",
            "//proto:decision",
            "@clang//:static",
        ] + extra_deps,
        **kwargs
    )
