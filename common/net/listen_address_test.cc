#include "common/net/listen_address.h"

#include "gtest/gtest.h"

namespace phaseloop::net {
namespace {

TEST(ListenAddressTest, LoopbackAddresses) {
  for (const char* listen :
       {"127.0.0.1:0", "127.1.2.3:7400", "localhost:80", "LOCALHOST:1",
        "[::1]:7400", "::1", "unix:/tmp/sock"}) {
    EXPECT_TRUE(IsLoopbackListenAddress(listen)) << listen;
  }
}

TEST(ListenAddressTest, EverythingElseIsNotLoopback) {
  for (const char* listen : {"0.0.0.0:7400", "[::]:7400", ":7400",
                             "10.0.0.5:7400", "example.com:7400", "128.0.0.1:1",
                             "[::ffff:127.0.0.1]:1", "localhost.evil.com:1"}) {
    EXPECT_FALSE(IsLoopbackListenAddress(listen)) << listen;
  }
}

TEST(ListenAddressTest, HostOfListenAddress) {
  EXPECT_EQ(HostOfListenAddress("127.0.0.1:0"), "127.0.0.1");
  EXPECT_EQ(HostOfListenAddress("[::1]:5"), "::1");
  EXPECT_EQ(HostOfListenAddress("::1"), "::1");
  EXPECT_EQ(HostOfListenAddress(":5"), "");
}

}  // namespace
}  // namespace phaseloop::net
