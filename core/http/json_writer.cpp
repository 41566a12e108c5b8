#include "core/http/json_writer.hpp"

#include <cstring>

namespace ringhttp::http {

void JsonWriter::put(char c) {
  if (len_ == capacity_) {
    ok_ = false;
    return;
  }
  out_[len_++] = c;
}

void JsonWriter::raw(std::string_view bytes) {
  if (capacity_ - len_ < bytes.size()) {
    ok_ = false;
    return;
  }
  std::memcpy(out_ + len_, bytes.data(), bytes.size());
  len_ += bytes.size();
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (!first_) put(',');
  first_ = false;
  string(name);
  put(':');
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view value) {
  static constexpr char hex[] = "0123456789abcdef";
  put('"');
  for (const char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': raw("\\\""); break;
      case '\\': raw("\\\\"); break;
      case '\n': raw("\\n"); break;
      case '\r': raw("\\r"); break;
      case '\t': raw("\\t"); break;
      case '\b': raw("\\b"); break;
      case '\f': raw("\\f"); break;
      default:
        if (c < 0x20) {
          const char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
          raw(std::string_view(esc, 6));
        } else {
          put(ch);  // UTF-8 passes through; the caller validated it
        }
    }
  }
  put('"');
  return *this;
}

}  // namespace ringhttp::http
