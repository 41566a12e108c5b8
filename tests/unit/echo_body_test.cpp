// POST /echo's body parser, writer and schema check, without sockets.
#include "server/app/echo_body.hpp"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <string>
#include <vector>

namespace ringhttp::server::json {
namespace {

class Echo : public testing::Test {
 protected:
  EchoBodyParser parser;

  EchoParse parse(const std::string& body, EchoShape shape = EchoShape::name_and_n) {
    buffer.assign(body);
    buffer.append(body_padding_bytes, '\0');
    return parser.parse(buffer.data(), body.size(), shape);
  }
  std::string buffer;
};

// POST /db/users's body: {"name"} alone; "n" is an unknown field there,
// and a name Postgres text cannot hold (U+0000) is out of range.
TEST_F(Echo, name_only_shape_takes_a_name_and_nothing_else) {
  EchoParse p = parse(R"({"name":"Ada \u00e9"})", EchoShape::name_only);
  ASSERT_EQ(p.error, EchoError::none);
  EXPECT_EQ(p.name, "Ada \xc3\xa9");
  p = parse(R"({"name":"Ada","n":1})", EchoShape::name_only);
  EXPECT_EQ(p.error, EchoError::unknown_field);
  EXPECT_EQ(p.field, "n");
  p = parse(R"({"name":"a\u0000b"})", EchoShape::name_only);
  EXPECT_EQ(p.error, EchoError::out_of_range);
  EXPECT_EQ(p.field, "name");
  p = parse(R"({})", EchoShape::name_only);
  EXPECT_EQ(p.error, EchoError::missing_field);
  EXPECT_EQ(p.field, "name");
  // The echo shape still wants its n, and lets a NUL through (it is echoed, escaped).
  EXPECT_EQ(parse(R"({"name":"Ada"})").error, EchoError::missing_field);
  EXPECT_EQ(parse(R"({"name":"a\u0000b","n":1})").error, EchoError::none);
}

TEST_F(Echo, accepts_a_valid_body_in_any_field_order_and_spacing) {
  const struct {
    std::string body;
    std::string name;
    double n;
  } cases[] = {
      {R"({"name":"Ada","n":21})", "Ada", 21},
      {" {\n\t\"n\" : -1.5 ,\r\n \"name\" : \"B\" } ", "B", -1.5},
      {R"({"name":"z","n":-0})", "z", -0.0},
      {R"({"name":"z","n":8.9e307})", "z", 8.9e307},
      {R"({"name":"esc\"\\\n\u00e9","n":1})", "esc\"\\\n\xc3\xa9", 1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body);
    const EchoParse p = parse(c.body);
    ASSERT_EQ(p.error, EchoError::none) << message_for(p.error) << " " << p.field;
    EXPECT_EQ(p.name, c.name);
    EXPECT_EQ(p.n, c.n);
  }
}

TEST_F(Echo, refuses_syntax_with_400) {
  const std::vector<std::string> bodies = {
      "",
      " ",
      "{",
      "}",
      "[1]",
      "\"name\"",
      "null",
      "1",
      R"({"name":"a","n":1} x)",
      R"({"name":"a","n":1}{})",
      R"({"name":"a" "n":1})",
      R"({"name":'a',"n":1})",
      R"({name:"a","n":1})",
      R"({"name":"a","n":01})",
      R"({"name":"a","n":1.})",
      R"({"name":"a","n":.5})",
      R"({"name":"a","n":1,})",
      R"({"name":"a\q","n":1})",
  };
  for (const std::string& body : bodies) {
    SCOPED_TRACE("'" + body + "'");
    const EchoParse p = parse(body);
    EXPECT_EQ(p.error, EchoError::malformed) << message_for(p.error) << " " << p.field;
    EXPECT_EQ(status_for(p.error), 400);
  }
}

TEST_F(Echo, refuses_invalid_utf8_anywhere_with_400) {
  for (const std::string body : {"{\"name\":\"\xff\",\"n\":1}", "{\"name\":\"\xc3\",\"n\":1}",
                                 "{\"name\":\"\xed\xa0\x80\",\"n\":1}",  // a UTF-16 surrogate
                                 "{\"k\xe9y\":1,\"name\":\"a\",\"n\":1}", "{\"name\":\"a\",\"n\":1} \xff",
                                 "{\"name\":\"\xc0\xaf\",\"n\":1}"}) {  // overlong '/'
    SCOPED_TRACE(body);
    const EchoParse p = parse(body);
    EXPECT_EQ(p.error, EchoError::invalid_utf8) << message_for(p.error);
    EXPECT_EQ(status_for(p.error), 400);
  }
}

TEST_F(Echo, refuses_each_bad_field_with_422_naming_it) {
  std::string hundred, hundred_and_one;
  for (int i = 0; i < 100; ++i) hundred += "\xe6\x97\xa5";  // 100 characters of 3 bytes
  hundred_and_one = hundred + "x";
  const std::string long_key(200, 'k');
  const struct {
    std::string body;
    EchoError error;
    std::string field;
  } cases[] = {
      {R"({"n":1})", EchoError::missing_field, "name"},
      {R"({"name":"a"})", EchoError::missing_field, "n"},
      {R"({})", EchoError::missing_field, "name"},
      {R"({"name":1,"n":1})", EchoError::wrong_type, "name"},
      {R"({"name":["a"],"n":1})", EchoError::wrong_type, "name"},
      {R"({"name":"a","n":"1"})", EchoError::wrong_type, "n"},
      {R"({"name":"a","n":null})", EchoError::wrong_type, "n"},
      {R"({"name":"","n":1})", EchoError::out_of_range, "name"},
      {"{\"name\":\"" + hundred_and_one + "\",\"n\":1}", EchoError::out_of_range, "name"},
      {R"({"name":"a","n":1e999})", EchoError::out_of_range, "n"},
      {R"({"name":"a","n":-1e999})", EchoError::out_of_range, "n"},
      {R"({"name":"a","n":1e308})", EchoError::out_of_range, "n"},
      {R"({"name":"a","n":1,"x":2})", EchoError::unknown_field, "x"},
      {"{\"" + long_key + "\":1}", EchoError::unknown_field, std::string(error_field_bytes_max, 'k')},
      {R"({"name":"a","name":"b","n":1})", EchoError::duplicate_field, "name"},
      {R"({"n":1,"name":"a","n":2})", EchoError::duplicate_field, "n"},
      // The first field error is the one named.
      {R"({"x":1,"name":2})", EchoError::unknown_field, "x"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body.substr(0, 80));
    const EchoParse p = parse(c.body);
    EXPECT_EQ(p.error, c.error) << message_for(p.error) << " " << p.field;
    EXPECT_EQ(p.field, c.field);
    EXPECT_EQ(status_for(p.error), 422);
  }
  const EchoParse ok = parse("{\"name\":\"" + hundred + "\",\"n\":1}");
  EXPECT_EQ(ok.error, EchoError::none) << "100 characters is in range however many bytes";
}

TEST_F(Echo, a_syntax_error_outranks_a_field_error) {
  EXPECT_EQ(parse(R"({"x":1,"name":"a","n":1} trailing)").error, EchoError::malformed);
  EXPECT_EQ(parse("{\"x\":1,\"name\":\"\xff\"}").error, EchoError::invalid_utf8);
}

TEST_F(Echo, an_unknown_key_is_cut_at_a_character_boundary) {
  std::string key = std::string(error_field_bytes_max - 1, 'a') + "\xc3\xa9";  // é straddles the cut
  const EchoParse p = parse("{\"" + key + "\":1}");
  ASSERT_EQ(p.error, EchoError::unknown_field);
  EXPECT_EQ(p.field, std::string(error_field_bytes_max - 1, 'a'));
}

std::string written(std::string_view name, double n) {
  std::string out(echo_response_bytes_max, '\0');
  out.resize(write_echo_response(name, n, out.data(), out.size()));
  return out;
}

TEST_F(Echo, the_answer_is_exact_json) {
  EXPECT_EQ(written("Ada", 21), R"({"hello":"Ada","doubled":42})");
  EXPECT_EQ(written("a\"b\\c\n\x01", 0.25), R"({"hello":"a\"b\\c\n\u0001","doubled":0.5})");
  EXPECT_EQ(written("\xc3\xa9", -0.0), "{\"hello\":\"\xc3\xa9\",\"doubled\":-0}");
  // A whole number is written as an integer, even where the exponent form
  // is shorter ("-4.98e+08").
  EXPECT_EQ(written("x", -249000000), R"({"hello":"x","doubled":-498000000})");
  EXPECT_EQ(written("x", 4503599627370495.0), R"({"hello":"x","doubled":9007199254740990})");
  EXPECT_EQ(written("x", 4e307), R"({"hello":"x","doubled":8e+307})");
  // A large whole number keeps its exponent: no integer literal past 2^53.
  EXPECT_EQ(written("x", 6.1000011355845246e19), R"({"hello":"x","doubled":1.220000227116905e+20})");
  EXPECT_TRUE(check_echo_response(written("x", 6.1000011355845246e19), "x", 6.1000011355845246e19));
}

TEST_F(Echo, hostile_names_round_trip_through_an_independent_parser) {
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls += char(c);
  const std::vector<std::string> names = {
      controls,    "\"\\\"\\",    std::string(100, '\x1f'), std::string(100, '"'), "\xf0\x9f\x98\x80\xe6\x97\xa5",
      "</script>", "\xe2\x80\xa8"};
  simdjson::dom::parser dom;
  for (const std::string& name : names) {
    SCOPED_TRACE(name.size());
    const std::string out = written(name, 1.5);
    ASSERT_FALSE(out.empty()) << "the worst case fits echo_response_bytes_max";
    simdjson::dom::element doc;
    ASSERT_EQ(dom.parse(out).get(doc), simdjson::SUCCESS) << out;
    std::string_view hello;
    double doubled = 0;
    ASSERT_EQ(doc["hello"].get(hello), simdjson::SUCCESS);
    ASSERT_EQ(doc["doubled"].get(doubled), simdjson::SUCCESS);
    EXPECT_EQ(hello, name);
    EXPECT_EQ(doubled, 3.0);
    EXPECT_TRUE(check_echo_response(out, name, 1.5));
  }
}

TEST_F(Echo, the_schema_check_refuses_what_the_schema_does_not_say) {
  EXPECT_TRUE(check_echo_response(R"({"hello":"a","doubled":2})", "a", 1));
  EXPECT_TRUE(check_echo_response(R"({"doubled":2.0,"hello":"a"})", "a", 1));
  EXPECT_FALSE(check_echo_response(R"({"hello":"b","doubled":2})", "a", 1));
  EXPECT_FALSE(check_echo_response(R"({"hello":"a","doubled":3})", "a", 1));
  EXPECT_FALSE(check_echo_response(R"({"hello":"a"})", "a", 1));
  EXPECT_FALSE(check_echo_response(R"({"hello":"a","doubled":"2"})", "a", 1));
  EXPECT_FALSE(check_echo_response(R"({"hello":"a","doubled":2,"extra":0})", "a", 1));
  EXPECT_FALSE(check_echo_response(R"({"hello":"a","doubled":2)", "a", 1));
}

TEST_F(Echo, error_bodies_name_the_field_and_are_json) {
  simdjson::dom::parser dom;
  for (const std::string body : {R"({"name":"a"})", R"({"\"evil\\":1})", R"({"":1})", "{", "{\"name\":\"\xff\"}"}) {
    const EchoParse p = parse(body);
    ASSERT_NE(p.error, EchoError::none);
    std::string out(echo_error_bytes_max, '\0');
    out.resize(write_echo_error(p, out.data(), out.size()));
    simdjson::dom::element doc;
    ASSERT_EQ(dom.parse(out).get(doc), simdjson::SUCCESS) << out;
    std::string_view error, field;
    EXPECT_EQ(doc["error"].get(error), simdjson::SUCCESS);
    if (status_for(p.error) == 422) {
      ASSERT_EQ(doc["field"].get(field), simdjson::SUCCESS) << out;
      EXPECT_EQ(field, p.field);
    }
  }
}

TEST_F(Echo, a_parse_leaves_nothing_behind_for_the_next) {
  ASSERT_EQ(parse(R"({"name":"first","n":1})").error, EchoError::none);
  EXPECT_EQ(parse(R"({"n":1})").error, EchoError::missing_field);
  const EchoParse p = parse(R"({"name":"second","n":2})");
  EXPECT_EQ(p.name, "second");
  EXPECT_EQ(p.n, 2);
}

}  // namespace
}  // namespace ringhttp::server::json
