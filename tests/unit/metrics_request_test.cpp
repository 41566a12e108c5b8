// The metrics endpoint's HTTP without sockets: each request's verdict,
// reached only once its header section is complete (every prefix of it is
// incomplete, or already a 400 for a bad request line), and each answer's
// framing.
#include <gtest/gtest.h>

#include <string>

#include "server/metrics_request.hpp"

namespace ringhttp::server {
namespace {

// The verdict of `bytes`, after checking that every proper prefix is
// incomplete: the endpoint judges what it has after each read, and a read
// may stop anywhere.
MetricsRequest judged_whole(std::string_view bytes) {
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_EQ(judge_metrics_request(bytes.substr(0, n)), MetricsRequest::incomplete) << n << " of " << bytes;
  }
  return judge_metrics_request(bytes);
}

TEST(MetricsRequest, get_and_head_of_metrics_are_answered_once_the_head_is_complete) {
  EXPECT_EQ(judged_whole("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: text/plain\r\n\r\n"), MetricsRequest::get);
  EXPECT_EQ(judged_whole("GET /metrics HTTP/1.0\r\n\r\n"), MetricsRequest::get);
  EXPECT_EQ(judged_whole("GET /metrics?name[]=x HTTP/1.1\r\n\r\n"), MetricsRequest::get) << "a query is ignored";
  EXPECT_EQ(judged_whole("HEAD /metrics HTTP/1.1\r\n\r\n"), MetricsRequest::head);
}

TEST(MetricsRequest, other_paths_and_methods_are_refused) {
  EXPECT_EQ(judged_whole("GET / HTTP/1.1\r\n\r\n"), MetricsRequest::not_found);
  EXPECT_EQ(judged_whole("GET /metricsx HTTP/1.1\r\n\r\n"), MetricsRequest::not_found);
  EXPECT_EQ(judged_whole("GET /Metrics HTTP/1.1\r\n\r\n"), MetricsRequest::not_found);
  EXPECT_EQ(judged_whole("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n"), MetricsRequest::method_not_allowed);
  EXPECT_EQ(judged_whole("get /metrics HTTP/1.1\r\n\r\n"), MetricsRequest::method_not_allowed)
      << "methods are case-sensitive";
}

TEST(MetricsRequest, a_bad_request_line_is_refused_as_soon_as_it_ends) {
  for (const char* line : {"BLAH", "GET /metrics", "GET /metrics HTTP/2.0", "GET  /metrics HTTP/1.1",
                           "GET /metrics  HTTP/1.1", "GET metrics HTTP/1.1", "GET * HTTP/1.1",
                           "GET http://x/metrics HTTP/1.1", "G(T /metrics HTTP/1.1", " GET /metrics HTTP/1.1",
                           "GET /met\x7frics HTTP/1.1", "GET /metrics HTTP/1.1 ", "GET /metrics\tHTTP/1.1", ""}) {
    EXPECT_EQ(judge_metrics_request(std::string(line) + "\r\n"), MetricsRequest::bad_request) << line;
  }
}

TEST(MetricsRequest, no_end_within_the_limit_is_too_large) {
  const std::string start = "GET /metrics HTTP/1.1\r\nX: ";
  std::string almost = start + std::string(metrics_request_bytes_max - start.size() - 1, 'a');
  EXPECT_EQ(judge_metrics_request(almost), MetricsRequest::incomplete);
  almost += 'a';
  EXPECT_EQ(judge_metrics_request(almost), MetricsRequest::too_large);
  EXPECT_EQ(judge_metrics_request(std::string(metrics_request_bytes_max, 'x')), MetricsRequest::too_large)
      << "no request line at all";
}

TEST(MetricsRequest, every_answer_is_framed_and_closes) {
  std::string out;
  build_metrics_answer(MetricsRequest::get, "a 1\n", out);
  EXPECT_EQ(out.substr(0, 17), "HTTP/1.1 200 OK\r\n");
  EXPECT_NE(out.find("Content-Type: text/plain; version=0.0.4\r\n"), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("Content-Length: 4\r\nConnection: close\r\n\r\na 1\n")) << out;
  build_metrics_answer(MetricsRequest::head, "a 1\n", out);
  EXPECT_TRUE(out.ends_with("Content-Length: 4\r\nConnection: close\r\n\r\n")) << "HEAD: the length, no body";
  const struct {
    MetricsRequest request;
    const char* status_line;
  } refusals[] = {
      {MetricsRequest::bad_request, "HTTP/1.1 400 "},        {MetricsRequest::not_found, "HTTP/1.1 404 "},
      {MetricsRequest::method_not_allowed, "HTTP/1.1 405 "}, {MetricsRequest::too_large, "HTTP/1.1 431 "},
      {MetricsRequest::timed_out, "HTTP/1.1 408 "},
  };
  for (const auto& r : refusals) {
    build_metrics_answer(r.request, "never sent", out);
    EXPECT_TRUE(out.starts_with(r.status_line)) << out;
    EXPECT_EQ(out.find("never sent"), std::string::npos);
    const std::size_t body = out.find("\r\n\r\n") + 4;
    EXPECT_NE(out.find("Content-Length: " + std::to_string(out.size() - body) + "\r\n"), std::string::npos) << out;
    EXPECT_NE(out.find("Connection: close\r\n"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace ringhttp::server
