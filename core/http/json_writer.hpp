#pragma once
// A small JSON writer into a caller-owned fixed buffer: no allocation, and
// an explicit failure when the buffer is too small.

#include <cstddef>
#include <string_view>

namespace ringhttp::http {

class JsonWriter {
 public:
  JsonWriter(char* out, std::size_t capacity) : out_(out), capacity_(capacity) {}

  JsonWriter& begin_object() { return raw("{"), first_ = true, *this; }
  JsonWriter& end_object() { return raw("}"), first_ = false, *this; }
  JsonWriter& key(std::string_view name);
  JsonWriter& string(std::string_view value);
  // A finite number in its shortest round-trip form (std::to_chars), which
  // is valid JSON: "42", "-0.5", "1e+300"; from 2^53 up always with an
  // exponent. Not finite: the writer fails.
  JsonWriter& number(double value);
  // An integer given as its decimal digits (as a database wrote it),
  // copied as they are; anything but an optional '-' and 1 to 20 digits
  // makes the writer fail.
  JsonWriter& integer_digits(std::string_view digits);

  bool ok() const { return ok_; }
  std::size_t size() const { return len_; }
  std::string_view view() const { return {out_, len_}; }

 private:
  void raw(std::string_view bytes);
  void put(char c) {
    if (len_ == capacity_) {
      ok_ = false;
      return;
    }
    out_[len_++] = c;
  }
  void escape(unsigned char c);  // one byte needs_escape() said must be escaped

  char* out_;
  std::size_t capacity_;
  std::size_t len_ = 0;
  bool ok_ = true;
  bool first_ = true;
};

}  // namespace ringhttp::http
