#include "client/load/request.hpp"

#include <strings.h>

#include <cassert>

namespace ringhttp::client {
namespace {

bool has_header(const Options& options, std::string_view name) {
  for (const std::string& h : options.headers) {
    if (h.size() > name.size() && h[name.size()] == ':' && ::strncasecmp(h.data(), name.data(), name.size()) == 0) {
      return true;
    }
  }
  return false;
}

// One request with the placeholder (if any) replaced by `value`; with
// `closing`, it asks the server to close after its response.
std::string serialize(const Options& options, const Placeholder* placeholder, std::uint64_t value,
                      bool closing = false) {
  const auto field = [&](std::string_view text) {
    return placeholder != nullptr ? substitute(text, *placeholder, value) : std::string(text);
  };
  const std::string body = field(options.body);
  std::string one;
  one.reserve(256 + body.size());
  one.append(options.method).append(" ").append(field(options.target.path)).append(" HTTP/1.1\r\n");
  if (!has_header(options, "Host")) one.append("Host: ").append(options.target.host_header).append("\r\n");
  for (const std::string& h : options.headers) one.append(field(h)).append("\r\n");
  if (closing) one.append("Connection: close\r\n");
  // A body always carries its length; a user's own Content-Length wins.
  if (!body.empty() && !has_header(options, "Content-Length")) {
    one.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  }
  one.append("\r\n").append(body);
  return one;
}

}  // namespace

RequestBytes::RequestBytes(const Options& options) : head_request_(options.method == "HEAD") {
  const Placeholder* placeholder = options.placeholder ? &*options.placeholder : nullptr;
  const std::vector<std::uint64_t> values = placeholder ? placeholder->order() : std::vector<std::uint64_t>{0};
  distinct_ = values.size();
  std::vector<std::string> requests;
  requests.reserve(distinct_);
  for (const std::uint64_t v : values) {
    requests.push_back(serialize(options, placeholder, v));
    const std::string body = placeholder ? substitute(options.expect_body, *placeholder, v) : options.expect_body;
    expected_starts_.push_back(std::uint32_t(expected_.size()));
    expected_.append(body);
  }
  expected_starts_.push_back(std::uint32_t(expected_.size()));
  // Every request in order, then the first pipeline - 1 again: a batch of
  // up to `pipeline` from any request is contiguous.
  const std::size_t laid_out = distinct_ + options.pipeline - 1;
  starts_.reserve(laid_out + 1);
  for (std::size_t i = 0; i < laid_out; ++i) {
    starts_.push_back(std::uint32_t(bytes_.size()));
    bytes_.append(requests[i % distinct_]);
  }
  starts_.push_back(std::uint32_t(bytes_.size()));
  if (options.requests_per_connection > 0) {
    closing_starts_.reserve(distinct_ + 1);
    for (std::size_t i = 0; i < distinct_; ++i) {
      closing_starts_.push_back(std::uint32_t(closing_.size()));
      closing_.append(serialize(options, placeholder, values[i], true));
    }
    closing_starts_.push_back(std::uint32_t(closing_.size()));
  }
  if (options.speaks_http2()) h2_ = std::make_unique<H2Requests>(options);
  assert(bytes_.size() + closing_.size() + expected_.size() <= serialized_bytes_max &&
         "check_serialized_size() bounds this");
}

std::string check_serialized_size(const Options& options) {
  const Placeholder* placeholder = options.placeholder ? &*options.placeholder : nullptr;
  // The largest request and body (the widest number) times the requests laid out.
  const std::uint64_t widest = placeholder ? placeholder->last : 0;
  const std::uint64_t count = placeholder ? placeholder->count() : 1;
  const std::uint64_t one = serialize(options, placeholder, widest).size();
  const std::uint64_t body = placeholder ? substitute(options.expect_body, *placeholder, widest).size()
                                         : options.expect_body.size();
  const std::uint64_t closing = options.requests_per_connection > 0 ? (one + 19) * count : 0;  // + "Connection: close\r\n"
  const std::uint64_t total = one * (count + options.pipeline - 1) + closing + body * count;
  if (total > serialized_bytes_max) {
    return "the requests and expected bodies would take " + std::to_string(total >> 20) + " MiB, more than the " +
           std::to_string(serialized_bytes_max >> 20) + " MiB they are allowed (fewer values, a smaller body or "
           "pipeline)";
  }
  return {};
}

}  // namespace ringhttp::client
