#include "common/report/html_page.h"

#include "gtest/gtest.h"

namespace phaseloop::report {
namespace {

TEST(EscapeHtmlTest, EscapesWhatCouldOpenATagOrCloseAnAttribute) {
  EXPECT_EQ(EscapeHtml("a<b> & \"c\" 'd'"),
            "a&lt;b&gt; &amp; &quot;c&quot; &#39;d&#39;");
  EXPECT_EQ(EscapeHtml("plain"), "plain");
}

TEST(HtmlPageTest, IsOneSelfContainedPageWithTheChartCheck) {
  const std::string page =
      HtmlPage("run <1>", "<h1>hello</h1>", ".mine{color:red}");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>\n", 0), 0u);
  EXPECT_NE(page.find("<title>run &lt;1&gt;</title>"), std::string::npos);
  EXPECT_NE(page.find("<h1>hello</h1>"), std::string::npos);
  EXPECT_NE(page.find(".mine{color:red}</style>"), std::string::npos);
  // The browser may fetch nothing, and nothing points elsewhere.
  EXPECT_NE(page.find("Content-Security-Policy\" content=\"default-src "
                      "'none'"),
            std::string::npos);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find(" src="), std::string::npos);
  // The check writes its findings where tools/check_report.sh reads them.
  EXPECT_NE(page.find("<pre id=\"pl-chart-check\" hidden></pre>"),
            std::string::npos);
  EXPECT_NE(page.find("svg.pl-chart"), std::string::npos);
  EXPECT_NE(page.find("data-charts-drawn"), std::string::npos);
  EXPECT_NE(page.find("data-charts-expected"), std::string::npos);
  EXPECT_NE(page.find("data-resources-fetched"), std::string::npos);
  EXPECT_LT(page.find("<h1>hello</h1>"), page.find("<script>"));
  EXPECT_EQ(page, HtmlPage("run <1>", "<h1>hello</h1>", ".mine{color:red}"));
}

}  // namespace
}  // namespace phaseloop::report
