// What the Node peers (node_http.js, node_pg.js) share: keep-alive bounds
// fit for benchmark connections, listening on loopback, a clean SIGTERM.
'use strict';

const KEEP_ALIVE_TIMEOUT_MS = 120000;  // node's default (5 s) would close idle benchmark connections

// Serves `server` on 127.0.0.1:port; on SIGTERM stops accepting, runs
// close(done) (a pool to end, say) and exits 0.
function serve(server, port, banner, close = (done) => done()) {
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;  // must exceed keepAliveTimeout
  server.requestTimeout = 0;
  server.listen(port, '127.0.0.1', () => console.log(`${banner} listening on 127.0.0.1:${port}`));
  process.on('SIGTERM', () => server.close(() => close(() => process.exit(0))));
}

module.exports = {serve};
