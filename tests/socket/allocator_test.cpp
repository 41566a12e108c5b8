// The start-up line and the client's report name the malloc that really
// serves the process, found at run time: a build's own allocator, and
// Debian's jemalloc and tcmalloc when they are LD_PRELOADed.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <ostream>
#include <string>

#include "support/checks.hpp"
#include "support/client_process.hpp"
#include "support/server_process.hpp"

#ifndef RINGHTTP_MIMALLOC
#error "tests/socket/meson.build defines RINGHTTP_MIMALLOC as the build's allocator option"
#endif

namespace socket_test {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool address_sanitizer = true;
#else
constexpr bool address_sanitizer = false;
#endif
#else
constexpr bool address_sanitizer = false;
#endif

#if defined(__x86_64__)
const std::string library_dir = "/usr/lib/x86_64-linux-gnu/";
#elif defined(__aarch64__)
const std::string library_dir = "/usr/lib/aarch64-linux-gnu/";
#else
#error "add this architecture's Debian multiarch library directory"
#endif

// The value of the start-up line's allocator= field.
std::string allocator_field(const std::string& startup_line) {
  const auto at = startup_line.find(" allocator=");
  if (at == std::string::npos) return "(no allocator= field)";
  const auto begin = at + 11;
  return startup_line.substr(begin, startup_line.find(' ', begin) - begin);
}

// The allocator named in the client's --json report.
std::string client_allocator(const ClientRun& run) {
  simdjson::dom::parser parser;
  std::string_view allocator;
  if (parser.parse(run.out).at_pointer("/environment/allocator").get(allocator) != simdjson::SUCCESS) {
    return "(no /environment/allocator in: " + run.out + run.err + ")";
  }
  return std::string(allocator);
}

TEST(Allocator, the_linked_allocator_is_named) {
  ServerProcess server({"--shards", "1"});
  const std::string name = allocator_field(server.startup_line());
  if (address_sanitizer) {
    // AddressSanitizer's runtime defines malloc; it is named by its file.
    EXPECT_TRUE(name.starts_with("other:")) << server.startup_line();
  } else {
    EXPECT_EQ(name, RINGHTTP_MIMALLOC ? "mimalloc" : "glibc") << server.startup_line();
  }
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
}

struct Preload {
  std::string name;     // what allocator= must say
  std::string library;  // file name in the multiarch library directory
  std::string package;  // the Debian package that ships it
};

void PrintTo(const Preload& preload, std::ostream* out) { *out << preload.name; }

class AllocatorPreload : public testing::TestWithParam<Preload> {
 protected:
  void SetUp() override {
    if (address_sanitizer) {
      GTEST_SKIP() << "AddressSanitizer replaces malloc itself; preloading another malloc under it conflicts";
    }
    ASSERT_EQ(::access(path().c_str(), R_OK), 0)
        << path() << " is missing: install " << GetParam().package << " (tools/install-deps.sh does)";
  }
  std::string path() const { return library_dir + GetParam().library; }
};

TEST_P(AllocatorPreload, server_startup_line_names_the_preloaded_malloc_and_serves) {
  ServerProcess server(ServerOptions{.args = {"--shards", "1"}, .env = {"LD_PRELOAD=" + path()}});
  EXPECT_EQ(allocator_field(server.startup_line()), GetParam().name) << server.startup_line();
  Connection connection(server.port());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
  ASSERT_EQ(round_trip(connection, get("/json")).body, json_body);
}

TEST_P(AllocatorPreload, client_report_names_the_preloaded_malloc) {
  ServerProcess server({"--shards", "1"});
  const ClientRun run =
      run_client({"-n", "50", "-c", "2", "--json", "http://127.0.0.1:" + std::to_string(server.port()) + "/plaintext"},
                 std::chrono::seconds(30), {"LD_PRELOAD=" + path()});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(client_allocator(run), GetParam().name);
}

INSTANTIATE_TEST_SUITE_P(Debian, AllocatorPreload,
                         testing::Values(Preload{"jemalloc", "libjemalloc.so.2", "libjemalloc2"},
                                         Preload{"tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"}),
                         [](const testing::TestParamInfo<Preload>& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace socket_test
