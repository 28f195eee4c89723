#!/usr/bin/env node
// gce_client_check.js - Google's own Compute Engine client for Node.js
// (@google-cloud/compute, its REST transport) against the tests' fake GCE
// (tests/integration/gce_fake.py): the fake must answer as Google does, or
// the client refuses its answers. Prints TAP lines ("ok N - ...", "not ok N
// - ..."), then "1..N"; exits 1 when a point failed.
//
//   NODE_PATH=DIR/node_modules node gce_client_check.js PORT KEY.json PROJECT
//
// KEY.json is a service-account key file whose token_uri is the fake's
// /token: Google's auth library signs its JWT and the fake verifies it. The
// metadata server's token is asked for too (GCE_METADATA_HOST, as Google's
// libraries read it). What it makes: a regional bulkInsert of 3 VMs (by
// name, minCount 3, 2 zones allowed), its operation waited for, its VMs
// listed by label (2 a page), one read, its metadata set (fingerprint),
// the insert operations of its group listed, one VM deleted and that
// operation waited for, the machine and accelerator types listed; a zonal
// bulkInsert that capacity refuses, a missing VM (404) and a stale
// fingerprint (412): the client must turn each into its error.
'use strict';
const compute = require('@google-cloud/compute');
const {JWT, Compute} = require('google-auth-library');

const [port, keyFile, project] = process.argv.slice(2);
let n = 0, failed = 0;
function ok(cond, what, diag) {
  n++;
  console.log(`${cond ? 'ok' : 'not ok'} ${n} - ${what}`);
  if (!cond) {
    failed++;
    if (diag !== undefined) console.log('# ' + String(diag).split('\n').join('\n# '));
  }
}
const opts = {apiEndpoint: '127.0.0.1', port: Number(port), protocol: 'http', fallback: 'rest', keyFilename: keyFile};
const region = 'us-central1';
// an ExtendedOperation's own name (its .name is the operation's id)
const opName = (o) => (o.latestResponse && o.latestResponse.name) || o.name;

async function waitRegion(ops, name) {
  for (let i = 0; i < 60; i++) {
    const [op] = await ops.wait({project, region, operation: name});
    if (op.status === 'DONE' || op.status === 3 /* numeric enum */) return op;
  }
  throw new Error('operation ' + name + ' not DONE after 60 waits');
}
async function waitZone(ops, zone, name) {
  for (let i = 0; i < 60; i++) {
    const [op] = await ops.wait({project, zone, operation: name});
    if (op.status === 'DONE' || op.status === 3) return op;
  }
  throw new Error('operation ' + name + ' not DONE after 60 waits');
}
async function expectError(what, fn, code) {
  try {
    await fn();
    ok(false, what + ': an error');
  } catch (e) {
    ok(e.code === code || e.status === code || (e.response && e.response.status === code),
       `${what}: the client raised its error (${code})`, e.stack || e);
    return e;
  }
}

async function main() {
  // --- tokens: the service account's JWT, and the metadata server's ---
  // Google's library posts its JWT to Google's token URL whatever the key
  // file's token_uri says: its transporter is sent to the fake's instead
  const jwt = new JWT({keyFile, scopes: ['https://www.googleapis.com/auth/compute']});
  jwt.transporter.interceptors.request.add({resolved: (cfg) => {
    if (String(cfg.url).startsWith('https://oauth2.googleapis.com/token')) cfg.url = `http://127.0.0.1:${port}/token`;
    return cfg;
  }});
  opts.authClient = jwt;
  delete opts.keyFilename;
  try {
    const t = await jwt.getAccessToken();
    ok(typeof t.token === 'string' && t.token.length > 10,
       "google-auth-library's JWT flow: the fake's token endpoint verified its RS256 assertion and issued a token");
  } catch (e) {
    ok(false, "google-auth-library's JWT flow", e.stack || e);
  }
  process.env.GCE_METADATA_HOST = `127.0.0.1:${port}`;
  try {
    const c = new Compute();
    const t = await c.getAccessToken();
    ok(typeof t.token === 'string' && t.token.length > 10, "google-auth-library's metadata-server flow: a token");
  } catch (e) {
    ok(false, "google-auth-library's metadata-server flow", e.stack || e);
  }

  const regionInstances = new compute.RegionInstancesClient(opts);
  const instances = new compute.InstancesClient(opts);
  const regionOps = new compute.RegionOperationsClient(opts);
  const zoneOps = new compute.ZoneOperationsClient(opts);
  const globalOps = new compute.GlobalOperationsClient(opts);
  const names = ['gcc-a-1', 'gcc-b-1', 'gcc-c-1'];
  const perInstanceProperties = {};
  for (const nm of names) perInstanceProperties[nm] = {name: nm};

  // --- a regional bulk insert, by name ---
  const [bulk] = await regionInstances.bulkInsert({
    project, region, requestId: '0f3c2b8e-9d7a-4e21-b5f4-7c6a1d2e3f40',
    bulkInsertInstanceResourceResource: {
      count: 3, minCount: 3, perInstanceProperties,
      locationPolicy: {locations: {[`zones/${region}-a`]: {preference: 'ALLOW'}, [`zones/${region}-b`]: {preference: 'ALLOW'}}},
      instanceProperties: {
        machineType: 'e2-standard-2', labels: {'burst-cluster': 'gcc'},
        disks: [{boot: true, autoDelete: true, initializeParams: {sourceImage: 'projects/debian-cloud/global/images/family/debian-12'}}],
        networkInterfaces: [{network: 'global/networks/default'}],
        metadata: {items: [{key: 'startup-script', value: '#!/bin/sh\necho hi\n'}]},
        scheduling: {provisioningModel: 'SPOT', instanceTerminationAction: 'DELETE'},
      },
    },
  });
  const bulkName = opName(bulk);
  ok(typeof bulkName === 'string' && bulkName.startsWith('operation-'), 'regionInstances.bulkInsert: an operation', JSON.stringify(bulk.latestResponse || bulk));
  const done = await waitRegion(regionOps, bulkName);
  ok(!done.error || !done.error.errors || done.error.errors.length === 0, 'regionOperations.wait: DONE without errors', JSON.stringify(done));
  const pls = done.instancesBulkInsertOperationMetadata && done.instancesBulkInsertOperationMetadata.perLocationStatus;
  const created = pls ? Object.values(pls).reduce((s, v) => s + Number(v.createdVmCount || 0), 0) : -1;
  ok(created === 3, `its perLocationStatus: 3 VMs created (${created})`, JSON.stringify(pls));
  const group = done.operationGroupId;
  ok(typeof group === 'string' && group.length > 0, 'its operationGroupId');
  const [again] = await regionInstances.bulkInsert({
    project, region, requestId: '0f3c2b8e-9d7a-4e21-b5f4-7c6a1d2e3f40',
    bulkInsertInstanceResourceResource: {count: 3, minCount: 3, perInstanceProperties,
      instanceProperties: {machineType: 'e2-standard-2'}}});
  ok(opName(again) === bulkName, 'the same requestId again: the same operation (idempotent)');

  // --- listing by label, two a page ---
  const seen = [];
  let vm0;
  for await (const [scope, list] of instances.aggregatedListAsync({project, filter: 'labels.burst-cluster = gcc', maxResults: 2})) {
    for (const i of (list.instances || [])) {
      seen.push(i.name);
      if (!vm0) vm0 = {i, zone: scope.split('/')[1]};
    }
  }
  ok(JSON.stringify(seen.sort()) === JSON.stringify(names), `instances.aggregatedList by label, 2 a page: ${seen.join(' ')}`);
  ok(vm0 && vm0.i.networkInterfaces[0].networkIP && vm0.i.labels['burst-cluster'] === 'gcc',
     'each with its address and labels', JSON.stringify(vm0));
  const [got] = await instances.get({project, zone: vm0.zone, instance: vm0.i.name});
  ok(got.name === vm0.i.name && got.metadata.items.some((it) => it.key === 'startup-script'), 'instances.get: the VM and its metadata');
  ok(got.scheduling.provisioningModel === 'SPOT', 'its scheduling: SPOT');
  const [sm] = await instances.setMetadata({project, zone: vm0.zone, instance: got.name,
    metadataResource: {fingerprint: got.metadata.fingerprint, items: [...got.metadata.items, {key: 'burst-join-token', value: 'x'}]}});
  ok(String(opName(sm)).startsWith('operation-'), 'instances.setMetadata with its fingerprint: an operation');
  await expectError('instances.setMetadata with the old fingerprint',
    () => instances.setMetadata({project, zone: vm0.zone, instance: got.name,
      metadataResource: {fingerprint: got.metadata.fingerprint, items: []}}), 412);

  // --- the group's insert operations ---
  const inserts = [];
  for await (const [, list] of globalOps.aggregatedListAsync({project, filter: `(operationType = insert) (operationGroupId = ${group})`})) {
    for (const o of (list.operations || [])) inserts.push(o);
  }
  ok(inserts.length === 3 && inserts.every((o) => o.operationGroupId === group),
     `globalOperations.aggregatedList of its group: 3 insert operations (${inserts.length})`);

  // --- delete one, wait for it ---
  const [del] = await instances.delete({project, zone: vm0.zone, instance: vm0.i.name, requestId: '5d0e7a7c-2b1e-4d5f-8f7a-0a1b2c3d4e5f'});
  const delName = opName(del);
  const delDone = await waitZone(zoneOps, vm0.zone, delName);
  ok(!delDone.error, 'instances.delete, zoneOperations.wait: DONE');
  const [zop] = await zoneOps.get({project, zone: vm0.zone, operation: delName});
  ok(zop.name === delName && zop.operationType === 'delete', 'zoneOperations.get: the delete operation');
  await expectError('instances.get of a missing VM', () => instances.get({project, zone: vm0.zone, instance: 'nope-1'}), 404);

  // --- capacity: a zonal bulk insert refused ---
  const [z] = await instances.bulkInsert({project, zone: `${region}-c`,
    bulkInsertInstanceResourceResource: {count: 2, minCount: 2, perInstanceProperties: {'gcc-z-1': {name: 'gcc-z-1'}, 'gcc-z-2': {name: 'gcc-z-2'}},
      instanceProperties: {machineType: 'e2-standard-2'}}});
  const zDone = await waitZone(zoneOps, `${region}-c`, opName(z));
  ok(zDone.error && zDone.error.errors[0].code === 'ZONE_RESOURCE_POOL_EXHAUSTED',
     'instances.bulkInsert beyond a zone\'s capacity: DONE with ZONE_RESOURCE_POOL_EXHAUSTED', JSON.stringify(zDone));

  // --- the catalog ---
  const types = [];
  for await (const [, list] of new compute.MachineTypesClient(opts).aggregatedListAsync({project})) {
    for (const t of (list.machineTypes || [])) types.push(t);
  }
  ok(types.length > 0 && types.every((t) => t.guestCpus > 0 && t.memoryMb > 0), `machineTypes.aggregatedList: ${types.length} types`);
  const accs = [];
  for await (const [, list] of new compute.AcceleratorTypesClient(opts).aggregatedListAsync({project})) {
    for (const t of (list.acceleratorTypes || [])) accs.push(t);
  }
  ok(accs.length > 0 && accs.every((t) => t.name && t.description), `acceleratorTypes.aggregatedList: ${accs.length}`);
}

main().catch((e) => ok(false, 'the client ran through', e.stack || e)).finally(() => {
  console.log(`1..${n}`);
  process.exit(failed ? 1 : 0);
});
