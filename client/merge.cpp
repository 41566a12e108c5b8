#include "client/merge.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "client/hdr_log.hpp"
#include "client/hgrm.hpp"
#include "client/histogram.hpp"
#include "client/report.hpp"
#include "client/stats.hpp"
#include "client/threshold.hpp"

namespace ringhttp::client {
namespace {

constexpr const char* merge_usage =
    "usage: client merge [--json] [--hdr-out FILE] [--threshold EXPR]... REPORT.json...\n"
    "  Reports of one run split with --shard I/N (each written by --json), merged into one: requests,\n"
    "  bytes and errors summed, latency percentiles exactly those of one histogram fed every value\n"
    "  (the reports carry their whole histograms), the rate over the window from the first start to\n"
    "  the last end. Refused (exit 2): reports of different URLs or options, overlapping shards, a\n"
    "  missing shard. Exit 1 if any shard failed a request, 3 if a --threshold (as a run's, judged on\n"
    "  the merged figures) failed.\n"
    "      --json              the merged report as one JSON object on stdout (text goes to stderr)\n"
    "      --hdr-out FILE      the merged latency distribution in HdrHistogram's .hgrm text format\n";

// Option keys that may differ between shards: where each ran, and how.
const std::set<std::string_view> per_machine_options = {"threads", "cpus"};

struct Shard {
  std::string path;
  std::string options;  // canonical: every key but the per-machine ones, minified
  std::string options_json;
  std::string first_difference_key;
  std::uint64_t index = 0, count = 0, connections = 0;
  std::uint64_t requests = 0, bytes = 0, reconnects = 0;
  double duration_s = 0, window_start_unix_s = 0, client_cpu_us = 0;
  std::uint64_t rate = 0;
  std::array<std::uint64_t, error_classes> errors{};
  bool ok = false;
  std::string host;
  std::string url, method;
  std::uint64_t total_connections = 0, pipeline = 0;
};

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// One report, read; its histograms added to `latency` and `uncorrected`.
std::string read_report(const std::string& path, simdjson::dom::parser& parser, Shard& s, Histogram& latency,
                        Histogram& uncorrected) {
  s.path = path;
  simdjson::dom::element doc;
  if (auto e = parser.load(path).get(doc); e) return path + ": " + simdjson::error_message(e);
  simdjson::dom::object options;
  std::string_view text;
  if (doc["options"].get(options) || doc["histograms"]["latency"].get(text)) {
    return path + ": not a client --json report with histograms (from this version)";
  }
  for (auto [key, value] : options) {
    if (per_machine_options.count(key) > 0) continue;
    s.options += std::string(key) + "=" + simdjson::minify(value) + ";";
  }
  s.options_json = simdjson::minify(options);
  std::string error;
  if (!add_compressed_v2(text, latency, error)) return path + ": latency histogram: " + error;
  std::string_view uncorrected_text;
  if (doc["histograms"]["uncorrected"].get(uncorrected_text) == simdjson::SUCCESS &&
      !add_compressed_v2(uncorrected_text, uncorrected, error)) {
    return path + ": uncorrected histogram: " + error;
  }
  std::string_view host, url, method;
  simdjson::dom::object errors;
  if (doc["shard"]["index"].get(s.index) || doc["shard"]["count"].get(s.count) ||
      doc["shard"]["connections"].get(s.connections) || doc["requests"].get(s.requests) ||
      doc["bytes"].get(s.bytes) || doc["reconnects"].get(s.reconnects) || doc["duration_s"].get(s.duration_s) ||
      doc["window_start_unix_s"].get(s.window_start_unix_s) ||
      doc["client_cpu_us_per_request"].get(s.client_cpu_us) || doc["ok"].get(s.ok) || doc["host"].get(host) ||
      options["rate"].get(s.rate) || options["url"].get(url) || options["method"].get(method) ||
      options["connections"].get(s.total_connections) || options["pipeline"].get(s.pipeline) ||
      doc["errors"].get(errors)) {
    return path + ": a field of the report is missing or of the wrong type";
  }
  s.host = host;
  s.url = url;
  s.method = method;
  for (std::size_t i = 0; i < error_classes; ++i) {
    if (errors[error_name(ErrorClass(i))].get(s.errors[i])) return path + ": errors." + error_name(ErrorClass(i));
  }
  return {};
}

// The first option two reports differ in, for the refusal.
std::string differing_option(const Shard& a, const Shard& b) {
  auto split = [](const std::string& canon) {
    std::map<std::string, std::string> out;
    std::size_t at = 0;
    while (at < canon.size()) {
      const std::size_t eq = canon.find('=', at);
      const std::size_t end = canon.find(';', eq);
      out[canon.substr(at, eq - at)] = canon.substr(eq + 1, end - eq - 1);
      at = end + 1;
    }
    return out;
  };
  const auto x = split(a.options), y = split(b.options);
  for (const auto& [key, value] : x) {
    const auto it = y.find(key);
    if (it == y.end() || it->second != value) return key;
  }
  for (const auto& [key, value] : y) {
    if (x.find(key) == x.end()) return key;
  }
  return "?";
}

}  // namespace

int merge_main(int argc, char** argv) {
  bool json = false;
  std::string hdr_out;
  std::vector<Threshold> thresholds;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(merge_usage, stdout);
      return 0;
    }
    if (a == "--json") {
      json = true;
    } else if (a == "--threshold") {
      std::string error;
      std::optional<Threshold> t = i + 1 < argc ? parse_threshold(argv[++i], error) : std::nullopt;
      if (!t) {
        std::fprintf(stderr, "client merge: %s\n%s", error.empty() ? "missing value for --threshold" : error.c_str(),
                     merge_usage);
        return 2;
      }
      thresholds.push_back(std::move(*t));
    } else if (a == "--hdr-out") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "client merge: missing value for --hdr-out\n%s", merge_usage);
        return 2;
      }
      hdr_out = argv[++i];
    } else if (a.starts_with("-")) {
      std::fprintf(stderr, "client merge: unknown option %s\n%s", argv[i], merge_usage);
      return 2;
    } else {
      paths.emplace_back(a);
    }
  }
  if (paths.empty()) {
    std::fprintf(stderr, "client merge: no report given\n%s", merge_usage);
    return 2;
  }
  simdjson::dom::parser parser;
  std::vector<Shard> shards(paths.size());
  Histogram latency, uncorrected;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (const std::string e = read_report(paths[i], parser, shards[i], latency, uncorrected); !e.empty()) {
      std::fprintf(stderr, "client merge: %s\n", e.c_str());
      return 2;
    }
  }
  // One run, split: the same options, the same shard count, each shard once.
  const Shard& first = shards.front();
  std::map<std::uint64_t, const Shard*> by_index;
  for (const Shard& s : shards) {
    if (s.options != first.options) {
      std::fprintf(stderr, "client merge: %s and %s are reports of different runs: they differ in %s\n",
                   first.path.c_str(), s.path.c_str(), differing_option(first, s).c_str());
      return 2;
    }
    if (s.count != first.count) {
      std::fprintf(stderr, "client merge: %s is shard %" PRIu64 "/%" PRIu64 ", %s of /%" PRIu64 "\n",
                   s.path.c_str(), s.index, s.count, first.path.c_str(), first.count);
      return 2;
    }
    if (const auto [it, fresh] = by_index.emplace(s.index, &s); !fresh) {
      std::fprintf(stderr, "client merge: shard %" PRIu64 "/%" PRIu64 " twice: %s and %s\n", s.index, s.count,
                   it->second->path.c_str(), s.path.c_str());
      return 2;
    }
  }
  std::string missing;
  for (std::uint64_t i = 0; i < first.count; ++i) {
    if (by_index.count(i) == 0) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
  }
  if (!missing.empty()) {
    std::fprintf(stderr, "client merge: shards %s of %" PRIu64 " are missing\n", missing.c_str(), first.count);
    return 2;
  }

  std::uint64_t requests = 0, bytes = 0, reconnects = 0, connections = 0;
  std::array<std::uint64_t, error_classes> errors{};
  double start = 1e300, end = 0, last_start = 0, cpu_us = 0;
  bool ok = true;
  std::string hosts;
  std::set<std::string> seen_hosts;
  for (const Shard& s : shards) {
    requests += s.requests;
    bytes += s.bytes;
    reconnects += s.reconnects;
    connections += s.connections;
    for (std::size_t i = 0; i < error_classes; ++i) errors[i] += s.errors[i];
    start = std::min(start, s.window_start_unix_s);
    last_start = std::max(last_start, s.window_start_unix_s);
    end = std::max(end, s.window_start_unix_s + s.duration_s);
    cpu_us += s.client_cpu_us * double(s.requests);
    ok = ok && s.ok;
    if (seen_hosts.insert(s.host).second) hosts += (hosts.empty() ? "" : ", ") + s.host;
  }
  const double window_s = end - start;
  const double rps = window_s > 0 ? double(requests) / window_s : 0;
  std::uint64_t error_total = 0;
  for (const std::uint64_t e : errors) error_total += e;
  ok = ok && error_total == 0 && requests > 0;
  const bool rate_mode = first.rate > 0;

  std::string text = "ringhttp client merge: " + std::to_string(shards.size()) + " shards from " + hosts + "\n";
  text += first.method + " " + first.url + ": " + std::to_string(connections) + " connections, pipeline " +
          std::to_string(first.pipeline) + (rate_mode ? ", rate " + std::to_string(first.rate) + "/s" : "") + "\n";
  text += "  requests    " + std::to_string(requests) + " in " + fmt("%.2f", window_s) +
          "s (the first shard's start to the last one's end; starts " + fmt("%.3f", last_start - start) +
          " s apart)\n";
  text += "  requests/s  " + fmt("%.1f", rps) + "\n";
  text += "  bytes/s     " + fmt("%.0f", window_s > 0 ? double(bytes) / window_s : 0) + " (" + std::to_string(bytes) +
          " bytes)\n";
  text += report_latency_row("latency", latency);
  if (rate_mode) text += report_latency_row("uncorrected", uncorrected);
  text += "  errors     ";
  for (std::size_t i = 0; i < error_classes; ++i) {
    text += std::string(" ") + error_name(ErrorClass(i)) + " " + std::to_string(errors[i]);
  }
  text += "\n  reconnects  " + std::to_string(reconnects) + "\n";
  text += "  client CPU  " + fmt("%.2f", requests > 0 ? cpu_us / double(requests) : 0) + " us/request (all shards)\n";
  const Measured measured{&latency, error_total, requests, rps};
  bool thresholds_met = true;
  text += thresholds_text(thresholds, measured, thresholds_met);
  std::fputs(text.c_str(), json ? stderr : stdout);

  if (json) {
    std::string out = "{\"merged\":true,\"shards\":" + std::to_string(shards.size()) + ",\"hosts\":[";
    bool comma = false;
    for (const std::string& h : seen_hosts) {
      out += (comma ? "," : "") + report_json_escape(h);
      comma = true;
    }
    out += "],\"options\":" + first.options_json;
    out += ",\"requests\":" + std::to_string(requests) + ",\"duration_s\":" + fmt("%.6f", window_s) +
           ",\"requests_per_s\":" + fmt("%.3f", rps) + ",\"window_start_unix_s\":" + fmt("%.6f", start) +
           ",\"start_skew_s\":" + fmt("%.6f", last_start - start) + ",\"bytes\":" + std::to_string(bytes);
    out += ",\"latency_us\":" + report_latency_json(latency);
    out += ",\"latency_uncorrected_us\":" + (rate_mode ? report_latency_json(uncorrected) : std::string("null"));
    out += ",\"errors\":{";
    for (std::size_t i = 0; i < error_classes; ++i) {
      out += std::string(i == 0 ? "" : ",") + "\"" + error_name(ErrorClass(i)) + "\":" + std::to_string(errors[i]);
    }
    out += "},\"errors_total\":" + std::to_string(error_total) + ",\"reconnects\":" + std::to_string(reconnects);
    out += ",\"client_cpu_us_per_request\":" + fmt("%.4f", requests > 0 ? cpu_us / double(requests) : 0);
    out += ",\"histograms\":{\"unit\":\"ns\",\"latency\":" + report_json_escape(base64(compress_v2(latency))) +
           ",\"uncorrected\":" +
           (rate_mode ? report_json_escape(base64(compress_v2(uncorrected))) : std::string("null")) + "}";
    out += ",\"thresholds\":" + thresholds_json(thresholds, measured);
    out += std::string(",\"thresholds_met\":") + (thresholds_met ? "true" : "false");
    out += std::string(",\"ok\":") + (ok ? "true" : "false") + "}\n";
    std::fputs(out.c_str(), stdout);
  }
  if (!hdr_out.empty()) {
    if (const std::string error = write_hgrm_file(hdr_out, latency); !error.empty()) {
      std::fprintf(stderr, "client merge: %s\n", error.c_str());
      return 1;
    }
  }
  if (!ok) return 1;
  return thresholds_met ? 0 : 3;
}

}  // namespace ringhttp::client
