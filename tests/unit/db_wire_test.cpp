// The pool's own protocol messages (server/db/wire.hpp), byte for byte
// against the v3 protocol's layouts, and the backend messages it reads,
// malformed ones included. The db tests run the same code against a real
// Postgres.
#include "server/db/wire.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tests/unit/pg_messages.hpp"

namespace ringhttp::server::db::wire {
namespace {

using testing_support::pg::be16;
using testing_support::pg::be32;
using testing_support::pg::message;

TEST(DbWire, a_query_is_bind_execute_sync) {
  char out[query_bytes_max];
  const std::size_t n = encode_query(out, "user_by_id", "42");
  const std::string bind_body = std::string("\0", 1) + "user_by_id" + std::string("\0", 1) + be16(0) + be16(1) +
                                be32(2) + "42" + be16(0);
  const std::string want =
      message('B', bind_body) + message('E', std::string("\0", 1) + be32(0)) + message('S', "");
  EXPECT_EQ(std::string(out, n), want);
}

TEST(DbWire, the_largest_query_fits_its_bound) {
  char out[query_bytes_max];
  const std::string param(param_bytes_max, 'x');
  EXPECT_LE(encode_query(out, "user_insert", param), query_bytes_max);
}

TEST(DbWire, messages_are_split_whole_and_incomplete_ones_wait) {
  const std::string stream = message('2', "") + message('D', be16(2) + be32(1) + "7" + be32(6) + "user-7") +
                             message('C', std::string("SELECT 1\0", 9)) + message('Z', "I");
  std::string_view in = stream;
  std::string types;
  Message m;
  std::size_t used = 0;
  while (next_message(in, 1024, m, used) == Parse::message) {
    types += m.type;
    if (m.type == 'D') {
      std::string_view id, name;
      ASSERT_TRUE(data_row_two_columns(m.body, id, name));
      EXPECT_EQ(id, "7");
      EXPECT_EQ(name, "user-7");
    }
    in.remove_prefix(used);
  }
  EXPECT_EQ(types, "2DCZ");
  EXPECT_TRUE(in.empty());
  for (std::size_t cut = 0; cut < stream.size(); ++cut) {
    const std::string_view part(stream.data(), cut);
    std::size_t whole = 0;
    std::string_view rest = part;
    while (next_message(rest, 1024, m, used) == Parse::message) {
      rest.remove_prefix(used);
      whole += used;
    }
    EXPECT_EQ(next_message(rest, 1024, m, used), Parse::incomplete) << cut;
    EXPECT_LE(whole, cut);
  }
}

TEST(DbWire, a_length_under_4_or_over_the_bound_is_invalid) {
  Message m;
  std::size_t used = 0;
  EXPECT_EQ(next_message(std::string("Z") + be32(3) + "I", 1024, m, used), Parse::invalid);
  EXPECT_EQ(next_message(std::string("D") + be32(4 + 1025), 1024, m, used), Parse::invalid);
  EXPECT_EQ(next_message(std::string("D") + be32(0xffffffffu), 1024, m, used), Parse::invalid);
  EXPECT_EQ(next_message(message('D', std::string(1024, 'x')), 1024, m, used), Parse::message);
}

TEST(DbWire, a_data_row_needs_two_non_null_columns_inside_it) {
  std::string_view a, b;
  EXPECT_FALSE(data_row_two_columns("", a, b));
  EXPECT_FALSE(data_row_two_columns(be16(1) + be32(1) + "7", a, b));
  EXPECT_FALSE(data_row_two_columns(be16(2) + be32(1) + "7" + be32(0xffffffffu), a, b));
  EXPECT_FALSE(data_row_two_columns(be16(2) + be32(1) + "7" + be32(10) + "short", a, b));
  EXPECT_FALSE(data_row_two_columns(be16(2) + be32(0x7fffffff), a, b));
  ASSERT_TRUE(data_row_two_columns(be16(2) + be32(0) + be32(0), a, b));
  EXPECT_TRUE(a.empty() && b.empty());
}

TEST(DbWire, an_error_names_its_sqlstate) {
  const std::string body = std::string("SERROR\0VERROR\0C57P01\0Mterminating\0\0", 36);
  EXPECT_EQ(error_sqlstate(body), "57P01");
  EXPECT_EQ(error_sqlstate(std::string("SERROR\0Mno code\0\0", 17)), "");
  EXPECT_EQ(error_sqlstate(std::string("C23505", 6)), "");  // unterminated
  EXPECT_EQ(error_sqlstate(""), "");
}

}  // namespace
}  // namespace ringhttp::server::db::wire
