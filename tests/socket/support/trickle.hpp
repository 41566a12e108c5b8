// A slow client: a piece, a gap, a piece..., until the server says something.
// Header-only, so any test can use it without a build change.
#pragma once

#include <chrono>
#include <exception>
#include <string_view>
#include <thread>

#include "support/connection.hpp"
#include "support/eventually.hpp"
#include "support/proc_state.hpp"

namespace socket_test {

// Sends `piece`, then waits `gap`, over and over, until the server has
// something for the client (an answer, its FIN or a reset: it cut the
// client off) or `bound` has passed. Returns true when the server spoke up.
// A send that fails means the server closed the connection: that counts as
// spoken too (what it sent before, a 408 say, is still there to read).
//
// The gap is the behaviour under test, a slow client, not synchronisation:
// on a loaded machine the scheduler may stretch it, which only brings a
// deadline the server must enforce nearer, so a correct server is no later
// for it. The bound is a hang guard for a server that lets the trickle go on
// for ever; it is far above the deadlines the tests configure (hundreds of
// milliseconds), and a correct server returns from this long before it.
inline bool trickle_until_answered(Connection& connection, std::string_view piece, std::chrono::milliseconds gap,
                                   std::chrono::milliseconds bound = eventually_deadline) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < until) {
    if (input_ready(connection)) return true;
    try {
      connection.send_all(piece);
    } catch (const std::exception&) {
      return true;
    }
    std::this_thread::sleep_for(gap);
  }
  return input_ready(connection);
}

}  // namespace socket_test
