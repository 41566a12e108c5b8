#include "server/middleware/cors.hpp"

namespace ringhttp::server {

Cors::Cors(const CorsPolicy& policy) : origins_(policy.origins) {
  for (const std::string& origin : origins_) {
    const std::string allow = "Access-Control-Allow-Origin: " + origin + "\r\n";
    response_blocks_.push_back(allow + vary_only_);
    preflight_blocks_.push_back(allow + "Access-Control-Allow-Methods: " + policy.allow_methods +
                                "\r\nAccess-Control-Allow-Headers: " + policy.allow_headers +
                                "\r\nAccess-Control-Max-Age: " + std::to_string(policy.max_age_s) + "\r\n" +
                                vary_only_);
  }
}

int Cors::find(const http::HeaderValue& origin) const {
  if (!origin.ok()) return -1;
  for (std::size_t i = 0; i < origins_.size(); ++i) {
    if (origins_[i] == origin.value) return int(i);
  }
  return -1;
}

std::string_view Cors::response_block(const http::HeaderValue& origin) const {
  const int i = find(origin);
  return i < 0 ? std::string_view(vary_only_) : std::string_view(response_blocks_[std::size_t(i)]);
}

std::string_view Cors::preflight_block(const http::HeaderValue& origin) const {
  const int i = find(origin);
  return i < 0 ? std::string_view(vary_only_) : std::string_view(preflight_blocks_[std::size_t(i)]);
}

bool Cors::is_preflight(const http::RequestHead& head) {
  return head.method == http::Method::options && head.header(http::KeptHeader::origin).present &&
         head.header(http::KeptHeader::access_control_request_method).present;
}

}  // namespace ringhttp::server
