// node:http + pg as the database rows' peer (issue 16): the seeds' stack
// without the ORM, a pool of 10 connections, named (prepared) statements.
//   node bench/peers/node_pg.js PORT DATABASE_URL
// Routes, with ringhttp's rules:
//   GET /db/users/:id   200 {"id":…,"name":…}; 404 when there is no such
//                       row; 400 for an id that is not 1 to 2^53-1 in
//                       digits without a leading zero
//   POST /db/users      {"name": string of 1 to 100 characters}: INSERT …
//                       RETURNING, one commit each, 201 with the new row;
//                       415 unless Content-Type is JSON, 413 past 4096
//                       bytes, 400 for malformed JSON, 422 naming the field
//   GET /plaintext      'Hello, World!' (what the harness's start-up poll asks)
// The database unreachable or failing: 503 with a JSON error. Anything
// else is 404. One process, one thread of JavaScript.
'use strict';
const http = require('node:http');
const {Pool} = require('pg');
const {serve} = require('./node_serve.js');

const POOL_SIZE = 10;                  // the seeds' pool
const BODY_BYTES_MAX = 4096;           // ringhttp's --body-bytes-max default
const NAME_CHARS_MAX = 100;
const USER_ID_MAX = 2 ** 53 - 1;       // ringhttp's user_id_max: exact in a JSON number

const port = Number(process.argv[2]);
const databaseUrl = process.argv[3];
if (!Number.isInteger(port) || port <= 0 || port > 65535 || !databaseUrl) {
  console.error('usage: node node_pg.js PORT DATABASE_URL');
  process.exit(2);
}
const pool = new Pool({connectionString: databaseUrl, max: POOL_SIZE});
pool.on('error', () => {});  // an idle connection lost: the next query reconnects

const PREFIX = '/db/users/';
const byId = {name: 'user_by_id', text: 'SELECT id, name FROM users WHERE id = $1'};
const insert = {name: 'user_insert', text: 'INSERT INTO users (name) VALUES ($1) RETURNING id, name'};

function send(res, status, body) {
  res.writeHead(status, {'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body)});
  res.end(body);
}
// pg returns bigint as a string: written as a JSON number as it is.
const row = (r) => `{"id":${r.id},"name":${JSON.stringify(r.name)}}`;
const unavailable = (res) => send(res, 503, '{"error":"database unavailable"}');

function read(req, res, id) {
  pool.query({...byId, values: [id]}).then(
      (result) => result.rows.length ? send(res, 200, row(result.rows[0])) : send(res, 404, '{"error":"no such user"}'),
      () => unavailable(res));
}

function write(req, res) {
  const type = (req.headers['content-type'] || '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') {
    req.resume();
    return send(res, 415, '{"error":"Content-Type must be application/json"}');
  }
  const chunks = [];
  let bytes = 0;
  let refused = false;
  req.on('data', (chunk) => {
    bytes += chunk.length;
    if (bytes > BODY_BYTES_MAX && !refused) {
      refused = true;
      send(res, 413, `{"error":"body too large","limit":${BODY_BYTES_MAX}}`);
    } else if (!refused) {
      chunks.push(chunk);
    }
  });
  req.on('end', () => {
    if (refused) return;
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(res, 400, '{"error":"malformed JSON"}');
    }
    const name = body !== null && typeof body === 'object' ? body.name : undefined;
    if (typeof name !== 'string' || name.length < 1 || [...name].length > NAME_CHARS_MAX) {
      return send(res, 422, `{"error":"name must be a string of 1 to ${NAME_CHARS_MAX} characters","field":"name"}`);
    }
    pool.query({...insert, values: [name]}).then((result) => send(res, 201, row(result.rows[0])),
                                                 () => unavailable(res));
  });
}

const plaintext = Buffer.from('Hello, World!');

const server = http.createServer((req, res) => {
  const url = req.url;
  if (url === '/plaintext') {
    res.writeHead(200, {'Content-Type': 'text/plain', 'Content-Length': plaintext.length});
    return res.end(plaintext);
  }
  if (req.method === 'GET' && url.startsWith(PREFIX)) {
    const text = url.slice(PREFIX.length);
    if (!/^[1-9][0-9]{0,15}$/.test(text) || Number(text) > USER_ID_MAX) {
      return send(res, 400, '{"error":"id must be a whole number from 1 to 2^53-1"}');
    }
    return read(req, res, text);
  }
  if (req.method === 'POST' && url === '/db/users') return write(req, res);
  req.resume();
  res.writeHead(404, {'Content-Length': 0});
  res.end();
});
serve(server, port, `node ${process.version} pg pool ${POOL_SIZE}`, (done) => pool.end().then(done));
