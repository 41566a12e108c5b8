#pragma once
// A shard's database counters (server/db/pool.hpp writes them; /metrics
// sums them over shards like every other counter).

#include "core/metrics/counter.hpp"

namespace ringhttp::server::db {

struct Counters {
  metrics::Gauge links_up;           // connections ready to take queries now
  metrics::Gauge queries_in_flight;  // sent and not yet answered
  metrics::Counter queries;          // accepted and sent
  metrics::Counter sends;            // writes of queries: one per batch and connection (own protocol), one per query (libpq)
  metrics::Counter refused_queue_full;   // 503 at once: the shard's queue was full
  metrics::Counter refused_unavailable;  // 503 at once: no connection was ready
  metrics::Counter errors_connect;   // a connection attempt (or its statements' preparation) failed
  metrics::Counter errors_lost;      // a ready connection failed or was closed by the server
  metrics::Counter errors_timeout;   // a query (or a connection attempt) outlived its deadline
  metrics::Counter errors_query;     // the database refused a query
};

}  // namespace ringhttp::server::db
