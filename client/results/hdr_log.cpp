#include "client/results/hdr_log.hpp"

#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>

#include "core/text/parse_number.hpp"

namespace ringhttp::client {
namespace {

constexpr std::uint32_t v2_encoding_cookie = 0x1c849303 | 0x10;             // | word size marker, as Java writes it
constexpr std::uint32_t v2_compressed_encoding_cookie = 0x1c849304 | 0x10;  // likewise
constexpr std::size_t v2_header_bytes = 40;

void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += char((v >> shift) & 0xff);
}

void put_u64(std::string& out, std::uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out += char((v >> shift) & 0xff);
}

void set_u32(std::string& out, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + std::size_t(i)] = char((v >> (24 - 8 * i)) & 0xff);
}

// HdrHistogram's ZigZagEncoding.putLong: LEB128 of the zig-zagged value,
// at most 9 bytes (the ninth carries a full 8 bits).
void put_zigzag(std::string& out, std::int64_t signed_value) {
  std::uint64_t v = (std::uint64_t(signed_value) << 1) ^ std::uint64_t(signed_value >> 63);
  for (int i = 0; i < 8; ++i) {
    if ((v >> 7) == 0) {
      out += char(v);
      return;
    }
    out += char((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += char(v);
}

}  // namespace

std::string encode_v2(const Histogram& h) {
  std::string out;
  put_u32(out, v2_encoding_cookie);
  put_u32(out, 0);  // payload length, filled in below
  put_u32(out, 0);  // normalizing index offset
  put_u32(out, Histogram::significant_digits);
  put_u64(out, Histogram::lowest_trackable_ns);
  put_u64(out, Histogram::highest_trackable_ns);
  double ratio = 1.0;  // integer to double value conversion ratio
  std::uint64_t ratio_bits;
  std::memcpy(&ratio_bits, &ratio, sizeof ratio);
  put_u64(out, ratio_bits);
  const std::size_t limit = h.total() == 0 ? 0 : Histogram::index_of(h.max()) + 1;
  for (std::size_t i = 0; i < limit;) {
    const std::uint64_t count = h.count_at_index(i++);
    if (count != 0) {
      put_zigzag(out, std::int64_t(count));
      continue;
    }
    std::int64_t zeros = 1;
    while (i < limit && h.count_at_index(i) == 0) {
      ++zeros;
      ++i;
    }
    put_zigzag(out, zeros > 1 ? -zeros : 0);
  }
  set_u32(out, 4, std::uint32_t(out.size() - v2_header_bytes));
  return out;
}

std::string compress_v2(const Histogram& h) {
  const std::string plain = encode_v2(h);
  uLongf compressed_bytes = compressBound(uLong(plain.size()));
  std::string out;
  put_u32(out, v2_compressed_encoding_cookie);
  put_u32(out, 0);  // compressed length, filled in below
  out.resize(8 + compressed_bytes);
  // zlib's format (header + deflate + adler32) is what Java's Deflater writes.
  if (compress2(reinterpret_cast<Bytef*>(out.data() + 8), &compressed_bytes,
                reinterpret_cast<const Bytef*>(plain.data()), uLong(plain.size()), Z_DEFAULT_COMPRESSION) != Z_OK) {
    return {};
  }
  out.resize(8 + compressed_bytes);
  set_u32(out, 4, std::uint32_t(compressed_bytes));
  return out;
}

std::string base64(const std::string& bytes) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = bytes.size() - i < 3 ? bytes.size() - i : 3;
    std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16;
    if (n > 1) v |= std::uint32_t(std::uint8_t(bytes[i + 1])) << 8;
    if (n > 2) v |= std::uint32_t(std::uint8_t(bytes[i + 2]));
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += n > 1 ? alphabet[(v >> 6) & 63] : '=';
    out += n > 2 ? alphabet[v & 63] : '=';
  }
  return out;
}

namespace {

bool unbase64(std::string_view text, std::string& out) {
  out.clear();
  if (text.size() % 4 != 0) return false;
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int d = k >= 4 - pad ? 0 : value(text[i + std::size_t(k)]);
      if (d < 0) return false;
      v = v << 6 | std::uint32_t(d);
    }
    out += char(v >> 16);
    if (pad < 2) out += char(v >> 8);
    if (pad < 1) out += char(v);
  }
  return true;
}

std::uint32_t get_u32(std::string_view in, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = v << 8 | std::uint8_t(in[at + std::size_t(i)]);
  return v;
}

std::uint64_t get_u64(std::string_view in, std::size_t at) {
  return std::uint64_t(get_u32(in, at)) << 32 | get_u32(in, at + 4);
}

// ZigZagEncoding.getLong: false past the end.
bool get_zigzag(std::string_view in, std::size_t& at, std::int64_t& out) {
  std::uint64_t v = 0;
  for (int i = 0; i < 9; ++i) {
    if (at >= in.size()) return false;
    const std::uint8_t b = std::uint8_t(in[at++]);
    if (i == 8) {
      v |= std::uint64_t(b) << 56;
      break;
    }
    v |= std::uint64_t(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) break;
  }
  out = std::int64_t(v >> 1) ^ -std::int64_t(v & 1);
  return true;
}

}  // namespace

bool add_compressed_v2(std::string_view text, Histogram& out, std::string& error) {
  std::string packed;
  if (!unbase64(text, packed) || packed.size() < 8 || get_u32(packed, 0) != v2_compressed_encoding_cookie) {
    error = "not a V2 compressed histogram in base64";
    return false;
  }
  const std::uint32_t compressed_bytes = get_u32(packed, 4);
  if (compressed_bytes > packed.size() - 8) {
    error = "a histogram's compressed length is past its end";
    return false;
  }
  // The most a histogram of this layout can take: the header and a 9-byte
  // count for every index.
  std::string plain(v2_header_bytes + Histogram::counts_len * 9, '\0');
  uLongf plain_bytes = uLongf(plain.size());
  if (uncompress(reinterpret_cast<Bytef*>(plain.data()), &plain_bytes,
                 reinterpret_cast<const Bytef*>(packed.data() + 8), uLong(compressed_bytes)) != Z_OK) {
    error = "a histogram does not inflate (zlib)";
    return false;
  }
  plain.resize(plain_bytes);
  if (plain.size() < v2_header_bytes || get_u32(plain, 0) != v2_encoding_cookie) {
    error = "not a V2 histogram inside";
    return false;
  }
  const std::uint32_t payload = get_u32(plain, 4);
  if (payload > plain.size() - v2_header_bytes || get_u32(plain, 8) != 0 ||
      get_u32(plain, 12) != std::uint32_t(Histogram::significant_digits) ||
      get_u64(plain, 16) != Histogram::lowest_trackable_ns || get_u64(plain, 24) != Histogram::highest_trackable_ns) {
    error = "a histogram of another layout (this client writes 3 digits, 1 ns to 2^37 ns)";
    return false;
  }
  const std::string_view counts(plain.data() + v2_header_bytes, payload);
  Histogram::Sparse sparse;
  std::size_t index = 0;
  for (std::size_t at = 0; at < counts.size();) {
    std::int64_t v = 0;
    if (!get_zigzag(counts, at, v)) {
      error = "a histogram's counts end inside a number";
      return false;
    }
    if (v < 0) {  // a run of zeros
      index += std::size_t(-v);
      continue;
    }
    if (index >= Histogram::counts_len) {
      error = "a histogram's counts run past its range";
      return false;
    }
    if (v > 0) sparse.counts.emplace_back(std::uint32_t(index), std::uint64_t(v));
    ++index;
  }
  if (!sparse.counts.empty()) {
    sparse.min = Histogram::value_at_index(sparse.counts.front().first);
    sparse.max = Histogram::highest_equivalent(Histogram::value_at_index(sparse.counts.back().first));
  }
  out.add(sparse);
  return true;
}

std::string hdr_log_header(double start_epoch_s, const std::string& run_json) {
  char date[64] = "";
  const std::time_t seconds = std::time_t(start_epoch_s);
  std::tm utc{};
  if (gmtime_r(&seconds, &utc) != nullptr) std::strftime(date, sizeof date, "%a %b %d %H:%M:%S UTC %Y", &utc);
  char line[256];
  std::string out = "#[Histogram log format version 1.3]\n";
  std::snprintf(line, sizeof line, "#[StartTime: %.3f (seconds since epoch), %s]\n", start_epoch_s, date);
  out += line;
  if (!run_json.empty()) out += "#[ringhttp run: " + run_json + "]\n";
  out += "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";
  return out;
}

namespace {

// A number of the log: finite, not negative, the whole field.
bool log_number(std::string_view field, double& out) {
  return text::parse_number(field, 0.0, std::numeric_limits<double>::max(), out);
}

// "#[Name: 1733318400.123 (seconds since epoch), …]": the number.
bool header_seconds(std::string_view line, std::string_view name, double& out) {
  if (!line.starts_with(name)) return false;
  line.remove_prefix(name.size());
  const std::size_t end = line.find_first_of(" ]");
  return log_number(line.substr(0, end), out);
}

}  // namespace

bool read_hdr_log(std::string_view text, HdrLogRead& out, std::string& error) {
  double start_time = 0, base_time = 0;
  bool has_base = false;
  std::size_t number = 0;
  std::vector<std::pair<std::size_t, HdrLogEntry>> lines;  // relative starts until the header is read
  while (!text.empty()) {
    const std::size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.starts_with("\"")) continue;  // the legend
    if (line.starts_with("#")) {
      double seconds = 0;
      if (header_seconds(line, "#[StartTime: ", seconds)) {
        start_time = seconds;
      } else if (header_seconds(line, "#[BaseTime: ", seconds)) {
        base_time = seconds;
        has_base = true;
      } else if (line.starts_with("#[ringhttp run: ") && line.ends_with("]")) {
        out.run_json = line.substr(16, line.size() - 17);
      }
      continue;
    }
    if (line.starts_with("Tag=")) {
      error = "line " + std::to_string(number) + ": a tagged histogram (only the latency's untagged lines merge)";
      return false;
    }
    HdrLogEntry entry;
    double max = 0;
    std::string_view fields[4];
    for (int i = 0; i < 3; ++i) {
      const std::size_t comma = line.find(',');
      if (comma == std::string_view::npos) break;
      fields[i] = line.substr(0, comma);
      line.remove_prefix(comma + 1);
    }
    fields[3] = line;
    if (!log_number(fields[0], entry.start_s) || !log_number(fields[1], entry.length_s) ||
        !log_number(fields[2], max) || fields[3].empty()) {
      error = "line " + std::to_string(number) + ": not an interval line (start,length,max,histogram)";
      return false;
    }
    entry.histogram = fields[3];
    lines.emplace_back(number, entry);
  }
  // As HdrHistogram's HistogramLogReader: starts are from BaseTime when
  // given, else absolute unless the first is over a year before StartTime
  // (then from StartTime: this client's own logs, which start at 0).
  constexpr double year_s = 365.0 * 24 * 3600;
  const double base = has_base                                                  ? base_time
                      : !lines.empty() && lines.front().second.start_s < start_time - year_s ? start_time
                                                                                               : 0.0;
  out.entries.clear();
  for (auto& [n, entry] : lines) {
    entry.start_s += base;
    if (!std::isfinite(entry.start_s + entry.length_s)) {
      error = "line " + std::to_string(n) + ": a time past any clock";
      return false;
    }
    out.entries.push_back(entry);
  }
  return true;
}

std::string hdr_log_line(const HdrLogInterval& interval) {
  const std::string compressed = compress_v2(*interval.latency);
  if (compressed.empty()) return {};
  const std::uint64_t max = interval.latency->max();
  char line[128];
  std::snprintf(line, sizeof line, "%.3f,%.3f,%.3f,", interval.start_s, interval.length_s,
                max == 0 ? 0.0 : double(Histogram::highest_equivalent(max)) / hdr_log_max_value_unit_ns);
  return line + base64(compressed) + "\n";
}

}  // namespace ringhttp::client
