#include "server/db/libpq_setup.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace ringhttp::server::db {

PGconn* connect_start(const std::string& conninfo, const std::string& application_name) {
  // The connection string is expanded as dbname (a URL or key=value
  // pairs), and overrides the defaults before it: GSSAPI encryption off
  // unless asked for (libpq's "prefer" looks for Kerberos credentials on
  // every attempt, blocking on files and perhaps a KDC, on this thread).
  // The application name marks our connections in pg_stat_activity unless
  // the string names its own.
  const char* const keys[] = {"gssencmode", "dbname", "fallback_application_name", nullptr};
  const char* const values[] = {"disable", conninfo.c_str(), application_name.c_str(), nullptr};
  return PQconnectStartParams(keys, values, 1);
}

bool enter_pipeline(PGconn* pg) { return PQsetnonblocking(pg, 1) == 0 && PQenterPipelineMode(pg) == 1; }

bool queue_statement(PGconn* pg, PipelineQueue::Kind kind, Statement statement, const char* param) {
  const StatementText& text = statements[std::size_t(statement)];
  const int sent = kind == PipelineQueue::Kind::prepare
                       ? PQsendPrepare(pg, text.name, text.sql, 1, nullptr)
                       : PQsendQueryPrepared(pg, text.name, 1, &param, nullptr, nullptr, 0);
  return sent == 1 && PQpipelineSync(pg) == 1;
}

bool set_cork(int fd, bool on) {
  const int value = on ? 1 : 0;
  return ::setsockopt(fd, IPPROTO_TCP, TCP_CORK, &value, sizeof value) == 0;
}

}  // namespace ringhttp::server::db
