#include "support/metrics.hpp"

#include <cstdlib>
#include <stdexcept>

#include "support/connection.hpp"
#include "support/requests.hpp"

namespace socket_test {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// One sample line: `name{labels} value [timestamp]`.
void parse_sample(std::string_view line, Metrics& metrics) {
  const auto brace = line.find('{');
  const auto space = line.find_first_of(" \t");
  std::size_t name_end = space;  // one past the series name, labels included
  if (brace != std::string_view::npos && brace < space) {
    const auto close = line.find('}', brace);
    name_end = close == std::string_view::npos ? close : close + 1;
  }
  if (name_end == std::string_view::npos || name_end >= line.size()) {
    throw std::runtime_error("malformed metrics line: \"" + std::string(line) + "\"");
  }
  const std::string name(line.substr(0, name_end));
  const std::string rest(trim(line.substr(name_end + 1)));
  char* end = nullptr;
  const double value = std::strtod(rest.c_str(), &end);
  if (end == rest.c_str() || (*end != '\0' && *end != ' ')) {
    throw std::runtime_error("malformed metrics value: \"" + std::string(line) + "\"");
  }
  if (!metrics.series.emplace(name, value).second) {
    throw std::runtime_error("metrics series exposed twice: " + name);
  }
}

}  // namespace

double Metrics::value(const std::string& name) const {
  const auto it = series.find(name);
  return it == series.end() ? 0.0 : it->second;
}

Metrics Metrics::parse(std::string_view text) {
  Metrics metrics;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    const std::string_view line = trim(text.substr(0, newline));
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (line.empty() || line.front() == '#') continue;
    parse_sample(line, metrics);
  }
  return metrics;
}

Metrics scrape_metrics(std::uint16_t port) {
  // Connection: close lets the server end the scrape's connection itself,
  // so that one scrape leaves nothing behind for the next one to count.
  Connection connection(port);
  connection.send_all(get("/metrics", "Connection: close\r\n"));
  const Response response = connection.read_response();
  if (response.status != 200) {
    throw std::runtime_error("GET /metrics answered " + std::to_string(response.status));
  }
  return Metrics::parse(response.body);
}

}  // namespace socket_test
