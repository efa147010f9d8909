#include "canary/service/handler_library.h"

#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "canary/service/check_requests.h"
#include "gtest/gtest.h"

namespace phaseloop::canary {
namespace {

// The demo handler.c built by this repository's Bazel over the system zlib.
constexpr char kHandler[] = "canary/service/libtest_handler.so";

uint32_t Le32(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) {
    v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  }
  return v;
}

TEST(HandlerLibraryTest, ServesTheThreeKinds) {
  auto library = HandlerLibrary::Load(kHandler);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->kinds(),
            (std::vector<std::string>{"deflate", "roundtrip", "crc32"}));

  HandlerResult crc = (*library)->Handle("crc32", "123456789");
  ASSERT_EQ(crc.code, HandlerCode::kOk);
  ASSERT_EQ(crc.body.size(), 4u);
  EXPECT_EQ(Le32(crc.body, 0), 0xCBF43926u);  // the CRC-32 check value

  const std::string text = TextPayload(7, 65536);
  HandlerResult deflated = (*library)->Handle("deflate", text);
  ASSERT_EQ(deflated.code, HandlerCode::kOk);
  EXPECT_LT(deflated.body.size(), text.size() / 2) << "text compresses";
  EXPECT_EQ(static_cast<unsigned char>(deflated.body[0]), 0x78)
      << "a zlib stream header";

  HandlerResult roundtrip = (*library)->Handle("roundtrip", text);
  ASSERT_EQ(roundtrip.code, HandlerCode::kOk);
  ASSERT_EQ(roundtrip.body.size(), 8u);
  EXPECT_EQ(Le32(roundtrip.body, 0), deflated.body.size());
  EXPECT_EQ(Le32(roundtrip.body, 4),
            Le32((*library)->Handle("crc32", text).body, 0));

  HandlerResult empty = (*library)->Handle("deflate", "");
  EXPECT_EQ(empty.code, HandlerCode::kOk);
  EXPECT_FALSE(empty.body.empty()) << "an empty zlib stream has a header";
}

TEST(HandlerLibraryTest, UnknownKindAndOversizedPayload) {
  auto library = HandlerLibrary::Load(kHandler);
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_EQ((*library)->Handle("gzip", "x").code, HandlerCode::kUnknownKind);
  EXPECT_EQ((*library)->Handle("", "x").code, HandlerCode::kUnknownKind);
  const std::string big((64u << 20) + 1, 'a');
  EXPECT_EQ((*library)->Handle("crc32", big).code, HandlerCode::kBadPayload);
}

TEST(HandlerLibraryTest, RefusesWhatIsNotAHandler) {
  auto missing = HandlerLibrary::Load("/nonexistent/libdemo_handler.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(),
                                "/nonexistent/libdemo_handler.so"))
      << missing.status();
  // A real shared library without the ABI. (A bare name is a file in the
  // working directory, as a user giving --handler means it.)
  auto not_handler =
      HandlerLibrary::Load("/usr/lib/x86_64-linux-gnu/libz.so.1");
  ASSERT_FALSE(not_handler.ok());
  EXPECT_TRUE(absl::StrContains(not_handler.status().message(),
                                "does not export the phaseloop_handler.h ABI"))
      << not_handler.status();
}

TEST(CheckRequestsTest, PayloadsAreDeterministicAndSized) {
  EXPECT_EQ(TextPayload(1, 1000), TextPayload(1, 1000));
  EXPECT_NE(TextPayload(1, 1000), TextPayload(2, 1000));
  EXPECT_EQ(TextPayload(3, 12345).size(), 12345u);
  EXPECT_EQ(RandomPayload(3, 17).size(), 17u);
  EXPECT_EQ(TextPayload(1, 0), "");
  const auto requests = DefaultCheckRequests();
  EXPECT_EQ(requests.size(), 48u);
  EXPECT_EQ(requests[0].Describe(), "deflate text seed 1, 0 bytes");
}

}  // namespace
}  // namespace phaseloop::canary
