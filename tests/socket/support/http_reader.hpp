// A minimal HTTP/1.1 response reader on top of Connection's buffered reads:
// enough framing (Content-Length, chunked, no body) to keep a pipelined
// exchange in step, and strict enough to fail on a malformed response.
#pragma once

#include "support/connection.hpp"
#include "support/http_response.hpp"

namespace socket_test::http_reader {

// Status line and header section; throws std::runtime_error when malformed.
Response read_head(Connection& connection);
// read_head, then the body as framed by the response (none when `head`).
Response read_response(Connection& connection, bool head);

}  // namespace socket_test::http_reader
