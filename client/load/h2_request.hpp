#pragma once
// HTTP/2's form of the run's requests (--http2, --http2-prior-knowledge):
// each distinct request's header fields, pseudo-headers first, and its
// body, made once at start, as RequestBytes makes the HTTP/1.1 bytes.
// A stream's fields point into this object's text, which nghttp2 does not
// copy (it copies only the short array of pointers), and its HPACK
// encoder turns a field it has sent before into one index byte.
//
// From the user's headers: names are lower-cased (RFC 9113 section
// 8.2.1); Host becomes :authority; the connection-specific fields
// (Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding, Upgrade)
// are dropped, since HTTP/2 forbids them (section 8.2.2) and their job is
// the framing's; a body carries its Content-Length unless the user gave one.

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/options.hpp"

namespace ringhttp::client {

class H2Requests {
 public:
  explicit H2Requests(const Options& options);
  H2Requests(const H2Requests&) = delete;
  H2Requests& operator=(const H2Requests&) = delete;

  std::size_t distinct() const { return body_starts_.size() - 1; }
  // The most fields a request has: the size of headers()'s scratch.
  std::size_t fields_max() const { return fields_max_; }
  // Request i's header fields (i < distinct()), written into `scratch`
  // (fields_max() long); the names and values live as long as this object.
  std::span<const nghttp2_nv> headers(std::size_t i, std::span<nghttp2_nv> scratch) const;
  std::string_view body(std::size_t i) const {
    return std::string_view(bodies_).substr(body_starts_[i], body_starts_[i + 1] - body_starts_[i]);
  }

 private:
  // A field: its name and value as places in text_ (a quarter of an
  // nghttp2_nv's size, which counts with a million distinct requests).
  struct Field {
    std::uint32_t name = 0, name_len = 0, value = 0, value_len = 0;
  };
  // Every name and value, back to back; the bodies, back to back.
  std::string text_;
  std::string bodies_;
  std::vector<Field> fields_;
  std::size_t fields_max_ = 0;
  std::vector<std::uint32_t> field_starts_;  // request i's first field, and the end
  std::vector<std::uint32_t> body_starts_;  // request i's body in bodies_, and the end
};

// Whether a request header (as the user wrote it, "Name: value") is one
// HTTP/2 forbids, which the HTTP/2 requests leave out.
bool connection_specific(std::string_view name);

}  // namespace ringhttp::client
