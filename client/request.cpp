#include "client/request.hpp"

#include <strings.h>

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

}  // namespace

RequestBytes::RequestBytes(const Options& options) : head_request_(options.method == "HEAD") {
  std::string one;
  one.reserve(256 + options.body.size());
  one.append(options.method).append(" ").append(options.target.path).append(" HTTP/1.1\r\n");
  if (!has_header(options, "Host")) one.append("Host: ").append(options.target.host_header).append("\r\n");
  for (const std::string& h : options.headers) one.append(h).append("\r\n");
  // A body always carries its length; a user's own Content-Length wins.
  if (!options.body.empty() && !has_header(options, "Content-Length")) {
    one.append("Content-Length: ").append(std::to_string(options.body.size())).append("\r\n");
  }
  one.append("\r\n").append(options.body);
  one_bytes_ = one.size();
  bytes_.reserve(one.size() * options.pipeline);
  for (std::uint32_t i = 0; i < options.pipeline; ++i) bytes_.append(one);
}

}  // namespace ringhttp::client
