// GET /profile behind an HS256 bearer token, over a real socket: a valid
// token's subject comes back; every kind of bad token is a 401 with the
// same challenge and no detail; a token without exp is one of them unless
// --jwt-allow-no-exp; the secret comes from a file or the environment and
// never from a default.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <string>

#include "support/checks.hpp"
#include "support/json_doc.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"
#include "support/shell.hpp"
#include "tests/jwt_mint.hpp"

namespace socket_test {
namespace {

using ringhttp::testing::mint_hs256;

constexpr std::string_view secret = "a test secret, never a default";
constexpr std::string_view hs256_header = R"({"alg":"HS256","typ":"JWT"})";

std::string payload(std::string_view sub, long exp_offset_s = 3600, std::optional<long> nbf_offset_s = {}) {
  const long now = long(std::time(nullptr));
  std::string out = "{\"sub\":" + json_quote(sub) + ",\"exp\":" + std::to_string(now + exp_offset_s);
  if (nbf_offset_s) out += ",\"nbf\":" + std::to_string(now + *nbf_offset_s);
  return out + ",\"iat\":" + std::to_string(now) + "}";
}

std::string valid_token(std::string_view sub = "user-1") { return mint_hs256(hs256_header, payload(sub), secret); }

// Signed, with a subject, and no exp: valid for ever unless refused.
std::string token_without_exp(std::string_view sub = "user-1") {
  return mint_hs256(hs256_header,
                    "{\"sub\":" + json_quote(sub) + ",\"iat\":" + std::to_string(std::time(nullptr)) + "}", secret);
}

// header.payload. with an empty signature, as an alg none token is sent.
std::string unsigned_token(std::string_view header, std::string_view body) {
  const std::string signed_token = mint_hs256(header, body, secret);
  return signed_token.substr(0, signed_token.rfind('.') + 1);
}

std::string bearer(std::string_view token) { return "Authorization: Bearer " + std::string(token) + "\r\n"; }

// A secret file for one test, removed afterwards.
class SecretFile {
 public:
  explicit SecretFile(std::string_view content) {
    char name[] = "/tmp/ringhttp-jwt-secret-XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0 || ::write(fd, content.data(), content.size()) != ssize_t(content.size())) {
      throw std::runtime_error("cannot write a secret file");
    }
    ::close(fd);
    path_ = name;
  }
  ~SecretFile() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class Auth : public testing::Test {
 protected:
  SecretFile file{std::string(secret) + "\n"};  // the newline an editor adds is not part of it
  ServerProcess server{{"--shards", "1", "--jwt-secret-file", file.path()}};
  Connection connection{server.port()};

  Response profile(std::string_view headers) { return round_trip(connection, get("/profile", headers)); }
};

void expect_refused(const Response& r, bool with_error_code = true) {
  EXPECT_EQ(r.status, 401);
  const std::string challenge = r.header("WWW-Authenticate").value_or("(none)");
  if (with_error_code) {
    EXPECT_EQ(challenge, "Bearer error=\"invalid_token\"");
  } else {
    EXPECT_EQ(challenge, "Bearer");  // RFC 6750 3.1: no error code without credentials
  }
  EXPECT_EQ(r.body, R"({"error":"unauthorized"})") << "one body for every refusal: nothing for an attacker";
}

TEST_F(Auth, a_valid_token_gets_its_subject) {
  const Response r = profile(bearer(valid_token()));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"sub":"user-1"})");
  // The scheme is case-insensitive; the subject is escaped on the way out.
  const std::string hostile = "a\"b\\c\x01\xc3\xa9";
  const Response h = profile("Authorization: bearer " + valid_token(hostile) + "\r\n");
  ASSERT_EQ(h.status, 200);
  const JsonDoc doc(h.body);
  ASSERT_TRUE(doc.valid()) << h.body;
  EXPECT_EQ(doc.text("sub"), hostile);
}

TEST_F(Auth, a_request_without_a_bearer_token_is_challenged) {
  expect_refused(profile(""), false);
  expect_refused(profile("Authorization: Basic dXNlcjpwYXNz\r\n"), false);
  expect_refused(profile("Authorization: Bearer\r\n"), false);
}

TEST_F(Auth, every_kind_of_bad_token_is_refused_alike) {
  const std::string good = valid_token();
  std::string flipped = good;
  flipped[flipped.size() - 3] = flipped[flipped.size() - 3] == 'A' ? 'B' : 'A';
  const std::string header_and_payload = good.substr(0, good.rfind('.'));
  const long now = long(std::time(nullptr));
  const struct {
    const char* what;
    std::string token;
  } cases[] = {
      {"bad signature", flipped},
      {"signed with another secret", mint_hs256(hs256_header, payload("user-1"), "another secret")},
      {"expired", mint_hs256(hs256_header, payload("user-1", -3600), secret)},
      {"before nbf", mint_hs256(hs256_header, payload("user-1", 7200, 3600), secret)},
      {"alg none, no signature", header_and_payload + "."},
      {"alg none in the header, no signature", unsigned_token(R"({"alg":"none"})", payload("user-1"))},
      {"alg HS512", mint_hs256(R"({"alg":"HS512"})", payload("user-1"), secret)},
      {"truncated", good.substr(0, good.size() - 5)},
      {"truncated to two parts", header_and_payload},
      {"not a token", "abc"},
      {"bad base64url", "a$b.c.d"},
      {"payload not JSON", mint_hs256(hs256_header, "not json", secret)},
      {"no subject", mint_hs256(hs256_header, "{\"exp\":" + std::to_string(now + 60) + "}", secret)},
      {"too long", std::string(5000, 'a')},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    expect_refused(profile(bearer(c.token)));
  }
  // Two Authorization headers: which one counts would be ambiguous.
  expect_refused(profile(bearer(good) + bearer(good)));
  // The connection is still served, and the refusals are counted by kind.
  EXPECT_EQ(profile(bearer(good)).status, 200);
  const Metrics metrics = scrape_metrics(server.port());
  EXPECT_GE(metrics.value("ringhttp_token_refusals_total{kind=\"bad_signature\"}"), 2);
  EXPECT_GE(metrics.value("ringhttp_token_refusals_total{kind=\"expired\"}"), 1);
  EXPECT_GE(metrics.value("ringhttp_token_refusals_total{kind=\"not_yet_valid\"}"), 1);
  EXPECT_GE(metrics.value("ringhttp_token_refusals_total{kind=\"bad_algorithm\"}"), 1);
}

TEST_F(Auth, a_token_without_exp_is_refused_by_default) {
  expect_refused(profile(bearer(token_without_exp())));
  const Metrics metrics = scrape_metrics(server.port());
  EXPECT_EQ(metrics.value("ringhttp_token_refusals_total{kind=\"missing_exp\"}"), 1);
}

TEST(AuthNoExp, a_token_without_exp_is_accepted_with_jwt_allow_no_exp) {
  ServerOptions options;
  options.args = {"--shards", "1", "--jwt-allow-no-exp"};
  options.env = {"RINGHTTP_JWT_SECRET=" + std::string(secret)};
  ServerProcess server(options);
  Connection connection(server.port());
  const Response r = round_trip(connection, get("/profile", bearer(token_without_exp("user-2"))));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"sub":"user-2"})");
  // A token that has an exp is still held to it.
  expect_refused(
      round_trip(connection, get("/profile", bearer(mint_hs256(hs256_header, payload("u", -3600), secret)))));
}

TEST(AuthNoExp, the_switch_takes_no_value) {
  try {
    ServerProcess server({"--shards", "1", "--jwt-allow-no-exp=yes"});
    ADD_FAILURE() << "the server started: " << server.startup_line();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("exited with status 2"), std::string::npos) << e.what();
  }
}

TEST_F(Auth, an_alg_none_token_is_refused_even_with_a_valid_looking_signature) {
  // The classic downgrade: alg none, signed anyway; the verifier must not
  // follow the header's choice of algorithm.
  expect_refused(profile(bearer(mint_hs256(R"({"alg":"none","typ":"JWT"})", payload("user-1"), secret))));
  expect_refused(profile(bearer(mint_hs256(R"({"typ":"JWT"})", payload("user-1"), secret))));
}

TEST(AuthSecret, comes_from_the_environment_without_a_file) {
  ServerOptions options;
  options.args = {"--shards", "1"};
  options.env = {"RINGHTTP_JWT_SECRET=" + std::string(secret)};
  ServerProcess server(options);
  Connection connection(server.port());
  EXPECT_EQ(round_trip(connection, get("/profile", bearer(valid_token()))).status, 200);
  expect_refused(round_trip(connection, get("/profile", bearer(mint_hs256(hs256_header, payload("u"), "other")))));
}

TEST(AuthSecret, without_a_secret_the_route_answers_503_and_accepts_no_token) {
  ServerProcess server({"--shards", "1"});
  Connection connection(server.port());
  const Response r = round_trip(connection, get("/profile", bearer(valid_token())));
  EXPECT_EQ(r.status, 503);
  EXPECT_TRUE(JsonDoc(r.body).valid()) << r.body;
}

TEST(AuthSecret, an_unusable_secret_file_stops_the_server_with_a_clear_error) {
  SecretFile empty("\n");
  EXPECT_THROW(ServerProcess({"--shards", "1", "--jwt-secret-file", empty.path()}), std::runtime_error);
  EXPECT_THROW(ServerProcess({"--shards", "1", "--jwt-secret-file", "/nonexistent/secret"}), std::runtime_error);
}

}  // namespace
}  // namespace socket_test

namespace socket_test {
namespace {

// A secret file that is named but unusable stops the server with exit 1 and
// a message naming the file, before it listens: no routes behind a secret
// nobody meant.
TEST(AuthSecretFile, an_empty_or_unreadable_secret_file_stops_the_server_with_exit_1) {
  SecretFile empty{""};
  const auto [empty_code, empty_output] = run_shell(server_path() + " --port 0 --jwt-secret-file " + empty.path());
  EXPECT_EQ(empty_code, 1) << empty_output;
  EXPECT_NE(empty_output.find(empty.path() + " is empty"), std::string::npos) << empty_output;
  EXPECT_EQ(empty_output.find("listening"), std::string::npos) << empty_output;
  const auto [missing_code, missing_output] =
      run_shell(server_path() + " --port 0 --jwt-secret-file /nonexistent/ringhttp-secret");
  EXPECT_EQ(missing_code, 1) << missing_output;
  EXPECT_NE(missing_output.find("cannot read --jwt-secret-file /nonexistent/ringhttp-secret"), std::string::npos)
      << missing_output;
}

}  // namespace
}  // namespace socket_test
