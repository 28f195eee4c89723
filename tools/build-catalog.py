#!/usr/bin/env python3
"""build-catalog.py - make share/catalog from the public source data.

Reads PlatformAware.jl's machine-type CSVs (MIT) and the on-demand/spot
price tables of karpenter-provider-aws and karpenter-provider-gcp
(Apache-2.0) from ../shared/data, converts them to slurm-burst's canonical
catalog format, FIXES the source's known errors, ADDS instance types the
source lacks (each fact with its public source, listed in
share/catalog/SOURCES.md), and writes:

    aws.csv, gcp.csv                 instance types
    aws-prices.csv, gcp-prices.csv   prices per region

The output is deterministic: the same input gives the same bytes.
--check regenerates into a temporary directory and compares.
"""

import argparse
import csv
import filecmp
import os
import shutil
import sys
import tempfile

VERSION = "2026.11.22"

HEADER = ("instance_type,vcpus,memory_mib,accelerator_count,accelerator,accelerator_type,"
          "accelerator_manufacturer,accelerator_architecture,accelerator_memory_mib,processor,"
          "processor_manufacturer,processor_microarchitecture,processor_isa,storage_type,"
          "storage_gib,network_gbps,source").split(",")

GIB = 1024  # MiB

# --- accelerators: the source's name -> canonical model and facts ----------
# (model, type, manufacturer, architecture, memory per device in MiB or None)
# Memory and architecture from NVIDIA's product datasheets (A10G: the AWS G5
# page, 24 GB per GPU) and the AWS/GCP instance pages.
ACCEL = {
    "NVIDIA A10G": ("A10G", "GPU", "NVIDIA", "ampere", 24 * GIB),
    "NVIDIA L4": ("L4", "GPU", "NVIDIA", "ada", 24 * GIB),
    "NVIDIA_L4": ("L4", "GPU", "NVIDIA", "ada", 24 * GIB),
    "NVIDIA Tesla T4": ("T4", "GPU", "NVIDIA", "turing", 16 * GIB),
    "NVIDIA Tesla T4G": ("T4G", "GPU", "NVIDIA", "turing", 16 * GIB),
    "NVIDIA Tesla K80": ("K80", "GPU", "NVIDIA", "kepler", 12 * GIB),
    "NVIDIA Tesla M60": ("M60", "GPU", "NVIDIA", "maxwell", 8 * GIB),
    "NVIDIA GRID K520": ("K520", "GPU", "NVIDIA", "kepler", 4 * GIB),
    "AMD Radeon Pro V520": ("Radeon-Pro-V520", "GPU", "AMD", "rdna", 8 * GIB),
    "Xilinx Virtex UltraScale+ VU9P": ("VU9P", "FPGA", "Xilinx", "ultrascale+", 64 * GIB),
}
A100_40 = ("A100-40GB", "GPU", "NVIDIA", "ampere", 40 * GIB)
A100_80 = ("A100-80GB", "GPU", "NVIDIA", "ampere", 80 * GIB)
V100_16 = ("V100-16GB", "GPU", "NVIDIA", "volta", 16 * GIB)
V100_32 = ("V100-32GB", "GPU", "NVIDIA", "volta", 32 * GIB)
H100 = ("H100", "GPU", "NVIDIA", "hopper", 80 * GIB)
H200 = ("H200", "GPU", "NVIDIA", "hopper", 141 * GIB)
L40S = ("L40S", "GPU", "NVIDIA", "ada", 48 * GIB)
INFERENTIA = ("Inferentia", "ASIC", "AWS", "inferentia", 8 * GIB)
GAUDI = ("Gaudi-HL205", "ASIC", "Intel", "gaudi", 32 * GIB)
ALVEO_U30 = ("Alveo-U30", "FPGA", "Xilinx", "ultrascale+", None)

# The source names every A100 "NVIDIA A100" (and PlatformAware maps that to
# an A10 with 24 GB); which A100 it is depends on the instance.
def a100_for(name):
    if name.startswith("p4de.") or name.startswith("a2-ultragpu-"):
        return A100_80
    return A100_40  # p4d.24xlarge, a2-highgpu-*, a2-megagpu-16g


def v100_for(name):
    return V100_32 if name.startswith("p3dn.") else V100_16


# Instances whose accelerators the source records as none:
# name -> (count, accelerator)
ACCEL_MISSING = {
    "inf1.xlarge": (1, INFERENTIA), "inf1.2xlarge": (1, INFERENTIA),
    "inf1.6xlarge": (4, INFERENTIA), "inf1.24xlarge": (16, INFERENTIA),
    "dl1.24xlarge": (8, GAUDI),
    "vt1.3xlarge": (1, ALVEO_U30), "vt1.6xlarge": (2, ALVEO_U30), "vt1.24xlarge": (8, ALVEO_U30),
}

# Other corrections of single fields: name -> {column: value}
FIELD_FIXES = {
    # EFA bandwidth: p4d.24xlarge and hpc6a.48xlarge have 400 and 100 Gbps
    "p4d.24xlarge": {"network_gbps": "400"},
    "hpc6a.48xlarge": {"network_gbps": "100"},
    # GCP shared-core f1-micro: 0.6 GB of memory (the source says 614.5G)
    "f1-micro": {"memory_mib": "614"},
}

# --- processors: the source's name -> (display, manufacturer, uarch, isa) ---
PROC = {
    "AWS Graviton1": ("AWS Graviton1", "AWS", "cortex-a72", "aarch64"),
    "AWS Graviton2": ("AWS Graviton2", "AWS", "neoverse-n1", "aarch64"),
    "AWS Graviton3": ("AWS Graviton3", "AWS", "neoverse-v1", "aarch64"),
    "Intel Xeon 8375C": ("Intel Xeon Platinum 8375C", "Intel", "icelake", "x86_64"),
    "Intel Xeon Platinum 8259": ("Intel Xeon Platinum 8259CL", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon Platinum 8259CL": ("Intel Xeon Platinum 8259CL", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon Platinum 8175": ("Intel Xeon Platinum 8175M", "Intel", "skylake", "x86_64"),
    "Intel Xeon Platinum 8124M": ("Intel Xeon Platinum 8124M", "Intel", "skylake", "x86_64"),
    "Intel Xeon Platinum 8151": ("Intel Xeon Platinum 8151", "Intel", "skylake", "x86_64"),
    "Intel Xeon Platinum 8252": ("Intel Xeon Platinum 8252C", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon Platinum 8275L": ("Intel Xeon Platinum 8275L", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon Platinum 8275CL": ("Intel Xeon Platinum 8275CL", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon Platinum 8280L": ("Intel Xeon Platinum 8280L", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon Scalable (Sapphire Rapids)": ("Intel Xeon Scalable (Sapphire Rapids)", "Intel", "sapphirerapids", "x86_64"),
    "Intel Xeon Scalable": ("Intel Xeon Scalable", "Intel", "", "x86_64"),
    "Intel Xeon Family": ("Intel Xeon", "Intel", "", "x86_64"),
    "Intel Xeon E5-2686 v4": ("Intel Xeon E5-2686 v4", "Intel", "broadwell", "x86_64"),
    "Intel Xeon E5 2686 v5": ("Intel Xeon E5-2686", "Intel", "", "x86_64"),
    "Intel Xeon E5-2676 v3": ("Intel Xeon E5-2676 v3", "Intel", "haswell", "x86_64"),
    "Intel Xeon E5-2666 v3": ("Intel Xeon E5-2666 v3", "Intel", "haswell", "x86_64"),
    "Intel Xeon E7-8880 v3": ("Intel Xeon E7-8880 v3", "Intel", "haswell", "x86_64"),
    "Intel Xeon E5-2670 v2": ("Intel Xeon E5-2670 v2", "Intel", "ivybridge", "x86_64"),
    "Intel Xeon E5-2680 v2": ("Intel Xeon E5-2680 v2", "Intel", "ivybridge", "x86_64"),
    "Intel Xeon E5-2670": ("Intel Xeon E5-2670", "Intel", "sandybridge", "x86_64"),
    "Intel Xeon E5-2650": ("Intel Xeon E5-2650", "Intel", "sandybridge", "x86_64"),
    "Intel Core i7-8700B": ("Intel Core i7-8700B", "Intel", "coffeelake", "x86_64"),
    "Apple M1": ("Apple M1", "Apple", "", "aarch64"),
    "AMD EPYC 7571": ("AMD EPYC 7571", "AMD", "zen", "x86_64"),
    "AMD EPYC 7R32": ("AMD EPYC 7R32", "AMD", "zen2", "x86_64"),
    "AMD EPYC 7R13": ("AMD EPYC 7R13", "AMD", "zen3", "x86_64"),
    "AMD EPYC 9R14": ("AMD EPYC 9R14", "AMD", "zen4", "x86_64"),
    # GCP
    "AMD EPYC 7B13": ("AMD EPYC 7B13", "AMD", "zen3", "x86_64"),
    "Intel Xeon Scalable 4th Gen": ("Intel Xeon Scalable 4th Gen (Sapphire Rapids)", "Intel", "sapphirerapids", "x86_64"),
    "Intel Xeon 8373C": ("Intel Xeon Platinum 8373C", "Intel", "icelake", "x86_64"),
    "Intel Xeon 8280L": ("Intel Xeon Platinum 8280L", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon 8273CL": ("Intel Xeon Platinum 8273CL", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon 6253CL": ("Intel Xeon Gold 6253CL", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon 8173M": ("Intel Xeon Platinum 8173M", "Intel", "skylake", "x86_64"),
    "Intel Xeon E7 8880 v4": ("Intel Xeon E7-8880 v4", "Intel", "broadwell", "x86_64"),
    "Ampere Altra Q6430": ("Ampere Altra Q64-30", "Ampere", "neoverse-n1", "aarch64"),
}

STORAGE = {
    "StorageType_EC2_EBSOnly": "ebs",
    "StorageType_EC2_NVMeSSD": "nvme-ssd",
    "StorageType_SSD": "ssd",
    "StorageType_HDD": "hdd",
}

SENTINELS = {"", "na", "unset", "unknown"}

# --- instance types the source lacks -------------------------------------
# (name, vcpus, memory GiB, accelerator count, accelerator, processor key,
#  network Gbit/s or None, source of the facts)
AWS_PAGE = "AWS EC2 accelerated computing instance specifications (docs.aws.amazon.com/ec2/latest/instancetypes/ac.html)"
G6E_PAGE = "AWS EC2 G6e instances page (aws.amazon.com/ec2/instance-types/g6e/)"
P5_PAGE = "AWS EC2 P5 instances page (aws.amazon.com/ec2/instance-types/p5/)"
A3_PAGE = "Google Cloud GPU machine types, A3 series (cloud.google.com/compute/docs/gpus#a3-series)"

ADDED_AWS = [
    ("p5.4xlarge", 16, 256, 1, H100, "AMD EPYC 7R13", 100, P5_PAGE),
    ("p5.48xlarge", 192, 2048, 8, H100, "AMD EPYC 7R13", 3200, P5_PAGE),
    ("p5e.48xlarge", 192, 2048, 8, H200, "AMD EPYC 7R13", 3200, P5_PAGE),
    ("p5en.48xlarge", 192, 2048, 8, H200, "Intel Xeon Platinum 8488C", 3200, P5_PAGE),
    ("g6e.xlarge", 4, 32, 1, L40S, "AMD EPYC 7R13", 20, G6E_PAGE),
    ("g6e.2xlarge", 8, 64, 1, L40S, "AMD EPYC 7R13", 20, G6E_PAGE),
    ("g6e.4xlarge", 16, 128, 1, L40S, "AMD EPYC 7R13", 20, G6E_PAGE),
    ("g6e.8xlarge", 32, 256, 1, L40S, "AMD EPYC 7R13", 25, G6E_PAGE),
    ("g6e.12xlarge", 48, 384, 4, L40S, "AMD EPYC 7R13", 100, G6E_PAGE),
    ("g6e.16xlarge", 64, 512, 1, L40S, "AMD EPYC 7R13", 35, G6E_PAGE),
    ("g6e.24xlarge", 96, 768, 4, L40S, "AMD EPYC 7R13", 200, G6E_PAGE),
    ("g6e.48xlarge", 192, 1536, 8, L40S, "AMD EPYC 7R13", 400, G6E_PAGE),
]
ADDED_GCP = [
    # GCP lists memory in GB that are GiB (the API's memoryMb is GB x 1024)
    ("a3-highgpu-1g", 26, 234, 1, H100, "Intel Xeon Scalable 4th Gen", None, A3_PAGE),
    ("a3-highgpu-2g", 52, 468, 2, H100, "Intel Xeon Scalable 4th Gen", None, A3_PAGE),
    ("a3-highgpu-4g", 104, 936, 4, H100, "Intel Xeon Scalable 4th Gen", None, A3_PAGE),
    ("a3-highgpu-8g", 208, 1872, 8, H100, "Intel Xeon Scalable 4th Gen", None, A3_PAGE),
    ("a3-megagpu-8g", 208, 1872, 8, H100, "Intel Xeon Scalable 4th Gen", None, A3_PAGE),
]
PROC["Intel Xeon Platinum 8488C"] = ("Intel Xeon Platinum 8488C", "Intel", "sapphirerapids", "x86_64")


def warn(msg):
    print("build-catalog: " + msg, file=sys.stderr)


def mib(size):
    """PlatformAware memory '16.0G', '30.5G', '512M' -> MiB (binary units)."""
    s = size.strip()
    mult = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}[s[-1]]
    # a few old types have memory like 1.7G (1740.8 MiB): round to the MiB
    return int(round(float(s[:-1]) * mult))


def gib(size):
    """Storage '3800G', '4T', '1.5T' -> GiB, or '' when unknown."""
    s = size.strip()
    if s in SENTINELS:
        return ""
    mult = {"G": 1, "T": 1024}[s[-1]]
    v = float(s[:-1]) * mult
    return str(int(round(v)))


def gbps(net):
    """Network '25G', '<10G' (up to 10), '<250M' -> Gbit/s as text, '' if unknown."""
    s = net.strip()
    if s in SENTINELS:
        return ""
    if s.startswith("<"):
        s = s[1:]
    mult = {"M": 0.001, "G": 1.0}[s[-1]]
    v = float(s[:-1]) * mult
    return ("%.3f" % v).rstrip("0").rstrip(".")


def vcpus(text, name, fixes_log, provider):
    """'8' -> '8'; GCP shared-core '256m'/'512m' (a fraction of a core) -> '1':
    the VM sees one vCPU, time-shared."""
    t = text.strip()
    if t.endswith("m"):
        fixes_log.add("%s: %s is shared-core (%s of a CPU): 1 vCPU" % (provider, name, t))
        return "1"
    return str(int(t))


def accel_row(count, acc):
    if count == 0 or acc is None:
        return ["0", "", "", "", "", ""]
    model, typ, manuf, arch, mem = acc
    return [str(count), model, typ, manuf, arch, "" if mem is None else str(mem)]


def proc_row(key, name, provider):
    if key in SENTINELS:
        # GCP families without a named processor: all x86_64 but t2a and c4a
        isa = "aarch64" if name.startswith(("t2a-", "c4a-")) else "x86_64"
        return ["", "", "", isa if provider == "gcp" else ""]
    if key not in PROC:
        raise KeyError("processor %r of %s has no entry in PROC" % (key, name))
    return list(PROC[key])


def read_source(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return rows


def convert(rows, provider, fixes_log):
    out = {}
    for r in rows:
        name = r["api_name"].strip()
        if not name:
            continue
        acc_name = r["accelerator"].strip()
        if r["accelerator_count"].strip() == "unknown" and name.startswith("n1-"):
            # N1 machine types have no built-in accelerator: GPUs are attached
            # to them separately, which this catalog does not model
            fixes_log.add("gcp: n1-* machine types have no built-in accelerator (the source: unknown)")
            r = dict(r, accelerator_count="0", accelerator="na")
            acc_name = "na"
        count = int(r["accelerator_count"])
        source = "platformaware"
        if count == 0 or acc_name in SENTINELS:
            acc = None
            count = 0
        elif acc_name in ("NVIDIA A100", "NVIDIA_A100"):
            acc = a100_for(name)
            source = "platformaware+fix"
            fixes_log.add("%s: %s is %s (%d MiB), not an A10" % (provider, name, acc[0], acc[4]))
        elif acc_name == "NVIDIA Tesla V100":
            acc = v100_for(name)
            if acc is V100_32:
                source = "platformaware+fix"
                fixes_log.add("%s: %s has V100-32GB" % (provider, name))
        elif acc_name in ACCEL:
            acc = ACCEL[acc_name]
        else:
            raise KeyError("accelerator %r of %s has no entry in ACCEL" % (acc_name, name))
        if acc is not None and acc[0] == "A10G":
            source = "platformaware+fix"
            fixes_log.add("%s: A10G rows carry 24 GiB per GPU" % provider)
        if name in ACCEL_MISSING:
            count, acc = ACCEL_MISSING[name]
            source = "platformaware+fix"
            fixes_log.add("%s: %s has %d x %s (the source: none)" % (provider, name, count, acc[0]))
        if name == "g6.12xlarge":
            source = "platformaware+fix"
            fixes_log.add("aws: g6.12xlarge is typed EC2Type_G5_12xLarge in the source; it is a g6 (4 x L4)")
        st = r["storage_type"].strip()
        size = gib(r["storage_size"])
        stype = STORAGE.get(st, "")
        if not stype and size:
            stype = "ssd"
        row = {
            "instance_type": name,
            "vcpus": vcpus(r["node_vcpus_count"], name, fixes_log, provider),
            "memory_mib": str(mib(r["node_memory_size"])),
            "storage_type": stype,
            "storage_gib": size,
            "network_gbps": gbps(r["network_performance"]),
            "source": source,
        }
        a = accel_row(count, acc)
        for k, v in zip(HEADER[3:9], a):
            row[k] = v
        p = proc_row(r["processor"].strip(), name, provider)
        for k, v in zip(HEADER[9:13], p):
            row[k] = v
        if name in FIELD_FIXES:
            for k, v in FIELD_FIXES[name].items():
                fixes_log.add("%s: %s %s is %s (the source: %s)" % (provider, name, k, v, row[k]))
                row[k] = v
            row["source"] = "platformaware+fix"
        if name in out:
            if out[name] != row:
                warn("%s: %s is listed twice with different values; keeping the first" % (provider, name))
            continue
        out[name] = row
    return out


def add(out, added, provider, additions_log):
    for name, vcpus, mem_gib, count, acc, proc, net, src in added:
        if name in out:
            raise ValueError("%s is already in the %s source; do not add it" % (name, provider))
        row = {"instance_type": name, "vcpus": str(vcpus), "memory_mib": str(mem_gib * GIB),
               "storage_type": "", "storage_gib": "", "network_gbps": "" if net is None else str(net),
               "source": "added"}
        for k, v in zip(HEADER[3:9], accel_row(count, acc)):
            row[k] = v
        for k, v in zip(HEADER[9:13], proc_row(proc, name, provider)):
            row[k] = v
        out[name] = row
        additions_log.append("%s: %s (%d vCPU, %d GiB, %d x %s): %s" % (provider, name, vcpus, mem_gib, count, acc[0], src))


def write_types(path, provider, rows, sources):
    with open(path, "w", newline="") as f:
        f.write("# slurm-burst instance catalog, provider %s\n" % provider)
        f.write("# version=%s\n" % VERSION)
        f.write("# made by tools/build-catalog.py from %s; see SOURCES.md\n" % sources)
        f.write(",".join(HEADER) + "\n")
        for name in sorted(rows):
            vals = [rows[name][k] for k in HEADER]
            for v in vals:
                if "," in v or "\n" in v:
                    raise ValueError("a cell of %s holds a comma or newline: %r" % (name, v))
            f.write(",".join(vals) + "\n")


def write_prices(path, rows, source):
    with open(path, "w", newline="") as f:
        f.write("# version=%s\n" % VERSION)
        f.write("# made by tools/build-catalog.py from %s; see SOURCES.md\n" % source)
        f.write("instance_type,region,ondemand_usd_per_hour,spot_usd_per_hour\n")
        for r in sorted(rows):
            f.write(",".join(r) + "\n")


def num(s):
    """A price as written upstream, without trailing zeros ('5.672000' -> '5.672')."""
    s = s.strip()
    if not s:
        return ""
    float(s)  # must be a number
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def build(data, out_dir, quiet=False):
    cat = os.path.join(data, "catalog", "platformaware")
    prices = os.path.join(data, "prices")
    fixes, additions = set(), []

    aws = convert(read_source(os.path.join(cat, "db-machinetypes.ec2.csv")), "aws", fixes)
    add(aws, ADDED_AWS, "aws", additions)
    gcp = convert(read_source(os.path.join(cat, "db-machinetypes.gcp.csv")), "gcp", fixes)
    add(gcp, ADDED_GCP, "gcp", additions)

    os.makedirs(out_dir, exist_ok=True)
    write_types(os.path.join(out_dir, "aws.csv"), "aws", aws,
                "PlatformAware.jl db-machinetypes.ec2.csv (MIT)")
    write_types(os.path.join(out_dir, "gcp.csv"), "gcp", gcp,
                "PlatformAware.jl db-machinetypes.gcp.csv (MIT)")

    aws_prices, missing = [], 0
    with open(os.path.join(prices, "aws_us-east-1_linux_ondemand.karpenter.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["instance_type"] in aws:
                aws_prices.append((r["instance_type"], "us-east-1", num(r["usd_per_hour"]), ""))
            else:
                missing += 1
    write_prices(os.path.join(out_dir, "aws-prices.csv"), aws_prices,
                 "karpenter-provider-aws us-east-1 on-demand prices (Apache-2.0)")
    gcp_prices, gmissing = [], 0
    with open(os.path.join(prices, "gce_us-central1_ondemand_spot.karpenter-provider-gcp.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["machine_type"] in gcp:
                gcp_prices.append((r["machine_type"], "us-central1", num(r["usd_per_hour_on_demand"]),
                                   num(r["usd_per_hour_spot"])))
            else:
                gmissing += 1
    write_prices(os.path.join(out_dir, "gcp-prices.csv"), gcp_prices,
                 "karpenter-provider-gcp us-central1 on-demand and spot prices (Apache-2.0)")
    if not quiet:
        priced_aws = {p[0] for p in aws_prices}
        priced_gcp = {p[0] for p in gcp_prices}
        warn("aws: %d types, %d priced, %d without a price; %d priced types not in the catalog"
             % (len(aws), len(priced_aws), len(aws) - len(priced_aws), missing))
        warn("gcp: %d types, %d priced, %d without a price; %d priced types not in the catalog"
             % (len(gcp), len(priced_gcp), len(gcp) - len(priced_gcp), gmissing))
        for line in sorted(fixes):
            warn("fixed: " + line)
        for line in additions:
            warn("added: " + line)
    return fixes, additions


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(top, "..", "shared", "data"),
                    help="the source data (default: ../shared/data beside the checkout)")
    ap.add_argument("--out", default=os.path.join(top, "share", "catalog"),
                    help="where to write (default: share/catalog)")
    ap.add_argument("--check", action="store_true",
                    help="regenerate into a temporary directory and compare with --out")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.data, "catalog")):
        print("build-catalog: no source data in %s (give --data DIR)" % a.data, file=sys.stderr)
        return 2
    if not a.check:
        build(a.data, a.out)
        return 0
    tmp = tempfile.mkdtemp(prefix="build-catalog.")
    try:
        build(a.data, tmp, quiet=True)
        bad = []
        for name in ("aws.csv", "gcp.csv", "aws-prices.csv", "gcp-prices.csv"):
            mine, theirs = os.path.join(tmp, name), os.path.join(a.out, name)
            if not os.path.exists(theirs) or not filecmp.cmp(mine, theirs, shallow=False):
                bad.append(name)
        if bad:
            print("build-catalog: %s in %s differ from what the script makes; run tools/build-catalog.py and commit"
                  % (", ".join(bad), a.out), file=sys.stderr)
            return 1
        print("build-catalog: %s is what the script makes from %s" % (a.out, a.data))
        return 0
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
