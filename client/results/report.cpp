#include "client/results/report.hpp"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

#include "client/results/hdr_log.hpp"
#include "core/net/cpu.hpp"

namespace ringhttp::client {
namespace {

struct Percentile {
  const char* label;  // text
  const char* key;    // JSON
  double value;
};
constexpr Percentile percentiles[] = {
    {"p50", "p50", 50.0},     {"p90", "p90", 90.0},        {"p99", "p99", 99.0},
    {"p99.9", "p99_9", 99.9}, {"p99.99", "p99_99", 99.99},
};

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buffer[512];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(buffer, sizeof buffer, fmt, args);
  va_end(args);
  return std::string(buffer, n < 0 ? 0 : std::size_t(n) < sizeof buffer ? std::size_t(n) : sizeof buffer - 1);
}

double seconds(std::uint64_t ns) { return double(ns) / 1e9; }

double per_second(std::uint64_t count, std::uint64_t window_ns) {
  return window_ns == 0 ? 0.0 : double(count) * 1e9 / double(window_ns);
}

std::string bytes_rate(double bytes_per_s) {
  if (bytes_per_s >= 1e9) return format("%.2f GB/s", bytes_per_s / 1e9);
  if (bytes_per_s >= 1e6) return format("%.2f MB/s", bytes_per_s / 1e6);
  if (bytes_per_s >= 1e3) return format("%.2f kB/s", bytes_per_s / 1e3);
  return format("%.0f B/s", bytes_per_s);
}

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += format("\\u%04x", unsigned(static_cast<unsigned char>(c)));
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string latency_row(const char* label, const Histogram& h) {
  std::string row = format("  %-12s", label);
  for (const Percentile& p : percentiles)
    row += format(" %s %s", p.label, format_latency(double(h.value_at_percentile(p.value))).c_str());
  row += format(" max %s mean %s stdev %s\n", format_latency(double(h.max())).c_str(), format_latency(h.mean()).c_str(),
                format_latency(h.stdev()).c_str());
  return row;
}

std::string latency_json(const Histogram& h) {
  std::string out = "{";
  for (const Percentile& p : percentiles)
    out += format("\"%s\":%.3f,", p.key, double(h.value_at_percentile(p.value)) / 1e3);
  out += format("\"max\":%.3f,\"mean\":%.3f,\"stdev\":%.3f,\"count\":%" PRIu64 "}", double(h.max()) / 1e3,
                h.mean() / 1e3, h.stdev() / 1e3, h.total());
  return out;
}

std::string duration_text(std::uint64_t ns) {
  if (ns % 1'000'000'000 == 0) return format("%" PRIu64 "s", ns / 1'000'000'000);
  if (ns % 1'000'000 == 0) return format("%" PRIu64 "ms", ns / 1'000'000);
  return format("%" PRIu64 "us", ns / 1'000);
}

std::string status_list(const Options& o) {
  if (o.expect_status.empty()) return "2xx";
  std::string out;
  for (const std::uint16_t s : o.expect_status) {
    if (!out.empty()) out += ',';
    out += std::to_string(s);
  }
  return out;
}

double per_request_us(std::uint64_t cpu_ns, std::uint64_t requests) {
  return requests == 0 ? 0.0 : double(cpu_ns) / 1e3 / double(requests);
}

}  // namespace

Measured measured(const Report& r) {
  return Measured{&r.totals.latency, r.totals.error_total(), r.totals.responses,
                  per_second(r.totals.responses, r.window_ns), &r.totals.statuses};
}

bool Report::thresholds_met() const {
  return client::thresholds_met(options->thresholds, measured(*this), interval_failures);
}

// --batch-wait as given: "auto", "off" or the fixed window.
std::string batch_wait_name(const Options& o) {
  if (o.batch_wait_auto) return "auto";
  if (o.batch_wait_us == 0 || o.backend != io::BackendKind::uring) return "off";
  return format("%uus", o.batch_wait_us);
}

// The protocol the requests go in: http/1.1, h2 (over TLS) or h2c.
const char* protocol_name(const Options& o) {
  return o.http2 ? "h2" : o.http2_prior_knowledge ? "h2c" : "http/1.1";
}

std::string report_options_json(const Options& o) {
  return "{\"url\":" + json_escape(o.url) + ",\"method\":" + json_escape(o.method) +
      format(",\"connections\":%u,\"threads\":%u,\"pipeline\":%u", o.connections, o.threads, o.pipeline) +
      ",\"protocol\":" + json_escape(protocol_name(o)) + format(",\"max_streams\":%u", o.max_streams) +
      ",\"backend\":" + json_escape(io::backend_name(o.backend)) +
      ",\"batch_wait\":" + json_escape(batch_wait_name(o)) +
      ",\"ciphers\":" + (o.ciphers.empty() ? std::string("null") : json_escape(o.ciphers)) +
      ",\"tls13_ciphers\":" + (o.tls13_ciphers.empty() ? std::string("null") : json_escape(o.tls13_ciphers)) +
      ",\"cpus\":[" + net::format_cpu_list(o.cpus) + "]" +
      format(",\"duration_s\":%.3f,\"warmup_s\":%.3f,\"requests\":%" PRIu64 ",\"rate\":%" PRIu64,
             o.requests > 0 && !o.duration_given ? 0.0 : seconds(o.duration_ns), seconds(o.warmup_ns), o.requests,
             o.rate) +
      format(",\"timeout_s\":%.3f", seconds(o.timeout_ns)) +
      ",\"placeholder\":" + (o.placeholder ? json_escape(o.placeholder->text) : std::string("null")) +
      format(",\"distinct_requests\":%" PRIu64, o.placeholder ? o.placeholder->count() : std::uint64_t(1)) + ",\"expect_status\":" + json_escape(status_list(o)) +
      ",\"expect_body\":" +
      (o.check_body && o.expect_body_file.empty() ? json_escape(o.expect_body) : std::string("null")) +
      // A file's bytes may be binary: the report names the file and its size instead.
      ",\"expect_body_file\":" + (o.expect_body_file.empty() ? std::string("null") : json_escape(o.expect_body_file)) +
      format(",\"expect_body_bytes\":%zu", o.check_body ? o.expect_body.size() : std::size_t(0)) + "}";
}

std::string report_batch_wait_row(std::string_view name, std::uint64_t longest_us) {
  if (name == "off") return "  batch wait  off\n";
  if (longest_us == 0) return "  batch wait  " + std::string(name) + ": none in the window\n";
  return format("  batch wait  %.*s: up to %" PRIu64 " us in the window, added to the latencies at most\n",
                int(name.size()), name.data(), longest_us);
}

std::string report_shard_json(const Options& o) {
  return format("{\"index\":%u,\"count\":%u,\"connections\":%u}", o.shard_index, o.shard_count,
                shard_share(o).connections);
}

std::string report_statuses_row(const StatusCounts& s) {
  std::string out = "  statuses   ";
  for (std::size_t i = 0; i < status_classes; ++i) out += format(" %zuxx %" PRIu64, i + 1, s[i]);
  return out + "\n";
}

std::string report_syscalls_row(const io::SyscallCounts& s, std::uint64_t requests) {
  const double per = requests > 0 ? 1.0 / double(requests) : 0;
  std::string out = format("  syscalls    %.2f/request:", double(s.total()) * per);
  for (std::size_t i = 0; i < io::syscall_kinds; ++i) {
    if (s[i] > 0) out += format(" %s %.3f", io::syscall_name(io::Syscall(i)), double(s[i]) * per);
  }
  return out + "\n";
}

std::string report_syscalls_json(const io::SyscallCounts& s, std::uint64_t requests) {
  std::string out = "{\"counts\":{";
  for (std::size_t i = 0; i < io::syscall_kinds; ++i) {
    out += format("%s\"%s\":%" PRIu64, i == 0 ? "" : ",", io::syscall_name(io::Syscall(i)), s[i]);
  }
  return out + format("},\"per_request\":%.4f}", requests > 0 ? double(s.total()) / double(requests) : 0.0);
}

std::string report_http2_row(std::uint32_t max_streams, const H2Counts& h) {
  std::string out = format("  http2       %u streams per connection, %" PRIu64 " GOAWAYs, %" PRIu64
                           " refused streams sent again, resets",
                           max_streams, h.goaways, h.refused);
  bool any = false;
  for (std::size_t i = 0; i < h2_error_codes; ++i) {
    if (h.resets[i] == 0) continue;
    out += format(" %s %" PRIu64, h2_error_code_name(i), h.resets[i]);
    any = true;
  }
  return out + (any ? "\n" : " 0\n");
}

std::string report_http2_json(const H2Counts& h) {
  std::string out = format("{\"goaways\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"resets\":{", h.goaways, h.refused);
  for (std::size_t i = 0; i < h2_error_codes; ++i) {
    out += format("%s\"%s\":%" PRIu64, i == 0 ? "" : ",", h2_error_code_name(i), h.resets[i]);
  }
  return out + "}}";
}

std::string report_statuses_json(const StatusCounts& s) {
  std::string out = "{";
  for (std::size_t i = 0; i < status_classes; ++i) out += format("%s\"%zuxx\":%" PRIu64, i == 0 ? "" : ",", i + 1, s[i]);
  return out + "}";
}

std::string report_json_escape(std::string_view s) { return json_escape(s); }
std::string report_latency_row(const char* label, const Histogram& h) { return latency_row(label, h); }
std::string report_latency_json(const Histogram& h) { return latency_json(h); }

std::string format_latency(double ns) {
  if (ns < 1e3) return format("%.0fns", ns);
  if (ns < 1e4) return format("%.2fus", ns / 1e3);
  if (ns < 1e5) return format("%.1fus", ns / 1e3);
  if (ns < 1e6) return format("%.0fus", ns / 1e3);
  if (ns < 1e7) return format("%.2fms", ns / 1e6);
  if (ns < 1e8) return format("%.1fms", ns / 1e6);
  if (ns < 1e9) return format("%.0fms", ns / 1e6);
  return format("%.2fs", ns / 1e9);
}

std::string format_text(const Report& r) {
  const Options& o = *r.options;
  const Environment& e = r.environment;
  const WorkerStats& t = r.totals;
  std::string out;
  out += format("ringhttp client %s | kernel %s | %s | %d cores | uring %s | allocator %s\n", e.version.c_str(),
                e.kernel.c_str(), e.cpu_model.c_str(), e.cores, e.uring.c_str(), e.allocator.c_str());
  out += format("%s %s: %u connections, ", o.method.c_str(), o.url.c_str(), o.connections);
  if (o.shard_count > 1) {
    out += format("shard %u/%u: %u of them, ", o.shard_index, o.shard_count, shard_share(o).connections);
  }
  out += format("%u threads on CPUs %s, ", o.threads, net::format_cpu_list(o.cpus).c_str());
  out += o.speaks_http2() ? format("%s, %u streams per connection, ", protocol_name(o), o.max_streams)
                          : format("pipeline %u, ", o.pipeline);
  if (o.requests > 0) {
    out += format("%" PRIu64 " requests", o.requests);
  } else {
    out += format("%s after %s warm-up", duration_text(o.duration_ns).c_str(), duration_text(o.warmup_ns).c_str());
  }
  if (o.rate > 0) out += format(", rate %" PRIu64 "/s", o.rate);
  if (o.placeholder) {
    out += format(", %" PRIu64 " distinct requests (%s)", o.placeholder->count(), o.placeholder->text.c_str());
  }
  out += format(", expect %s%s\n", status_list(o).c_str(), o.check_body ? " and body" : "");
  out += format("  requests    %" PRIu64 " in %.2fs\n", t.responses, seconds(r.window_ns));
  out += format("  requests/s  %.1f\n", per_second(t.responses, r.window_ns));
  out += format("  bytes/s     %s (%" PRIu64 " bytes)\n", bytes_rate(per_second(t.bytes_received, r.window_ns)).c_str(),
                t.bytes_received);
  out += latency_row(o.rate > 0 ? "latency" : "latency", t.latency);
  if (o.rate > 0) out += latency_row("uncorrected", t.uncorrected);
  out += "  errors     ";
  for (std::size_t i = 0; i < error_classes; ++i) {
    out += format(" %s %" PRIu64, error_name(ErrorClass(i)), t.errors[i]);
  }
  out += format("\n  reconnects  %" PRIu64 "\n", t.reconnects);
  if (o.target.scheme == Scheme::https) {
    out += format("  tls         %s %s, %" PRIu64 " handshakes in the window (%" PRIu64 " resumed)\n",
                  r.tls_protocol.empty() ? "(no handshake)" : r.tls_protocol.c_str(), r.tls_cipher.c_str(),
                  t.tls_handshakes, t.tls_resumed);
  }
  if (o.speaks_http2()) out += report_http2_row(o.max_streams, t.h2);
  out += report_statuses_row(t.statuses);
  out += report_syscalls_row(t.syscalls, t.responses);
  out += report_batch_wait_row(batch_wait_name(o), t.batch_wait_us_max);
  out += format("  client CPU  %.2f us/request\n", per_request_us(r.client_cpu_ns, t.responses));
  if (r.server_cpu_ns) out += format("  server CPU  %.2f us/request\n", per_request_us(*r.server_cpu_ns, t.responses));
  bool met = true;
  out += thresholds_text(o.thresholds, measured(r), met, r.interval_failures);
  for (const std::string& note : r.notes) out += "  note: " + note + "\n";
  if (r.interrupted) out += "  note: interrupted; the window ended at the signal\n";
  if (t.latency.clamped() > 0)
    out += format("  note: %" PRIu64 " latencies above the histogram's range were clamped\n", t.latency.clamped());
  return out;
}

std::string format_json(const Report& r) {
  const Options& o = *r.options;
  const Environment& e = r.environment;
  const WorkerStats& t = r.totals;
  std::string out = "{";
  out += "\"version\":" + json_escape(e.version);
  out += ",\"environment\":{\"kernel\":" + json_escape(e.kernel) + ",\"cpu_model\":" + json_escape(e.cpu_model) +
         format(",\"cores\":%d", e.cores) + ",\"uring\":" + json_escape(e.uring) +
         ",\"allocator\":" + json_escape(e.allocator) + "}";
  out += ",\"options\":" + report_options_json(o);
  out += format(",\"requests\":%" PRIu64 ",\"duration_s\":%.6f,\"requests_per_s\":%.3f", t.responses,
                seconds(r.window_ns), per_second(t.responses, r.window_ns));
  out += format(",\"bytes\":%" PRIu64 ",\"bytes_per_s\":%.3f", t.bytes_received,
                per_second(t.bytes_received, r.window_ns));
  out += ",\"latency_us\":" + latency_json(t.latency);
  out += ",\"latency_uncorrected_us\":" + (o.rate > 0 ? latency_json(t.uncorrected) : std::string("null"));
  // The whole distributions, HdrHistogram's V2 compressed encoding in
  // base64 (an interval log's), nanoseconds: histograms add, so
  // `client merge` gives exactly the percentiles of every value together.
  out += ",\"histograms\":{\"unit\":\"ns\",\"latency\":" + json_escape(base64(compress_v2(t.latency))) +
         ",\"uncorrected\":" +
         (o.rate > 0 ? json_escape(base64(compress_v2(t.uncorrected))) : std::string("null")) + "}";
  out += ",\"shard\":" + report_shard_json(o);
  out += ",\"host\":" + json_escape(r.host) + format(",\"window_start_unix_s\":%.6f", r.window_start_unix_s);
  out += ",\"errors\":{";
  for (std::size_t i = 0; i < error_classes; ++i) {
    out += format("%s\"%s\":%" PRIu64, i == 0 ? "" : ",", error_name(ErrorClass(i)), t.errors[i]);
  }
  out += format("},\"errors_total\":%" PRIu64 ",\"reconnects\":%" PRIu64, t.error_total(), t.reconnects);
  out += ",\"tls\":" +
         (o.target.scheme != Scheme::https
              ? std::string("null")
              : "{\"protocol\":" + json_escape(r.tls_protocol) + ",\"cipher\":" + json_escape(r.tls_cipher) +
                    format(",\"handshakes\":%" PRIu64 ",\"resumed\":%" PRIu64 "}", t.tls_handshakes, t.tls_resumed));
  out += ",\"http2\":" + (o.speaks_http2() ? report_http2_json(t.h2) : std::string("null"));
  out += ",\"statuses\":" + report_statuses_json(t.statuses);
  out += ",\"syscalls\":" + report_syscalls_json(t.syscalls, t.responses);
  out += format(",\"batch_wait_us_max\":%u", t.batch_wait_us_max);
  out += format(",\"client_cpu_us_per_request\":%.4f", per_request_us(r.client_cpu_ns, t.responses));
  out += ",\"server_cpu_us_per_request\":" +
         (r.server_cpu_ns ? format("%.4f", per_request_us(*r.server_cpu_ns, t.responses)) : std::string("null"));
  out += ",\"notes\":[";
  for (std::size_t i = 0; i < r.notes.size(); ++i) {
    if (i > 0) out += ',';
    out += json_escape(r.notes[i]);
  }
  out += "],\"thresholds\":" + thresholds_json(o.thresholds, measured(r), r.interval_failures);
  out += format(",\"threshold_interval_s\":%.0f", seconds(o.threshold_interval_ns));
  out += format(",\"thresholds_met\":%s", r.thresholds_met() ? "true" : "false");
  out += format(",\"interrupted\":%s,\"ok\":%s}\n", r.interrupted ? "true" : "false", r.failed() ? "false" : "true");
  return out;
}

}  // namespace ringhttp::client
