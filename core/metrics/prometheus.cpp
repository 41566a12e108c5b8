#include "core/metrics/prometheus.hpp"

#include <charconv>

namespace ringhttp::metrics {
namespace {

void append_number(std::string& out, std::uint64_t value) {
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  (void)ec;
  out.append(digits, end);
}

}  // namespace

void PrometheusWriter::family(std::string_view name, std::string_view type, std::string_view help) {
  out_.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out_.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void PrometheusWriter::sample(std::string_view name, std::uint64_t value) {
  out_.append(name).append(" ");
  append_number(out_, value);
  out_.append("\n");
}

void PrometheusWriter::sample(std::string_view name, std::string_view label, std::string_view label_value,
                              std::uint64_t value) {
  // Label values here are fixed identifiers chosen by the program, never
  // client input, so they need no escaping.
  out_.append(name).append("{").append(label).append("=\"").append(label_value).append("\"} ");
  append_number(out_, value);
  out_.append("\n");
}

}  // namespace ringhttp::metrics
