#include "support/certificates.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "support/shell.hpp"

namespace socket_test {
namespace {

// For a shell command line: 'text', with each ' closed, escaped and reopened.
std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error("certificates: cannot write " + path);
}

// The openssl req configuration of a self-signed CA named `name`.
std::string ca_config(const std::string& name) {
  const std::string extensions =
      "[ca]\n"
      "basicConstraints = critical, CA:TRUE\n"
      "keyUsage = critical, keyCertSign, cRLSign\n"
      "subjectKeyIdentifier = hash\n";
  return "[req]\ndistinguished_name = dn\nprompt = no\nx509_extensions = ca\n[dn]\nCN = " + name + "\n" + extensions;
}

}  // namespace

Certificates make_certificates(const std::string& dir) {
  Certificates files;
  files.ca_file = dir + "/ca.pem";
  files.ca_key_file = dir + "/ca.key";
  files.cert_file = dir + "/server.pem";
  files.key_file = dir + "/server.key";
  files.wrong_ca_file = dir + "/wrong_ca.pem";
  write_file(dir + "/ca.cnf", ca_config("ringhttp test CA"));
  write_file(dir + "/wrong_ca.cnf", ca_config("ringhttp unrelated test CA"));
  write_file(dir + "/server.cnf", "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = localhost\n");
  write_file(dir + "/server.ext",
             "basicConstraints = critical, CA:FALSE\n"
             "keyUsage = critical, digitalSignature, keyEncipherment\n"
             "extendedKeyUsage = serverAuth\n"
             "subjectKeyIdentifier = hash\n"
             "authorityKeyIdentifier = keyid\n"
             "subjectAltName = DNS:localhost, DNS:a.test, DNS:b.test, IP:127.0.0.1, IP:::1\n");
  const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  const std::vector<std::string> commands = {
      "cd " + shell_quoted(dir),
      "openssl req -x509 -new" + key + " -keyout ca.key -out ca.pem -days 2 -config ca.cnf",
      "openssl req -new" + key + " -keyout server.key -out server.csr -config server.cnf",
      "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext"
      " -out server.pem",
      "openssl req -x509 -new" + key + " -keyout wrong_ca.key -out wrong_ca.pem -days 2 -config wrong_ca.cnf",
  };
  std::string script = "(set -e";
  for (const auto& command : commands) script += "; " + command;
  const ShellRun made = run_shell(script + ")");
  if (made.exit_code != 0) {
    throw std::runtime_error("openssl could not make the test certificates:\n" + made.output);
  }
  return files;
}

TempCertificates::TempCertificates() {
  std::string dir_template = testing::TempDir() + "ringhttp_certs.XXXXXX";
  if (::mkdtemp(dir_template.data()) == nullptr) {
    throw std::runtime_error("certificates: mkdtemp " + dir_template + ": " + std::strerror(errno));
  }
  dir_ = dir_template;
  try {
    files_ = make_certificates(dir_);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw;
  }
}

TempCertificates::~TempCertificates() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

}  // namespace socket_test
