// The seeds' workloads, each doing what it says over a real socket: GET /ping,
// GET /users/:id and its validated parameter, POST /echo and its validated
// body (both ways).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/json_doc.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

class Workloads : public testing::Test {
 protected:
  ServerProcess server{{"--shards", "1"}};
  Connection connection{server.port()};

  Response post(std::string_view body, std::string_view content_type = "application/json") {
    std::string headers;
    if (!content_type.empty()) headers += "Content-Type: " + std::string(content_type) + "\r\n";
    headers += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    return round_trip(connection, request("POST", "/echo", headers, body));
  }
  // Still serving on the same connection after a refusal.
  void expect_still_usable() { EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext")))); }
};

bool is_json(const Response& r) { return r.header("Content-Type").value_or("").starts_with("application/json"); }

TEST_F(Workloads, ping_answers_a_small_json_object) {
  const Response r = round_trip(connection, get("/ping"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"ok":true})");
  EXPECT_TRUE(is_json(r));
  const Response h = round_trip(connection, head("/ping"), true);
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.content_length(), r.body.size());
  EXPECT_EQ(h.body, "");
}

TEST_F(Workloads, ping_carries_no_middleware_headers) {
  // Middleware is per route: the bare rung has none of /mw/ping's headers.
  const Response r = round_trip(connection, get("/ping", "Origin: https://app.example\r\n"));
  EXPECT_FALSE(r.header("Content-Security-Policy"));
  EXPECT_FALSE(r.header("Vary"));
  EXPECT_FALSE(r.header("RateLimit-Limit"));
}

TEST_F(Workloads, user_answers_its_id_and_name) {
  for (const std::string id : {"1", "42", "9007199254740991"}) {
    SCOPED_TRACE(id);
    const Response r = round_trip(connection, get("/users/" + id));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "{\"id\":" + id + ",\"name\":\"user-" + id + "\"}");
    EXPECT_TRUE(is_json(r));
  }
}

TEST_F(Workloads, user_refuses_an_id_that_is_not_a_positive_integer_up_to_2_53_minus_1) {
  for (const std::string id :
       {"0", "-1", "9007199254740992", "18446744073709551616", "abc", "", "1.5", "01", "+1", "%31", "1a"}) {
    SCOPED_TRACE("id '" + id + "'");
    const Response r = round_trip(connection, get("/users/" + id));
    EXPECT_EQ(r.status, 400);
    EXPECT_TRUE(is_json(r));
    const JsonDoc doc(r.body);
    ASSERT_TRUE(doc.valid()) << r.body;
    EXPECT_EQ(doc.text("param"), "id") << r.body;
    EXPECT_TRUE(doc.text("error")) << r.body;
  }
  expect_still_usable();
}

TEST_F(Workloads, user_paths_that_do_not_match_the_pattern_are_404) {
  for (const char* path : {"/users", "/users/1/friends", "/user/1", "/users//1"}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(round_trip(connection, get(path)).status, 404);
  }
}

TEST_F(Workloads, echo_answers_hello_and_doubled) {
  const Response r = post(R"({"name":"Ada","n":21})");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"hello":"Ada","doubled":42})");
  EXPECT_TRUE(is_json(r));
  // Fields in any order, whitespace, a fractional and a negative n.
  const Response f = post(" {\n \"n\" : -1.25 , \"name\" : \"B\" } ");
  EXPECT_EQ(f.status, 200);
  const JsonDoc doc(f.body);
  ASSERT_TRUE(doc.valid()) << f.body;
  EXPECT_EQ(doc.text("hello"), "B");
  EXPECT_EQ(doc.number("doubled"), -2.5);
}

TEST_F(Workloads, echo_takes_json_with_parameters_and_any_case_but_nothing_else) {
  EXPECT_EQ(post(R"({"name":"a","n":1})", "application/json; charset=utf-8").status, 200);
  EXPECT_EQ(post(R"({"name":"a","n":1})", "Application/JSON").status, 200);
  for (const char* type : {"", "text/plain", "application/jsonx", "application/x-www-form-urlencoded"}) {
    SCOPED_TRACE(std::string("Content-Type '") + type + "'");
    const Response r = post(R"({"name":"a","n":1})", type);
    EXPECT_EQ(r.status, 415);
    EXPECT_TRUE(JsonDoc(r.body).valid()) << r.body;
  }
  expect_still_usable();
}

TEST_F(Workloads, echo_refuses_malformed_json_and_invalid_utf8_with_400) {
  const std::vector<std::string> bodies = {
      "",
      "{",
      "[1]",
      "\"name\"",
      R"({"name":"a","n":1} x)",
      R"({"name":"a" "n":1})",
      R"({"name":'a',"n":1})",
      "{\"name\":\"\xff\xfe\",\"n\":1}",
      "{\"name\":\"\xc3\",\"n\":1}",
      "{\"na\xedme\":\"a\",\"n\":1}",
  };
  for (const std::string& body : bodies) {
    SCOPED_TRACE("body '" + body + "'");
    const Response r = post(body);
    EXPECT_EQ(r.status, 400);
    const JsonDoc doc(r.body);
    EXPECT_TRUE(doc.valid()) << r.body;
    EXPECT_TRUE(doc.text("error")) << r.body;
  }
  expect_still_usable();
}

TEST_F(Workloads, echo_refuses_each_invalid_field_with_422_naming_it) {
  const std::string long_name(101, 'x');
  const struct {
    std::string body;
    const char* field;
  } cases[] = {
      {R"({"n":1})", "name"},
      {R"({"name":"a"})", "n"},
      {R"({})", "name"},
      {R"({"name":7,"n":1})", "name"},
      {R"({"name":null,"n":1})", "name"},
      {R"({"name":"a","n":"1"})", "n"},
      {R"({"name":"a","n":true})", "n"},
      {R"({"name":"","n":1})", "name"},
      {"{\"name\":\"" + long_name + "\",\"n\":1}", "name"},
      {R"({"name":"a","n":1e999})", "n"},
      {R"({"name":"a","n":1e308})", "n"},  // 2n would not be finite
      {R"({"name":"a","n":1,"admin":true})", "admin"},
      {R"({"name":"a","name":"b","n":1})", "name"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body);
    const Response r = post(c.body);
    EXPECT_EQ(r.status, 422);
    const JsonDoc doc(r.body);
    ASSERT_TRUE(doc.valid()) << r.body;
    EXPECT_EQ(doc.text("field"), c.field) << r.body;
  }
  expect_still_usable();
}

TEST_F(Workloads, echo_refuses_a_body_over_its_limit_with_413_and_keeps_the_connection) {
  const std::string body = "{\"name\":\"" + std::string(5000, 'a') + "\",\"n\":1}";
  const Response r = post(body);
  EXPECT_EQ(r.status, 413);
  EXPECT_TRUE(JsonDoc(r.body).valid()) << r.body;
  expect_still_usable();
}

TEST_F(Workloads, echo_sends_hostile_names_back_escaped_and_valid) {
  std::string controls;
  for (int c = 1; c < 0x20; ++c) controls += char(c);
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "\xc3\xa9";  // 100 characters, 200 bytes
  std::string emoji;
  for (int i = 0; i < 100; ++i) emoji += "\xf0\x9f\x98\x80";  // 100 characters, 400 bytes
  const std::vector<std::string> names = {
      "\"quoted\"",
      "back\\slash",
      "\\\"",
      controls,
      std::string(1, '\0') + "nul",
      "</script><script>",
      "\xe6\x97\xa5\xe6\x9c\xac",
      accents,
      emoji,
      std::string(100, '"'),
      std::string(100, '\x01'),
      "\xe2\x80\xa8 line separator",
  };
  for (const std::string& name : names) {
    SCOPED_TRACE("name of " + std::to_string(name.size()) + " bytes");
    const Response r = post("{\"name\":" + json_quote(name) + ",\"n\":0.5}");
    ASSERT_EQ(r.status, 200) << r.body;
    const JsonDoc doc(r.body);  // simdjson validates the UTF-8 too
    ASSERT_TRUE(doc.valid()) << r.body;
    EXPECT_EQ(doc.size(), 2u);
    EXPECT_EQ(doc.text("hello"), name);
    EXPECT_EQ(doc.number("doubled"), 1.0);
    for (const char c : r.body) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << "a raw control character";
  }
}

TEST_F(Workloads, echo_answers_only_post) {
  const Response r = round_trip(connection, get("/echo"));
  EXPECT_EQ(r.status, 405);
  EXPECT_TRUE(r.has_token("Allow", "POST")) << r.header("Allow").value_or("(no Allow)");
  EXPECT_FALSE(r.has_token("Allow", "GET")) << r.header("Allow").value_or("(no Allow)");
}

TEST_F(Workloads, pipelined_echoes_each_get_their_own_answer) {
  std::string batch;
  for (int i = 0; i < 20; ++i) {
    const std::string body = "{\"name\":\"p" + std::to_string(i) + "\",\"n\":" + std::to_string(i) + "}";
    batch += request("POST", "/echo",
                     "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n", body);
  }
  connection.send_all(batch);
  for (int i = 0; i < 20; ++i) {
    const Response r = connection.read_response();
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "{\"hello\":\"p" + std::to_string(i) + "\",\"doubled\":" + std::to_string(2 * i) + "}");
  }
}

}  // namespace
}  // namespace socket_test
