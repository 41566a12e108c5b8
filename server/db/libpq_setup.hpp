#pragma once
// The libpq calls that set a database connection up, apart from the pool's
// state: the non-blocking connection attempt, pipeline mode, one
// statement's messages with its Sync, and TCP_CORK on the socket. The pool
// decides when each is called and what a refusal means.

#include <libpq-fe.h>

#include <string>

#include "server/db/pipeline_queue.hpp"
#include "server/db/statements.hpp"

namespace ringhttp::server::db {

// Begins connecting, non-blocking: `conninfo` is a libpq connection string
// or URL. Null when libpq could not even start (out of memory).
PGconn* connect_start(const std::string& conninfo, const std::string& application_name);

// Connected: non-blocking output and pipeline mode. False if libpq refused.
bool enter_pipeline(PGconn* pg);

// One statement's Parse (a prepare) or Bind/Execute (a query with its one
// text parameter), then its own Sync, into libpq's output. False if libpq
// refused (the connection failed).
bool queue_statement(PGconn* pg, PipelineQueue::Kind kind, Statement statement, const char* param);

// TCP_CORK on (writes only fill the socket buffer) or off (what is queued
// leaves). False when the socket refuses it: a Unix socket.
bool set_cork(int fd, bool on);

}  // namespace ringhttp::server::db
