#pragma once
// POST /echo's body, both ways: the request {"name": string, "n": number}
// parsed with simdjson On-Demand and validated field by field, the answer
// {"hello": name, "doubled": 2n} written with RFC 8259 escaping, and the
// answer's own schema check (the seeds' @Body and @Returns).

#include <cstddef>
#include <memory>
#include <string_view>

namespace ringhttp::server::json {

// The largest body accepted (413 beyond): a 100-character name, escaped,
// is a few hundred bytes; 4 KiB leaves room for whitespace.
inline constexpr std::size_t echo_body_bytes_max = 4096;
// Bytes the caller must have readable after a body (SIMDJSON_PADDING).
inline constexpr std::size_t body_padding_bytes = 64;
// A name is 1 to this many Unicode characters (code points).
inline constexpr std::size_t echo_name_chars_max = 100;
// An unknown or repeated key is named in the error, cut to this many bytes
// (at a character boundary).
inline constexpr std::size_t error_field_bytes_max = 64;

enum class EchoError : unsigned char {
  none,
  malformed,        // 400: not JSON, not an object, or trailing content
  invalid_utf8,     // 400
  missing_field,    // 422
  wrong_type,       // 422
  out_of_range,     // 422: name empty or too long; n not finite, or 2n would not be
  unknown_field,    // 422
  duplicate_field,  // 422
};

int status_for(EchoError error);
const char* message_for(EchoError error);

// The object a body must be: POST /echo's {"name", "n"}, or POST
// /db/users's {"name"} (where "n" is an unknown field, and a name holding
// U+0000 is out of range: Postgres text cannot hold it).
enum class EchoShape : unsigned char { name_and_n, name_only };

struct EchoParse {
  EchoError error = EchoError::none;
  std::string_view field;  // the field a 422 names (perhaps the empty key); empty for 400s
  std::string_view name;   // the unescaped name, when error is none
  double n = 0;
};

// One per shard: its simdjson parser's memory is allocated once, here.
class EchoBodyParser {
 public:
  EchoBodyParser();
  ~EchoBodyParser();
  EchoBodyParser(const EchoBodyParser&) = delete;
  EchoBodyParser& operator=(const EchoBodyParser&) = delete;

  // Parses and validates `len` bytes at `data`, which must be followed by
  // body_padding_bytes readable bytes. Never allocates. The views in the
  // result point into the parser and stay valid until the next parse().
  EchoParse parse(const char* data, std::size_t len, EchoShape shape = EchoShape::name_and_n);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The answer's size bound: 100 control characters escaped as \u00XX (6
// bytes each) is the longest name, plus the number's shortest form (24) and
// the fixed text.
inline constexpr std::size_t echo_response_bytes_max = 10 + 6 * echo_name_chars_max + 12 + 24 + 1;
inline constexpr std::size_t echo_error_bytes_max = 40 + 6 * error_field_bytes_max + 2;

// {"hello":<name>,"doubled":<2n>} into `out`; 0 if it does not fit.
std::size_t write_echo_response(std::string_view name, double n, char* out, std::size_t capacity);
// {"error":"...","field":"..."} for a refusal; 0 if it does not fit.
std::size_t write_echo_error(const EchoParse& refusal, char* out, std::size_t capacity);
// The answer's schema: exactly an object with "hello" equal to `name` and
// "doubled" equal to 2n. For debug builds and tests; it allocates.
bool check_echo_response(std::string_view response, std::string_view name, double n);

}  // namespace ringhttp::server::json
