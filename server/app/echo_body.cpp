#include "server/app/echo_body.hpp"

#include <simdjson.h>

#include <cassert>
#include <cfloat>
#include <cmath>
#include <string>
#include <utility>

#include "core/http/json_writer.hpp"

namespace ringhttp::server::json {

static_assert(body_padding_bytes >= simdjson::SIMDJSON_PADDING, "simdjson reads this far past a document");

namespace {

namespace od = simdjson::ondemand;

// Nothing after the top-level value (simdjson 3.0's On-Demand document
// has no at_end(): its location past the last token is OUT_OF_BOUNDS).
bool at_end(od::document& doc) { return doc.current_location().error() == simdjson::OUT_OF_BOUNDS; }

std::size_t code_points(std::string_view utf8) {  // of valid UTF-8
  std::size_t n = 0;
  for (const char c : utf8) n += (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  return n;
}

// The first `max` bytes of valid UTF-8, not cutting a character.
std::string_view cut(std::string_view utf8, std::size_t max) {
  if (utf8.size() <= max) return utf8;
  std::size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(utf8[end]) & 0xc0) == 0x80) --end;
  return utf8.substr(0, end);
}

// RFC 8259's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// simdjson reports a number it cannot represent and one that is not a
// number alike; this tells them apart.
bool is_json_number(std::string_view t) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i > start;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (i < t.size() && t[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == t.size();
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// What reading one field's value came to: taken (neither set), refused
// with a field error (kept while the rest is read), or a syntax error,
// which ends the parse.
struct FieldRead {
  simdjson::error_code syntax = simdjson::SUCCESS;
  EchoError refused = EchoError::none;
  bool taken() const { return syntax == simdjson::SUCCESS && refused == EchoError::none; }
};

FieldRead refused(EchoError error) { return {simdjson::SUCCESS, error}; }

// "name": a string of 1 to echo_name_chars_max characters, with no U+0000
// where the shape is the name alone.
FieldRead read_name(od::value& value, EchoShape shape, std::string_view& name) {
  od::json_type type;
  if (auto e = value.type().get(type); e) return {e};
  if (type != od::json_type::string) return refused(EchoError::wrong_type);
  if (auto e = value.get_string().get(name); e) return {e};
  const std::size_t chars = code_points(name);
  const bool nul = shape == EchoShape::name_only && name.find('\0') != std::string_view::npos;
  if (chars == 0 || chars > echo_name_chars_max || nul) return refused(EchoError::out_of_range);
  return {};
}

// "n": a number a double holds, whose double is finite too.
FieldRead read_n(od::value& value, double& n) {
  od::json_type type;
  if (auto e = value.type().get(type); e) return {e};
  if (type != od::json_type::number) return refused(EchoError::wrong_type);
  const std::string_view token = trim_right(value.raw_json_token());
  if (auto e = value.get_double().get(n); e) {
    if (!is_json_number(token)) return {e};
    return refused(EchoError::out_of_range);  // a number, but not one a double holds
  }
  if (!std::isfinite(n) || std::fabs(n) > DBL_MAX / 2) return refused(EchoError::out_of_range);
  return {};
}

}  // namespace

int status_for(EchoError error) {
  switch (error) {
    case EchoError::none: return 200;
    case EchoError::malformed:
    case EchoError::invalid_utf8: return 400;
    default: return 422;
  }
}

const char* message_for(EchoError error) {
  switch (error) {
    case EchoError::none: return "ok";
    case EchoError::malformed: return "malformed JSON";
    case EchoError::invalid_utf8: return "invalid UTF-8";
    case EchoError::missing_field: return "missing field";
    case EchoError::wrong_type: return "wrong type";
    case EchoError::out_of_range: return "out of range";
    case EchoError::unknown_field: return "unknown field";
    case EchoError::duplicate_field: return "duplicate field";
  }
  return "invalid";
}

struct EchoBodyParser::Impl {
  od::parser parser;
};

EchoBodyParser::EchoBodyParser() : impl_(std::make_unique<Impl>()) {
  const simdjson::error_code e = impl_->parser.allocate(echo_body_bytes_max);
  if (e != simdjson::SUCCESS) throw std::runtime_error(std::string("simdjson: ") + simdjson::error_message(e));
}

EchoBodyParser::~EchoBodyParser() = default;

EchoParse EchoBodyParser::parse(const char* data, std::size_t len, EchoShape shape) {
  assert(len <= echo_body_bytes_max);
  const auto syntax = [](simdjson::error_code e) {
    EchoParse p;
    p.error = e == simdjson::UTF8_ERROR ? EchoError::invalid_utf8 : EchoError::malformed;
    return p;
  };
  od::document doc;
  if (auto e = impl_->parser.iterate(data, len, len + body_padding_bytes).get(doc); e) return syntax(e);
  od::object object;
  if (auto e = doc.get_object().get(object); e) return syntax(e);

  // The first field error is kept while the rest is read: a syntax error
  // anywhere (400) outranks it.
  EchoParse out;
  EchoParse semantic;
  auto refuse = [&](EchoError error, std::string_view field) {
    if (semantic.error != EchoError::none) return;
    semantic.error = error;
    semantic.field = field;
  };
  bool have_name = false, have_n = false;
  for (auto field_result : object) {
    od::field field;
    if (auto e = std::move(field_result).get(field); e) return syntax(e);
    std::string_view key;
    if (auto e = field.unescaped_key().get(key); e) return syntax(e);
    od::value value = field.value();
    const bool is_name = key == "name";
    if (!is_name && (key != "n" || shape != EchoShape::name_and_n)) {
      refuse(EchoError::unknown_field, cut(key, error_field_bytes_max));
      continue;
    }
    bool& seen = is_name ? have_name : have_n;
    const std::string_view which = is_name ? "name" : "n";
    if (seen) {
      refuse(EchoError::duplicate_field, which);
      continue;
    }
    seen = true;
    std::string_view name;
    double n = 0;
    const FieldRead read = is_name ? read_name(value, shape, name) : read_n(value, n);
    if (read.syntax != simdjson::SUCCESS) return syntax(read.syntax);
    if (!read.taken()) {
      refuse(read.refused, which);
    } else if (is_name) {
      out.name = name;
    } else {
      out.n = n;
    }
  }
  if (!at_end(doc)) {
    EchoParse p;
    p.error = EchoError::malformed;
    return p;
  }
  if (semantic.error != EchoError::none) return semantic;
  if (!have_name) return EchoParse{EchoError::missing_field, "name", {}, 0};
  if (!have_n && shape == EchoShape::name_and_n) return EchoParse{EchoError::missing_field, "n", {}, 0};
  return out;
}

std::size_t write_echo_response(std::string_view name, double n, char* out, std::size_t capacity) {
  http::JsonWriter w(out, capacity);
  w.begin_object().key("hello").string(name).key("doubled").number(2 * n).end_object();
  return w.ok() ? w.size() : 0;
}

std::size_t write_echo_error(const EchoParse& refusal, char* out, std::size_t capacity) {
  assert(refusal.error != EchoError::none);
  http::JsonWriter w(out, capacity);
  w.begin_object().key("error").string(message_for(refusal.error));
  // Every 422 names its field, even the empty key ({"":1}).
  if (status_for(refusal.error) == 422) w.key("field").string(refusal.field);
  w.end_object();
  return w.ok() ? w.size() : 0;
}

bool check_echo_response(std::string_view response, std::string_view name, double n) {
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (parser.parse(response.data(), response.size()).get(object) != simdjson::SUCCESS) return false;
  if (object.size() != 2) return false;
  std::string_view hello;
  double doubled = 0;
  if (object["hello"].get(hello) != simdjson::SUCCESS || hello != name) return false;
  // A whole number comes back as an integer token; read it as a double either way.
  simdjson::dom::element d;
  if (object["doubled"].get(d) != simdjson::SUCCESS) return false;
  if (d.get_double().get(doubled) != simdjson::SUCCESS) {
    std::int64_t i = 0;
    std::uint64_t u = 0;
    if (d.get_int64().get(i) == simdjson::SUCCESS) {
      doubled = double(i);
    } else if (d.get_uint64().get(u) == simdjson::SUCCESS) {
      doubled = double(u);
    } else {
      return false;
    }
  }
  return doubled == 2 * n;
}

}  // namespace ringhttp::server::json
