"""The dependency rules' check (tools/BUILD, ARCHITECTURE.md).

Every BUILD of a stage or of common/ ends with `layering_deps()`: a genquery
listing the rules its targets reach. //tests:layering_test reads them all and
fails when a package reaches what its room may not use, so the rules hold for
the whole graph even where a visibility list is widened by mistake.
"""

def layering_deps():
    """Declares :layering_deps, the rules every target of this package reaches."""
    rules = [":" + name for name in sorted(native.existing_rules().keys())]
    native.genquery(
        name = "layering_deps",
        expression = "kind(rule, deps(set(%s)))" % " ".join(
            ["\"//%s%s\"" % (native.package_name(), r) for r in rules],
        ),
        scope = rules,
        testonly = True,
        visibility = ["//tests:__pkg__"],
    )
