// The runtime search's table and JSON on a fixed result: busy-machine
// warnings reach the reader wherever a timing had them.
#include "staging_harness/runtime_search/runtime_search_report.h"

#include "gtest/gtest.h"

namespace phaseloop::runtime_search {
namespace {

Evaluation Measured(int index, const std::string& pipeline, double speedup) {
  Evaluation e;
  e.index = index;
  e.module_hash = "0123456789abcdef";
  e.source = "deflate.c";
  e.pipeline = pipeline;
  e.verdict = "measured";
  e.speedup = speedup;
  e.low = speedup - 0.01;
  e.high = speedup + 0.01;
  e.pairs = 6;
  return e;
}

// A profile-guided search whose profile-alone screen, one search timing
// and the confirmation ran on a busy machine.
RuntimeSearchResult SearchOnABusyMachine() {
  RuntimeSearchResult r;
  r.workload = "zopfli";
  r.stop_reason = "budget";
  r.candidate_cflags = "-fprofile-instr-use=w.profdata -flto";
  r.profiled = Measured(0, "(build flags alone)", 1.02);
  r.profiled->machine_warnings = {"CPU 0 was 80 % busy"};
  r.evaluations = {Measured(1, "default<O3>,default<O3>", 1.03),
                   Measured(2, "default<O2>", 0.99)};
  r.evaluations[1].machine_warnings = {"steal was 3 % of the timed CPU"};
  r.winners = {{r.evaluations[0].module_hash, r.evaluations[0].pipeline}};
  r.confirmation = Measured(3, "(winners combined)", 1.025);
  r.confirmation->verdict = "confirmed";
  r.confirmation->machine_warnings = {
      "the candidate's runs held their CPU "
      "90.0 %"};
  return r;
}

TEST(RuntimeSearchReportTest, TheTableWarnsWhereverATimingRanOnABusyMachine) {
  const std::string table = FormatRuntimeSearchTable(SearchOnABusyMachine());
  for (const char* expected :
       {"busy machine while screening it: CPU 0 was 80 % busy; rerun on a "
        "quieter machine",
        "busy machine during 1 of the 2 search and runoff timings",
        "busy machine while confirming: the candidate's runs held their CPU "
        "90.0 %"}) {
    EXPECT_NE(table.find(expected), std::string::npos) << expected << "\n"
                                                       << table;
  }
}

TEST(RuntimeSearchReportTest, AQuietSearchHasNoBusyMachineLine) {
  RuntimeSearchResult r = SearchOnABusyMachine();
  r.profiled->machine_warnings.clear();
  r.evaluations[1].machine_warnings.clear();
  r.confirmation->machine_warnings.clear();
  EXPECT_EQ(FormatRuntimeSearchTable(r).find("busy machine"),
            std::string::npos);
}

TEST(RuntimeSearchReportTest, ShortRunsAreSaidOnceAndInEachEvaluation) {
  RuntimeSearchResult r = SearchOnABusyMachine();
  EXPECT_EQ(FormatRuntimeSearchTable(r).find("the runs are short"),
            std::string::npos);
  for (Evaluation& e : r.evaluations) e.short_runs = "the runs are short";
  const std::string table = FormatRuntimeSearchTable(r);
  const size_t first =
      table.find("the runs are short (figures of the first timing)\n");
  ASSERT_NE(first, std::string::npos) << table;
  EXPECT_EQ(table.find("the runs are short", first + 1), std::string::npos);
  const nlohmann::json j = RuntimeSearchJson(r);
  EXPECT_EQ(j["evaluations"][0]["short_runs"], "the runs are short");
}

TEST(RuntimeSearchReportTest, TheBuildFlagsAloneAreNamed) {
  const std::string table = FormatRuntimeSearchTable(SearchOnABusyMachine());
  EXPECT_NE(table.find("the build flags alone (-fprofile-instr-use=w.profdata "
                       "-flto; every evaluation is built with them): 1.0200"),
            std::string::npos)
      << table;
  EXPECT_EQ(RuntimeSearchJson(SearchOnABusyMachine())["candidate_cflags"],
            "-fprofile-instr-use=w.profdata -flto");
}

TEST(RuntimeSearchReportTest, BoltOnTopOfThePickIsReportedAndItsChoice) {
  RuntimeSearchResult r = SearchOnABusyMachine();
  EXPECT_EQ(FormatRuntimeSearchTable(r).find("BOLT"), std::string::npos);
  EXPECT_TRUE(RuntimeSearchJson(r)["bolted"].is_null());
  r.bolted = Measured(4, "(the winning table) + BOLT", 1.06);
  r.bolted->verdict = "confirmed";
  r.bolt_chosen = true;
  std::string table = FormatRuntimeSearchTable(r);
  EXPECT_NE(table.find("(the winning table) + BOLT vs -O3: 1.0600"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("chosen (stage with --bolt)"), std::string::npos);
  nlohmann::json j = RuntimeSearchJson(r);
  EXPECT_EQ(j["bolted"]["speedup"]["median"], 1.06);
  EXPECT_EQ(j["bolt_chosen"], true);
  EXPECT_TRUE(j["bolt"].is_null());
  r.bolt_chosen = false;
  table = FormatRuntimeSearchTable(r);
  EXPECT_NE(table.find("not chosen"), std::string::npos) << table;
}

TEST(RuntimeSearchReportTest, WhatBoltDidToEachArtifactIsShown) {
  RuntimeSearchResult r = SearchOnABusyMachine();
  r.bolted = Measured(4, "(the winning table) + BOLT", 1.03);
  r.bolted->verdict = "confirmed";
  profiling::BoltResult bolt;
  bolt.input_seed = 2;
  bolt.generated_inputs = 3;
  profiling::BoltedArtifact rewritten;
  rewritten.path = "src/w";
  rewritten.optimized = true;
  rewritten.profiles = 4;
  rewritten.estimate = "taken branches -12 %";
  profiling::BoltedArtifact kept;
  kept.path = "src/w-tool";
  kept.note = "no profile written";
  bolt.artifacts = {rewritten, kept};
  r.bolt = bolt;
  const std::string table = FormatRuntimeSearchTable(r);
  EXPECT_NE(table.find("inputs made from seed 2: src/w (taken branches -12 "
                       "%), src/w-tool (unchanged: no profile written)"),
            std::string::npos)
      << table;
  const nlohmann::json j = RuntimeSearchJson(r);
  EXPECT_EQ(j["bolt"]["input_seed"], 2);
  ASSERT_EQ(j["bolt"]["artifacts"].size(), 2u);
  EXPECT_EQ(j["bolt"]["artifacts"][0]["profiles"], 4);
  EXPECT_EQ(j["bolt"]["artifacts"][1]["optimized"], false);
  EXPECT_EQ(j["bolt"]["artifacts"][1]["note"], "no profile written");
}

TEST(RuntimeSearchReportTest, TheJsonCarriesEachTimingsWarnings) {
  const nlohmann::json j = RuntimeSearchJson(SearchOnABusyMachine());
  EXPECT_EQ(j["profiled"]["machine_warnings"].size(), 1u);
  EXPECT_EQ(j["evaluations"][0]["machine_warnings"].size(), 0u);
  EXPECT_EQ(j["evaluations"][1]["machine_warnings"][0],
            "steal was 3 % of the timed CPU");
  EXPECT_EQ(j["confirmation"]["machine_warnings"].size(), 1u);
}

}  // namespace
}  // namespace phaseloop::runtime_search
