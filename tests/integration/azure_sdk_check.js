// azure_sdk_check.js - Microsoft's own Azure SDK for JavaScript against the
// test's fake Azure (tests/integration/azure_fake.py), and the SDK's models
// against every request and answer the fake logged.
//
//   node azure_sdk_check.js drive      (env: AZ_URL AZ_CA via NODE_EXTRA_CA_CERTS, AZ_SUB,
//                                       AZ_TENANT, AZ_CLIENT, AZ_SECRET, AZ_RG,
//                                       AZ_CERT_CLIENT, AZ_DIR)
//       @azure/identity's ClientSecretCredential and ClientCertificateCredential
//       get tokens from the fake's Entra endpoint; @azure/arm-compute's
//       ComputeManagementClient creates a VM and polls it to completion with
//       the SDK's own long-running-operation poller, reads it, lists the
//       resource group page by page, deletes it (polled the same way) and
//       sees it gone; a create the fake fails for capacity fails in the
//       poller with Azure's error code. One line per check: "ok N - what"
//       or "not ok N - what: why" (TAP, no plan).
//   node azure_sdk_check.js validate REQUESTS.jsonl [--only PATH-REGEX]
//       every virtual machine request body (PUT) against the SDK's
//       VirtualMachine model (an unknown property, a wrong type, a
//       read-only property or a missing required one is an error), every
//       VM answer (PUT, GET) against VirtualMachine and every listing
//       against VirtualMachineListResult, every operation status against
//       the shape the SDK's poller reads. Prints one line per problem and
//       "checked N requests, M answers, K problems"; exits 1 when K > 0.
"use strict";
const fs = require("fs");
const path = require("path");

const modules = process.env.AZ_SDK_MODULES;
if (!modules) {
  console.error("azure_sdk_check.js: set AZ_SDK_MODULES to the SDK's node_modules (tools/npm-tool.sh azure-sdk)");
  process.exit(2);
}
const need = (m) => require(path.join(modules, m));
const M = require(path.join(modules, "@azure/arm-compute/dist/commonjs/models/mappers.js"));
const P = require(path.join(modules, "@azure/arm-compute/dist/commonjs/models/parameters.js"));
const API = P.apiVersion.mapper.defaultValue;

// ---------------------------------------------------------------- models
function splitPath(s) {
  // a serializedName: "properties.hardwareProfile" (dots escaped as "\\.")
  return s.split(/(?<!\\)\./).map((x) => x.replace(/\\\./g, "."));
}

function composite(className) {
  const m = M[className];
  if (!m) throw new Error("no mapper " + className);
  return m.type;
}

function check(mapper, v, where, errs, request) {
  if (v === null || v === undefined) return;
  const t = mapper.type;
  const bad = (why) => errs.push(where + ": " + why + " (" + JSON.stringify(v).slice(0, 80) + ")");
  if (mapper.constraints && typeof v === "string" && mapper.constraints.Pattern &&
      !new RegExp(mapper.constraints.Pattern).test(v)) bad("does not match " + mapper.constraints.Pattern);
  switch (t.name) {
    case "String": case "Uuid": case "ByteArray": case "Base64Url":
      if (typeof v !== "string") bad("not a string (" + t.name + ")");
      return;
    case "Number": case "UnixTime":
      if (typeof v !== "number") bad("not a number");
      return;
    case "Boolean":
      if (typeof v !== "boolean") bad("not a boolean");
      return;
    case "DateTime": case "Date": case "DateTimeRfc1123":
      if (typeof v !== "string" || isNaN(Date.parse(v))) bad("not a date");
      return;
    case "Enum":
      if (!t.allowedValues.some((a) => String(a).toLowerCase() === String(v).toLowerCase()))
        bad("not one of " + t.allowedValues.join("|"));
      return;
    case "Sequence":
      if (!Array.isArray(v)) return bad("not an array");
      v.forEach((e, i) => check(t.element, e, where + "[" + i + "]", errs, request));
      return;
    case "Dictionary":
      if (typeof v !== "object" || Array.isArray(v)) return bad("not an object");
      for (const k of Object.keys(v)) check(t.value, v[k], where + "." + k, errs, request);
      return;
    case "Object":
      return;
    case "Composite": {
      if (typeof v !== "object" || Array.isArray(v)) return bad("not an object");
      const ct = t.modelProperties ? t : composite(t.className);
      const props = Object.entries(ct.modelProperties).map(([name, pm]) =>
        ({ name, seg: splitPath(pm.serializedName || name), m: pm }));
      walk(props, v, where, errs, request, !!ct.additionalProperties);
      return;
    }
    default:
      bad("the checker does not know type " + t.name);
  }
}

function walk(props, obj, where, errs, request, additional) {
  for (const k of Object.keys(obj)) {
    const mine = props.filter((p) => p.seg[0] === k);
    if (!mine.length) {
      if (!additional) errs.push(where + "." + k + ": not a property of the SDK's model");
      continue;
    }
    const leaf = mine.find((p) => p.seg.length === 1);
    if (leaf) {
      if (request && leaf.m.readOnly) errs.push(where + "." + k + ": read-only, must not be sent");
      check(leaf.m, obj[k], where + "." + k, errs, request);
      continue;
    }
    const o = obj[k];
    if (o === null || typeof o !== "object" || Array.isArray(o)) {
      errs.push(where + "." + k + ": not an object");
      continue;
    }
    walk(mine.map((p) => ({ name: p.name, seg: p.seg.slice(1), m: p.m })), o, where + "." + k, errs, request, false);
  }
  if (request)
    for (const p of props)
      if (p.m.required && !p.m.readOnly && !p.m.isConstant) {
        let o = obj;
        for (const s of p.seg) o = o && typeof o === "object" ? o[s] : undefined;
        if (o === undefined) errs.push(where + "." + p.seg.join(".") + ": required by the SDK's model, missing");
      }
}

function validate(file, only) {
  const lines = fs.readFileSync(file, "utf8").split("\n").filter(Boolean);
  const vmPath = /\/providers\/Microsoft\.Compute\/virtualMachines\/[^/]+$/i;
  const listPath = /\/providers\/Microsoft\.Compute\/virtualMachines$/i;
  const opPath = /\/providers\/Microsoft\.Compute\/locations\/[^/]+\/operations\/[^/]+$/i;
  let nreq = 0, nans = 0;
  const problems = [];
  lines.forEach((l, i) => {
    const r = JSON.parse(l);
    if (r.imds || (only && !new RegExp(only).test(r.path))) return;
    const at = "line " + (i + 1) + " " + r.method + " " + r.path;
    const errs = [];
    if (/\/subscriptions\//.test(r.path) && r.query["api-version"] !== API &&
        !/Microsoft\.Network|Compute\/skus/i.test(r.path))
      errs.push("api-version " + r.query["api-version"] + " is not the SDK's " + API);
    if (vmPath.test(r.path) && r.method === "PUT") {
      nreq++;
      check(M.VirtualMachine, r.body, "request", errs, true);
    }
    if (r.status >= 200 && r.status < 300 && r.answer) {
      if (vmPath.test(r.path) && (r.method === "PUT" || r.method === "GET")) {
        nans++;
        check(M.VirtualMachine, r.answer, "answer", errs, false);
      } else if (listPath.test(r.path) && r.method === "GET") {
        nans++;
        check(M.VirtualMachineListResult, r.answer, "answer", errs, false);
      } else if (opPath.test(r.path)) {
        nans++;
        const s = r.answer.status;
        if (!["InProgress", "Succeeded", "Failed", "Canceled"].includes(s))
          errs.push("answer.status: " + s + " is not a status the SDK's poller knows");
        if (s === "Failed" && !(r.answer.error && r.answer.error.code))
          errs.push("answer: a Failed operation without error.code");
      }
    }
    if (r.status >= 400 && r.answer && !(r.answer.error && (r.answer.error.code || typeof r.answer.error === "string")))
      errs.push("an error answer without error.code");
    for (const e of errs) problems.push(at + ": " + e);
  });
  for (const p of problems) console.log(p);
  console.log("checked " + nreq + " requests, " + nans + " answers, " + problems.length + " problems");
  process.exit(problems.length ? 1 : 0);
}

// ---------------------------------------------------------------- drive
let n = 0;
function ok(cond, what, why) {
  n++;
  console.log((cond ? "ok " : "not ok ") + n + " - " + what + (cond || !why ? "" : ": " + why));
}

function vmBody(name, size, zone) {
  return {
    location: "eastus",
    zones: zone ? [zone] : undefined,
    tags: { "burst-cluster": "sdk", "burst-node": name },
    hardwareProfile: { vmSize: size },
    storageProfile: {
      imageReference: { publisher: "Canonical", offer: "ubuntu-24_04-lts", sku: "server", version: "latest" },
      osDisk: { createOption: "FromImage", deleteOption: "Delete", managedDisk: { storageAccountType: "Standard_LRS" } },
    },
    osProfile: {
      computerName: name, adminUsername: "burst", customData: Buffer.from("#!/bin/sh\necho hi\n").toString("base64"),
      linuxConfiguration: { disablePasswordAuthentication: true,
        ssh: { publicKeys: [{ path: "/home/burst/.ssh/authorized_keys", keyData: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBURSTtest sdk" }] } },
    },
    networkProfile: {
      networkApiVersion: "2020-11-01",
      networkInterfaceConfigurations: [{ name: name + "-nic", primary: true, deleteOption: "Delete",
        ipConfigurations: [{ name: "ipconfig1", primary: true,
          subnet: { id: "/subscriptions/" + process.env.AZ_SUB + "/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/v/subnets/s" } }] }],
    },
  };
}

async function drive() {
  const { ClientSecretCredential, ClientCertificateCredential } = need("@azure/identity");
  const { ComputeManagementClient } = need("@azure/arm-compute");
  const e = process.env;
  const idopts = { authorityHost: e.AZ_URL, disableInstanceDiscovery: true };
  const scope = "https://management.azure.com/.default";
  const cred = new ClientSecretCredential(e.AZ_TENANT, e.AZ_CLIENT, e.AZ_SECRET, idopts);
  let tok = null;
  try { tok = await cred.getToken(scope); } catch (err) { tok = err; }
  ok(tok && tok.token && tok.expiresOnTimestamp > Date.now(), "ClientSecretCredential gets a token from the fake's Entra endpoint", tok && tok.message);
  const certCred = new ClientCertificateCredential(e.AZ_TENANT, e.AZ_CERT_CLIENT, { certificatePath: path.join(e.AZ_DIR, "client.pem") }, idopts);
  let ctok = null;
  try { ctok = await certCred.getToken(scope); } catch (err) { ctok = err; }
  ok(ctok && ctok.token, "ClientCertificateCredential: the fake verifies the SDK's signed assertion", ctok && ctok.message);
  const badCred = new ClientSecretCredential(e.AZ_TENANT, e.AZ_CLIENT, "not-the-secret", idopts);
  let berr = null;
  try { await badCred.getToken(scope); } catch (err) { berr = err; }
  ok(berr && /AADSTS7000215/.test(berr.message), "a wrong secret: the SDK reports Entra's AADSTS7000215", berr ? berr.message.slice(0, 200) : "no error");

  const client = new ComputeManagementClient(cred, e.AZ_SUB, { endpoint: e.AZ_URL, credentialScopes: [scope] });
  client.pipeline.removePolicy({ name: "exponentialRetryPolicy" });
  const rg = e.AZ_RG;
  let vm = null, err = null;
  try {
    vm = await client.virtualMachines.beginCreateOrUpdateAndWait(rg, "sdk-vm-1", vmBody("sdk-vm-1", "Standard_D2s_v5", "1"),
      { updateIntervalInMs: 100 });
  } catch (x) { err = x; }
  ok(vm && vm.provisioningState === "Succeeded", "create: the SDK's poller follows Azure-AsyncOperation to Succeeded",
    err ? err.message : vm && vm.provisioningState);
  ok(vm && vm.hardwareProfile && vm.hardwareProfile.vmSize === "Standard_D2s_v5" && vm.zones && vm.zones[0] === "1" &&
    vm.tags["burst-node"] === "sdk-vm-1" && vm.networkProfile.networkInterfaces.length === 1,
    "the created VM as the SDK reads it: size, zone, tags, its network interface", JSON.stringify(vm && vm.networkProfile));
  let again = null;
  try {
    again = await client.virtualMachines.beginCreateOrUpdateAndWait(rg, "sdk-vm-1", vmBody("sdk-vm-1", "Standard_D2s_v5", "1"),
      { updateIntervalInMs: 100 });
  } catch (x) { again = x; }
  ok(again && again.vmId === (vm && vm.vmId), "the same PUT again: the same VM (by name, idempotent)", again && again.message);
  const got = await client.virtualMachines.get(rg, "sdk-vm-1", { expand: "instanceView" });
  ok(got.instanceView && got.instanceView.statuses.some((s) => s.code === "PowerState/running"),
    "get with instanceView: PowerState/running", JSON.stringify(got.instanceView));
  for (let i = 2; i <= 4; i++)
    await client.virtualMachines.beginCreateOrUpdateAndWait(rg, "sdk-vm-" + i, vmBody("sdk-vm-" + i, "Standard_D2s_v5", ""),
      { updateIntervalInMs: 100 });
  const names = [];
  for await (const v of client.virtualMachines.list(rg)) names.push(v.name);
  ok(names.filter((x) => /^sdk-vm-/.test(x)).length === 4, "list: the SDK follows nextLink over the pages (" + names.length + " VMs)",
    names.join(" "));
  let cap = null;
  try {
    await client.virtualMachines.beginCreateOrUpdateAndWait(rg, "sdk-cap-1", vmBody("sdk-cap-1", "Standard_ND96isr_H100_v5", "2"),
      { updateIntervalInMs: 100 });
  } catch (x) { cap = x; }
  ok(cap && /ZonalAllocationFailed/.test(cap.message), "a capacity fault: the poller fails with ZonalAllocationFailed",
    cap ? cap.code + " " + cap.message : "no error");
  let quota = null;
  try {
    await client.virtualMachines.beginCreateOrUpdateAndWait(rg, "sdk-quota-1", vmBody("sdk-quota-1", "Standard_HB176rs_v4", ""),
      { updateIntervalInMs: 100 });
  } catch (x) { quota = x; }
  ok(quota && quota.statusCode === 409 && quota.code === "OperationNotAllowed", "a quota fault: 409 OperationNotAllowed",
    quota ? quota.statusCode + " " + quota.code : "no error");
  let del = null;
  try {
    await client.virtualMachines.beginDeleteAndWait(rg, "sdk-vm-1", { updateIntervalInMs: 100 });
    await client.virtualMachines.beginDeleteAndWait(rg, "sdk-cap-1", { updateIntervalInMs: 100 });
  } catch (x) { del = x; }
  ok(!del, "delete: the poller follows the delete to Succeeded", del && del.message);
  let gone = null;
  try { await client.virtualMachines.get(rg, "sdk-vm-1"); } catch (x) { gone = x; }
  ok(gone && gone.statusCode === 404 && gone.code === "ResourceNotFound", "... then get: 404 ResourceNotFound",
    gone ? gone.statusCode + " " + gone.code : "still there");
  for (let i = 2; i <= 4; i++) await client.virtualMachines.beginDeleteAndWait(rg, "sdk-vm-" + i, { updateIntervalInMs: 100 });
  console.log("# sdk checks " + n);
}

if (process.argv[2] === "validate") {
  const i = process.argv.indexOf("--only");
  validate(process.argv[3], i > 0 ? process.argv[i + 1] : null);
} else if (process.argv[2] === "drive") {
  drive().catch((x) => { console.log("not ok " + (n + 1) + " - the drive stopped: " + (x && x.stack)); process.exit(1); });
} else {
  console.error("usage: azure_sdk_check.js drive | validate REQUESTS.jsonl [--only REGEX]");
  process.exit(2);
}
