#include "client/results/threshold.hpp"

#include <cstdio>
#include <limits>

#include "client/results/report.hpp"
#include "core/text/parse_number.hpp"

namespace ringhttp::client {
namespace {

bool is_latency(Threshold::Metric m) {
  return m == Threshold::Metric::percentile || m == Threshold::Metric::max || m == Threshold::Metric::mean;
}

// A figure of a threshold: finite and not negative.
bool parse_double(std::string_view figure, double& out) {
  return text::parse_number(figure, 0.0, std::numeric_limits<double>::max(), out);
}

std::string number(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

}  // namespace

namespace {

// The operator at the start of `rest`, which is then past it; false when
// there is none.
bool take_op(std::string_view& rest, Threshold::Op& op) {
  if (rest.starts_with("<=")) {
    op = Threshold::Op::le;
  } else if (rest.starts_with(">=")) {
    op = Threshold::Op::ge;
  } else if (rest.starts_with("==")) {
    op = Threshold::Op::eq;
  } else if (rest.starts_with("<")) {
    op = Threshold::Op::lt;
  } else if (rest.starts_with(">")) {
    op = Threshold::Op::gt;
  } else {
    return false;
  }
  rest.remove_prefix(op == Threshold::Op::lt || op == Threshold::Op::gt ? 1 : 2);
  return true;
}

// The metric's name into t.metric (and its percentile or status class);
// what is wrong with it, or "".
std::string take_metric(std::string_view metric, Threshold& t) {
  if (metric.size() > 1 && metric[0] == 'p') {
    t.metric = Threshold::Metric::percentile;
    if (!parse_double(metric.substr(1), t.percentile) || t.percentile > 100) {
      return "a percentile is p0 to p100, e.g. p99.9";
    }
  } else if (metric == "max") {
    t.metric = Threshold::Metric::max;
  } else if (metric == "mean") {
    t.metric = Threshold::Metric::mean;
  } else if (metric == "errors") {
    t.metric = Threshold::Metric::errors;
  } else if (metric == "rps") {
    t.metric = Threshold::Metric::rps;
  } else if (metric == "requests") {
    t.metric = Threshold::Metric::requests;
  } else if (metric.size() == 10 && metric.starts_with("status_") && metric.ends_with("xx") && metric[7] >= '1' &&
             metric[7] <= '5') {
    t.metric = Threshold::Metric::status;
    t.status_class = std::uint8_t(metric[7] - '0');
  } else {
    return "unknown metric '" + std::string(metric) + "' (pN, max, mean, errors, rps, requests, status_1xx .. status_5xx)";
  }
  return {};
}

// A latency's value with its unit (ns, us, ms or s), in nanoseconds.
bool take_latency(std::string_view rest, double& ns_out) {
  struct Unit {
    const char* suffix;
    double ns;
  };
  constexpr Unit units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  for (const Unit& u : units) {
    if (rest.ends_with(u.suffix) && parse_double(rest.substr(0, rest.size() - std::string_view(u.suffix).size()), ns_out)) {
      ns_out *= u.ns;
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<Threshold> parse_threshold(std::string_view text, std::string& error) {
  Threshold t;
  t.text = std::string(text);
  const auto refuse = [&](const std::string& why) {
    error = "threshold '" + t.text + "': " + why;
    return std::nullopt;
  };
  const std::size_t op_at = text.find_first_of("<>=");
  if (op_at == std::string_view::npos || op_at == 0) return refuse("expected METRIC OP VALUE, e.g. p99<=5ms or errors==0");
  std::string_view rest = text.substr(op_at);
  if (!take_op(rest, t.op)) return refuse("the operator is one of < <= > >= ==");
  if (std::string e = take_metric(text.substr(0, op_at), t); !e.empty()) return refuse(e);
  if (is_latency(t.metric)) {
    if (take_latency(rest, t.value)) return t;
    return refuse("a latency takes a unit (ns, us, ms, s), e.g. p99<=5ms");
  }
  if (!parse_double(rest, t.value)) return refuse("the value is a number, e.g. errors==0 or rps>=100000");
  return t;
}

Verdict judge(const Threshold& t, const Measured& m) {
  Verdict v;
  switch (t.metric) {
    case Threshold::Metric::percentile: v.measured = double(m.latency->value_at_percentile(t.percentile)); break;
    case Threshold::Metric::max: v.measured = double(m.latency->max()); break;
    case Threshold::Metric::mean: v.measured = m.latency->mean(); break;
    case Threshold::Metric::errors: v.measured = double(m.errors); break;
    case Threshold::Metric::rps: v.measured = m.rps; break;
    case Threshold::Metric::requests: v.measured = double(m.requests); break;
    case Threshold::Metric::status:
      v.measured = m.statuses != nullptr ? double((*m.statuses)[t.status_class - 1u]) : 0.0;
      break;
  }
  switch (t.op) {
    case Threshold::Op::lt: v.met = v.measured < t.value; break;
    case Threshold::Op::le: v.met = v.measured <= t.value; break;
    case Threshold::Op::gt: v.met = v.measured > t.value; break;
    case Threshold::Op::ge: v.met = v.measured >= t.value; break;
    case Threshold::Op::eq: v.met = v.measured == t.value; break;
  }
  return v;
}

bool judged_per_interval(const Threshold& t) {
  return t.metric != Threshold::Metric::errors && t.metric != Threshold::Metric::status;
}

void judge_interval(const std::vector<Threshold>& ts, const IntervalFigures& interval,
                    std::vector<IntervalFailure>& out) {
  const std::uint64_t count = interval.latency->total();
  const Measured m{interval.latency, 0, count, interval.length_s > 0 ? double(count) / interval.length_s : 0};
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (!judged_per_interval(ts[i])) continue;
    const Verdict v = judge(ts[i], m);
    if (!v.met) out.push_back({i, interval.start_s, interval.length_s, v.measured});
  }
}

bool thresholds_met(const std::vector<Threshold>& ts, const Measured& m,
                    const std::vector<IntervalFailure>& interval_failures) {
  if (!interval_failures.empty()) return false;
  for (const Threshold& t : ts) {
    if (!judge(t, m).met) return false;
  }
  return true;
}

std::string thresholds_text(const std::vector<Threshold>& ts, const Measured& m, bool& all_met,
                            const std::vector<IntervalFailure>& interval_failures) {
  // At most this many failing intervals are named per threshold in the
  // text (the JSON names every one).
  constexpr std::size_t named_max = 10;
  std::string out;
  all_met = interval_failures.empty();
  for (std::size_t i = 0; i < ts.size(); ++i) {
    const Threshold& t = ts[i];
    const Verdict v = judge(t, m);
    all_met = all_met && v.met;
    const std::string measured = is_latency(t.metric) ? format_latency(v.measured) : number(v.measured);
    out += "  threshold " + t.text + ": " + (v.met ? "met" : "FAILED") + " (measured " + measured + ")\n";
    std::size_t named = 0, failed = 0;
    for (const IntervalFailure& f : interval_failures) {
      if (f.threshold != i) continue;
      ++failed;
      if (named++ >= named_max) continue;
      char line[160];
      std::snprintf(line, sizeof line, "    FAILED in the interval %.1f-%.1f s (measured %s)\n", f.start_s,
                    f.start_s + f.length_s,
                    (is_latency(t.metric) ? format_latency(f.measured) : number(f.measured)).c_str());
      out += line;
    }
    if (failed > named_max) out += "    and in " + std::to_string(failed - named_max) + " more intervals\n";
  }
  return out;
}

std::string thresholds_json(const std::vector<Threshold>& ts, const Measured& m,
                            const std::vector<IntervalFailure>& interval_failures) {
  std::string out = "[";
  for (std::size_t i = 0; i < ts.size(); ++i) {
    const Verdict v = judge(ts[i], m);
    const bool latency = is_latency(ts[i].metric);
    char measured[64];
    std::snprintf(measured, sizeof measured, "%.6f", latency ? v.measured / 1e3 : v.measured);
    std::string failures = "[";
    bool interval_met = true;
    for (const IntervalFailure& f : interval_failures) {
      if (f.threshold != i) continue;
      char item[160];
      std::snprintf(item, sizeof item, "%s{\"start_s\":%.3f,\"length_s\":%.3f,\"measured\":%.6f}",
                    interval_met ? "" : ",", f.start_s, f.length_s, latency ? f.measured / 1e3 : f.measured);
      failures += item;
      interval_met = false;
    }
    failures += "]";
    out += std::string(i == 0 ? "" : ",") + "{\"threshold\":" + report_json_escape(ts[i].text) +
           ",\"measured\":" + measured + ",\"unit\":" + (latency ? "\"us\"" : "null") +
           ",\"met\":" + (v.met && interval_met ? "true" : "false") + ",\"failed_intervals\":" + failures + "}";
  }
  return out + "]";
}

}  // namespace ringhttp::client
