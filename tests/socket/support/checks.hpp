// Checks that several test files share.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>

#include "support/connection.hpp"
#include "support/http_response.hpp"
#include "support/requests.hpp"

namespace socket_test {

// Sends one request and reads its response.
inline Response round_trip(Connection& connection, std::string_view request_bytes, bool head = false) {
  connection.send_all(request_bytes);
  return connection.read_response(head);
}

// A 200 from GET /plaintext with the documented body.
inline testing::AssertionResult is_plaintext_ok(const Response& response) {
  if (response.status != 200) return testing::AssertionFailure() << "status " << response.status;
  if (response.body != plaintext_body) return testing::AssertionFailure() << "body \"" << response.body << "\"";
  return testing::AssertionSuccess();
}

// A fresh connection gets GET /plaintext answered.
inline testing::AssertionResult fresh_connection_is_served(std::uint16_t port) {
  Connection connection(port);
  return is_plaintext_ok(round_trip(connection, get("/plaintext")));
}

}  // namespace socket_test
