// A JSON response body parsed independently of the server (simdjson's DOM),
// for tests that check what a body says rather than its exact bytes.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace socket_test {

class JsonDoc {
 public:
  explicit JsonDoc(std::string_view text) : text_(text) {
    auto result = parser_.parse(text_);
    valid_ = result.error() == simdjson::SUCCESS && result.value().is_object();
    if (valid_) doc_ = result.value();
  }
  // An object, and valid JSON (UTF-8 included).
  bool valid() const { return valid_; }
  std::optional<std::string> text(const char* key) const {
    std::string_view v;
    if (!valid_ || doc_[key].get(v) != simdjson::SUCCESS) return std::nullopt;
    return std::string(v);
  }
  std::optional<double> number(const char* key) const {
    double v = 0;
    if (!valid_ || doc_[key].get(v) != simdjson::SUCCESS) return std::nullopt;
    return v;
  }
  std::size_t size() const {
    simdjson::dom::object o;
    return valid_ && doc_.get(o) == simdjson::SUCCESS ? o.size() : 0;
  }

 private:
  std::string text_;
  simdjson::dom::parser parser_;
  simdjson::dom::element doc_;
  bool valid_ = false;
};

// `s` as a JSON string literal, escaped by the test itself (not the server's
// writer): quotes, backslashes and control characters as \u00XX.
inline std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace socket_test
