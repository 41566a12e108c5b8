#pragma once
// Prometheus text exposition format (version 0.0.4) writer.

#include <cstdint>
#include <string>
#include <string_view>

namespace ringhttp::metrics {

class PrometheusWriter {
 public:
  explicit PrometheusWriter(std::string& out) : out_(out) {}

  // Writes the # HELP and # TYPE lines of a family; type is "counter" or "gauge".
  void family(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, std::uint64_t value);
  void sample(std::string_view name, std::string_view label, std::string_view label_value, std::uint64_t value);

 private:
  std::string& out_;
};

}  // namespace ringhttp::metrics
