// The client's --json report, parsed (simdjson's DOM), for the tests that
// check what the client says: numbers, text and flags by JSON pointer. A
// report that is not one JSON object, or a pointer that is missing, fails
// the test where it is read.
#pragma once

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "support/client_process.hpp"

namespace socket_test {

class JsonReport {
 public:
  explicit JsonReport(const ClientRun& run) : JsonReport(run.out, run.err) {}
  explicit JsonReport(std::string text, const std::string& err = {}) : text_(std::move(text)) {
    auto result = parser_.parse(text_);
    if (result.error() != simdjson::SUCCESS) {
      ADD_FAILURE() << "stdout is not JSON: " << simdjson::error_message(result.error()) << "\n"
                    << text_ << "\nstderr:\n"
                    << err;
      return;
    }
    doc_ = result.value();
    ok_ = doc_.is_object();
    EXPECT_TRUE(ok_) << text_;
  }
  JsonReport(const JsonReport&) = delete;
  JsonReport& operator=(const JsonReport&) = delete;

  bool ok() const { return ok_; }
  std::uint64_t number(const char* pointer) const {
    std::uint64_t value = 0;
    EXPECT_EQ(doc_.at_pointer(pointer).get(value), simdjson::SUCCESS) << pointer << " in " << text_;
    return value;
  }
  // A number written with or without a fraction.
  double real(const char* pointer) const {
    double value = 0;
    if (doc_.at_pointer(pointer).get(value) == simdjson::SUCCESS) return value;
    std::uint64_t integer = 0;
    EXPECT_EQ(doc_.at_pointer(pointer).get(integer), simdjson::SUCCESS) << pointer << " in " << text_;
    return double(integer);
  }
  std::string text(const char* pointer) const {
    std::string_view value;
    EXPECT_EQ(doc_.at_pointer(pointer).get(value), simdjson::SUCCESS) << pointer << " in " << text_;
    return std::string(value);
  }
  bool flag(const char* pointer) const {
    bool value = false;
    EXPECT_EQ(doc_.at_pointer(pointer).get(value), simdjson::SUCCESS) << pointer << " in " << text_;
    return value;
  }
  bool has(const char* key) const { return doc_[key].error() == simdjson::SUCCESS; }
  bool is_null(const char* pointer) const { return doc_.at_pointer(pointer).is_null(); }

 private:
  std::string text_;
  simdjson::dom::parser parser_;
  simdjson::dom::element doc_;
  bool ok_ = false;
};

}  // namespace socket_test
