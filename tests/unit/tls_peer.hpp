#pragma once
// One end of a TLS connection in memory, for the unit tests that drive a
// session of ours against it without a socket (shard_session_test.cpp,
// load_session_test.cpp): its session, the outbox its writes go to, and
// the two moves a test makes, through core/tls/stream.hpp as our code does.

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tls/session.hpp"
#include "core/tls/stream.hpp"

namespace ringhttp::testing_support {

struct TlsPeer {
  tls::Session session;
  std::vector<char> area;
  tls::Outbox out;
  std::vector<char> plain = std::vector<char>(tls::record_plaintext_bytes_max);

  explicit TlsPeer(std::size_t area_bytes) : area(area_bytes) { out.lend(area.data(), std::uint32_t(area.size())); }

  // What the peer wrote, as one completed send of its outbox.
  std::string take_output() {
    if (out.empty()) return {};
    const std::span<const char> bytes = out.begin_send();
    std::string sent(bytes.data(), bytes.size());
    out.sent();
    return sent;
  }
  // The peer reads all of `wire`: the plaintext it gave.
  std::string read(std::string_view wire) {
    std::string plaintext;
    const char* in = wire.data();
    std::size_t in_len = wire.size();
    const tls::ReadEnd end = tls::read_records(
        session, out, in, in_len, plain, [] { return true; },
        [&](const char* data, std::size_t n) {
          plaintext.append(data, n);
          return true;
        });
    EXPECT_EQ(end, tls::ReadEnd::drained);
    return plaintext;
  }
};

}  // namespace ringhttp::testing_support
