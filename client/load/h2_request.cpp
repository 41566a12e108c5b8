#include "client/load/h2_request.hpp"

#include <strings.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cctype>

namespace ringhttp::client {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && ::strncasecmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace

bool connection_specific(std::string_view name) {
  static constexpr std::array<std::string_view, 5> forbidden = {"connection", "keep-alive", "proxy-connection",
                                                                 "transfer-encoding", "upgrade"};
  for (const std::string_view f : forbidden) {
    if (iequals(name, f)) return true;
  }
  return false;
}

H2Requests::H2Requests(const Options& options) {
  const Placeholder* placeholder = options.placeholder ? &*options.placeholder : nullptr;
  const std::vector<std::uint64_t> values = placeholder ? placeholder->order() : std::vector<std::uint64_t>{0};
  const auto append = [&](std::string_view s) {
    const auto at = std::uint32_t(text_.size());
    text_.append(s);
    return at;
  };
  const auto add = [&](std::string_view name, std::string_view value) {
    Field p;
    p.name = append(name);
    p.name_len = std::uint32_t(name.size());
    p.value = append(value);
    p.value_len = std::uint32_t(value.size());
    fields_.push_back(p);
  };
  for (const std::uint64_t v : values) {
    const auto field = [&](std::string_view s) {
      return placeholder != nullptr ? substitute(s, *placeholder, v) : std::string(s);
    };
    field_starts_.push_back(std::uint32_t(fields_.size()));
    std::string authority = options.target.host_header;
    bool has_length = false;
    // The user's headers first, to find Host; pseudo-headers must lead,
    // so they are put in front once known.
    std::vector<std::pair<std::string, std::string>> headers;
    for (const std::string& h : options.headers) {
      const std::string line = field(h);
      const std::size_t colon = line.find(':');
      assert(colon != std::string::npos && colon > 0 && "options checked the form");
      std::string name = line.substr(0, colon);
      const std::string value(trim(std::string_view(line).substr(colon + 1)));
      if (connection_specific(name)) continue;
      if (iequals(name, "host")) {
        authority = value;
        continue;
      }
      if (iequals(name, "content-length")) has_length = true;
      for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
      headers.emplace_back(std::move(name), value);
    }
    const std::string body = field(options.body);
    add(":method", options.method);
    add(":scheme", options.target.scheme == Scheme::https ? "https" : "http");
    add(":authority", authority);
    add(":path", field(options.target.path));
    for (const auto& [name, value] : headers) add(name, value);
    if (!body.empty() && !has_length) add("content-length", std::to_string(body.size()));
    body_starts_.push_back(std::uint32_t(bodies_.size()));
    bodies_ += body;
    fields_max_ = std::max<std::size_t>(fields_max_, fields_.size() - field_starts_.back());
  }
  field_starts_.push_back(std::uint32_t(fields_.size()));
  body_starts_.push_back(std::uint32_t(bodies_.size()));
}

std::span<const nghttp2_nv> H2Requests::headers(std::size_t i, std::span<nghttp2_nv> scratch) const {
  const std::size_t first = field_starts_[i];
  const std::size_t count = field_starts_[i + 1] - first;
  assert(count <= scratch.size());
  // nghttp2 reads const bytes through these pointers: NO_COPY keeps them
  // as they are until the frame is sent.
  auto* base = reinterpret_cast<std::uint8_t*>(const_cast<char*>(text_.data()));
  for (std::size_t k = 0; k < count; ++k) {
    const Field& f = fields_[first + k];
    scratch[k] = nghttp2_nv{base + f.name, base + f.value, f.name_len, f.value_len,
                            NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
  }
  return scratch.first(count);
}

}  // namespace ringhttp::client
