// libFuzzer target for POST /echo's body parser: any bytes must give a
// verdict without reading past the padding; an accepted body must produce
// an answer that passes the schema check, and a refusal an error body that
// is valid JSON naming what the refusal names.
//
// Built and run by tools/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "server/app/echo_body.hpp"

namespace {

using namespace ringhttp::server::json;

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static EchoBodyParser parser;
  static simdjson::dom::parser dom;
  if (size > echo_body_bytes_max) return 0;
  // Exactly the body and its padding, so ASan sees any read beyond.
  std::vector<char> body(size + body_padding_bytes, '\0');
  std::memcpy(body.data(), data, size);
  const EchoParse p = parser.parse(body.data(), size);
  if (p.error == EchoError::none) {
    char out[echo_response_bytes_max];
    const std::size_t len = write_echo_response(p.name, p.n, out, sizeof out);
    require(len > 0);
    require(check_echo_response(std::string_view(out, len), p.name, p.n));
    return 0;
  }
  require(status_for(p.error) == 400 || status_for(p.error) == 422);
  require(status_for(p.error) == 422 || p.field.empty());
  char out[echo_error_bytes_max];
  const std::size_t len = write_echo_error(p, out, sizeof out);
  require(len > 0);
  simdjson::dom::element doc;
  require(dom.parse(out, len).get(doc) == simdjson::SUCCESS);
  std::string_view field;
  if (status_for(p.error) == 422) require(doc["field"].get(field) == simdjson::SUCCESS && field == p.field);
  return 0;
}
