// End-to-end tests of phaseloop-cc / phaseloop-c++ as a build calls them: the
// real binaries, the real clang-16, files on disk. Faithfulness (objects
// equal to plain clang's), dependency files, warnings, pass-through, the
// kill switch, and every fail-open path with injected faults.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "absl/strings/str_join.h"
#include "tests/phaseloop_cc_fixture.h"

namespace phaseloop {
namespace {

TEST_F(PhaseloopCcTest, ObjectsEqualPlainClangsForEveryFixture) {
  // The baseline policy runs the very pipeline clang runs: same frontend,
  // same passes, same codegen settings give the same bytes.
  const std::vector<std::vector<std::string>> flag_sets = {
      {"-O2"},
      {"-Oz"},
      {"-O3", "-g"},
      {"-Os", "-fno-pic"},
      {"-O2", "-ffunction-sections", "-fdata-sections", "-march=haswell"}};
  for (const auto& [name, path] : fixtures_) {
    const bool cxx = name.find(".cc") != std::string::npos;
    for (const auto& flags : flag_sets) {
      std::vector<std::string> ours = {cxx ? cxx_ : cc_};
      std::vector<std::string> theirs = {cxx ? "clang++-16" : "clang-16"};
      for (auto* argv : {&ours, &theirs}) {
        argv->insert(argv->end(), flags.begin(), flags.end());
        argv->insert(argv->end(), {"-c", path});
      }
      ours.insert(ours.end(), {"-o", "ours.o"});
      theirs.insert(theirs.end(), {"-o", "theirs.o"});
      std::string log;
      ASSERT_EQ(Run(ours, {}, &log), 0) << log;
      ASSERT_EQ(Run(theirs), 0);
      EXPECT_EQ(Read("ours.o"), Read("theirs.o"))
          << name << " with " << flags[0] << " " << flags.size();
    }
  }
  std::vector<v1::Decision> decisions = Decisions();
  ASSERT_EQ(decisions.size(), fixtures_.size() * flag_sets.size());
  for (const v1::Decision& d : decisions) {
    EXPECT_EQ(d.outcome(), v1::OPTIMIZED) << d.reason() << ": " << d.detail();
    EXPECT_EQ(d.module_hash().size(), 32u);
    EXPECT_EQ(d.autophase_size(), 56);
    EXPECT_EQ(d.inst_count_size(), 70);
    EXPECT_EQ(d.pipeline(), "default<" + d.opt_level() + ">");
    EXPECT_EQ(d.policy_version(), "baseline");
    EXPECT_GT(d.text_size(), 0);
  }
}

TEST_F(PhaseloopCcTest, FixedPolicyIsReproducibleAndLogged) {
  const std::string policy = dir_ + "/policy";
  std::ofstream(policy) << "# size first\nfixed:default<Oz>\n";
  std::vector<std::string> argv = {cc_, "-O2", "-c", fixtures_["sorting.c"],
                                   "--phaseloop-policy=" + policy};
  ASSERT_EQ(Run(argv), 0);
  std::string first = Read("sorting.o");
  ASSERT_EQ(Run(argv, {{"PHASELOOP_BUILD_ID", "ci-7"}}), 0);
  EXPECT_EQ(Read("sorting.o"), first);
  // default<Oz> on an -O2 module is not what clang -O2 emits.
  ASSERT_EQ(
      Run({"clang-16", "-O2", "-c", fixtures_["sorting.c"], "-o", "clang.o"}),
      0);
  EXPECT_NE(Read("clang.o"), first);
  std::vector<v1::Decision> decisions = Decisions();
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[1].pipeline(), "default<Oz>");
  EXPECT_EQ(decisions[1].build_id(), "ci-7");
  EXPECT_EQ(decisions[0].module_hash(), decisions[1].module_hash());
  EXPECT_EQ(decisions[0].policy_version().size(), 32u);
}

// A pipeline ending in codegen<machine-outliner> compiles with LLVM's
// machine outliner on: the object is clang's with -mllvm
// -enable-machine-outliner, byte for byte, and every fixture built that way
// prints what the plain clang build prints.
TEST_F(PhaseloopCcTest, MachineOutlinerCodegenOptionMatchesClangAndRuns) {
  const std::string spec =
      "--phaseloop-policy=fixed:default<Oz>,codegen<machine-outliner>";
  int outlined = 0;
  for (const auto& [name, path] : fixtures_) {
    SCOPED_TRACE(name);
    const bool cxx = name.find(".cc") != std::string::npos;
    const std::string clang = cxx ? "clang++-16" : "clang-16";
    std::string log;
    ASSERT_EQ(Run({cxx ? cxx_ : cc_, "-Oz", "-c", path, "-o", "ours.o", spec},
                  {}, &log),
              0)
        << log;
    ASSERT_EQ(Run({clang, "-Oz", "-mllvm", "-enable-machine-outliner", "-c",
                   path, "-o", "theirs.o"}),
              0);
    EXPECT_EQ(Read("ours.o"), Read("theirs.o"));
    if (Read("ours.o").find("OUTLINED_FUNCTION") != std::string::npos)
      ++outlined;
    ASSERT_EQ(Run({clang, "ours.o", "-o", "ours"}), 0);
    ASSERT_EQ(Run({clang, "-O0", path, "-o", "reference"}), 0);
    std::string ours_out, reference_out;
    ASSERT_EQ(Run({dir_ + "/ours"}, {}, &ours_out), 0);
    ASSERT_EQ(Run({dir_ + "/reference"}, {}, &reference_out), 0);
    EXPECT_EQ(ours_out, reference_out);
  }
  EXPECT_GT(outlined, 0);
  for (const v1::Decision& d : Decisions()) {
    if (d.outcome() != v1::OPTIMIZED) continue;
    EXPECT_EQ(d.pipeline(), "default<Oz>,codegen<machine-outliner>");
  }
  // An unknown codegen option is a policy error: plain clang, and the
  // record says so.
  std::string log;
  ASSERT_EQ(Run({cc_, "-Oz", "-c", fixtures_["bits.c"], "-o", "bad.o",
                 "--phaseloop-policy=fixed:default<Oz>,codegen<fast-isel>"},
                {}, &log),
            0)
      << log;
  EXPECT_EQ(Decisions().back().outcome(), v1::FAIL_OPEN);
  EXPECT_EQ(Decisions().back().reason(), "policy_unavailable");
}

// A profile from clang's frontend instrumentation is read by the in-process
// frontend into the IR, so the object is clang's with the same profile,
// byte for byte, and differs from the object without it; an IR-level
// profile (which clang's pass pipeline reads) makes the wrapper run plain
// clang, and the record says why.
TEST_F(PhaseloopCcTest, ProfileUseMatchesClangOrFallsBack) {
  const std::string source = fixtures_["interpreter.c"];
  auto profile = [&](const std::string& instrument, const std::string& name) {
    std::string log;
    EXPECT_EQ(
        Run({"clang-16", "-O2", instrument, source, "-o", name}, {}, &log), 0)
        << log;
    EXPECT_EQ(Run({dir_ + "/" + name},
                  {{"LLVM_PROFILE_FILE", dir_ + "/" + name + ".profraw"}}),
              0);
    EXPECT_EQ(Run({"llvm-profdata-16", "merge", "-o", name + ".profdata",
                   name + ".profraw"},
                  {}, &log),
              0)
        << log;
    return dir_ + "/" + name + ".profdata";
  };
  const std::string frontend = profile("-fprofile-instr-generate", "fe");
  const std::string ir = profile("-fprofile-generate", "ir");

  std::string log;
  ASSERT_EQ(Run({cc_, "-O2", "-c", source, "-o", "plain.o"}, {}, &log), 0)
      << log;
  for (const std::string& flag :
       {"-fprofile-instr-use=" + frontend, "-fprofile-use=" + frontend}) {
    SCOPED_TRACE(flag);
    ASSERT_EQ(Run({cc_, "-O2", flag, "-c", source, "-o", "ours.o"}, {}, &log),
              0)
        << log;
    ASSERT_EQ(Run({"clang-16", "-O2", flag, "-c", source, "-o", "theirs.o"}),
              0);
    EXPECT_EQ(Read("ours.o"), Read("theirs.o"));
    EXPECT_NE(Read("ours.o"), Read("plain.o"));
    EXPECT_EQ(Decisions().back().outcome(), v1::OPTIMIZED)
        << Decisions().back().reason() << ": " << Decisions().back().detail();
  }
  std::vector<v1::Decision> decisions = Decisions();
  ASSERT_EQ(decisions.size(), 3u);
  // The profile is in the frontend's module, so in its hash (and in every
  // cache key built on it).
  EXPECT_NE(decisions[1].module_hash(), decisions[0].module_hash());
  EXPECT_EQ(decisions[2].module_hash(), decisions[1].module_hash());
  // Two standard pipelines on a module with profile data: each would add
  // the "CG Profile" module flag; the module keeps one, and verifies.
  for (const char* policy :
       {"fixed:default<O2>,default<O2>", "fixed:default<O1>,default<O3>"}) {
    ASSERT_EQ(
        Run({cc_, "-O2", "-fprofile-instr-use=" + frontend, "-c", source, "-o",
             "twice.o", std::string("--phaseloop-policy=") + policy},
            {}, &log),
        0)
        << log;
    EXPECT_EQ(Decisions().back().outcome(), v1::OPTIMIZED)
        << policy << ": " << Decisions().back().detail();
  }
  // The split-functions codegen option is clang's -fsplit-machine-functions:
  // with the profile, cold blocks move to .text.split. sections.
  ASSERT_EQ(
      Run({cc_, "-O2", "-fprofile-instr-use=" + frontend, "-c", source, "-o",
           "split.o",
           "--phaseloop-policy=fixed:default<O2>,codegen<split-functions>"},
          {}, &log),
      0)
      << log;
  EXPECT_EQ(Decisions().back().outcome(), v1::OPTIMIZED)
      << Decisions().back().detail();
  ASSERT_EQ(Run({"clang-16", "-O2", "-fprofile-instr-use=" + frontend,
                 "-fsplit-machine-functions", "-c", source, "-o", "theirs.o"}),
            0);
  EXPECT_EQ(Read("split.o"), Read("theirs.o"));
  EXPECT_NE(Read("split.o").find(".text.split."), std::string::npos);
  // A user's own -fsplit-machine-functions is compiled in process too, to
  // clang's object.
  ASSERT_EQ(
      Run({cc_, "-O2", "-fprofile-instr-use=" + frontend,
           "-fsplit-machine-functions", "-c", source, "-o", "user_split.o"},
          {}, &log),
      0)
      << log;
  EXPECT_EQ(Decisions().back().outcome(), v1::OPTIMIZED)
      << Decisions().back().reason() << ": " << Decisions().back().detail();
  EXPECT_EQ(Read("user_split.o"), Read("theirs.o"));
  // Without a profile it splits nothing: the object is plain -O2's.
  ASSERT_EQ(
      Run({cc_, "-O2", "-c", source, "-o", "split_plain.o",
           "--phaseloop-policy=fixed:default<O2>,codegen<split-functions>"},
          {}, &log),
      0)
      << log;
  EXPECT_EQ(Read("split_plain.o"), Read("plain.o"));

  ASSERT_EQ(
      Run({cc_, "-O2", "-fprofile-use=" + ir, "-c", source, "-o", "ours.o"}, {},
          &log),
      0)
      << log;
  ASSERT_EQ(Run({"clang-16", "-O2", "-fprofile-use=" + ir, "-c", source, "-o",
                 "theirs.o"}),
            0);
  EXPECT_EQ(Read("ours.o"), Read("theirs.o"));
  EXPECT_NE(Decisions().back().outcome(), v1::OPTIMIZED);
  EXPECT_EQ(Decisions().back().reason(), "ir_profile")
      << Decisions().back().detail();
}

// Under -flto the object is clang's bitcode for the linker's LTO: the
// wrapper runs the policy's pipeline as clang's pre-link half and writes the
// module with its summary, so with clang's own pipeline the bytes are
// clang's, for full and thin LTO alike. A policy's pipeline changes the
// bitcode, and the program lld-16 links from it (LTO at link time) prints
// what the -O0 reference prints.
TEST_F(PhaseloopCcTest, LtoBitcodeEqualsClangsAndLinks) {
  const std::string policy =
      "--phaseloop-policy=fixed:default<O2>,loop-unroll<O2;runtime>";
  for (const char* lto : {"-flto", "-flto=thin"}) {
    for (const auto& [name, path] : fixtures_) {
      SCOPED_TRACE(std::string(lto) + " " + name);
      const bool cxx = name.find(".cc") != std::string::npos;
      const std::string clang = cxx ? "clang++-16" : "clang-16";
      std::string log;
      ASSERT_EQ(Run({cxx ? cxx_ : cc_, "-O2", lto, "-c", path, "-o", "ours.o",
                     "--phaseloop-policy=baseline"},
                    {}, &log),
                0)
          << log;
      ASSERT_EQ(Run({clang, "-O2", lto, "-c", path, "-o", "theirs.o"}), 0);
      EXPECT_EQ(Read("ours.o"), Read("theirs.o"));
      EXPECT_EQ(Decisions().back().outcome(), v1::OPTIMIZED)
          << Decisions().back().reason() << ": " << Decisions().back().detail();
      EXPECT_EQ(Decisions().back().lto(),
                std::string(lto) == "-flto" ? "full" : "thin");
      if (name != "sorting.c" && name != "hashtable.c" &&
          name != "templates.cc") {
        continue;
      }
      ASSERT_EQ(Run({cxx ? cxx_ : cc_, "-O2", lto, "-c", path, "-o", "policy.o",
                     policy},
                    {}, &log),
                0)
          << log;
      EXPECT_EQ(Decisions().back().outcome(), v1::OPTIMIZED);
      EXPECT_EQ(Decisions().back().pipeline(),
                "default<O2>,loop-unroll<O2;runtime>");
      EXPECT_NE(Read("policy.o"), Read("theirs.o"));
      ASSERT_EQ(Run({clang, "-O2", lto, "-fuse-ld=/usr/bin/ld.lld-16",
                     "policy.o", "-o", "linked"},
                    {}, &log),
                0)
          << log;
      ASSERT_EQ(Run({clang, "-O0", path, "-o", "reference"}), 0);
      std::string linked_out, reference_out;
      ASSERT_EQ(Run({dir_ + "/linked"}, {}, &linked_out), 0);
      ASSERT_EQ(Run({dir_ + "/reference"}, {}, &reference_out), 0);
      EXPECT_EQ(linked_out, reference_out);
    }
  }
  // A pipeline that breaks the IR under -flto falls back to clang's own
  // bitcode, as without it.
  std::string log;
  ASSERT_EQ(Run({cc_, "-O2", "-flto", "-c", fixtures_["bits.c"], "-o",
                 "broken.o", "--phaseloop-policy=baseline"},
                {{"PHASELOOP_TEST_INJECT_FAULT", "break-ir"}}, &log),
            0)
      << log;
  ASSERT_EQ(Run({"clang-16", "-O2", "-flto", "-c", fixtures_["bits.c"], "-o",
                 "clangs.o"}),
            0);
  EXPECT_EQ(Read("broken.o"), Read("clangs.o"));
  EXPECT_EQ(Decisions().back().outcome(), v1::FAIL_OPEN);
  EXPECT_EQ(Decisions().back().reason(), "verifier_failed");
}

TEST_F(PhaseloopCcTest, DependencyFilesAndSeveralSourcesMatchClang) {
  const std::string a = fixtures_["bits.c"], b = fixtures_["globals.c"];
  const std::vector<std::vector<std::string>> cases = {
      {"-c", "-O2", "-MD", a, "-o", "x.o"},
      {"-c", "-O2", "-MMD", "-MF", "deps.d", "-MT", "target", a, "-o", "x.o"},
      {"-c", "-O2", "-MD", "-MP", a, b},
  };
  for (const auto& args : cases) {
    std::vector<std::string> ours = {cc_}, theirs = {"clang-16"};
    ours.insert(ours.end(), args.begin(), args.end());
    theirs.insert(theirs.end(), args.begin(), args.end());
    ASSERT_EQ(Run(ours), 0);
    const std::map<std::string, std::string> outputs = {
        {"x.o", Read("x.o")},
        {"x.d", Read("x.d")},
        {"deps.d", Read("deps.d")},
        {"bits.o", Read("bits.o")},
        {"bits.d", Read("bits.d")},
        {"globals.o", Read("globals.o")},
        {"globals.d", Read("globals.d")}};
    ASSERT_EQ(Run(theirs), 0);
    for (const auto& [name, bytes] : outputs) {
      EXPECT_EQ(bytes, Read(name)) << name << " after " << args[2];
    }
  }
}

TEST_F(PhaseloopCcTest, WarningsShowOnceAndWerrorFailsLikeClang) {
  std::ofstream(dir_ + "/warn.c") << "int f(int x) { int unused; return x; }\n";
  std::string ours, theirs;
  ASSERT_EQ(Run({cc_, "-O2", "-Wall", "-c", "warn.c"}, {}, &ours), 0);
  ASSERT_EQ(Run({"clang-16", "-O2", "-Wall", "-c", "warn.c"}, {}, &theirs), 0);
  EXPECT_EQ(ours, theirs);
  EXPECT_NE(ours.find("unused variable"), std::string::npos);
  unlink((dir_ + "/warn.o").c_str());
  int rc = Run({cc_, "-O2", "-Wall", "-Werror", "-c", "warn.c"}, {}, &ours);
  int clang_rc = Run(
      {"clang-16", "-O2", "-Wall", "-Werror", "-c", "warn.c", "-o", "clang.o"},
      {}, &theirs);
  EXPECT_EQ(rc, clang_rc);
  EXPECT_NE(rc, 0);
  EXPECT_EQ(Read("warn.o"), "");  // no object, as with clang
}

// A file name need not be UTF-8 on Linux. The decision record of a source
// named in Latin-1 made libprotobuf print an ERROR line into the build's
// output (clang prints nothing) and could never be read back: the compile
// is as quiet as clang's, its object clang's, and the record readable, the
// name's byte as \xe9.
TEST_F(PhaseloopCcTest, ASourceNamedInLatin1IsQuietAndRecorded) {
  const std::string name = "caf\xe9.c";
  std::ofstream(dir_ + "/" + name) << "int triple(int x) { return x * 3; }\n";
  std::string ours, theirs;
  ASSERT_EQ(Run({cc_, "-Oz", "--phaseloop-policy=fixed:default<Oz>", "-c", name,
                 "-o", "ours.o"},
                {}, &ours),
            0)
      << ours;
  ASSERT_EQ(Run({"clang-16", "-Oz", "-c", name, "-o", "theirs.o"}, {}, &theirs),
            0);
  EXPECT_EQ(ours, theirs);
  EXPECT_EQ(ours, "");
  EXPECT_EQ(Read("ours.o"), Read("theirs.o"));
  const std::vector<v1::Decision> decisions = Decisions();
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].outcome(), v1::OPTIMIZED);
  EXPECT_NE(decisions[0].source().find("caf\\xe9.c"), std::string::npos)
      << decisions[0].source();
}

// clang's driver diagnostics are clang's own (the probe's reproductions):
// an argument unused during compilation under -Werror fails the build as it
// does with clang, -Wno-unused-command-line-argument silences it, the text
// carries clang's "clang: " prefix and [-W...] tag, and with two sources it
// prints once.
TEST_F(PhaseloopCcTest, DriverDiagnosticsAreClangsOwn) {
  const std::string interpreter = fixtures_["interpreter.c"];
  const std::string bits = fixtures_["bits.c"];
  const std::string sorting = fixtures_["sorting.c"];
  const std::vector<std::vector<std::string>> cases = {
      {"-Os", "-c", "-MF", "deps.d", "-Wall", "-Werror", "-x", "c",
       interpreter},
      {"-O2", "-c", "-lm", "-Werror", bits},
      {"-O2", "-c", "-L/usr/lib", "-Werror", bits},
      {"-O2", "-c", "-Wl,--foo", "-Werror", bits},
      {"-Oz", "-c", "-MT", "x", "-Werror=unused-command-line-argument", bits},
      {"-O2", "-c", "-lm", "-Wno-unused-command-line-argument", bits},
      {"-O2", "-c", "-lm", bits},
      {"-O2", "-c", "-lm", bits, sorting},
      // Per-job driver warnings print once per source, between the
      // command line's "input unused" and "argument unused" warnings.
      {"-O4", "-c", "-lm", "-MF", "x.d", bits, sorting},
  };
  for (const std::vector<std::string>& args : cases) {
    std::vector<std::string> ours = {cc_, "--phaseloop-policy=baseline"};
    std::vector<std::string> theirs = {"clang-16"};
    ours.insert(ours.end(), args.begin(), args.end());
    theirs.insert(theirs.end(), args.begin(), args.end());
    std::string our_text, their_text;
    const int our_rc = Run(ours, {}, &our_text);
    const int their_rc = Run(theirs, {}, &their_text);
    const std::string what = args[2] + " " + args[3];
    EXPECT_EQ(our_rc, their_rc) << what << ": " << our_text;
    EXPECT_EQ(our_text, their_text) << what;
  }
  // The warning cases ran the optimizer (not a pass-through), once per
  // source.
  int optimized = 0;
  for (const v1::Decision& d : Decisions()) {
    if (cc_wrapper::OutcomeName(d.outcome()) == "optimized") ++optimized;
  }
  EXPECT_EQ(optimized, 6);
}

TEST_F(PhaseloopCcTest, PassThroughRunsClangAndCountsWhy) {
  ASSERT_EQ(Run({cc_, "-O2", "-c", fixtures_["recursion.c"], "-o", "r.o",
                 "--phaseloop-policy", "baseline"}),
            0);
  ASSERT_EQ(Run({cc_, "r.o", "-o", "prog", "--phaseloop-policy=baseline"}), 0);
  ASSERT_EQ(Run({dir_ + "/prog"}), 0);
  ASSERT_EQ(Run({cc_, "-E", fixtures_["recursion.c"], "-o", "r.i"}), 0);
  ASSERT_EQ(Run({"clang-16", "-E", fixtures_["recursion.c"], "-o", "c.i"}), 0);
  EXPECT_EQ(Read("r.i"), Read("c.i"));
  ASSERT_EQ(Run({cc_, "-O0", "-c", fixtures_["recursion.c"], "-o", "r0.o"}), 0);
  std::map<std::string, int> reasons;
  for (const v1::Decision& d : Decisions()) {
    ++reasons[cc_wrapper::OutcomeName(d.outcome()) + "/" + d.reason()];
  }
  EXPECT_EQ(reasons["optimized/"], 1);
  EXPECT_EQ(reasons["pass_through/not_compile_only"], 1);
  EXPECT_EQ(reasons["pass_through/preprocess_only"], 1);
  EXPECT_EQ(reasons["pass_through/optimization_disabled"], 1);
}

TEST_F(PhaseloopCcTest, ResponseFilesAreExpanded) {
  std::ofstream(dir_ + "/args.rsp")
      << "-O2 -c \"" << fixtures_["strings.c"] << "\" -o rsp.o\n";
  ASSERT_EQ(Run({cc_, "@args.rsp"}), 0);
  ASSERT_EQ(
      Run({"clang-16", "-O2", "-c", fixtures_["strings.c"], "-o", "clang.o"}),
      0);
  EXPECT_EQ(Read("rsp.o"), Read("clang.o"));
  ASSERT_EQ(Decisions().size(), 1u);
  EXPECT_EQ(Decisions()[0].outcome(), v1::OPTIMIZED);
}

// Every way phaseloop can fail still produces plain clang's object, and the
// record says why.
TEST_F(PhaseloopCcTest, FailsOpenToPlainClang) {
  auto repeat = [](const std::string& text, int times) {
    std::string out;
    for (int i = 0; i < times; ++i) out += text;
    return out;
  };
  std::ofstream(dir_ + "/broken.conf") << "policy baseline\n";
  std::ofstream(dir_ + "/bad_table")
      << "# phaseloop policy table v1\nnot-a-hash\tdefault<O2>\n";
  struct Case {
    std::map<std::string, std::string> env;
    std::vector<std::string> extra;
    std::string reason;
  } cases[] = {
      {{{"PHASELOOP_TEST_INJECT_FAULT", "crash"}}, {}, "optimizer_crashed"},
      {{{"PHASELOOP_TEST_INJECT_FAULT", "hang"},
        {"PHASELOOP_TIMEOUT_MS", "500"}},
       {},
       "optimizer_timed_out"},
      {{{"PHASELOOP_TEST_INJECT_FAULT", "break-ir"}}, {}, "verifier_failed"},
      {{}, {"--phaseloop-policy=/no/such/policy"}, "policy_unavailable"},
      {{}, {"--phaseloop-policy=" + dir_ + "/bad_table"}, "policy_unavailable"},
      // Refused when loaded (passes/pipeline_check.h): not in the action
      // space. internalize made exported functions local (the probe's
      // undefined reference to 'api').
      {{}, {"--phaseloop-policy=fixed:no-such-pass"}, "policy_refused"},
      {{},
       {"--phaseloop-policy=fixed:internalize,globaldce"},
       "policy_refused"},
      {{},
       {"--phaseloop-policy=fixed:default<O2>,function(tsan)"},
       "policy_refused"},
      // In the action space but not for policies: lower-ifunc erased an
      // exported ifunc (the review's undefined reference to 'add1').
      {{},
       {"--phaseloop-policy=fixed:lower-ifunc,default<O2>"},
       "policy_refused"},
      // 26,000 nested adaptors overflowed the stack of the policy's reader
      // (SIGSEGV, no object; a policy file carried them, argv cannot);
      // 20,000 standard pipelines ran for two minutes in 1.7 GB.
      {{},
       {"--phaseloop-policy=fixed:" + repeat("function(", 2000) +
        "instcombine" + repeat(")", 2000)},
       "policy_refused"},
      {{},
       {"--phaseloop-policy=fixed:" +
        absl::StrJoin(std::vector<std::string>(9, "default<O2>"), ",")},
       "policy_refused"},
      {{{"PHASELOOP_CONFIG", dir_ + "/broken.conf"}}, {}, "config_invalid"},
  };
  ASSERT_EQ(
      Run({"clang-16", "-O2", "-c", fixtures_["hashtable.c"], "-o", "clang.o"}),
      0);
  const std::string expected = Read("clang.o");
  for (const Case& c : cases) {
    unlink((dir_ + "/out.o").c_str());
    std::vector<std::string> argv = {
        cc_, "-O2", "-c", fixtures_["hashtable.c"], "-o", "out.o"};
    argv.insert(argv.end(), c.extra.begin(), c.extra.end());
    std::string log;
    EXPECT_EQ(Run(argv, c.env, &log), 0) << c.reason << ": " << log;
    EXPECT_EQ(Read("out.o"), expected) << c.reason;
    EXPECT_EQ(log, "") << c.reason;  // silent
    std::vector<v1::Decision> decisions = Decisions();
    ASSERT_FALSE(decisions.empty());
    EXPECT_EQ(decisions.back().outcome(), v1::FAIL_OPEN) << c.reason;
    EXPECT_EQ(decisions.back().reason(), c.reason);
    // Nothing left behind next to the object.
    std::string listing;
    testing::RunCommand({"ls", dir_}, &listing);
    EXPECT_EQ(listing.find(".phaseloop-"), std::string::npos) << listing;
  }
}

TEST_F(PhaseloopCcTest, KillSwitchRunsPlainClang) {
  ASSERT_EQ(Run({cc_, "-O2", "-c", fixtures_["structs.c"], "-o", "k.o"},
                {{"PHASELOOP_DISABLE", "1"},
                 {"PHASELOOP_TEST_INJECT_FAULT", "crash"}}),
            0);
  std::vector<v1::Decision> decisions = Decisions();
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].outcome(), v1::DISABLED);
}

}  // namespace
}  // namespace phaseloop
