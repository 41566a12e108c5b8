#pragma once
// The few messages of PostgreSQL's extended query protocol (v3) the pool
// speaks itself once a connection is set up (libpq connects, authenticates
// and prepares; server/db/pool.hpp says why): Bind + Execute + Sync of a
// prepared statement with one text parameter, and the backend messages
// that answer it. Pure: bytes in, bytes out, no I/O, no allocation.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ringhttp::server::db::wire {

// What one query adds to the output: Bind (5 + portal + name + counts +
// parameter), Execute (10), Sync (5), for a statement name under 32 bytes
// and a parameter of at most param_bytes_max.
inline constexpr std::size_t param_bytes_max = 400;
inline constexpr std::size_t query_bytes_max = 512;

// Appends Bind (unnamed portal, `statement`, one text parameter, text
// results), Execute (all rows) and Sync at `out`; the bytes written, at
// most query_bytes_max.
std::size_t encode_query(char* out, std::string_view statement, std::string_view param);

// A backend message: its type byte and its body (after the length).
struct Message {
  char type = 0;
  std::string_view body;
};

enum class Parse : std::uint8_t { message, incomplete, invalid };

// The message at the start of `in`, and how many bytes it takes. A length
// under 4 or over `body_bytes_max` is invalid (the stream cannot be trusted
// past it).
Parse next_message(std::string_view in, std::size_t body_bytes_max, Message& out, std::size_t& consumed);

// A DataRow's first two columns, as text. False if it has fewer, or a NULL
// among them, or is malformed.
bool data_row_two_columns(std::string_view body, std::string_view& first, std::string_view& second);

// An ErrorResponse's SQLSTATE (field 'C'); empty if it has none.
std::string_view error_sqlstate(std::string_view body);

}  // namespace ringhttp::server::db::wire
