// node:http as a peer row for bench/bench.py: the seeds' bare baseline.
//   node bench/peers/node_http.js PORT
// and over HTTPS (the node-tls rows), node:https with the same routes:
//   node bench/peers/node_http.js PORT CERTIFICATE KEY
// CERTIFICATE and KEY are PEM files (the run's own, from a CA the harness
// makes); node's TLS defaults stand: TLS 1.2 and 1.3, session tickets on
// (under keys node makes itself), as nginx-tls has them.
// Routes match ringhttp's: /plaintext, /json (JSON.stringify per request, as
// the seeds' node-http row does), /stream?bytes=N (N bytes, byte i = i mod 251,
// N at most STREAM_BYTES_MAX). Anything else is 404. One process, one thread
// of JavaScript; the harness pins it to CPU 0 like every other server.
'use strict';
const http = require('node:http');
const {serve} = require('./node_serve.js');

const STREAM_PERIOD = 251;             // the same pattern as ringhttp's /stream
const STREAM_BYTES_MAX = 1 << 20;      // the benchmark asks for 64 KiB

const port = Number(process.argv[2]);
const tlsFiles = process.argv.slice(3);
if (!Number.isInteger(port) || port <= 0 || port > 65535 || (tlsFiles.length !== 0 && tlsFiles.length !== 2)) {
  console.error('usage: node node_http.js PORT [CERTIFICATE KEY]');
  process.exit(2);
}

const pattern = Buffer.alloc(STREAM_BYTES_MAX);
for (let i = 0; i < pattern.length; i++) pattern[i] = i % STREAM_PERIOD;
const plaintext = Buffer.from('Hello, World!');

function handle(req, res) {
  const url = req.url;
  if (url === '/plaintext') {
    res.writeHead(200, {'Content-Type': 'text/plain', 'Content-Length': plaintext.length});
    res.end(plaintext);
  } else if (url === '/json') {
    const body = JSON.stringify({message: 'Hello, World!'});
    res.writeHead(200, {'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body)});
    res.end(body);
  } else if (url.startsWith('/stream?bytes=')) {
    const bytes = Number(url.slice('/stream?bytes='.length));
    if (!Number.isInteger(bytes) || bytes < 0 || bytes > STREAM_BYTES_MAX) {
      res.writeHead(400, {'Content-Length': 0});
      res.end();
      return;
    }
    res.writeHead(200, {'Content-Type': 'application/octet-stream', 'Content-Length': bytes});
    res.end(pattern.subarray(0, bytes));
  } else {
    res.writeHead(404, {'Content-Length': 0});
    res.end();
  }
}

let server;
if (tlsFiles.length) {
  const https = require('node:https');
  const fs = require('node:fs');
  server = https.createServer({cert: fs.readFileSync(tlsFiles[0]), key: fs.readFileSync(tlsFiles[1])}, handle);
} else {
  server = http.createServer(handle);
}
serve(server, port, `node ${process.version}${tlsFiles.length ? ' (https)' : ''}`);
