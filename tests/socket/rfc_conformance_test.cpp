// Request parsing held to RFC 9110 and RFC 9112, over a real socket: each
// refusal gets its status, the connection is closed (so nothing pipelined
// after it is answered), the parse error is counted by kind and a fresh
// connection is served; each control is answered and its connection kept.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <string_view>
#include <thread>

#include "support/checks.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

using namespace std::chrono_literals;

// POST /echo's JSON body, its answer, and the same body as two chunks
// (0x5 + 0xe = 19 bytes) ended by the last chunk and an empty trailer section.
constexpr std::string_view echo_json = R"({"name":"hi","n":2})";
constexpr std::string_view echo_answer = R"({"hello":"hi","doubled":4})";
const std::string echo_chunks = "5\r\n{\"nam\r\ne\r\ne\":\"hi\",\"n\":2}\r\n0\r\n\r\n";

// POST /echo with a JSON content type, `framing` (Content-Length or
// Transfer-Encoding lines, or any other header lines) and `body`.
std::string post_echo(std::string_view framing, std::string_view body) {
  return request("POST", "/echo", "Content-Type: application/json\r\n" + std::string(framing), body);
}

// A chunked POST /echo whose chunked body (after the header section) is `body`.
std::string chunked_echo(std::string_view body) { return post_echo("Transfer-Encoding: chunked\r\n", body); }

// A smuggling pattern is followed by a pipelined GET /json in the same
// send(): after the refusal it must not be answered.
std::string then_json(std::string bytes) { return bytes + get("/json"); }

// GET /plaintext with `host_line` as its only header line.
std::string with_host(std::string_view host_line) {
  return "GET /plaintext HTTP/1.1\r\n" + std::string(host_line) + "\r\n\r\n";
}

// GET /plaintext with `version` on its request line.
std::string with_version(std::string_view version) {
  return "GET /plaintext " + std::string(version) + "\r\nHost: x\r\n\r\n";
}

// A GET of /plaintext whose request line ("GET ", target, " HTTP/1.1\r\n")
// is exactly `octets` long: a query pads it, and /plaintext ignores queries.
std::string get_with_request_line_of(std::size_t octets) {
  const std::size_t fixed = std::string_view("GET /plaintext? HTTP/1.1\r\n").size();
  return "GET /plaintext?" + std::string(octets - fixed, 'q') + " HTTP/1.1\r\nHost: x\r\n\r\n";
}

// Header lines of exactly 100 bytes each (X-Pad-N: ppp...CRLF), at least
// `bytes` in all.
std::string padding_headers(std::size_t bytes) {
  std::string out;
  for (int i = 0; out.size() < bytes; ++i) {
    std::string line = "X-Pad-" + std::to_string(i) + ": ";
    line.append(98 - line.size(), 'p').append("\r\n");
    out += line;
  }
  return out;
}

// Sends `bytes` on a fresh connection: the answer is `status`, then the
// server closes the connection without sending anything more (a pipelined
// request after the refusal is not answered), a fresh connection is served,
// and the parse error is counted once under `kind` when a kind is given.
void expect_refused(const ServerProcess& server, const std::string& bytes, int status, const std::string& kind) {
  const double errors_before = kind.empty() ? 0 : scrape_metrics(server.port()).value(metric::parse_errors(kind));
  {
    Connection connection(server.port());
    connection.send_all(bytes);
    const Response response = connection.read_response();
    EXPECT_EQ(response.status, status);
    EXPECT_TRUE(connection.expect_closed());
  }
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
  if (!kind.empty()) {
    EXPECT_EQ(scrape_metrics(server.port()).value(metric::parse_errors(kind)), errors_before + 1)
        << metric::parse_errors(kind);
  }
}

// Sends `bytes` on a fresh connection: the answer is `status` from an
// HTTP/1.1 server (with `body` and a `header` line, where given), and the
// connection stays open: a second request on it is served.
void expect_served(const ServerProcess& server, const std::string& bytes, int status, std::string_view body = {},
                   std::string_view header = {}) {
  Connection connection(server.port());
  connection.send_all(bytes);
  const Response response = connection.read_response();
  EXPECT_EQ(response.status, status);
  EXPECT_EQ(response.version, "HTTP/1.1");
  if (!body.empty()) {
    EXPECT_EQ(response.body, body);
  }
  if (!header.empty()) {
    EXPECT_TRUE(response.header(header)) << "no " << header << " header";
  }
  if (response.has_token("Connection", "close")) {
    ADD_FAILURE() << "the answer closes the connection";
    return;
  }
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext")))) << "the connection was not kept";
}

// ---------------------------------------------------------------------------
// Tables: many inputs, one expectation each, every case named.

struct Refusal {
  std::string name;
  std::string bytes;
  int status;
  std::string kind;  // the parse error counted; empty where the spec names none
};

struct Control {
  std::string name;
  std::string bytes;
  int status;
  std::string body;    // checked when not empty
  std::string header;  // a header the answer must carry, when not empty
};

void PrintTo(const Refusal& c, std::ostream* os) { *os << c.name; }
void PrintTo(const Control& c, std::ostream* os) { *os << c.name; }

template <typename Case>
std::string case_name(const testing::TestParamInfo<Case>& info) {
  return info.param.name;
}

class Refused : public testing::TestWithParam<Refusal> {
 protected:
  ServerProcess server{{"--shards", "1"}};
};

TEST_P(Refused, with_its_status_and_kind_then_closed) {
  const Refusal& c = GetParam();
  expect_refused(server, c.bytes, c.status, c.kind);
}

class Served : public testing::TestWithParam<Control> {
 protected:
  ServerProcess server{{"--shards", "1"}};
};

TEST_P(Served, and_the_connection_kept) {
  const Control& c = GetParam();
  expect_served(server, c.bytes, c.status, c.body, c.header);
}

// RFC 9110 section 5.1: a field name is a token (section 5.6.2), so any
// other byte in it (a space here) makes the line invalid; RFC 9112 section
// 5.1 forbids whitespace before the colon. A server that dropped such a
// line would take `Transfer Encoding: chunked` for a request with no body
// and parse the chunks as the next request.
INSTANTIATE_TEST_SUITE_P(
    RfcFieldNames, Refused,
    testing::Values(Refusal{"space_in_a_field_name", get("/plaintext", "Foo Bar: baz\r\n"), 400, "malformed"},
                    Refusal{"space_in_transfer_encoding_name",
                            then_json(post_echo("Transfer Encoding: chunked\r\n", echo_chunks)), 400, "malformed"},
                    Refusal{"space_in_content_length_name", then_json(post_echo("Content Length: 3\r\n", "abc")), 400,
                            "malformed"},
                    Refusal{"space_in_a_trailer_name",
                            then_json(chunked_echo("5\r\n{\"nam\r\ne\r\ne\":\"hi\",\"n\":2}\r\n0\r\nX Y: a\r\n\r\n")),
                            400, "malformed"}),
    case_name<Refusal>);

// RFC 9110 section 5.6.2: every tchar is allowed in a token.
INSTANTIATE_TEST_SUITE_P(RfcFieldNames, Served,
                         testing::Values(Control{"every_tchar_in_a_field_name",
                                                 get("/plaintext", "X-a!#$%&'*+.^_`|~: v\r\n"), 200,
                                                 std::string(plaintext_body), ""}),
                         case_name<Control>);

// RFC 9112 section 2.2: lines end in CRLF; a recipient MAY take a bare LF
// as a line end, and this server does not, anywhere framing is read: in the
// request line, the header section, chunk-size lines, after chunk data and
// in trailers (section 7.1). A server and a proxy that disagree on a bare
// LF disagree on where a request ends.
INSTANTIATE_TEST_SUITE_P(
    RfcBareLf, Refused,
    testing::Values(
        Refusal{"after_the_request_line", "GET /plaintext HTTP/1.1\nHost: x\r\n\r\n", 400, "bad_framing"},
        Refusal{"after_a_header_line", "GET /plaintext HTTP/1.1\r\nHost: x\nX-A: b\r\n\r\n", 400, "bad_framing"},
        Refusal{"as_the_blank_line_ending_the_header_section", then_json("GET /plaintext HTTP/1.1\r\nHost: x\r\n\n"),
                400, "bad_framing"},
        Refusal{"ending_a_chunk_size_line", then_json(chunked_echo("5\n{\"nam\r\ne\r\ne\":\"hi\",\"n\":2}\r\n0\r\n\r\n")),
                400, "bad_framing"},
        Refusal{"after_chunk_data", then_json(chunked_echo("5\r\n{\"nam\ne\r\ne\":\"hi\",\"n\":2}\r\n0\r\n\r\n")), 400,
                "bad_framing"},
        Refusal{"after_the_last_chunk", then_json(chunked_echo("5\r\n{\"nam\r\ne\r\ne\":\"hi\",\"n\":2}\r\n0\n\r\n")),
                400, "bad_framing"},
        Refusal{"after_a_trailer_line",
                then_json(chunked_echo("5\r\n{\"nam\r\ne\r\ne\":\"hi\",\"n\":2}\r\n0\r\nX-T: a\n\r\n")), 400,
                "bad_framing"},
        Refusal{"as_the_empty_line_after_trailers",
                then_json(chunked_echo("5\r\n{\"nam\r\ne\r\ne\":\"hi\",\"n\":2}\r\n0\r\nX-T: a\r\n\n")), 400,
                "bad_framing"},
        Refusal{"as_the_empty_line_ending_a_chunked_body",
                then_json(chunked_echo("5\r\n{\"nam\r\ne\r\ne\":\"hi\",\"n\":2}\r\n0\r\n\n")), 400, "bad_framing"},
        Refusal{"before_the_request_line", "\nGET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_framing"}),
    case_name<Refusal>);

// RFC 9112 section 2.2: a server SHOULD ignore at least one empty line
// (CRLF) before the request line. Body bytes are not framing: a bare LF in
// a Content-Length body is data.
INSTANTIATE_TEST_SUITE_P(
    RfcBareLf, Served,
    testing::Values(Control{"one_crlf_before_the_request_line", "\r\nGET /plaintext HTTP/1.1\r\nHost: x\r\n\r\n", 200,
                            std::string(plaintext_body), ""},
                    Control{"in_a_content_length_body",
                            post_echo("Content-Length: 19\r\n", "{\"name\":\"a\",\n\"n\":2}"), 200,
                            R"({"hello":"a","doubled":4})", ""}),
    case_name<Control>);

// RFC 9110 section 2.5: a message of a higher minor version than the
// server's is processed as the highest minor version it conforms to (1.1),
// and answered as HTTP/1.1; so HTTP/1.2 needs a Host as 1.1 does (RFC 9112
// section 3.2). Another major version is 505 (RFC 9110 section 15.6.6).
INSTANTIATE_TEST_SUITE_P(
    RfcVersions, Refused,
    testing::Values(
        Refusal{"http12_without_host", "GET /plaintext HTTP/1.2\r\nAccept: */*\r\n\r\n", 400, "bad_host"},
        Refusal{"http20_request_line", with_version("HTTP/2.0"), 505, "unsupported_version"},
        Refusal{"http09_request_line", with_version("HTTP/0.9"), 505, "unsupported_version"}),
    case_name<Refusal>);

INSTANTIATE_TEST_SUITE_P(RfcVersions, Served,
                         testing::Values(Control{"http12_as_http11", with_version("HTTP/1.2"), 200,
                                                 std::string(plaintext_body), ""},
                                         Control{"http19_as_http11", with_version("HTTP/1.9"), 200,
                                                 std::string(plaintext_body), ""}),
                         case_name<Control>);

// RFC 9112 section 3.2: a Host with an invalid value is 400. Its grammar is
// uri-host [ ":" port ] (RFC 9110 section 7.2), port = *DIGIT (RFC 3986
// section 3.2.3, so an empty port is valid), an IPv6 literal bracketed; an
// http URI's host is never empty (RFC 9110 section 4.2.1). Whitespace
// around a field value is not part of it (RFC 9110 section 5.5).
INSTANTIATE_TEST_SUITE_P(RfcHosts, Refused,
                         testing::Values(Refusal{"empty_after_a_space", with_host("Host: "), 400, "bad_host"},
                                         Refusal{"empty", with_host("Host:"), 400, "bad_host"},
                                         Refusal{"port_not_digits", with_host("Host: x:abc"), 400, "bad_host"},
                                         Refusal{"two_ports", with_host("Host: x:80:80"), 400, "bad_host"},
                                         Refusal{"ipv6_unbracketed", with_host("Host: ::1"), 400, "bad_host"},
                                         Refusal{"ipv6_bracket_unclosed", with_host("Host: [::1"), 400, "bad_host"},
                                         Refusal{"space_in_the_port", with_host("Host: x:8 0"), 400, "bad_host"}),
                         case_name<Refusal>);

INSTANTIATE_TEST_SUITE_P(
    RfcHosts, Served,
    testing::Values(Control{"name", with_host("Host: x"), 200, std::string(plaintext_body), ""},
                    Control{"name_and_port", with_host("Host: x:8080"), 200, std::string(plaintext_body), ""},
                    Control{"empty_port", with_host("Host: x:"), 200, std::string(plaintext_body), ""},
                    Control{"ipv6_literal", with_host("Host: [::1]"), 200, std::string(plaintext_body), ""},
                    Control{"ipv6_literal_and_port", with_host("Host: [::1]:8080"), 200, std::string(plaintext_body),
                            ""},
                    Control{"ipv4_and_port", with_host("Host: 127.0.0.1:80"), 200, std::string(plaintext_body), ""},
                    Control{"surrounding_whitespace", with_host("Host:   x  "), 200, std::string(plaintext_body), ""}),
    case_name<Control>);

// RFC 9110 section 9.1: methods are case-sensitive tokens, and one the
// server does not implement SHOULD get 501; CONNECT (section 9.3.6) is for
// proxies, which this server is not. A non-token byte makes the request
// line invalid: 400 (RFC 9112 section 3).
INSTANTIATE_TEST_SUITE_P(
    RfcMethods, Refused,
    testing::Values(Refusal{"connect", "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n", 501, "unsupported_method"},
                    Refusal{"unknown_token", "FOO /plaintext HTTP/1.1\r\nHost: x\r\n\r\n", 501, "unsupported_method"},
                    Refusal{"lowercase_get", "get /plaintext HTTP/1.1\r\nHost: x\r\n\r\n", 501, "unsupported_method"},
                    Refusal{"get_with_a_suffix", "GETX /plaintext HTTP/1.1\r\nHost: x\r\n\r\n", 501,
                            "unsupported_method"},
                    Refusal{"non_token_byte", "GE(T /plaintext HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed"}),
    case_name<Refusal>);

// RFC 9110 section 15.5.6: a known method the target does not take is 405
// with an Allow line.
INSTANTIATE_TEST_SUITE_P(RfcMethods, Served,
                         testing::Values(Control{"known_method_not_on_the_route",
                                                 request("DELETE", "/plaintext"), 405, "", "Allow"}),
                         case_name<Control>);

// RFC 9110 section 4.2.4: userinfo in an http URI is treated as an error.
// RFC 9112 section 3.2: a request target has no fragment, and is made of
// URI characters only (RFC 3986 section 2): no raw byte over 0x7F, no tab.
// The asterisk form is for OPTIONS alone (RFC 9112 section 3.2.4).
INSTANTIATE_TEST_SUITE_P(
    RfcTargets, Refused,
    testing::Values(Refusal{"absolute_form_with_userinfo", "GET http://u:p@x/plaintext HTTP/1.1\r\nHost: x\r\n\r\n",
                            400, "malformed"},
                    Refusal{"fragment", "GET /plaintext#frag HTTP/1.1\r\nHost: x\r\n\r\n", 400, "malformed"},
                    Refusal{"raw_byte_over_0x7f", "GET /pl\xe9 HTTP/1.1\r\nHost: x\r\n\r\n", 400, ""},
                    Refusal{"tab", "GET /a\tb HTTP/1.1\r\nHost: x\r\n\r\n", 400, ""},
                    Refusal{"asterisk_on_a_get", "GET * HTTP/1.1\r\nHost: x\r\n\r\n", 400, ""}),
    case_name<Refusal>);

INSTANTIATE_TEST_SUITE_P(RfcTargets, Served,
                         testing::Values(Control{"absolute_form", "GET http://x/plaintext HTTP/1.1\r\nHost: x\r\n\r\n",
                                                 200, std::string(plaintext_body), ""}),
                         case_name<Control>);

// RFC 9112 section 6.3: when chunked is not the final transfer coding of a
// request the body's length cannot be known: 400, then close. Section 6.1:
// chunked is never applied twice. A coding the server does not know, before
// chunked, SHOULD be 501 (section 6.1). Coding names are case-insensitive
// (section 7). Every refusal is followed by a pipelined GET that the server
// must not take from the body it could not frame.
INSTANTIATE_TEST_SUITE_P(
    RfcTransferCodings, Refused,
    testing::Values(
        Refusal{"gzip", then_json(post_echo("Transfer-Encoding: gzip\r\n", echo_chunks)), 400, "ambiguous_length"},
        Refusal{"identity", then_json(post_echo("Transfer-Encoding: identity\r\n", echo_chunks)), 400,
                "ambiguous_length"},
        Refusal{"chunked_then_gzip", then_json(post_echo("Transfer-Encoding: chunked, gzip\r\n", echo_chunks)), 400,
                "ambiguous_length"},
        Refusal{"chunked_twice", then_json(post_echo("Transfer-Encoding: chunked, chunked\r\n", echo_chunks)), 400,
                "ambiguous_length"},
        Refusal{"chunked_on_two_lines",
                then_json(post_echo("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", echo_chunks)),
                400, "ambiguous_length"},
        Refusal{"gzip_then_chunked", then_json(post_echo("Transfer-Encoding: gzip, chunked\r\n", echo_chunks)), 501,
                "unsupported_transfer_coding"},
        Refusal{"gzip_then_chunked_on_two_lines",
                then_json(post_echo("Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", echo_chunks)), 501,
                "unsupported_transfer_coding"}),
    case_name<Refusal>);

INSTANTIATE_TEST_SUITE_P(RfcTransferCodings, Served,
                         testing::Values(Control{"chunked_in_capitals",
                                                 post_echo("Transfer-Encoding: Chunked\r\n", echo_chunks), 200,
                                                 std::string(echo_answer), ""}),
                         case_name<Control>);

// ---------------------------------------------------------------------------
// One behaviour each.

class RfcConformance : public testing::Test {
 protected:
  ServerProcess server{{"--shards", "1"}};
};

// POST /echo with Expect: 100-continue and a 19-byte JSON body.
std::string echo_expecting_continue(std::string_view version) {
  return "POST /echo " + std::string(version) +
         "\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(echo_json.size()) + "\r\n\r\n";
}

// RFC 9110 section 10.1.1: a server MUST ignore a 100-continue expectation
// in an HTTP/1.0 request (a 1.0 client cannot read a 1xx). The client
// waits 300 ms for the 100 it would get over HTTP/1.1 before sending the
// body anyway, as a client does; the first answer must be the final one.
TEST_F(RfcConformance, http10_expect_continue_gets_no_100) {
  Connection connection(server.port());
  connection.send_all(echo_expecting_continue("HTTP/1.0"));
  std::this_thread::sleep_for(300ms);
  connection.send_all(echo_json);
  const Response first = connection.read_response();
  EXPECT_NE(first.status, 100) << "an HTTP/1.0 client got an interim response";
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.body, echo_answer);
  EXPECT_TRUE(connection.expect_closed());  // HTTP/1.0 without keep-alive
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
}

// The control: over HTTP/1.1 the 100 comes first, then the 200.
TEST_F(RfcConformance, http11_expect_continue_gets_100_then_200) {
  Connection connection(server.port());
  connection.send_all(echo_expecting_continue("HTTP/1.1"));
  EXPECT_EQ(connection.read_response().status, 100);
  connection.send_all(echo_json);
  const Response final_response = connection.read_response();
  EXPECT_EQ(final_response.status, 200);
  EXPECT_EQ(final_response.body, echo_answer);
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
}

// RFC 9110 section 9.3.7 and RFC 9112 section 3.2.4: OPTIONS * asks about
// the server as a whole; the answer is a normal one (204 with Allow) and
// the connection goes on.
TEST_F(RfcConformance, options_asterisk_is_204_with_allow_and_keeps_the_connection) {
  Connection connection(server.port());
  const Response response = round_trip(connection, "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(response.status, 204);
  for (const std::string_view method : {"GET", "HEAD", "POST", "OPTIONS"}) {
    EXPECT_TRUE(response.has_token("Allow", method))
        << "Allow: " << response.header("Allow").value_or("(none)") << " lacks " << method;
  }
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
}

// RFC 9110 section 7.8: a server MAY ignore Upgrade and go on in HTTP/1.1;
// then no 101 is sent, the request is answered as any other, and a request
// pipelined behind it (in the same send()) is the next HTTP/1.1 request.
void expect_upgrade_ignored(const ServerProcess& server, std::string_view upgrade_headers) {
  Connection connection(server.port());
  connection.send_all(get("/plaintext", upgrade_headers) + get("/json"));
  const Response first = connection.read_response();
  EXPECT_NE(first.status, 101);
  EXPECT_TRUE(is_plaintext_ok(first));
  const Response second = connection.read_response();
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(second.body, json_body);
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
}

TEST_F(RfcConformance, websocket_upgrade_is_answered_as_http11) {
  expect_upgrade_ignored(server, "Upgrade: websocket\r\nConnection: Upgrade\r\n");
}

TEST_F(RfcConformance, h2c_upgrade_is_answered_as_http11) {
  expect_upgrade_ignored(server,
                         "Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n"
                         "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n");
}

// RFC 9112 section 3: recipients SHOULD support request lines of at least
// 8000 octets. Beyond the limit (--request-line-bytes-max, 8192 by
// default) the target is too long: 414 (RFC 9110 section 15.5.15).
TEST_F(RfcConformance, request_line_of_8000_octets_is_served) {
  const std::string bytes = get_with_request_line_of(8000);
  ASSERT_EQ(bytes.find("\r\n") + 2, 8000u);
  expect_served(server, bytes, 200, plaintext_body);
}

TEST_F(RfcConformance, target_of_9000_bytes_is_414) {
  std::string target = "/plaintext?";
  target.append(9000 - target.size(), 'q');
  expect_refused(server, get(target), 414, "target_too_long");
}

// The header section's limit (--header-bytes-max) is 32 KiB by default:
// 20 KiB of fields is served, 40 KiB is 431 (RFC 6585 section 5).
TEST_F(RfcConformance, header_section_of_20_kib_is_served) {
  expect_served(server, get("/plaintext", padding_headers(20 * 1024)), 200, plaintext_body);
}

TEST_F(RfcConformance, header_section_of_40_kib_is_431) {
  expect_refused(server, get("/plaintext", padding_headers(40 * 1024)), 431, "header_too_large");
}

// --request-line-bytes-max counts the whole request line, CRLF included.
class RfcShortRequestLine : public testing::Test {
 protected:
  ServerProcess server{{"--shards", "1", "--request-line-bytes-max", "1024"}};
};

TEST_F(RfcShortRequestLine, request_line_at_the_limit_is_served) {
  expect_served(server, get_with_request_line_of(1024), 200, plaintext_body);
}

TEST_F(RfcShortRequestLine, request_line_one_octet_over_the_limit_is_414) {
  expect_refused(server, get_with_request_line_of(1025), 414, "target_too_long");
}

}  // namespace
}  // namespace socket_test
