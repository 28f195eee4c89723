#!/usr/bin/env node
// gce_schema_check.js - every Compute Engine request in a log of the tests'
// fake GCE (tests/integration/gce_fake.py --log), and every answer it gave,
// checked against the compute v1 schema Google's own client ships
// (@google-cloud/compute's build/protos/protos.json: the services' HTTP
// rules and the messages): the request is one of the API's (its method and
// path a rule's), each query parameter a field of that request's message
// (not a path field, not the body) of the right type, the body its body
// field's message, and a 2xx answer the rule's response message. Strict:
// an unknown field, a value of the wrong type, an enum's string that is not
// one of its values (compute's string fields FOO have their values in the
// message's enum Foo), an int64 that is not an integer are errors.
//
//   NODE_PATH=DIR/node_modules node gce_schema_check.js LOG.jsonl [--agent UA] [--min N]
//
// --agent UA: only the requests whose User-Agent starts with UA (the
// driver's, "slurm-burst/"), and at least N (default 1) of them. Prints one
// line per error ("error: ..."), then "checked N requests, M answers,
// E errors" and the RPCs seen; exits 1 on any error.
'use strict';
const fs = require('fs');
const path = require('path');

const args = process.argv.slice(2);
const logFile = args[0];
let agent = null, min = 1;
for (let i = 1; i < args.length; i++) {
  if (args[i] === '--agent') agent = args[++i];
  else if (args[i] === '--min') min = Number(args[++i]);
}
const pkg = path.dirname(require.resolve('@google-cloud/compute/package.json'));
const root = JSON.parse(fs.readFileSync(path.join(pkg, 'build/protos/protos.json'), 'utf8'));
const v1 = root.nested.google.nested.cloud.nested.compute.nested.v1.nested;

// the HTTP rules: [{verb, re, literals, rpc, service, req, resp, body, params}]
const rules = [];
for (const [svc, def] of Object.entries(v1)) {
  if (!def.methods) continue;
  for (const [rpc, m] of Object.entries(def.methods)) {
    const o = m.options || {};
    for (const verb of ['get', 'post', 'delete', 'patch', 'put']) {
      const tpl = o[`(google.api.http).${verb}`];
      if (!tpl) continue;
      const params = [];
      const re = new RegExp('^' + tpl.replace(/\{([^}=]+)(=[^}]*)?\}/g, (_, p) => { params.push(p); return '([^/]+)'; }) + '$');
      rules.push({verb: verb.toUpperCase(), re, literals: tpl.replace(/\{[^}]*\}/g, '').length, rpc: `${svc}.${rpc}`,
        req: m.requestType, resp: m.responseType, body: o['(google.api.http).body'] || null, params});
    }
  }
}

const camel = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
const pascal = (s) => s.charAt(0).toUpperCase() + s.slice(1);
function type(name) {
  const t = v1[name.replace(/^\.?google\.cloud\.compute\.v1\./, '')];
  if (!t) throw new Error('no type ' + name + ' in the schema');
  return t;
}
const ints = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);
const longs = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

// errors of value v as a field f (of message msg) at where
function checkScalar(t, v, where, msg, fname, errs) {
  if (t === 'string') {
    if (typeof v !== 'string') return errs.push(`${where}: a string expected, not ${JSON.stringify(v)}`);
    const en = msg && msg.nested && msg.nested[pascal(fname)];
    if (en && en.values && !(v in en.values))
      errs.push(`${where}: '${v}' is not one of ${pascal(fname)}'s values (${Object.keys(en.values).join(', ')})`);
    return;
  }
  if (t === 'bool') {
    if (typeof v !== 'boolean') errs.push(`${where}: a boolean expected, not ${JSON.stringify(v)}`);
    return;
  }
  if (ints.has(t)) {
    if (!Number.isInteger(v)) errs.push(`${where}: an integer (${t}) expected, not ${JSON.stringify(v)}`);
    return;
  }
  if (longs.has(t)) {
    if (!(Number.isInteger(v) || (typeof v === 'string' && /^-?\d+$/.test(v))))
      errs.push(`${where}: an integer (${t}, a number or a string of digits) expected, not ${JSON.stringify(v)}`);
    return;
  }
  if (t === 'double' || t === 'float') {
    if (typeof v !== 'number' && !['NaN', 'Infinity', '-Infinity'].includes(v))
      errs.push(`${where}: a number expected, not ${JSON.stringify(v)}`);
    return;
  }
  if (t === 'bytes') {
    if (typeof v !== 'string' || !/^[A-Za-z0-9+/_-]*=*$/.test(v)) errs.push(`${where}: base64 expected`);
    return;
  }
  if (t.startsWith('google.protobuf.')) return;
  const nested = msg && msg.nested && msg.nested[t];
  if (nested && nested.values) {  // an enum of the message: its name (or its number)
    if (!(typeof v === 'string' && v in nested.values) && !Number.isInteger(v))
      errs.push(`${where}: '${v}' is not one of ${t}'s values (${Object.keys(nested.values).join(', ')})`);
    return;
  }
  checkMessage(nested ? nested : t, v, where, errs);
}

function checkMessage(tname, v, where, errs) {
  const msg = typeof tname === 'string' ? type(tname) : tname;
  if (typeof tname !== 'string') tname = 'a nested message';
  if (msg.values) {  // an enum field (numeric or its name)
    if (!(typeof v === 'string' && v in msg.values) && !Number.isInteger(v)) errs.push(`${where}: not a ${tname} value: ${JSON.stringify(v)}`);
    return;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return errs.push(`${where}: an object (${tname}) expected, not ${JSON.stringify(v)}`);
  const byJson = {};
  for (const [fn, f] of Object.entries(msg.fields || {})) {
    byJson[fn] = [fn, f];
    if (f.options && f.options.json_name) byJson[f.options.json_name] = [fn, f];
  }
  for (const [k, val] of Object.entries(v)) {
    const w = `${where}.${k}`;
    if (!byJson[k]) { errs.push(`${w}: no field '${k}' in ${tname}`); continue; }
    const [fn, f] = byJson[k];
    if (f.keyType) {
      if (val === null || typeof val !== 'object' || Array.isArray(val)) { errs.push(`${w}: a map expected`); continue; }
      for (const [mk, mv] of Object.entries(val)) checkScalar(f.type, mv, `${w}[${JSON.stringify(mk)}]`, msg, fn, errs);
    } else if (f.rule === 'repeated') {
      if (!Array.isArray(val)) { errs.push(`${w}: a list expected, not ${JSON.stringify(val)}`); continue; }
      val.forEach((x, i) => checkScalar(f.type, x, `${w}[${i}]`, msg, fn, errs));
    } else {
      checkScalar(f.type, val, w, msg, fn, errs);
    }
  }
}

const system = new Set(['$alt', 'alt', 'prettyPrint', 'fields', 'key', 'quotaUser', 'userIp', '$fields']);
let nreq = 0, nans = 0;
const errors = [], seen = {};
const lines = fs.readFileSync(logFile, 'utf8').split('\n').filter((l) => l.trim());
for (const [i, line] of lines.entries()) {
  const e = JSON.parse(line);
  if (!e.path || e.project === undefined) continue;          // not a compute request (token, metadata)
  if (agent && !(e.user_agent || '').startsWith(agent)) continue;
  nreq++;
  const where = `${logFile}:${i + 1}: ${e.method} ${e.path}`;
  const full = `/compute/v1/projects/${e.project}/${e.path}`;
  const cands = rules.filter((r) => r.verb === e.method && r.re.test(full)).sort((a, b) => b.literals - a.literals);
  if (!cands.length) { errors.push(`${where}: no compute v1 method is ${e.method} of that path`); continue; }
  const r = cands[0];
  seen[r.rpc] = (seen[r.rpc] || 0) + 1;
  const reqMsg = type(r.req);
  const bodyField = r.body && r.body !== '*' ? camel(r.body) : null;
  const pathFields = new Set(r.params.map(camel));
  for (const [k, v] of Object.entries(e.query || {})) {
    if (system.has(k)) continue;
    const f = (reqMsg.fields || {})[k];
    if (!f || pathFields.has(k) || k === bodyField) { errors.push(`${where}: query parameter '${k}' is not a field of ${r.req}`); continue; }
    if (f.type === 'bool' ? !/^(true|false)$/.test(v) : (ints.has(f.type) || longs.has(f.type)) ? !/^-?\d+$/.test(v) : f.type !== 'string')
      errors.push(`${where}: query parameter ${k}=${v} is not a ${f.type}`);
  }
  if (bodyField) {
    if (e.body === null || e.body === undefined) errors.push(`${where}: no body (${r.rpc} takes ${bodyField})`);
    else checkMessage(reqMsg.fields[bodyField].type, e.body, `${where} body`, errors);
  } else if (r.body === '*') {
    checkMessage(r.req, e.body || {}, `${where} body`, errors);
  } else if (e.body !== null && e.body !== undefined && e.body !== '') {
    errors.push(`${where}: a body, which ${r.rpc} does not take`);
  }
  if (e.status >= 200 && e.status < 300) {
    nans++;
    checkMessage(r.resp, e.answer, `${where} answer`, errors);
  }
}
for (const x of errors) console.log('error: ' + x);
console.log(`checked ${nreq} requests, ${nans} answers, ${errors.length} errors`);
console.log('methods: ' + Object.entries(seen).map(([k, v]) => `${k} ${v}`).join(', '));
if (agent && nreq < min) {
  console.log(`error: only ${nreq} requests from ${agent} (at least ${min} expected)`);
  process.exit(1);
}
process.exit(errors.length ? 1 : 0);
