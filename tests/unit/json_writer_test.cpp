// JsonWriter: objects, keys, every escape class, and a buffer too small.

#include "core/http/json_writer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace ringhttp::http {
namespace {

std::string object_with(std::string_view key, std::string_view value) {
  char buf[512];
  JsonWriter w(buf, sizeof buf);
  w.begin_object().key(key).string(value).end_object();
  EXPECT_TRUE(w.ok());
  return std::string(w.view());
}

TEST(JsonWriter, writes_the_json_route_body) {
  EXPECT_EQ(object_with("message", "Hello, World!"), R"({"message":"Hello, World!"})");
}

// A database's bigint digits go out as they came; anything else fails.
TEST(JsonWriter, integer_digits_are_copied_or_refused) {
  for (const std::string_view ok : {"0", "42", "-7", "9223372036854775807", "18446744073709551615"}) {
    char buf[64];
    JsonWriter w(buf, sizeof buf);
    w.begin_object().key("id").integer_digits(ok).end_object();
    ASSERT_TRUE(w.ok()) << ok;
    EXPECT_EQ(w.view(), "{\"id\":" + std::string(ok) + "}");
  }
  for (const std::string_view bad : {"", "-", "1.5", "1e3", "12a", " 1", "123456789012345678901", "--1"}) {
    char buf[64];
    JsonWriter w(buf, sizeof buf);
    w.begin_object().key("id").integer_digits(bad).end_object();
    EXPECT_FALSE(w.ok()) << bad;
  }
}

TEST(JsonWriter, separates_keys_with_commas) {
  char buf[128];
  JsonWriter w(buf, sizeof buf);
  w.begin_object().key("a").string("1").key("b").string("2").key("c").string("").end_object();
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w.view(), R"({"a":"1","b":"2","c":""})");
}

TEST(JsonWriter, escapes_quotes_backslashes_and_every_control_character) {
  EXPECT_EQ(object_with("k", "say \"hi\""), R"({"k":"say \"hi\""})");
  EXPECT_EQ(object_with("k", "C:\\dir\\"), R"({"k":"C:\\dir\\"})");
  EXPECT_EQ(object_with("k", "a\nb\rc\td\be\ff"), R"({"k":"a\nb\rc\td\be\ff"})");
  EXPECT_EQ(object_with("k", std::string_view("\x00\x01\x1f", 3)), R"({"k":"\u0000\u0001\u001f"})");
  EXPECT_EQ(object_with("k", "\x7f"), "{\"k\":\"\x7f\"}");  // DEL needs no escape in JSON
  EXPECT_EQ(object_with("k\"", "v"), R"({"k\"":"v"})");     // keys are escaped too
}

TEST(JsonWriter, copies_the_runs_between_escapes_exactly) {
  // Escapes at the start, the end, side by side and alone.
  EXPECT_EQ(object_with("k", "\"abc\\\\def\n"), R"({"k":"\"abc\\\\def\n"})");
  EXPECT_EQ(object_with("k", "\n"), R"({"k":"\n"})");
}

TEST(JsonWriter, passes_utf8_through) {
  EXPECT_EQ(object_with("k", "héllo \xe2\x82\xac \xf0\x9f\x98\x80"), "{\"k\":\"héllo \xe2\x82\xac \xf0\x9f\x98\x80\"}");
}

TEST(JsonWriter, says_so_when_the_buffer_is_too_small) {
  for (std::size_t capacity = 0; capacity < 27; ++capacity) {
    char buf[32];
    JsonWriter w(buf, capacity);
    w.begin_object().key("message").string("Hello, World!").end_object();
    EXPECT_FALSE(w.ok()) << capacity;
    EXPECT_LE(w.size(), capacity);
  }
  char buf[27];
  JsonWriter w(buf, sizeof buf);
  w.begin_object().key("message").string("Hello, World!").end_object();
  EXPECT_TRUE(w.ok());
  EXPECT_EQ(w.size(), 27u);
}

}  // namespace
}  // namespace ringhttp::http
