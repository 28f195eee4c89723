#!/usr/bin/env python3
"""build-catalog.py - make share/catalog from the public source data.

Reads PlatformAware.jl's machine-type CSVs (MIT) and the price tables taken
from karpenter-provider-aws and karpenter-provider-gcp (Apache-2.0) in
share/catalog-src (see its SOURCES.md), converts them to slurm-burst's canonical catalog format,
FIXES the source's known errors, ADDS instance types the source lacks (each
fact with a named public source), and writes into share/catalog:

    aws.csv, gcp.csv                 instance types
    aws-prices.csv, gcp-prices.csv   prices per region
    SOURCES.md                       provenance, every correction and addition
    LICENSE-MIT-PlatformAware        the license of the instance data
    LICENSE-Apache-2.0               the license of the price data
    NOTICE-karpenter-provider-aws    the NOTICE the Apache-2.0 data requires

The output is deterministic: the same input gives the same bytes (no clock,
no hash order; VERSION below is a constant).  --check regenerates into a
temporary directory and compares; it exits 1 and prints a diff summary when
the files in --out differ.

Python 3 standard library only (runs with Debian 12's /usr/bin/python3).
"""

import argparse
import csv
import difflib
import hashlib
import math
import re
import os
import shutil
import sys
import tempfile

VERSION = "2026.11.22"

HEADER = ("instance_type,vcpus,memory_mib,accelerator_count,accelerator,accelerator_type,"
          "accelerator_manufacturer,accelerator_architecture,accelerator_memory_mib,processor,"
          "processor_manufacturer,processor_microarchitecture,processor_isa,storage_type,"
          "storage_gib,network_gbps,source").split(",")
ACC_COLS = HEADER[3:9]    # accelerator_count .. accelerator_memory_mib
PROC_COLS = HEADER[9:13]  # processor .. processor_isa
PRICE_HEADER = "instance_type,region,ondemand_usd_per_hour,spot_usd_per_hour"

OUTPUT_FILES = ("aws.csv", "gcp.csv", "azure.csv", "aws-prices.csv", "gcp-prices.csv", "azure-prices.csv",
                "SOURCES.md", "LICENSE-MIT-PlatformAware", "LICENSE-Apache-2.0", "NOTICE-karpenter-provider-aws",
                "NOTICE-karpenter-provider-azure")
PROVIDERS = ("aws", "gcp", "azure")
# The source column: rows as their source says, "+fix" where a correction applies.
SOURCE_TAG = {"aws": "platformaware", "gcp": "platformaware", "azure": "autoscaler"}

GIB = 1024  # MiB

# Values the C loader accepts (lib/core/arch.c orders the architectures per vendor).
ARCHS = {
    "NVIDIA": "kepler maxwell pascal volta turing ampere ada hopper blackwell",
    "AMD": "gcn rdna rdna2 rdna3 cdna cdna2 cdna3",
    "Intel": "gaudi gaudi2 gaudi3",
    "AWS": "inferentia inferentia2 trainium trainium2",
    "Xilinx": "ultrascale+",
}
ACC_TYPES = {"GPU", "FPGA", "ASIC"}
STORAGE_TYPES = {"", "nvme-ssd", "ssd", "hdd", "ebs"}
ISAS = {"", "x86_64", "aarch64"}
# Intel, AMD and AWS as asked; Apple (mac2.metal) and Ampere (GCP t2a) are
# needed for two families of the source and are listed in SOURCES.md.
PROC_MANUFACTURERS = {"", "Intel", "AMD", "AWS", "Apple", "Ampere"}
SENTINELS = {"", "na", "unset", "unknown"}

# ---------------------------------------------------------------------------
# Public fact sources.  Every correction and addition names its sources by
# these keys; SOURCES.md lists them in full.
# ---------------------------------------------------------------------------
FACTS = {
    "aws-api": "AWS EC2 DescribeInstanceTypes values (vCPUs, memory MiB, GPU count and memory MiB, "
               "local NVMe GB, network Mbit/s, CPU and accelerator manufacturer) as published in "
               "Karpenter's generated reference `website/content/en/docs/reference/instance-types.md` "
               "(aws/karpenter-provider-aws at commit 0c5e7d8112409aff07b0f17a0f51c87bdba52ed1)",
    "aws-p3": "AWS EC2 P3 instances page, aws.amazon.com/ec2/instance-types/p3/ (p3dn.24xlarge: 8 x V100 with 32 GB)",
    "aws-p4": "AWS EC2 P4 instances page, aws.amazon.com/ec2/instance-types/p4/ (p4d: 8 x A100 40 GB, p4de: 8 x A100 80 GB, 400 Gbps)",
    "aws-p5": "AWS EC2 P5 instances page, aws.amazon.com/ec2/instance-types/p5/ (P5: H100 80 GB and 3rd-gen AMD EPYC 7R13; "
              "P5e: H200 141 GB, EPYC 7R13; P5en: H200 141 GB and 4th-gen Intel Xeon Scalable, Sapphire Rapids)",
    "aws-p6": "AWS EC2 P6 instances page, aws.amazon.com/ec2/instance-types/p6/ (p6-b200.48xlarge: 8 x B200, 1,440 GB GPU memory, "
              "5th-gen Intel Xeon Scalable, Emerald Rapids, 3.2 Tbps EFA)",
    "aws-g3": "AWS EC2 G3 instances page, aws.amazon.com/ec2/instance-types/g3/ (8 GiB per M60 GPU)",
    "aws-g4": "AWS EC2 G4 instances page, aws.amazon.com/ec2/instance-types/g4/ (G4dn: custom 2nd-gen Intel Xeon Scalable, "
              "Cascade Lake; G4ad: AMD Radeon Pro V520, 8 GB)",
    "aws-g5": "AWS EC2 G5 instances page, aws.amazon.com/ec2/instance-types/g5/ (A10G with 24 GB per GPU)",
    "aws-g5g": "AWS EC2 G5g instances page, aws.amazon.com/ec2/instance-types/g5g/ (NVIDIA T4G, 16 GB per GPU, AWS Graviton2)",
    "aws-f1": "AWS EC2 F1 instances page, aws.amazon.com/ec2/instance-types/f1/ (Xilinx Virtex UltraScale+ VU9P FPGAs, "
              "64 GiB ECC memory per FPGA)",
    "nvidia-t4": "NVIDIA T4 Tensor Core GPU datasheet (16 GB GDDR6; Turing)",
    "nvidia-k80": "NVIDIA Tesla K80 datasheet (one board = 2 Kepler GPUs x 12 GB; AWS counts GPUs)",
    "nvidia-k520": "NVIDIA GRID K520 datasheet (one board = 2 Kepler GPUs x 4 GB; AWS counts GPUs)",
    "aws-g6": "AWS EC2 G6 instances page, aws.amazon.com/ec2/instance-types/g6/ (G6 and Gr6: NVIDIA L4 24 GB, "
              "3rd-gen AMD EPYC 7R13; local NVMe per size)",
    "aws-g6e": "AWS EC2 G6e instances page, aws.amazon.com/ec2/instance-types/g6e/ (L40S 48 GB, 3rd-gen AMD EPYC 7R13)",
    "aws-inf1": "AWS EC2 Inf1 instances page, aws.amazon.com/ec2/instance-types/inf1/ (1, 1, 4, 16 Inferentia chips, 8 GB each)",
    "aws-dl1": "AWS EC2 DL1 instances page, aws.amazon.com/ec2/instance-types/dl1/ (8 Habana Gaudi HL-205 with 32 GB HBM2 each; "
               "4 x 1,000 GB NVMe)",
    "aws-vt1": "AWS EC2 VT1 instances page, aws.amazon.com/ec2/instance-types/vt1/ (1, 2, 8 Xilinx Alveo U30 cards; "
               "3.125, 6.25, 25 Gbps)",
    "aws-hpc6a": "AWS EC2 Hpc6a instances page, aws.amazon.com/ec2/instance-types/hpc6a/ (100 Gbps EFA)",
    "aws-t3": "AWS EC2 T3 instances page, aws.amazon.com/ec2/instance-types/t3/ (1st- or 2nd-gen Intel Xeon Platinum 8000 "
              "series, Skylake-SP or Cascade Lake)",
    "aws-x2i": "AWS EC2 X2i instances page, aws.amazon.com/ec2/instance-types/x2i/, and the AWS SDK EC2 changelog of "
               "2022-04-12 (\"X2idn and X2iedn instances are powered by 3rd generation Intel Xeon Scalable processors\")",
    "aws-neuron-inf2": "AWS Neuron documentation, \"Amazon EC2 Inf2 Architecture\" and \"Inferentia2 Architecture\" "
                       "(awsdocs-neuron.readthedocs-hosted.com; 1/1/6/12 chips, 32 GiB device memory each)",
    "aws-neuron-trn1": "AWS Neuron documentation, \"Trn1/Trn1n Architecture\" (16 Trainium chips with 32 GiB each on "
                       "trn1.32xlarge/trn1n.32xlarge, 1 on trn1.2xlarge; 800 and 1,600 Gbps EFA)",
    "aws-neuron-trn2": "AWS Neuron documentation, \"Amazon EC2 Trn2 Architecture\" and \"Trainium2 Architecture\" "
                       "(16 Trainium2 chips, 96 GiB each, 192 vCPU, 2,048 GiB)",
    "aws-ecs-neuron": "Amazon ECS developer guide, task definitions for AWS Neuron workloads (chips per instance type: "
                      "inf1.xlarge 1, inf1.24xlarge 16, inf2.* 1/6/12, trn1.* 1/16, trn2.48xlarge 16)",
    "nvidia-a100": "NVIDIA A100 Tensor Core GPU datasheet (A100 40 GB and A100 80 GB; Ampere)",
    "nvidia-v100": "NVIDIA Tesla V100 datasheet (16 GB and 32 GB HBM2; Volta)",
    "nvidia-m60": "NVIDIA Tesla M60 datasheet (one board = 2 Maxwell GPUs x 8 GB; AWS counts GPUs)",
    "nvidia-h100": "NVIDIA H100 Tensor Core GPU datasheet (SXM5 80 GB; Hopper)",
    "nvidia-h200": "NVIDIA H200 Tensor Core GPU datasheet (141 GB HBM3e; Hopper)",
    "nvidia-l40s": "NVIDIA L40S datasheet (48 GB GDDR6; Ada Lovelace)",
    "nvidia-b200": "NVIDIA HGX B200 (Blackwell; AWS states 1,440 GB for 8 GPUs = 180 GB each)",
    "gcp-a2": "Google Cloud GPU machine types, A2 Standard (a2-highgpu-*, a2-megagpu-16g: NVIDIA A100 40GB) and A2 Ultra "
              "(a2-ultragpu-*: NVIDIA A100 80GB), cloud.google.com/compute/docs/gpus",
    "gcp-a3": "Google Cloud accelerator-optimized machine family, A3 High (a3-highgpu-1g/2g/4g/8g: H100 80GB), A3 Mega "
              "(a3-megagpu-8g: H100 80GB Mega), A3 Ultra (a3-ultragpu-8g: H200 141GB); A3 High/Mega on Intel Sapphire "
              "Rapids, A3 Ultra on Intel Emerald Rapids; cloud.google.com/compute/docs/accelerator-optimized-machines",
    "gcp-machinetypes": "gcloud compute machine-types list as captured in Cyclenerd/google-cloud-pricing-cost-calculator "
                        "`tools/machinetypes.csv` (vCPUs and MEMORY_GB per machine type: a3-highgpu-1g 26/234, 2g 52/468, "
                        "4g 104/936, 8g 208/1872, a3-megagpu-8g 208/1872, a3-ultragpu-8g 224/2952)",
    "gcp-memunit": "Compute Engine API machineTypes resource: memoryMb is in MiB; f1-micro (\"0.6 GB RAM\") has "
                   "memoryMb 614 and g1-small (\"1.7 GB RAM\") has memoryMb 1740, so Google's machine-type \"GB\" "
                   "is 1,024 MiB (a GiB)",
    "gcp-shared": "Google Cloud shared-core machine types (f1-micro, g1-small: 1 vCPU, time-shared; API guestCpus 1)",
    "gcp-n1": "Google Cloud N1 machine series and GPU docs: N1 types have no built-in GPU; GPUs are attached separately",
    "gcp-cpu-platforms": "Google Cloud CPU platforms page, cloud.google.com/compute/docs/cpu-platforms "
                         "(N1 and N2: Intel Xeon; N2D: AMD EPYC)",
    "gcp-c3": "Google Cloud C3 machine series: c3-*-lssd types carry 1, 2, 4, 8, 16, 32 Local SSD disks of 375 GiB "
              "for 4, 8, 22, 44, 88, 176 vCPUs",
}

# ---------------------------------------------------------------------------
# Accelerator models.  canonical name -> (type, manufacturer, architecture,
# memory per device in MiB or None when unknown, fact keys).  Memory is the
# vendor's nominal GB taken as GiB, as AWS and Google do (H100 "80 GB" =
# 81920 MiB, which is also what the AWS API reports).
# ---------------------------------------------------------------------------
MODELS = {
    "A100-40GB": ("GPU", "NVIDIA", "ampere", 40 * GIB, ["nvidia-a100"]),
    "A100-80GB": ("GPU", "NVIDIA", "ampere", 80 * GIB, ["nvidia-a100"]),
    "A10G": ("GPU", "NVIDIA", "ampere", 24 * GIB, ["aws-g5"]),
    "L4": ("GPU", "NVIDIA", "ada", 24 * GIB, ["aws-g6"]),
    "L40S": ("GPU", "NVIDIA", "ada", 48 * GIB, ["nvidia-l40s", "aws-g6e"]),
    "V100-16GB": ("GPU", "NVIDIA", "volta", 16 * GIB, ["nvidia-v100", "aws-api"]),
    "V100-32GB": ("GPU", "NVIDIA", "volta", 32 * GIB, ["nvidia-v100", "aws-p3"]),
    "T4": ("GPU", "NVIDIA", "turing", 16 * GIB, ["nvidia-t4", "aws-g4"]),
    "T4G": ("GPU", "NVIDIA", "turing", 16 * GIB, ["aws-g5g"]),
    "H100": ("GPU", "NVIDIA", "hopper", 80 * GIB, ["nvidia-h100", "aws-p5"]),
    "H200": ("GPU", "NVIDIA", "hopper", 141 * GIB, ["nvidia-h200", "aws-p5"]),
    "B200": ("GPU", "NVIDIA", "blackwell", 180 * GIB, ["nvidia-b200", "aws-p6"]),
    "K80": ("GPU", "NVIDIA", "kepler", 12 * GIB, ["nvidia-k80"]),
    "M60": ("GPU", "NVIDIA", "maxwell", 8 * GIB, ["nvidia-m60", "aws-g3"]),
    "K520": ("GPU", "NVIDIA", "kepler", 4 * GIB, ["nvidia-k520"]),
    "Radeon-Pro-V520": ("GPU", "AMD", "rdna", 8 * GIB, ["aws-g4"]),
    "VU9P": ("FPGA", "Xilinx", "ultrascale+", 64 * GIB, ["aws-f1"]),
    "Alveo-U30": ("FPGA", "Xilinx", "ultrascale+", None, ["aws-vt1"]),
    "Gaudi-HL205": ("ASIC", "Intel", "gaudi", 32 * GIB, ["aws-dl1"]),
    "Inferentia": ("ASIC", "AWS", "inferentia", 8 * GIB, ["aws-inf1"]),
    "Inferentia2": ("ASIC", "AWS", "inferentia2", 32 * GIB, ["aws-neuron-inf2"]),
    "Trainium": ("ASIC", "AWS", "trainium", 32 * GIB, ["aws-neuron-trn1"]),
    "Trainium2": ("ASIC", "AWS", "trainium2", 96 * GIB, ["aws-neuron-trn2"]),
}

# The source's accelerator names that identify one model.  "NVIDIA A100" and
# "NVIDIA Tesla V100" do not (40 or 80 GB, 16 or 32 GB): see resolve_accel().
SOURCE_ACCEL = {
    "NVIDIA A10G": "A10G",
    "NVIDIA L4": "L4",
    "NVIDIA_L4": "L4",
    "NVIDIA Tesla T4": "T4",
    "NVIDIA Tesla T4G": "T4G",
    "NVIDIA Tesla K80": "K80",
    "NVIDIA Tesla M60": "M60",
    "NVIDIA GRID K520": "K520",
    "AMD Radeon Pro V520": "Radeon-Pro-V520",
    "Xilinx Virtex UltraScale+ VU9P": "VU9P",
}

# Models whose entry in PlatformAware's accelerator table (which PlatformAware
# joins to these rows) is wrong; rows using them are marked platformaware+fix.
# model -> (what upstream says, fact keys)
ACCEL_TABLE_ERRORS = {
    "A10G": ("db-accelerators.NVIDIA.csv: NVIDIA_A10G with 12G", ["aws-g5"]),
    "M60": ("db-accelerators.NVIDIA.csv: NVIDIATesla_M60 with 16G (the whole two-GPU board)",
            ["nvidia-m60", "aws-g3"]),
}

# ---------------------------------------------------------------------------
# Processors.  The source's processor string -> (display name, manufacturer,
# microarchitecture, ISA).  The microarchitecture comes from the model number
# (Intel ARK / AMD product pages; the Intel ones are cross-checked against
# PlatformAware's db-processors.Intel.csv, see check_intel_uarch()).
# PlatformAware's AMD table says "Zen" for every EPYC generation, so the AMD
# generations are given here: 7571 Naples = zen, 7R32 Rome = zen2,
# 7R13/7B13 Milan = zen3, 9R14 Genoa = zen4.  Empty = not known for sure.
# ---------------------------------------------------------------------------
PROC = {
    "AWS Graviton1": ("AWS Graviton1", "AWS", "cortex-a72", "aarch64"),
    "AWS Graviton2": ("AWS Graviton2", "AWS", "neoverse-n1", "aarch64"),
    "AWS Graviton3": ("AWS Graviton3", "AWS", "neoverse-v1", "aarch64"),
    "AWS Graviton4": ("AWS Graviton4", "AWS", "neoverse-v2", "aarch64"),
    "AMD EPYC 7571": ("AMD EPYC 7571", "AMD", "zen", "x86_64"),
    "AMD EPYC 7R32": ("AMD EPYC 7R32", "AMD", "zen2", "x86_64"),
    "AMD EPYC 7R13": ("AMD EPYC 7R13", "AMD", "zen3", "x86_64"),
    "AMD EPYC 9R14": ("AMD EPYC 9R14", "AMD", "zen4", "x86_64"),
    "AMD EPYC 7B13": ("AMD EPYC 7B13", "AMD", "zen3", "x86_64"),
    "Apple M1": ("Apple M1", "Apple", "", "aarch64"),
    "Ampere Altra Q6430": ("Ampere Altra Q64-30", "Ampere", "neoverse-n1", "aarch64"),
    "Intel Core i7-8700B": ("Intel Core i7-8700B", "Intel", "coffeelake", "x86_64"),
    "Intel Xeon E5-2650": ("Intel Xeon E5-2650", "Intel", "sandybridge", "x86_64"),
    "Intel Xeon E5-2670": ("Intel Xeon E5-2670", "Intel", "sandybridge", "x86_64"),
    "Intel Xeon E5-2670 v2": ("Intel Xeon E5-2670 v2", "Intel", "ivybridge", "x86_64"),
    "Intel Xeon E5-2680 v2": ("Intel Xeon E5-2680 v2", "Intel", "ivybridge", "x86_64"),
    "Intel Xeon E5-2666 v3": ("Intel Xeon E5-2666 v3", "Intel", "haswell", "x86_64"),
    "Intel Xeon E5-2676 v3": ("Intel Xeon E5-2676 v3", "Intel", "haswell", "x86_64"),
    "Intel Xeon E7-8880 v3": ("Intel Xeon E7-8880 v3", "Intel", "haswell", "x86_64"),
    "Intel Xeon E5-2686 v4": ("Intel Xeon E5-2686 v4", "Intel", "broadwell", "x86_64"),
    "Intel Xeon E7 8880 v4": ("Intel Xeon E7-8880 v4", "Intel", "broadwell", "x86_64"),
    "Intel Xeon Platinum 8124M": ("Intel Xeon Platinum 8124M", "Intel", "skylake", "x86_64"),
    "Intel Xeon Platinum 8151": ("Intel Xeon Platinum 8151", "Intel", "skylake", "x86_64"),
    "Intel Xeon Platinum 8175": ("Intel Xeon Platinum 8175", "Intel", "skylake", "x86_64"),
    "Intel Xeon 8173M": ("Intel Xeon Platinum 8173M", "Intel", "skylake", "x86_64"),
    "Intel Xeon Platinum 8252": ("Intel Xeon Platinum 8252", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon Platinum 8259": ("Intel Xeon Platinum 8259", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon Platinum 8259CL": ("Intel Xeon Platinum 8259CL", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon Platinum 8275CL": ("Intel Xeon Platinum 8275CL", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon Platinum 8275L": ("Intel Xeon Platinum 8275L", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon Platinum 8280L": ("Intel Xeon Platinum 8280L", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon 8280L": ("Intel Xeon Platinum 8280L", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon 8273CL": ("Intel Xeon Platinum 8273CL", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon 6253CL": ("Intel Xeon Gold 6253CL", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon 8375C": ("Intel Xeon Platinum 8375C", "Intel", "icelake", "x86_64"),
    "Intel Xeon 8373C": ("Intel Xeon Platinum 8373C", "Intel", "icelake", "x86_64"),
    "Intel Xeon Scalable (Sapphire Rapids)": ("Intel Xeon Scalable (Sapphire Rapids)", "Intel", "sapphirerapids", "x86_64"),
    "Intel Xeon Scalable 4th Gen": ("Intel Xeon Scalable 4th Gen (Sapphire Rapids)", "Intel", "sapphirerapids", "x86_64"),
    # Generic names: the generation is not known from the string alone.
    "Intel Xeon Scalable": ("Intel Xeon Scalable", "Intel", "", "x86_64"),
    "Intel Xeon Family": ("Intel Xeon", "Intel", "", "x86_64"),
    # Used only by the additions and the corrections below.
    "Intel Xeon Scalable (Cascade Lake)": ("Intel Xeon Scalable (Cascade Lake)", "Intel", "cascadelake", "x86_64"),
    "Intel Xeon Scalable (Ice Lake)": ("Intel Xeon Scalable (Ice Lake)", "Intel", "icelake", "x86_64"),
    "Intel Xeon Scalable (Emerald Rapids)": ("Intel Xeon Scalable (Emerald Rapids)", "Intel", "emeraldrapids", "x86_64"),
    "Intel Xeon Scalable 5th Gen": ("Intel Xeon Scalable 5th Gen (Emerald Rapids)", "Intel", "emeraldrapids", "x86_64"),
    "Intel Xeon Platinum 8000 series": ("Intel Xeon Platinum 8000 series (Skylake-SP or Cascade Lake)", "Intel", "", "x86_64"),
    # Not a real part (Intel made no E5-2686 v5); only the t3.* rows use it
    # and a Fix below replaces it.
    "Intel Xeon E5 2686 v5": ("", "Intel", "", "x86_64"),
    # Only the manufacturer is known (from the AWS API or the machine family).
    "Intel (model unknown)": ("", "Intel", "", "x86_64"),
    "AMD (model unknown)": ("", "AMD", "", "x86_64"),
}

STORAGE = {
    "StorageType_EC2_EBSOnly": "ebs",
    "StorageType_EC2_NVMeSSD": "nvme-ssd",
    "StorageType_SSD": "ssd",
    "StorageType_HDD": "hdd",
}


class Fix:
    """One correction of the source, applied to the named instance types.

    set      -- {column: value} for each type (a callable gets the type name)
    accel    -- {type: (count, model)} sets all accelerator columns
    proc     -- a PROC key that replaces the processor columns
    says     -- what the source (or the PlatformAware table it is joined to) says
    facts    -- FACTS keys naming the public sources of the corrected values
    """

    def __init__(self, provider, what, types, says, facts, set=None, accel=None, proc=None):
        self.provider, self.what, self.types = provider, what, list(types)
        self.says, self.facts = says, facts
        self.set, self.accel, self.proc = set or {}, accel or {}, proc
        self.applied = []

    def catalog_says(self):
        """What the catalog says, one value for all types or type: value."""
        per = {}
        for t in self.types:
            parts = []
            if self.accel:
                n, m = self.accel[t]
                parts.append("%d x %s" % (n, m) if m else "%d (no built-in accelerator)" % n)
            if self.proc:
                name, manuf, uarch, _ = PROC[self.proc]
                parts.append("processor %s%s" % (name, " (%s)" % uarch if uarch else "") if name
                             else "processor manufacturer %s (model unknown)" % manuf)
            for col in sorted(self.set):
                v = self.set[col]
                parts.append("%s %s" % (col, (v(t) if callable(v) else v) or "unknown"))
            per[t] = "; ".join(parts)
        if len(set(per.values())) == 1:
            return per[self.types[0]]
        return "; ".join("%s: %s" % (t, per[t]) for t in self.types)


def _numkey(s):
    try:
        return (0, float(s), s)
    except ValueError:
        return (1, 0.0, s)


def _sizes(prefix, sizes):
    return [prefix + s for s in sizes]


INF1 = ["inf1.xlarge", "inf1.2xlarge", "inf1.6xlarge", "inf1.24xlarge"]
VT1 = ["vt1.3xlarge", "vt1.6xlarge", "vt1.24xlarge"]
G4DN = _sizes("g4dn.", ["xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "metal"])
T3 = _sizes("t3.", ["nano", "micro", "small", "medium", "large", "xlarge", "2xlarge"])
X2I = (_sizes("x2idn.", ["16xlarge", "24xlarge", "32xlarge", "metal"])
       + _sizes("x2iedn.", ["xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge", "24xlarge", "32xlarge", "metal"]))
A2_40 = ["a2-highgpu-1g", "a2-highgpu-2g", "a2-highgpu-4g", "a2-highgpu-8g", "a2-megagpu-16g"]
A2_80 = ["a2-ultragpu-1g", "a2-ultragpu-2g", "a2-ultragpu-4g", "a2-ultragpu-8g"]
G6_STORAGE = {"g6.16xlarge": "1880", "g6.12xlarge": "3760", "g6.24xlarge": "3760", "g6.48xlarge": "7520"}
C3_LSSD = {"c3-standard-22-lssd": "1500", "c3-standard-44-lssd": "3000",
           "c3-standard-88-lssd": "6000", "c3-standard-176-lssd": "12000"}

# ---------------------------------------------------------------------------
# Corrections of the source.  Each is listed in SOURCES.md with its fact
# sources; the build fails if one of them no longer matches a source row.
# ---------------------------------------------------------------------------
FIXES = [
    # The source calls every A100 "NVIDIA A100" and PlatformAware's accelerator
    # lookup turns that into an A10 with 24 GB.  Which A100 it is depends on
    # the instance type, so it is set from the instance facts.
    Fix("aws", "A100 model and memory", ["p4d.24xlarge"],
        "8 x \"NVIDIA A100\" (PlatformAware resolves it to an A10, 24 GB)", ["aws-p4", "nvidia-a100", "aws-api"],
        accel={"p4d.24xlarge": (8, "A100-40GB")}),
    Fix("aws", "A100 model and memory", ["p4de.24xlarge"],
        "8 x \"NVIDIA A100\" (PlatformAware resolves it to an A10, 24 GB)", ["aws-p4", "nvidia-a100", "aws-api"],
        accel={"p4de.24xlarge": (8, "A100-80GB")}),
    Fix("gcp", "A100 model and memory", A2_40,
        "\"NVIDIA_A100\" (PlatformAware resolves it to an A10, 24 GB)", ["gcp-a2", "nvidia-a100"],
        accel={t: (n, "A100-40GB") for t, n in zip(A2_40, [1, 2, 4, 8, 16])}),
    Fix("gcp", "A100 model and memory", A2_80,
        "\"NVIDIA_A100\" (PlatformAware resolves it to an A10, 24 GB)", ["gcp-a2", "nvidia-a100"],
        accel={t: (n, "A100-80GB") for t, n in zip(A2_80, [1, 2, 4, 8])}),
    # p3.* carry 16 GB V100s, p3dn.24xlarge 32 GB ones; the source does not say.
    Fix("aws", "V100 memory", ["p3dn.24xlarge"],
        "8 x \"NVIDIA Tesla V100\" (16 GB in PlatformAware's table)", ["aws-p3", "nvidia-v100", "aws-api"],
        accel={"p3dn.24xlarge": (8, "V100-32GB")}),
    # Accelerators the source records as none.
    Fix("aws", "missing accelerators", INF1, "0 accelerators", ["aws-inf1", "aws-ecs-neuron", "aws-api"],
        accel=dict(zip(INF1, [(1, "Inferentia"), (1, "Inferentia"), (4, "Inferentia"), (16, "Inferentia")]))),
    Fix("aws", "missing accelerators", ["dl1.24xlarge"], "0 accelerators", ["aws-dl1", "aws-api"],
        accel={"dl1.24xlarge": (8, "Gaudi-HL205")}),
    Fix("aws", "missing accelerators", VT1, "0 accelerators", ["aws-vt1"],
        accel=dict(zip(VT1, [(1, "Alveo-U30"), (2, "Alveo-U30"), (8, "Alveo-U30")]))),
    # Local storage: the g6 rows multiply the disk size by the disk count once
    # too often (15200G = 4 x 3800G), and g6.16xlarge copies the g5 value.
    Fix("aws", "local NVMe size", list(G6_STORAGE),
        "storage_size 3800G, 15200G, 15200G, 60800G (15200G = 4 x 3800G)", ["aws-g6", "aws-api"],
        set={"storage_gib": lambda t: G6_STORAGE[t]}),
    Fix("aws", "local NVMe size", ["dl1.24xlarge"], "storage_size 4T (= 4096 GiB)", ["aws-dl1", "aws-api"],
        set={"storage_gib": "4000"}),
    Fix("gcp", "Local SSD size", list(C3_LSSD),
        "storage_size 1.5T, 3T, 6T, 12T (= 1536, 3072, 6144, 12288 GiB)", ["gcp-c3"],
        set={"storage_gib": lambda t: C3_LSSD[t]}),
    # Network
    Fix("aws", "network bandwidth", ["p4d.24xlarge"], "network_performance 100G", ["aws-p4", "aws-api"],
        set={"network_gbps": "400"}),
    Fix("aws", "network bandwidth", ["hpc6a.48xlarge"], "network_performance 25G", ["aws-hpc6a", "aws-api"],
        set={"network_gbps": "100"}),
    Fix("aws", "network bandwidth", ["vt1.3xlarge"], "network_performance 3.12G", ["aws-vt1"],
        set={"network_gbps": "3.125"}),
    # Processors
    Fix("aws", "processor", T3, "\"Intel Xeon E5 2686 v5\" (no such part: Intel made no E5 v5 of this model)",
        ["aws-t3"], proc="Intel Xeon Platinum 8000 series"),
    Fix("aws", "processor", G4DN, "\"Intel Xeon Family\"", ["aws-g4"], proc="Intel Xeon Scalable (Cascade Lake)"),
    Fix("aws", "processor", X2I, "\"Intel Xeon Scalable\" (generation not given)", ["aws-x2i"],
        proc="Intel Xeon Scalable (Ice Lake)"),
    # GCP shared-core types: the source writes a fraction of a core and an
    # impossible memory size.
    Fix("gcp", "memory", ["f1-micro"], "node_memory_size 614.5G (629,248 MiB)", ["gcp-memunit"],
        set={"memory_mib": "614"}),
    Fix("gcp", "vCPUs", ["f1-micro", "g1-small"], "node_vcpus_count 256m, 512m (a fraction of a core)",
        ["gcp-shared", "gcp-memunit"], set={"vcpus": "1"}),
]


def _gcp_family_fixes(gcp_rows):
    """N1 has no built-in GPU (the source: unknown), and N1, N2 and N2D types
    without a processor name still have a known CPU manufacturer."""
    n1 = sorted(r["api_name"] for r in gcp_rows if r["api_name"].startswith("n1-"))
    fixes = [Fix("gcp", "accelerators", n1, "accelerator_count unknown", ["gcp-n1"],
                 accel={t: (0, None) for t in n1})]
    for fam, key in (("n1-", "Intel (model unknown)"), ("n2-", "Intel (model unknown)"),
                     ("n2d-", "AMD (model unknown)")):
        names = sorted(r["api_name"] for r in gcp_rows
                       if r["api_name"].startswith(fam) and r["processor"].strip() in SENTINELS)
        if names:
            fixes.append(Fix("gcp", "processor manufacturer", names, "processor unknown",
                             ["gcp-cpu-platforms"], proc=key))
    return fixes


# ---------------------------------------------------------------------------
# Instance types the source lacks.
# (name, vCPUs, memory GiB, accelerator count, model, PROC key, storage type,
#  local storage GB or None, network Gbit/s or None, fact keys)
# Memory: AWS publishes GiB.  Google's machine-type "GB" is also 1,024 MiB
# (see FACTS["gcp-memunit"]; the source's own a2/g2 rows use the same unit),
# so 234 GB -> 234 x 1024 = 239616 MiB.  Local storage is the provider's GB
# figure, written as the source writes storage_size.  Network "up to N" is N.
# Unknown values stay empty.
# ---------------------------------------------------------------------------
ADDED = {
    "aws": [
        ("p5.4xlarge", 16, 256, 1, "H100", "AMD EPYC 7R13", "nvme-ssd", 3800, 100, ["aws-p5", "aws-api"]),
        ("p5.48xlarge", 192, 2048, 8, "H100", "AMD EPYC 7R13", "nvme-ssd", 30400, 3200, ["aws-p5", "aws-api"]),
        ("p5e.48xlarge", 192, 2048, 8, "H200", "AMD EPYC 7R13", "nvme-ssd", 30400, 3200, ["aws-p5", "aws-api"]),
        ("p5en.48xlarge", 192, 2048, 8, "H200", "Intel Xeon Scalable (Sapphire Rapids)", "nvme-ssd", 30400, 3200,
         ["aws-p5", "aws-api"]),
        ("p6-b200.48xlarge", 192, 2048, 8, "B200", "Intel Xeon Scalable (Emerald Rapids)", "nvme-ssd", 30400, 3200,
         ["aws-p6", "aws-api"]),
        ("g6e.xlarge", 4, 32, 1, "L40S", "AMD EPYC 7R13", "nvme-ssd", 250, 20, ["aws-g6e", "aws-api"]),
        ("g6e.2xlarge", 8, 64, 1, "L40S", "AMD EPYC 7R13", "nvme-ssd", 450, 20, ["aws-g6e", "aws-api"]),
        ("g6e.4xlarge", 16, 128, 1, "L40S", "AMD EPYC 7R13", "nvme-ssd", 600, 20, ["aws-g6e", "aws-api"]),
        ("g6e.8xlarge", 32, 256, 1, "L40S", "AMD EPYC 7R13", "nvme-ssd", 900, 25, ["aws-g6e", "aws-api"]),
        ("g6e.12xlarge", 48, 384, 4, "L40S", "AMD EPYC 7R13", "nvme-ssd", 3800, 100, ["aws-g6e", "aws-api"]),
        ("g6e.16xlarge", 64, 512, 1, "L40S", "AMD EPYC 7R13", "nvme-ssd", 1900, 35, ["aws-g6e", "aws-api"]),
        ("g6e.24xlarge", 96, 768, 4, "L40S", "AMD EPYC 7R13", "nvme-ssd", 3800, 200, ["aws-g6e", "aws-api"]),
        ("g6e.48xlarge", 192, 1536, 8, "L40S", "AMD EPYC 7R13", "nvme-ssd", 7600, 400, ["aws-g6e", "aws-api"]),
        ("gr6.4xlarge", 16, 128, 1, "L4", "AMD EPYC 7R13", "nvme-ssd", 600, 25, ["aws-g6", "aws-api"]),
        ("gr6.8xlarge", 32, 256, 1, "L4", "AMD EPYC 7R13", "nvme-ssd", 900, 25, ["aws-g6", "aws-api"]),
        # The AWS API names the CPU manufacturer of these but the model is
        # not confirmed in a public source at hand: processor left empty.
        ("inf2.xlarge", 4, 16, 1, "Inferentia2", "AMD (model unknown)", "ebs", None, 15,
         ["aws-neuron-inf2", "aws-ecs-neuron", "aws-api"]),
        ("inf2.8xlarge", 32, 128, 1, "Inferentia2", "AMD (model unknown)", "ebs", None, 25,
         ["aws-neuron-inf2", "aws-api"]),
        ("inf2.24xlarge", 96, 384, 6, "Inferentia2", "AMD (model unknown)", "ebs", None, 50,
         ["aws-neuron-inf2", "aws-ecs-neuron", "aws-api"]),
        ("inf2.48xlarge", 192, 768, 12, "Inferentia2", "AMD (model unknown)", "ebs", None, 100,
         ["aws-neuron-inf2", "aws-ecs-neuron", "aws-api"]),
        # trn1.2xlarge network: the AWS Trn1 page and the Neuron docs disagree
        # (up to 12.5 / up to 25 Gbps), so it is left unknown.
        ("trn1.2xlarge", 8, 32, 1, "Trainium", "Intel (model unknown)", "nvme-ssd", 474, None,
         ["aws-neuron-trn1", "aws-ecs-neuron", "aws-api"]),
        ("trn1.32xlarge", 128, 512, 16, "Trainium", "Intel (model unknown)", "nvme-ssd", 7600, 800,
         ["aws-neuron-trn1", "aws-ecs-neuron", "aws-api"]),
        ("trn1n.32xlarge", 128, 512, 16, "Trainium", "Intel (model unknown)", "nvme-ssd", 7600, 1600,
         ["aws-neuron-trn1", "aws-api"]),
        ("trn2.48xlarge", 192, 2048, 16, "Trainium2", "Intel (model unknown)", "nvme-ssd", 7600, 3200,
         ["aws-neuron-trn2", "aws-ecs-neuron", "aws-api"]),
    ],
    "gcp": [
        ("a3-highgpu-1g", 26, 234, 1, "H100", "Intel Xeon Scalable 4th Gen", "", None, None,
         ["gcp-a3", "gcp-machinetypes", "gcp-memunit"]),
        ("a3-highgpu-2g", 52, 468, 2, "H100", "Intel Xeon Scalable 4th Gen", "", None, None,
         ["gcp-a3", "gcp-machinetypes", "gcp-memunit"]),
        ("a3-highgpu-4g", 104, 936, 4, "H100", "Intel Xeon Scalable 4th Gen", "", None, None,
         ["gcp-a3", "gcp-machinetypes", "gcp-memunit"]),
        ("a3-highgpu-8g", 208, 1872, 8, "H100", "Intel Xeon Scalable 4th Gen", "", None, None,
         ["gcp-a3", "gcp-machinetypes", "gcp-memunit"]),
        ("a3-megagpu-8g", 208, 1872, 8, "H100", "Intel Xeon Scalable 4th Gen", "", None, None,
         ["gcp-a3", "gcp-machinetypes", "gcp-memunit"]),
        ("a3-ultragpu-8g", 224, 2952, 8, "H200", "Intel Xeon Scalable 5th Gen", "", None, None,
         ["gcp-a3", "gcp-machinetypes", "gcp-memunit"]),
    ],
    "azure": [],
}

# ---------------------------------------------------------------------------
# Azure.  The sizes are kubernetes/autoscaler's static list of the Resource
# SKU API's answers (vCPUs, MemoryGB, GPUs, CpuArchitectureType), the prices
# karpenter-provider-azure's eastus on-demand Linux table (both Apache-2.0,
# see share/catalog-src/SOURCES.md).  The SKU API counts GPUs but names no
# model and no memory: the series table below adds them, each from the
# series' page in Microsoft's documentation, and the build fails if a size
# with GPUs > 0 matches no series (or two).  Sizes whose GPU is a slice of
# one (the API says GPUs=1) keep the count 1 and get the slice's memory.
# ---------------------------------------------------------------------------
AZ_FACTS = {
    "azure-ncv3": "Microsoft Learn, NCv3-series (NVIDIA Tesla V100, 16 GB per GPU)",
    "azure-ndv2": "Microsoft Learn, NDv2-series (8 x NVIDIA Tesla V100 NVLINK-connected, 32 GB each)",
    "azure-ncast4v3": "Microsoft Learn, NCasT4_v3-series (NVIDIA Tesla T4, 16 GB)",
    "azure-nca100v4": "Microsoft Learn, NC A100 v4-series (NVIDIA A100 PCIe, 80 GB)",
    "azure-ndasra100v4": "Microsoft Learn, ND A100 v4-series (8 x NVIDIA A100 40 GB, SXM)",
    "azure-ndma100v4": "Microsoft Learn, NDm A100 v4-series (8 x NVIDIA A100 80 GB, SXM)",
    "azure-ncadsh100v5": "Microsoft Learn, NCads H100 v5-series and NCCads H100 v5-series (NVIDIA H100 NVL, "
                         "PCIe, 94 GB per GPU)",
    "azure-ndh100v5": "Microsoft Learn, ND H100 v5-series (8 x NVIDIA H100 80 GB, SXM)",
    "azure-ndh200v5": "Microsoft Learn, ND H200 v5-series (8 x NVIDIA H200 141 GB)",
    "azure-ndmi300xv5": "Microsoft Learn, ND MI300X v5-series (8 x AMD Instinct MI300X, 192 GB each)",
    "azure-nvadsa10v5": "Microsoft Learn, NVadsA10 v5-series (NVIDIA A10 24 GB; partial GPUs: NV6ads 1/6 with 4 GiB, "
                        "NV12ads 1/3 with 8 GiB, NV18ads 1/2 with 12 GiB)",
    "azure-nca10v4": "Microsoft Learn, NC A10 v4-series (NVIDIA A10, sizes that carry a partition of a GPU; "
                     "the partitions' memory is not in a source at hand)",
    "azure-nvv4": "Microsoft Learn, NVv4-series (AMD Radeon Instinct MI25 16 GiB; NV4as 1/8 with 2 GiB, NV8as 1/4 "
                  "with 4 GiB, NV16as 1/2 with 8 GiB, NV32as 1 with 16 GiB)",
    "azure-nvv2": "Microsoft Learn, NVv2-series (NVIDIA Tesla M60, one GPU = half an M60 board, 8 GiB)",
    "azure-nvv3": "Microsoft Learn, NVv3-series (NVIDIA Tesla M60, one GPU = half an M60 board, 8 GiB)",
    "azure-ngadsv620": "Microsoft Learn, NGads V620-series (AMD Radeon PRO V620; NG8ads 1/4 GPU, NG16ads 1/2, NG32ads "
                       "and NG32adms 1)",
    "azure-nvadsv710v5": "Microsoft Learn, NVads V710 v5-series (AMD Radeon PRO V710; NV4ads 1/6 with 4 GB, NV8ads 1/3 "
                         "with 8 GB, NV12ads 1/2 with 12 GB, NV24ads and NV28adms 1 with 24 GB)",
    "azure-isolated": "Microsoft Learn, isolated sizes (Standard_ND96is_MI300X_v5 beside Standard_ND96isr_MI300X_v5, "
                      "the ND MI300X v5 size without InfiniBand: 8 x MI300X)",
    "amd-v620": "AMD Radeon PRO V620 datasheet (32 GB GDDR6; RDNA 2)",
    "amd-v710": "AMD Radeon PRO V710 (RDNA 3); Azure gives 24 GB to a whole GPU",
    "azure-np": "Microsoft Learn, NP-series (Xilinx Alveo U250 FPGAs, 64 GiB FPGA memory each; the SKU API counts "
                "them as GPUs)",
    "azure-bs": "Microsoft Learn, B-series burstable sizes (Standard_B1ls: 1 vCPU, 0.5 GiB)",
    "azure-dv2": "Microsoft Learn, Dv2 and DSv2-series, and the previous-generation D and DS-series "
                 "(D1_v2, DS1_v2, D1, DS1: 3.5 GiB)",
    "azure-m": "Microsoft Learn, M-series (Standard_M8ms 218.75 GiB, Standard_M16ms 437.5 GiB)",
    "azure-sku-api": "Azure Resource SKUs API (Microsoft.Compute/skus): capabilities vCPUs, MemoryGB, GPUs, "
                     "CpuArchitectureType; MemoryGB is a decimal number of GiB (0.5, 3.5, 218.75)",
    "nvidia-a10": "NVIDIA A10 Tensor Core GPU datasheet (24 GB GDDR6; Ampere)",
    "amd-mi300x": "AMD Instinct MI300X accelerator datasheet (192 GB HBM3; CDNA 3)",
    "amd-mi25": "AMD Radeon Instinct MI25 datasheet (16 GB HBM2; Vega, GCN 5th generation)",
    "xilinx-u250": "AMD Xilinx Alveo U250 data center accelerator card (Virtex UltraScale+, 64 GB DDR4)",
}
FACTS.update(AZ_FACTS)

MODELS.update({
    "A10": ("GPU", "NVIDIA", "ampere", 24 * GIB, ["nvidia-a10", "azure-nvadsa10v5"]),
    "H100-NVL": ("GPU", "NVIDIA", "hopper", 94 * GIB, ["azure-ncadsh100v5", "nvidia-h100"]),
    "MI300X": ("GPU", "AMD", "cdna3", 192 * GIB, ["amd-mi300x", "azure-ndmi300xv5"]),
    "MI25": ("GPU", "AMD", "gcn", 16 * GIB, ["amd-mi25", "azure-nvv4"]),
    "Alveo-U250": ("FPGA", "Xilinx", "ultrascale+", 64 * GIB, ["xilinx-u250", "azure-np"]),
    "Radeon-Pro-V620": ("GPU", "AMD", "rdna2", 32 * GIB, ["amd-v620", "azure-ngadsv620"]),
    "Radeon-Pro-V710": ("GPU", "AMD", "rdna3", 24 * GIB, ["amd-v710", "azure-nvadsv710v5"]),
})

# (series, size-name pattern, model, fact keys).  A size with GPUs > 0 must
# match exactly one; a pattern that matches no size fails the build.
AZ_GPU_SERIES = [
    ("NCv3", r"Standard_NC\d+r?s_v3", "V100-16GB", ["azure-ncv3", "nvidia-v100"]),
    ("NDv2", r"Standard_ND40rs_v2", "V100-32GB", ["azure-ndv2", "nvidia-v100"]),
    ("NCasT4_v3", r"Standard_NC\d+as_T4_v3", "T4", ["azure-ncast4v3", "nvidia-t4"]),
    ("NC A100 v4", r"Standard_NC\d+ads_A100_v4", "A100-80GB", ["azure-nca100v4", "nvidia-a100"]),
    ("ND A100 v4", r"Standard_ND96asr_v4", "A100-40GB", ["azure-ndasra100v4", "nvidia-a100"]),
    ("NDm A100 v4", r"Standard_ND96amsr_A100_v4", "A100-80GB", ["azure-ndma100v4", "nvidia-a100"]),
    ("NCads H100 v5", r"Standard_NCC?\d+adi?s_H100_v5", "H100-NVL", ["azure-ncadsh100v5"]),
    ("ND H100 v5", r"Standard_ND96isr_H100_v5", "H100", ["azure-ndh100v5", "nvidia-h100"]),
    ("ND H200 v5", r"Standard_ND96isr_H200_v5", "H200", ["azure-ndh200v5", "nvidia-h200"]),
    ("ND MI300X v5", r"Standard_ND96isr?_MI300X_v5", "MI300X", ["azure-ndmi300xv5", "amd-mi300x"]),
    ("NGads V620", r"Standard_NG\d+adm?s_V620_v1", "Radeon-Pro-V620", ["azure-ngadsv620", "amd-v620"]),
    ("NVads V710 v5", r"Standard_NV\d+adm?s_V710_v5", "Radeon-Pro-V710", ["azure-nvadsv710v5", "amd-v710"]),
    ("NVadsA10 v5", r"Standard_NV\d+adm?s_A10_v5", "A10", ["azure-nvadsa10v5", "nvidia-a10"]),
    ("NC A10 v4", r"Standard_NC\d+ads_A10_v4", "A10", ["azure-nca10v4", "nvidia-a10"]),
    ("NVv4", r"Standard_NV\d+as_v4", "MI25", ["azure-nvv4", "amd-mi25"]),
    ("NVv2", r"Standard_NV\d+s_v2", "M60", ["azure-nvv2", "nvidia-m60"]),
    ("NVv3", r"Standard_NV\d+s_v3", "M60", ["azure-nvv3", "nvidia-m60"]),
    ("NP", r"Standard_NP\d+s", "Alveo-U250", ["azure-np", "xilinx-u250"]),
]
# Partial GPUs: the API says GPUs=1; size -> (fraction, memory of the slice in MiB).
AZ_GPU_SLICES = {
    "Standard_NV6ads_A10_v5": ("1/6", 4 * GIB), "Standard_NV12ads_A10_v5": ("1/3", 8 * GIB),
    "Standard_NV18ads_A10_v5": ("1/2", 12 * GIB),
    "Standard_NV4as_v4": ("1/8", 2 * GIB), "Standard_NV8as_v4": ("1/4", 4 * GIB),
    "Standard_NV16as_v4": ("1/2", 8 * GIB),
    "Standard_NG8ads_V620_v1": ("1/4", 8 * GIB), "Standard_NG16ads_V620_v1": ("1/2", 16 * GIB),
    "Standard_NV4ads_V710_v5": ("1/6", 4 * GIB), "Standard_NV8ads_V710_v5": ("1/3", 8 * GIB),
    "Standard_NV12ads_V710_v5": ("1/2", 12 * GIB),
}
AZ_SLICE_FACTS = {"A10": ["azure-nvadsa10v5"], "MI25": ["azure-nvv4"], "Radeon-Pro-V620": ["azure-ngadsv620"],
                  "Radeon-Pro-V710": ["azure-nvadsv710v5"]}
# Sizes that carry GPUs where the source says GPUs=0 (the SKU API gives these
# sizes no GPUs capability): size -> (GPU count, fact keys).
AZ_GPU_MISSING = {
    "Standard_ND96is_MI300X_v5": (8, ["azure-isolated", "azure-ndmi300xv5"]),
    "Standard_NG8ads_V620_v1": (1, ["azure-ngadsv620"]), "Standard_NG16ads_V620_v1": (1, ["azure-ngadsv620"]),
    "Standard_NG32ads_V620_v1": (1, ["azure-ngadsv620"]), "Standard_NG32adms_V620_v1": (1, ["azure-ngadsv620"]),
    "Standard_NV4ads_V710_v5": (1, ["azure-nvadsv710v5"]), "Standard_NV8ads_V710_v5": (1, ["azure-nvadsv710v5"]),
    "Standard_NV12ads_V710_v5": (1, ["azure-nvadsv710v5"]), "Standard_NV24ads_V710_v5": (1, ["azure-nvadsv710v5"]),
    "Standard_NV28adms_V710_v5": (1, ["azure-nvadsv710v5"]),
}
# GPU sizes whose per-GPU memory no source at hand gives (left empty).
AZ_GPU_MEMORY_UNKNOWN = ["Standard_NC8ads_A10_v4", "Standard_NC16ads_A10_v4", "Standard_NC32ads_A10_v4"]
# Memory the source truncates to whole GiB (its generator does int64(MemoryGB) * 1024).
AZ_MEMORY = {
    "Standard_B1ls": (512, ["azure-bs", "azure-sku-api"]),
    "Standard_D1": (3584, ["azure-dv2", "azure-sku-api"]),
    "Standard_D1_v2": (3584, ["azure-dv2", "azure-sku-api"]),
    "Standard_DS1": (3584, ["azure-dv2", "azure-sku-api"]),
    "Standard_DS1_v2": (3584, ["azure-dv2", "azure-sku-api"]),
    "Standard_M8ms": (224000, ["azure-m", "azure-sku-api"]),
    "Standard_M16ms": (448000, ["azure-m", "azure-sku-api"]),
}
AZ_ISA = {"amd64": "x86_64", "arm64": "aarch64"}


def convert_azure(rows, log):
    """The autoscaler's sizes -> {name: catalog row}, before the Fix entries.
    GPU rows get their count here and their model from azure_fixes()."""
    out = {}
    for r in rows:
        name = r["name"].strip()
        if not name:
            continue
        if r["architecture"] not in AZ_ISA:
            raise ValueError("azure %s: architecture %r is neither amd64 nor arm64" % (name, r["architecture"]))
        gpus = int(r["gpu_count"])
        row = {"instance_type": name, "vcpus": str(int(r["vcpus"])), "memory_mib": str(int(r["memory_mib"])),
               "storage_type": "", "storage_gib": "", "network_gbps": "", "source": "autoscaler"}
        row.update(zip(ACC_COLS, accel_cells(0, None)))
        if gpus:
            row["accelerator_count"] = ""  # completed by the series Fix (validate() fails otherwise)
        row.update(zip(PROC_COLS, ["", "", "", AZ_ISA[r["architecture"]]]))
        if name in out:
            log.dups["azure"].append(name)
            if out[name] != row:
                raise ValueError("azure %s is listed twice with different values" % name)
            continue
        out[name] = row
    return out


def azure_fixes(rows):
    """The Fix entries for the azure sizes: a GPU model per series, the slices'
    memory, the memory the source truncates."""
    gpu = {r["name"]: int(r["gpu_count"]) for r in rows if int(r["gpu_count"]) > 0}
    api = dict(gpu)
    for name, (n, _) in AZ_GPU_MISSING.items():
        src = [r for r in rows if r["name"] == name]
        if not src or src[0]["gpu_count"] != "0":
            raise ValueError("azure %s: AZ_GPU_MISSING expects it in the source with GPUs 0 (%s)"
                             % (name, src[0]["gpu_count"] if src else "not listed"))
        gpu[name] = n
    fixes, seen = [], {}
    for series, pat, model, facts in AZ_GPU_SERIES:
        names = sorted(n for n in gpu if re.fullmatch(pat, n))
        if not names:
            raise ValueError("azure GPU series %s (%s) matches no size of the source" % (series, pat))
        for n in names:
            if n in seen:
                raise ValueError("azure %s matches two GPU series: %s and %s" % (n, seen[n], series))
            seen[n] = series
        names = [n for n in names if n in api]
        if names:
            says = ("GPUs %s (the SKU API counts FPGAs as GPUs, and names no model)" if model == "Alveo-U250"
                    else "GPUs %s (the SKU API names no model and no memory)") % "/".join(str(gpu[n]) for n in names)
            fixes.append(Fix("azure", "accelerator model (%s)" % series, names, says, facts,
                             accel={n: (gpu[n], model) for n in names}))
    for name in sorted(AZ_GPU_MISSING, key=lambda n: (seen[n], n)):
        n, facts = AZ_GPU_MISSING[name]
        model = [m for s_, _, m, f in AZ_GPU_SERIES if s_ == seen[name]][0]
        fixes.append(Fix("azure", "missing accelerators (%s)" % seen[name], [name],
                         "GPUs 0 (the SKU API gives this size no GPUs capability)", facts,
                         accel={name: (n, model)}))
    missing = sorted(set(gpu) - set(seen))
    if missing:
        raise ValueError("azure sizes with GPUs > 0 in no GPU series: %s (add them to AZ_GPU_SERIES)"
                         % ", ".join(missing))
    for name in sorted(AZ_GPU_SLICES, key=lambda n: (seen.get(n, ""), n)):
        frac, mem = AZ_GPU_SLICES[name]
        model = [m for s, _, m, _ in AZ_GPU_SERIES if s == seen.get(name)]
        fixes.append(Fix("azure", "partial GPU", [name], "GPUs 1 (a %s slice of one)" % frac,
                         AZ_SLICE_FACTS[model[0]] if model else [], set={"accelerator_memory_mib": str(mem)}))
    fixes.append(Fix("azure", "GPU memory unknown", AZ_GPU_MEMORY_UNKNOWN,
                     "GPUs 1/1/2, sizes that carry GPU partitions", ["azure-nca10v4"],
                     set={"accelerator_memory_mib": ""}))
    for name in sorted(AZ_MEMORY):
        mem, facts = AZ_MEMORY[name]
        src = [r for r in rows if r["name"] == name]
        fixes.append(Fix("azure", "memory", [name], "memory_mib %s (MemoryGB truncated to whole GiB)"
                         % (src[0]["memory_mib"] if src else "?"), facts, set={"memory_mib": str(mem)}))
    return fixes


# The input files.
SRC_TYPES = {"aws": "catalog/platformaware/db-machinetypes.ec2.csv",
             "gcp": "catalog/platformaware/db-machinetypes.gcp.csv",
             "azure": "catalog/azure/vm_sizes.k8s-autoscaler.csv"}
SRC_INTEL = "catalog/platformaware/db-processors.Intel.csv"
SRC_PRICES = {"aws": "prices/aws_us-east-1_linux_ondemand.karpenter.csv",
              "gcp": "prices/gce_us-central1_ondemand_spot.karpenter-provider-gcp.csv",
              "azure": "prices/azure_eastus_linux_ondemand.karpenter-provider-azure.csv"}
REGION = {"aws": "us-east-1", "gcp": "us-central1", "azure": "eastus"}
COPIED = {"LICENSE-Apache-2.0": "prices/LICENSE-Apache-2.0",
          "NOTICE-karpenter-provider-aws": "prices/NOTICE-karpenter-provider-aws",
          "NOTICE-karpenter-provider-azure": "prices/NOTICE-karpenter-provider-azure"}


class Log:
    """Warnings (stderr) and the facts SOURCES.md reports."""

    def __init__(self, quiet):
        self.quiet = quiet
        self.warnings = []
        self.dups = {p: [] for p in PROVIDERS}
        self.accel_table = {}    # model -> [types] (ACCEL_TABLE_ERRORS)
        self.added = []          # (provider, row, facts)
        self.prices = {}         # provider -> dict of counts
        self.intel_checked = 0   # PROC entries found in PlatformAware's Intel table

    def warn(self, msg):
        self.warnings.append(msg)
        if not self.quiet:
            print("build-catalog: warning: " + msg, file=sys.stderr)

    def note(self, msg):
        if not self.quiet:
            print("build-catalog: " + msg, file=sys.stderr)


# --------------------------------------------------------------- conversion

def mib(size):
    """PlatformAware memory ('16.0G', '30.5G', '1740.8M') -> MiB, rounded down
    to a whole MiB as the EC2 and Compute Engine APIs do (1.7 GiB -> 1740)."""
    s = size.strip()
    mult = {"M": 1, "G": GIB, "T": GIB * GIB}[s[-1]]
    return str(int(math.floor(float(s[:-1]) * mult + 1e-9)))


def storage_gib(size):
    """Storage '3800G' -> '3800', '4T' -> '4096' (GiB as the source writes it);
    '' when unknown."""
    s = size.strip()
    if s in SENTINELS:
        return ""
    mult = {"G": 1, "T": 1024}[s[-1]]
    return str(int(round(float(s[:-1]) * mult)))


def gbps(net):
    """Network '25G', '<10G' (up to 10 -> 10), '<250M' (-> 0.25) -> Gbit/s."""
    s = net.strip()
    if s in SENTINELS:
        return ""
    if s.startswith("<"):
        s = s[1:]
    mult = {"M": 0.001, "G": 1.0}[s[-1]]
    return fmt_num(float(s[:-1]) * mult)


def fmt_num(v):
    return ("%.3f" % v).rstrip("0").rstrip(".")


def vcpus(text):
    t = text.strip()
    return t if t.isdigit() else ""  # '256m' (shared core) is set by a Fix


def accel_cells(count, model):
    if not count or model is None:
        return ["0", "", "", "", "", ""]
    typ, manuf, arch, mem, _ = MODELS[model]
    return [str(count), model, typ, manuf, arch, "" if mem is None else str(mem)]


def proc_cells(key, name, provider):
    if key in SENTINELS:
        # GCP families without a processor name: all x86_64 but t2a and c4a
        if provider == "gcp":
            return ["", "", "", "aarch64" if name.startswith(("t2a-", "c4a-")) else "x86_64"]
        return ["", "", "", ""]
    if key not in PROC:
        raise KeyError("processor %r of %s has no entry in PROC" % (key, name))
    return [c.replace(",", " ") for c in PROC[key]]


def resolve_accel(name, acc_name, count, log):
    """The source's accelerator name -> canonical model, or None."""
    if count == 0 or acc_name in SENTINELS:
        return None
    if acc_name in ("NVIDIA A100", "NVIDIA_A100"):
        return None  # set by the A100 Fix entries (the build fails if one is missing)
    if acc_name == "NVIDIA Tesla V100":
        return "V100-16GB"  # p3.*; p3dn.24xlarge is set to V100-32GB by a Fix
    if acc_name in SOURCE_ACCEL:
        return SOURCE_ACCEL[acc_name]
    raise KeyError("accelerator %r of %s has no entry in SOURCE_ACCEL" % (acc_name, name))


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def convert(provider, rows, log):
    """Source rows -> {instance_type: catalog row}, before the Fix entries."""
    out = {}
    for r in rows:
        name = r["api_name"].strip()
        if not name:
            continue
        acc_name = r["accelerator"].strip()
        count_txt = r["accelerator_count"].strip()
        count = int(count_txt) if count_txt.isdigit() else 0
        model = resolve_accel(name, acc_name, count, log)
        source = "platformaware"
        if model in ACCEL_TABLE_ERRORS:
            source = "platformaware+fix"
            log.accel_table.setdefault(model, []).append(name)
        st = STORAGE.get(r["storage_type"].strip(), "")
        size = "" if st == "ebs" else storage_gib(r["storage_size"])
        if not st and size:
            st = "ssd"  # GCP Local SSD (the source: storage_type unset)
        row = {"instance_type": name,
               "vcpus": vcpus(r["node_vcpus_count"]),
               "memory_mib": mib(r["node_memory_size"]),
               "storage_type": st, "storage_gib": size,
               "network_gbps": gbps(r["network_performance"]),
               "source": source}
        row.update(zip(ACC_COLS, accel_cells(count if model else 0, model)))
        if model is None and count:
            # "NVIDIA A100" rows are completed by the A100 Fix entries; any
            # other count without a model is an error that validate() reports.
            row["accelerator_count"] = ""
        row.update(zip(PROC_COLS, proc_cells(r["processor"].strip(), name, provider)))
        if name in out:
            log.dups[provider].append(name)
            if out[name] == row:
                continue
            # Keep the row that knows more (fewer empty cells); on a tie the
            # first one, as the source lists it.
            known = lambda x: sum(1 for k in HEADER if x[k] != "")
            keep = row if known(row) > known(out[name]) else out[name]
            log.warn("%s: %s is listed twice with different values; keeping the %s one"
                     % (provider, name, "second" if keep is row else "first"))
            out[name] = keep
            continue
        out[name] = row
    return out


def apply_fixes(provider, out, fixes, log):
    for fx in fixes:
        if fx.provider != provider:
            continue
        for t in fx.types:
            if t not in out:
                raise ValueError("correction %r: %s is not in the %s source any more" % (fx.what, t, provider))
            row = out[t]
            if fx.accel:
                n, model = fx.accel[t]
                row.update(zip(ACC_COLS, accel_cells(n, model)))
            if fx.proc:
                row.update(zip(PROC_COLS, proc_cells(fx.proc, t, provider)))
            for col, v in fx.set.items():
                row[col] = v(t) if callable(v) else v
            row["source"] = SOURCE_TAG[provider] + "+fix"
            fx.applied.append(t)


def add_types(provider, out, log):
    for (name, cpus, mem_gib, count, model, proc, st, disk, net, facts) in ADDED[provider]:
        if name in out:
            raise ValueError("%s is already in the %s source; do not add it" % (name, provider))
        row = {"instance_type": name, "vcpus": str(cpus), "memory_mib": str(mem_gib * GIB),
               "storage_type": st, "storage_gib": "" if disk is None else str(disk),
               "network_gbps": "" if net is None else fmt_num(net), "source": "added"}
        row.update(zip(ACC_COLS, accel_cells(count, model)))
        row.update(zip(PROC_COLS, proc_cells(proc, name, provider)))
        out[name] = row
        log.added.append((provider, row, facts))


def validate(provider, rows):
    """The exact format the C loader is written to."""
    allowed_arch = {m: set(v.split()) for m, v in ARCHS.items()}
    for name, r in rows.items():
        bad = lambda why: ValueError("%s %s: %s (%r)" % (provider, name, why, r))
        for k in HEADER:
            v = r[k]
            if "," in v or "\n" in v or '"' in v:
                raise bad("cell %s holds a comma, quote or newline" % k)
            if v.lower() in ("na", "unset", "unknown"):
                raise bad("cell %s is a sentinel" % k)
        for k in ("vcpus", "memory_mib", "accelerator_count", "accelerator_memory_mib", "storage_gib"):
            if r[k] and not r[k].isdigit():
                raise bad("%s is not an integer" % k)
        if not r["vcpus"] or not r["memory_mib"] or r["accelerator_count"] == "":
            raise bad("vcpus, memory_mib and accelerator_count must be known")
        if r["network_gbps"]:
            float(r["network_gbps"])
        if r["accelerator_count"] == "0":
            if any(r[k] for k in ACC_COLS[1:]):
                raise bad("no accelerator but accelerator cells")
        else:
            if r["accelerator"] not in MODELS or r["accelerator_type"] not in ACC_TYPES:
                raise bad("unknown accelerator model or type")
            if r["accelerator_architecture"] not in allowed_arch.get(r["accelerator_manufacturer"], ()):
                raise bad("architecture not in the C side's list for its manufacturer")
        if r["storage_type"] not in STORAGE_TYPES or (r["storage_type"] == "ebs" and r["storage_gib"]):
            raise bad("storage_type")
        if r["processor_isa"] not in ISAS or r["processor_manufacturer"] not in PROC_MANUFACTURERS:
            raise bad("processor_isa or processor_manufacturer")
        if r["source"] not in (SOURCE_TAG[provider], SOURCE_TAG[provider] + "+fix", "added"):
            raise bad("source")


def check_intel_uarch(data, log):
    """Cross-check the Intel microarchitectures of PROC against PlatformAware's
    db-processors.Intel.csv (only warns; the table in PROC decides)."""
    db = {}
    with open(os.path.join(data, SRC_INTEL), newline="") as f:
        table = list(csv.reader(f))
    for r in table:
        if len(r) < 8 or not r[0].startswith("Intel"):
            continue
        path = r[0].split(";")[2:]  # after Intel;Xeon / Intel;Core
        model = "-".join(path + [r[1]]) if path else r[1]
        if path and path[0] in ("E5", "E7") and len(path) == 2:
            model = "%s-%s %s" % (path[0], path[1], r[1]) if r[1] else "%s-%s" % (path[0], path[1])
        db.setdefault(model.lower(), r[7].lower())
    for key, (disp, manuf, uarch, _) in sorted(PROC.items()):
        if manuf != "Intel" or not uarch:
            continue
        words = disp.split()
        token = words[-1] if not words[-1].startswith("v") else " ".join(words[-2:])
        theirs = db.get(token.lower())
        if theirs:
            log.intel_checked += 1
            if theirs.replace(" ", "") != uarch:
                log.warn("PROC[%r] says %s, PlatformAware's Intel table says %s" % (key, uarch, theirs))


# ------------------------------------------------------------------ output

def write_types(path, provider, rows, src):
    with open(path, "w", newline="") as f:
        f.write("# slurm-burst instance catalog, provider %s\n" % provider)
        f.write("# version=%s\n" % VERSION)
        f.write("# made by tools/build-catalog.py from %s (%s) with corrections "
                "and additions; see SOURCES.md\n" % (os.path.basename(src), SRC_ORIGIN[provider]))
        f.write(",".join(HEADER) + "\n")
        for name in sorted(rows):
            f.write(",".join(rows[name][k] for k in HEADER) + "\n")


SRC_ORIGIN = {"aws": "PlatformAware.jl, MIT", "gcp": "PlatformAware.jl, MIT",
              "azure": "kubernetes/autoscaler, Apache-2.0"}


def price(s):
    """A price as written upstream, trailing zeros dropped ('5.672000' -> '5.672')."""
    s = s.strip()
    if not s:
        return ""
    if float(s) < 0:
        raise ValueError("negative price %r" % s)
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def build_prices(provider, data, types, log):
    path = os.path.join(data, SRC_PRICES[provider])
    rows, outside, seen = [], [], set()
    for r in read_csv(path):
        name = (r.get("instance_type") or r.get("machine_type") or r.get("arm_sku_name")).strip()
        if name in seen:
            log.warn("%s: %s is priced twice in %s; keeping the first" % (provider, name, SRC_PRICES[provider]))
            continue
        seen.add(name)
        if name not in types:
            outside.append(name)
            continue
        if provider in ("aws", "azure"):
            rows.append((name, REGION[provider], price(r["usd_per_hour"]), ""))
        else:
            rows.append((name, REGION[provider], price(r["usd_per_hour_on_demand"]),
                         price(r["usd_per_hour_spot"])))
    rows.sort()
    priced = {r[0] for r in rows}
    log.prices[provider] = {"types": len(types), "priced": len(priced),
                            "unpriced": sorted(set(types) - priced), "outside": sorted(outside),
                            "rows_in": len(seen)}
    return rows


def write_prices(path, rows, source):
    with open(path, "w", newline="") as f:
        f.write("# version=%s\n" % VERSION)
        f.write("# made by tools/build-catalog.py from %s; see SOURCES.md\n" % source)
        f.write(PRICE_HEADER + "\n")
        for r in rows:
            f.write(",".join(r) + "\n")


MIT_LICENSE = """MIT License

Copyright (c) 2022 Francisco Heron de Carvalho Junior <heron@dc.ufc.br> and contributors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def types_list(names, limit=12, sort=True):
    names = sorted(names) if sort else list(names)
    if len(names) <= limit:
        return ", ".join(names)
    return "%s, ... (%d types)" % (", ".join(names[:limit]), len(names))


def write_sources(path, data, fixes, log, counts):
    L = []
    w = L.append
    sha = {rel: sha256(os.path.join(data, rel)) for rel in
           sorted(list(SRC_TYPES.values()) + [SRC_INTEL] + list(SRC_PRICES.values()) + list(COPIED.values()))}
    w("# Where the shipped catalog comes from")
    w("")
    w("This file is generated by `tools/build-catalog.py` (do not edit it by hand: edit the")
    w("script and rerun it). The script reads the public data in `share/catalog-src` (its")
    w("`SOURCES.md` names each file's origin) and writes every file in this directory; `tools/build-catalog.py --check`")
    w("verifies that the files here are exactly what it makes, and `./check.sh` runs that.")
    w("Catalog version: `%s` (the `# version=` line of each CSV)." % VERSION)
    w("")
    w("| file | rows | made from | license |")
    w("| --- | --- | --- | --- |")
    w("| `aws.csv` | %d types | PlatformAware.jl `db-machinetypes.ec2.csv`, with the corrections and additions "
      "below | MIT, `LICENSE-MIT-PlatformAware` (additions: facts from the public pages named below) |" % counts["aws"])
    w("| `gcp.csv` | %d types | PlatformAware.jl `db-machinetypes.gcp.csv`, with the corrections and additions "
      "below | MIT, `LICENSE-MIT-PlatformAware` |" % counts["gcp"])
    w("| `aws-prices.csv` | %d types | karpenter-provider-aws us-east-1 on-demand Linux prices (spot empty) | "
      "Apache-2.0, `LICENSE-Apache-2.0`, `NOTICE-karpenter-provider-aws` |" % log.prices["aws"]["priced"])
    w("| `gcp-prices.csv` | %d types | karpenter-provider-gcp us-central1 on-demand and spot prices | "
      "Apache-2.0, `LICENSE-Apache-2.0` |" % log.prices["gcp"]["priced"])
    w("| `azure.csv` | %d sizes | kubernetes/autoscaler's static Azure size list, with the corrections below "
      "| Apache-2.0, `LICENSE-Apache-2.0` (corrections: facts from the public pages named below) |" % counts["azure"])
    w("| `azure-prices.csv` | %d sizes | karpenter-provider-azure eastus on-demand Linux prices (spot empty) | "
      "Apache-2.0, `LICENSE-Apache-2.0`, `NOTICE-karpenter-provider-azure` |" % log.prices["azure"]["priced"])
    w("")
    w("## Upstream sources")
    w("")
    w("### Instance types: PlatformAware.jl (MIT)")
    w("")
    w("* Repository `PlatformAwareProgramming/PlatformAware.jl` (GitHub), commit")
    w("  `4b9093689d1c45efb241523d7f0e383c08951e2e` (2026-05-28, \"ec2 db adjust\"; package version 0.6.1).")
    w("  Raw CSV data only, copied byte for byte with `git show <commit>:<path>`.")
    w("* `src/features/qualifiers/ec2/db-machinetypes.ec2.csv`: 624 EC2 instance types; file last changed in")
    w("  `c5e99be721a8dfb617aa9e6dc58431bfbbf65574` (2024-05-23).")
    w("* `src/features/qualifiers/gcp/db-machinetypes.gcp.csv`: 198 GCP machine types; file last changed in")
    w("  `4b9093689d1c45efb241523d7f0e383c08951e2e` (2026-05-28).")
    w("* `src/features/qualifiers/intel/db-processors.Intel.csv` (last changed in `c75aed794f8dfe8ad1e311a778732dda67f2c05e`,")
    w("  2024-05-17): used only to cross-check the Intel microarchitectures of the script's processor table.")
    w("  The accelerator tables (`db-accelerators.*.csv`) are not read: accelerator facts come from the")
    w("  model table in the script (the upstream tables are wrong for the A100, A10G and M60, see below).")
    w("* License: MIT, `LICENSE`: \"Copyright (c) 2022 Francisco Heron de Carvalho Junior <heron@dc.ufc.br> and")
    w("  contributors\" (full text in `LICENSE-MIT-PlatformAware`).")
    w("* CloudClusters.jl (MIT, `PlatformAwareProgramming/CloudClusters.jl@6d79f276ddf32a6b8ee6c900d239a1fb977cec49`)")
    w("  ships no catalog of its own: `PlatformAware.readCloudInstancesDB` downloads these CSVs at load time.")
    w("  PlatformAware's CSVs carry no price, region or availability column.")
    w("")
    w("### Prices (Apache-2.0)")
    w("")
    w("* `aws-prices.csv`: `aws/karpenter-provider-aws` @ `6fc13b5236fd04fd16ff3f9dc7490d0813994099` (2026-07-20,")
    w("  \"chore: Update data from AWS APIs (#9435)\"; unchanged at `1d927085dd81a9df9301e613f371dac5b4d16bfe`,")
    w("  2026-08-21), `pkg/providers/pricing/zz_generated.pricing_aws.go`, the `\"us-east-1\"` map of")
    w("  `InitialOnDemandPricesAWS`, generated 2026-07-20T13:44:30Z from the AWS Price List API (regionCode=us-east-1,")
    w("  operatingSystem=Linux, preInstalledSw=NA, capacitystatus=Used, marketoption=OnDemand, tenancy Shared, or")
    w("  Dedicated for bare metal). Rewritten as `instance_type,usd_per_hour` when copied into `share/catalog-src`; this script drops")
    w("  trailing zeros (`0.204000` -> `0.204`). On-demand only: the spot column is empty.")
    w("  NOTICE (quoted in `NOTICE-karpenter-provider-aws`): \"Karpenter / Copyright Amazon.com, Inc. or its affiliates.")
    w("  All Rights Reserved.\"")
    w("* `gcp-prices.csv`: `cloudpilot-ai/karpenter-provider-gcp` @ `373e2baa9665c864d29ae686dfadbc0dd97d8bb8`")
    w("  (2026-08-03, \"chore(pricing): scheduled pricing data refresh (#551)\"; unchanged at")
    w("  `417f047b117521aba6d3ab120dac538a92161bf4`, 2026-08-06), `pkg/providers/pricing/initial-prices.json`,")
    w("  `prices[\"us-central1\"]` on-demand and spot, as written by Python's `repr`; prices captured 2026-08-03 (the")
    w("  commit date; the file has no timestamp; a weekly job rebuilds it from the Cloud Billing Catalog API).")
    w("  GPU machine types (a2, a3, g2) are priced as the whole bundle (VM and GPUs). Cross-checked when copied")
    w("  against `Cyclenerd/google-cloud-pricing-cost-calculator` `pricing.yml` @ `fd66b26f` (Apache-2.0): 516 of 516")
    w("  us-central1 on-demand prices equal. Its README: \"This project includes code derived from")
    w("  karpenter-provider-aws, used under the Apache License, Version 2.0 terms.\"")
    w("* Not used (and not copied into the project): kubernetes/autoscaler's `gce_gpu_ondemand_spot` prices (per-GPU prices for GPUs attached to N1 types, which")
    w("  this catalog does not model) and the all-region JSON.")
    w("* These data files were reformatted (Go map / JSON -> CSV) before this script; the script reformats numbers")
    w("  only by dropping trailing zeros.")
    w("")
    w("### Azure (Apache-2.0)")
    w("")
    w("* `azure.csv`: `kubernetes/autoscaler` @ `55c37cd5eb550756c5ccc5a89e9068d77797e575` (2026-08-22),")
    w("  `cluster-autoscaler/cloudprovider/azure/azure_instance_types.go` (the size list regenerated in `ffb2c6ac`,")
    w("  2026-03-05, \"Update azure static sku list\"; the file last changed in `03e49d9c`, 2026-03-17). Its generator")
    w("  reads `az vm list-skus` (the Resource SKUs API, resourceType virtualMachines): capabilities `vCPUs`,")
    w("  `MemoryGB` (written as `int64(MemoryGB) * 1024` MiB, so fractional GiB are truncated: corrected below),")
    w("  `GPUs` and `CpuArchitectureType`. The `InstanceTypes` map was rewritten as")
    w("  `name,sku_family,vcpus,memory_mib,gpu_count,architecture`, one row per entry, values as written. License")
    w("  Apache-2.0; the file header: \"Copyright The Kubernetes Authors.\" The source gives no GPU model or memory,")
    w("  no processor, disk or network: the GPU facts come from the series table below; `processor_isa` is the")
    w("  architecture (`amd64` x86_64, `arm64` aarch64); the other processor, storage and network cells are empty.")
    w("* `azure-prices.csv`: `Azure/karpenter-provider-azure` @ `352646f599290c3a6d2f9710fb535a7b288f88ed` (2026-08-21),")
    w("  `pkg/providers/pricing/zz_generated.pricing.go` (last changed in `2b431da1`, 2026-07-16; \"generated at")
    w("  2026-06-18T03:43:41Z\"), the `initialOnDemandPrices[\"eastus\"]` map rewritten as `arm_sku_name,usd_per_hour`.")
    w("  Made from the Azure Retail Prices API (priceType Consumption, USD, serviceName Virtual Machines,")
    w("  armRegionName eastus) without Windows and Low Priority meters; spot meters are not in the file, so the")
    w("  spot column is empty. On-demand Linux pay-as-you-go, USD per hour. License Apache-2.0 (\"Portions Copyright")
    w("  (c) Microsoft Corporation\"); its `NOTICE.txt` is kept as `NOTICE-karpenter-provider-azure`.")
    w("")
    w("### Input files as read")
    w("")
    w("| file in `share/catalog-src` | sha256 |")
    w("| --- | --- |")
    for rel in sorted(sha):
        w("| `%s` | `%s` |" % (rel, sha[rel]))
    w("")
    w("## Conversion rules")
    w("")
    w("* One row per instance type, sorted by name; an empty cell means unknown (the source's `na`, `unset`,")
    w("  `unknown` become empty). No cell holds a comma, so no quoting.")
    w("* Memory: PlatformAware's `16.0G` is 16 GiB -> `memory_mib` 16384; fractional sizes are rounded down to a")
    w("  whole MiB as the EC2 and Compute Engine APIs do (`1.7G` -> 1740, `1740.8M` -> 1740).")
    w("* GCP memory: Google's machine-type \"GB\" is 1,024 MiB (evidence: %s). The source's GCP rows already use" % FACTS["gcp-memunit"])
    w("  that unit (a2-highgpu-1g `85.0G` = 85 x 1024 MiB), and the added A3 types are converted the same way:")
    w("  234 GB -> 234 x 1024 = 239616 MiB. (Read as decimal GB, 234 GB would be 223163 MiB; that is not what the")
    w("  VM gets.)")
    w("* Accelerator memory is per device, in MiB, from the model table below (vendor's nominal GB taken as GiB).")
    w("* Local storage: `storage_gib` is the provider's per-instance total as the source writes it (`3800G` -> 3800,")
    w("  `4T` -> 4096 before corrections); the providers publish these sizes in GB (AWS) or GiB (GCP Local SSD).")
    w("  `storage_type`: `ebs` for EBS-only (size empty), `nvme-ssd`, `ssd` (also GCP Local SSD), `hdd`.")
    w("* Network: Gbit/s; \"up to N\" (`<10G`) is written N; `M` values are divided by 1000 (`<250M` -> 0.25).")
    w("* `accelerator_count` 0 leaves every other accelerator cell empty.")
    w("* `source`: `platformaware` (as the source says), `platformaware+fix` (a correction below applies),")
    w("  `added` (not in the source; facts from the sources named below).")
    w("")
    w("## Accelerator models")
    w("")
    w("| model | type | manufacturer | architecture | memory per device (MiB) | fact sources |")
    w("| --- | --- | --- | --- | --- | --- |")
    for m in sorted(MODELS):
        t, man, arch, mem, facts = MODELS[m]
        w("| %s | %s | %s | %s | %s | %s |" % (m, t, man, arch, "unknown" if mem is None else mem,
                                              ", ".join("`%s`" % f for f in facts)))
    w("")
    w("The L4, L40S are Ada Lovelace (`ada`); the A10G and A100 Ampere; the Radeon Pro V520 is Navi 12 (`rdna`).")
    w("B200 memory: AWS states 1,440 GB for 8 GPUs (180 GB each); the EC2 API reports 183359 MiB per GPU.")
    w("")
    w("## Processors")
    w("")
    w("Display names, manufacturers, microarchitectures and ISAs come from the `PROC` table in the script,")
    w("keyed by the source's processor string; the microarchitecture is derived from the model number and left")
    w("empty when the string does not pin it down (e.g. \"Intel Xeon Scalable\"). PlatformAware's AMD table gives")
    w("\"Zen\" for every EPYC, so the script uses the generations: 7571 zen, 7R32 zen2, 7R13/7B13 zen3, 9R14 zen4.")
    w("%d Intel entries of the table are also in PlatformAware's `db-processors.Intel.csv`; its" % log.intel_checked)
    w("microarchitectures %s." % ("agree with all of them" if not any("Intel table" in x for x in log.warnings)
                                  else "disagree in places (see the build's warnings)"))
    w("Graviton1/2/3/4: cortex-a72, neoverse-n1, neoverse-v1, neoverse-v2. Besides Intel, AMD and AWS, two")
    w("manufacturers occur: `Apple` (mac2.metal, Apple M1) and `Ampere` (GCP t2a, Ampere Altra Q64-30).")
    w("")
    w("## Corrections of the source")
    w("")
    w("Every row a correction touches has `source` = `platformaware+fix` (aws, gcp) or `autoscaler+fix` (azure).")
    w("")
    w("| provider | what | types | the source says | the catalog says | fact sources |")
    w("| --- | --- | --- | --- | --- | --- |")
    for fx in fixes:
        w("| %s | %s | %s | %s | %s | %s |" % (fx.provider, fx.what, types_list(fx.types, sort=False), fx.says,
                                             fx.catalog_says(), ", ".join("`%s`" % f for f in fx.facts)))
    for model in sorted(log.accel_table):
        says, facts = ACCEL_TABLE_ERRORS[model]
        t, man, arch, mem, _ = MODELS[model]
        w("| aws | accelerator memory | %s | %s | %s, %d MiB per GPU | %s |"
          % (types_list(log.accel_table[model]), says, model, mem, ", ".join("`%s`" % f for f in facts)))
    w("")
    w("Also checked and found right in the source: g6.12xlarge (typed `EC2Type_G5_12xLarge` in the")
    w("`node_machinetype` column, which the catalog does not carry; its 48 vCPU, 192 GiB, 4 x L4 are right,")
    w("its local NVMe is corrected above),")
    w("g4dn (T4 16 GB), g5g (T4G 16 GB), g3 (M60), p2 (K80 12 GB), g2 (K520 4 GB), g4ad (V520 8 GB), f1 (VU9P),")
    w("g2-standard-* (L4), p3.* (V100 16 GB).")
    w("")
    w("Azure: every size with `GPUs` > 0 in the source is in exactly one GPU series above (the build fails")
    w("otherwise), and its count is the API's. A partial GPU (the API says 1) stays one accelerator with the")
    w("memory of its slice, so a job asking for accelerator memory never lands on a slice too small for it;")
    w("`accelerator=A10` still matches the slices. The H100 NVL of the NCads/NCCads H100 v5 sizes (94 GB, PCIe)")
    w("is its own model, `H100-NVL`: `accelerator=H100` means the 80 GB SXM part. Not in the source, so not in")
    w("the catalog: sizes added after 2026-03 (e.g. D*v7, ND GB200/GB300 v6, NC RTX PRO 6000 v6) and retired")
    w("ones (A0-A11, NC/NCv2/ND v1). Memory: the source truncates `MemoryGB` to whole GiB; the sizes known to have")
    w("a fraction are corrected above (the error is under 1 GiB for any other).")
    w("")
    w("## Added instance types")
    w("")
    w("| provider | type | vCPU | memory (MiB) | accelerators | processor | local storage | network (Gbit/s) | fact sources |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for prov, r, facts in log.added:  # in the order of ADDED
        acc = "%s x %s" % (r["accelerator_count"], r["accelerator"])
        proc = r["processor"] or ("%s (model unknown)" % r["processor_manufacturer"])
        disk = "%s %s" % (r["storage_type"], r["storage_gib"]) if r["storage_gib"] else (r["storage_type"] or "unknown")
        w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (prov, r["instance_type"], r["vcpus"], r["memory_mib"], acc,
                                                             proc, disk, r["network_gbps"] or "unknown",
                                                             ", ".join("`%s`" % f for f in facts)))
    w("")
    w("Notes: the GCP A3 types' local SSD and network are left unknown. trn1.2xlarge network is left unknown")
    w("(the AWS Trn1 page says up to 12.5 Gbps, the Neuron documentation up to 25). The inf2 and trn CPU models")
    w("are not confirmed by a public source at hand, so only the manufacturer (from the EC2 API) is given.")
    w("Not added: a3-edgegpu-8g (a regional variant of a3-highgpu-8g), A4/B200 and G4/RTX PRO 6000 on GCP,")
    w("p6-b300, g6f/gr6f (fractional GPUs), f2, g7/g7e.")
    w("")
    w("## Duplicates")
    w("")
    for prov in PROVIDERS:
        d = log.dups[prov]
        if d:
            w("* %s: %d repeated rows (%s); identical repeats are dropped, differing ones keep the row with more known"
              " cells (the first on a tie) and are reported on stderr." % (prov, len(d), types_list(d)))
        else:
            w("* %s: no instance type is listed twice in this copy of the source (the script would drop identical"
              " repeats and, for differing ones, keep the row with more known cells and warn)." % prov)
    w("")
    w("## Price coverage")
    w("")
    for prov in PROVIDERS:
        p = log.prices[prov]
        w("* %s (%s): %d of %d catalog types priced; %d catalog types have no price (%s); %d priced types are"
          " not in the catalog and are left out." % (prov, REGION[prov], p["priced"], p["types"], len(p["unpriced"]),
                                                    types_list(p["unpriced"], 20) or "none", len(p["outside"])))
    w("")
    w("## Fact sources")
    w("")
    for k in sorted(FACTS):
        w("* `%s`: %s." % (k, FACTS[k].rstrip(".")))
    w("")
    w("## Files shipped beside the data")
    w("")
    w("* `LICENSE-MIT-PlatformAware`: the MIT license of PlatformAware.jl, with its copyright line.")
    w("* `LICENSE-Apache-2.0`: the Apache License 2.0 text (karpenter-provider-aws, karpenter-provider-gcp, "
      "kubernetes/autoscaler, karpenter-provider-azure).")
    w("* `NOTICE-karpenter-provider-aws`: the NOTICE of aws/karpenter-provider-aws, as its license requires.")
    w("* `NOTICE-karpenter-provider-azure`: the NOTICE of Azure/karpenter-provider-azure, as its license requires.")
    w("")
    w("A site adds types and prices with `InstanceType=` and `Price=` lines in burst.conf (burst.conf(5));")
    w("`burstctl catalog refresh` rewrites a provider's files from its cloud's API.")
    with open(path, "w", newline="") as f:
        f.write("\n".join(L) + "\n")


# ------------------------------------------------------------------- build

def build(data, out_dir, quiet=False):
    log = Log(quiet)
    check_intel_uarch(data, log)
    src = {p: read_csv(os.path.join(data, SRC_TYPES[p])) for p in PROVIDERS}
    fixes = FIXES + _gcp_family_fixes(src["gcp"]) + azure_fixes(src["azure"])
    cat = {}
    for p in PROVIDERS:
        cat[p] = convert_azure(src[p], log) if p == "azure" else convert(p, src[p], log)
        apply_fixes(p, cat[p], fixes, log)
        add_types(p, cat[p], log)
        validate(p, cat[p])
    for fx in fixes:
        if sorted(fx.applied) != sorted(fx.types):
            raise ValueError("correction %r did not apply to all of %s" % (fx.what, fx.types))

    os.makedirs(out_dir, exist_ok=True)
    for p in PROVIDERS:
        write_types(os.path.join(out_dir, p + ".csv"), p, cat[p], SRC_TYPES[p])
    write_prices(os.path.join(out_dir, "aws-prices.csv"), build_prices("aws", data, cat["aws"], log),
                 "karpenter-provider-aws zz_generated.pricing_aws.go, us-east-1 on-demand Linux (Apache-2.0)")
    write_prices(os.path.join(out_dir, "gcp-prices.csv"), build_prices("gcp", data, cat["gcp"], log),
                 "karpenter-provider-gcp initial-prices.json, us-central1 on-demand and spot (Apache-2.0)")
    write_prices(os.path.join(out_dir, "azure-prices.csv"), build_prices("azure", data, cat["azure"], log),
                 "karpenter-provider-azure zz_generated.pricing.go, eastus on-demand Linux (Apache-2.0)")
    with open(os.path.join(out_dir, "LICENSE-MIT-PlatformAware"), "w", newline="") as f:
        f.write(MIT_LICENSE)
    for name, rel in COPIED.items():
        shutil.copyfile(os.path.join(data, rel), os.path.join(out_dir, name))
    write_sources(os.path.join(out_dir, "SOURCES.md"), data, fixes, log,
                  {p: len(cat[p]) for p in cat})

    # Summary on stderr
    for p in PROVIDERS:
        pr = log.prices[p]
        nfix = sum(1 for r in cat[p].values() if r["source"] == SOURCE_TAG[p] + "+fix")
        nadd = sum(1 for r in cat[p].values() if r["source"] == "added")
        log.note("%s: %d types (%d corrected, %d added); %d priced in %s, %d without a price; "
                 "%d priced types not in the catalog (left out)"
                 % (p, len(cat[p]), nfix, nadd, pr["priced"], REGION[p], len(pr["unpriced"]), len(pr["outside"])))
    for fx in fixes:
        log.note("fixed %s %s: %s -> %s" % (fx.provider, fx.what, types_list(fx.types, 4, sort=False),
                                            fx.catalog_says()))
    for model, names in sorted(log.accel_table.items()):
        log.note("fixed aws accelerator memory: %s -> %s %d MiB" % (types_list(names, 4), model, MODELS[model][3]))
    for p, r, _ in log.added:
        log.note("added %s %s: %s vCPU, %s MiB, %s x %s" % (p, r["instance_type"], r["vcpus"], r["memory_mib"],
                                                          r["accelerator_count"], r["accelerator"]))
    return cat, log


def check(data, out_dir):
    tmp = tempfile.mkdtemp(prefix="build-catalog.")
    try:
        build(data, tmp, quiet=True)
        bad = 0
        for name in OUTPUT_FILES:
            mine, theirs = os.path.join(tmp, name), os.path.join(out_dir, name)
            if not os.path.exists(theirs):
                print("build-catalog: %s is missing" % theirs, file=sys.stderr)
                bad += 1
                continue
            with open(mine, "rb") as f:
                a = f.read()
            with open(theirs, "rb") as f:
                b = f.read()
            if a == b:
                continue
            bad += 1
            diff = list(difflib.unified_diff(b.decode("utf-8", "replace").splitlines(),
                                             a.decode("utf-8", "replace").splitlines(),
                                             "committed/" + name, "regenerated/" + name, n=0, lineterm=""))
            changed = sum(1 for d in diff if d[:1] in "+-" and d[:3] not in ("+++", "---"))
            print("build-catalog: %s differs (%d lines changed):" % (name, changed), file=sys.stderr)
            for d in diff[:24]:
                print("  " + d, file=sys.stderr)
            if len(diff) > 24:
                print("  ... (%d more diff lines)" % (len(diff) - 24), file=sys.stderr)
        if bad:
            print("build-catalog: %d of %d files in %s are not what the script makes from %s; "
                  "run tools/build-catalog.py and commit the result" % (bad, len(OUTPUT_FILES), out_dir, data),
                  file=sys.stderr)
            return 1
        print("build-catalog: %s is what the script makes from %s (version %s)" % (out_dir, data, VERSION))
        return 0
    finally:
        shutil.rmtree(tmp)


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(top, "share", "catalog-src"),
                    help="the source data (default: share/catalog-src)")
    ap.add_argument("--out", default=os.path.join(top, "share", "catalog"),
                    help="where to write (default: share/catalog)")
    ap.add_argument("--check", action="store_true",
                    help="regenerate into a temporary directory and compare with --out; exit 1 if they differ")
    a = ap.parse_args()
    data = os.path.normpath(a.data)
    if not os.path.isfile(os.path.join(data, SRC_TYPES["aws"])):
        print("build-catalog: no source data in %s (give --data DIR)" % data, file=sys.stderr)
        return 2
    if a.check:
        return check(data, a.out)
    build(data, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
