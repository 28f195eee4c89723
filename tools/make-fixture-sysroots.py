#!/usr/bin/env python3
"""make-fixture-sysroots.py - write the made-up GPU server sysroots used by
tests/unit/test_provenance.c (burst-node provenance on captured trees).

    tools/make-fixture-sysroots.py [OUTDIR]   (default tests/fixtures/sysroots)

Each tree holds exactly the files lib/admit/provenance.c reads (see
tools/capture-sysroot.sh for the list), made up to look like:
  a100x8           8 x A100 SXM4 40GB (p4d.24xlarge-like), Ubuntu 22.04,
                   kernel 5.15, nvidia driver 550.54.15 (proprietary), MLNX_OFED
                   mlx5 23.10-1.1.9, 2 InfiniBand ports at 200 Gb/s,
                   Charliecloud 0.31 (Debian package)
  a10gx4           4 x A10G (g5.12xlarge-like): 48 CPUs, 192 GiB; os-release
                   only in /usr/lib; no /proc/sys/kernel/arch (ISA inferred);
                   NVIDIA's open kernel module 535.161.07 known only from
                   /proc/driver/nvidia/version; a Lustre 2.15.4 client
  h100x8-missing1  an 8-GPU H100 box (p5.48xlarge-like) showing only 7 GPUs;
                   nvidia 550.54.15, EFA 2.10.0g, Charliecloud 0.37 built from
                   source (/usr/local)
The driver files have the real formats; the versions are made up but real
releases: see SOURCES next to the trees.
Deterministic: running it again gives the same bytes. The kernel build-ids
are sha1("slurm-burst fixture kernel NAME"), printed on stdout.
"""
import hashlib
import os
import shutil
import struct
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures', 'sysroots')


def write(root, path, data, mode='w'):
    p = os.path.join(root, path.lstrip('/'))
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, mode) as f:
        f.write(data)


def note(name, ntype, desc):
    """One ELF note: Elf_Nhdr (namesz, descsz, type), name and desc padded to 4."""
    pad = lambda b: b + b'\0' * (-len(b) % 4)
    return struct.pack('<III', len(name), len(desc), ntype) + pad(name) + pad(desc)


def build_id(name):
    return hashlib.sha1(('slurm-burst fixture kernel ' + name).encode()).digest()


INTEL_FLAGS = ('fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 '
               'clflush mmx fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc '
               'rep_good nopl xtopology nonstop_tsc cpuid aperfmperf tsc_known_freq pni '
               'pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt '
               'tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm abm '
               '3dnowprefetch invpcid_single pti fsgsbase tsc_adjust bmi1 avx2 smep bmi2 '
               'erms invpcid mpx avx512f avx512dq rdseed adx smap clflushopt clwb avx512cd '
               'avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves ida arat pku ospke')
AMD_FLAGS = ('fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 '
             'clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm '
             'constant_tsc rep_good nopl nonstop_tsc cpuid extd_apicid aperfmperf '
             'tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe '
             'popcnt aes xsave avx f16c rdrand hypervisor lahf_lm cmp_legacy cr8_legacy abm '
             'sse4a misalignsse 3dnowprefetch topoext invpcid_single ssbd ibrs ibpb stibp '
             'vmmcall fsgsbase bmi1 avx2 smep bmi2 invpcid rdseed adx smap clflushopt clwb '
             'sha_ni xsaveopt xsavec xgetbv1 clzero xsaveerptr rdpru wbnoinvd arat npt '
             'nrip_save rdpid')


def cpuinfo(vendor, family, model_no, model, flags, sockets, cores_per_socket, threads_per_core):
    ncores = sockets * cores_per_socket
    out = []
    for i in range(ncores * threads_per_core):
        core = i % ncores
        sock, cid = core // cores_per_socket, core % cores_per_socket
        out.append(
            'processor\t: %d\nvendor_id\t: %s\ncpu family\t: %d\nmodel\t\t: %d\n'
            'model name\t: %s\nstepping\t: 7\nmicrocode\t: 0x5003604\ncpu MHz\t\t: 3000.000\n'
            'cache size\t: 36608 KB\nphysical id\t: %d\nsiblings\t: %d\ncore id\t\t: %d\n'
            'cpu cores\t: %d\napicid\t\t: %d\nfpu\t\t: yes\nflags\t\t: %s\n'
            'bogomips\t: 5999.99\nclflush size\t: 64\naddress sizes\t: 46 bits physical, 48 bits virtual\n'
            'power management:\n\n'
            % (i, vendor, family, model_no, model, sock, cores_per_socket * threads_per_core,
               cid, cores_per_socket, 2 * cid + i // ncores, flags))
    return ''.join(out)


def meminfo(total_kb, hp_total):
    return ('MemTotal:       %d kB\nMemFree:        %d kB\nMemAvailable:   %d kB\n'
            'HugePages_Total:    %d\nHugePages_Free:     %d\nHugePages_Rsvd:        0\n'
            'HugePages_Surp:        0\nHugepagesize:       2048 kB\nHugetlb:               0 kB\n'
            % (total_kb, total_kb - 4000000, total_kb - 5000000, hp_total, hp_total))


def pci(root, addr, vendor, device, cls, svendor, sdevice, driver):
    d = '/sys/bus/pci/devices/' + addr
    for f, v in (('vendor', vendor), ('device', device), ('class', cls),
                 ('subsystem_vendor', svendor), ('subsystem_device', sdevice)):
        write(root, '%s/%s' % (d, f), '0x%s\n' % v)
    # the driver as uevent's DRIVER= (a regular file: 'make dist' drops
    # symlinks that point out of the tree, as sysfs's driver link would)
    write(root, d + '/uevent',
          '%sPCI_CLASS=%s\nPCI_ID=%s:%s\nPCI_SUBSYS_ID=%s:%s\nPCI_SLOT_NAME=%s\n'
          'MODALIAS=pci:v0000%sd0000%ssv0000%ssd0000%sbc%ssc%si%s\n'
          % ('DRIVER=%s\n' % driver if driver else '', cls.lstrip('0').upper(),
             vendor.upper(), device.upper(), svendor.upper(), sdevice.upper(), addr,
             vendor.upper(), device.upper(), svendor.upper(), sdevice.upper(),
             cls[0:2].upper(), cls[2:4].upper(), cls[4:6].upper()))


def ib(root, dev, port, state, rate, layer):
    d = '/sys/class/infiniband/%s/ports/%d' % (dev, port)
    write(root, d + '/state', state + '\n')
    write(root, d + '/rate', rate + '\n')
    write(root, d + '/link_layer', layer + '\n')


def dmi(root, product):
    for f, v in (('sys_vendor', 'Amazon EC2'), ('product_name', product), ('product_version', ''),
                 ('board_vendor', 'Amazon EC2'), ('board_name', ''), ('bios_vendor', 'Amazon EC2'),
                 ('bios_version', '1.0'), ('bios_date', '10/16/2017'),
                 # private and unique per machine: present, and must NOT be recorded
                 ('product_serial', 'ec2d5e0f-serial-must-not-appear'),
                 ('product_uuid', 'ec2d5e0f-uuid-must-not-appear')):
        write(root, '/sys/class/dmi/id/' + f, v + '\n')


UBUNTU_2204 = ('PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\n'
               'VERSION="22.04.4 LTS (Jammy Jellyfish)"\nVERSION_CODENAME=jammy\nID=ubuntu\n'
               'ID_LIKE=debian\nHOME_URL="https://www.ubuntu.com/"\nUBUNTU_CODENAME=jammy\n')


def dpkg(root, pkgs):
    out = []
    for name, status, version in pkgs:
        out.append('Package: %s\nStatus: %s\nPriority: optional\nSection: misc\n'
                   'Architecture: amd64\nVersion: %s\nDescription: %s\n\n' % (name, status, version, name))
    write(root, '/var/lib/dpkg/status', ''.join(out))


def kernel(root, name, release, version, tainted, modules, cmdline, arch=True):
    write(root, '/proc/sys/kernel/osrelease', release + '\n')
    write(root, '/proc/sys/kernel/version', version + '\n')
    write(root, '/proc/sys/kernel/tainted', '%d\n' % tainted)
    if arch:
        write(root, '/proc/sys/kernel/arch', 'x86_64\n')
    write(root, '/proc/cmdline', cmdline + '\n')
    write(root, '/proc/modules', ''.join(
        '%s %d %d - Live 0x0000000000000000%s\n' % (m, 16384 + 4096 * i, i % 3,
                                                      ' (POE)' if m.startswith('nvidia') else '')
        for i, m in enumerate(modules)))
    # a Xen note and a "Linux" note (odd name size: padding) before the build-id
    notes = (note(b'Xen\0', 0x12, struct.pack('<Q', 0xffffffff81000000)) +
             note(b'Linux\0', 0x100, release.encode() + b'\0') +
             note(b'GNU\0', 3, build_id(name)) +
             note(b'Linux\0', 0x101, b'\x01\0\0\0'))
    write(root, '/sys/kernel/notes', notes, 'wb')
    print('%s build-id %s' % (name, build_id(name).hex()))


def drivers(root, versions):
    """/sys/module/NAME for loaded modules: initstate, and version when the
    module declares one (MODULE_VERSION; in-tree modules mostly do not)."""
    for name, version in versions.items():
        write(root, '/sys/module/%s/initstate' % name, 'live\n')
        if version is not None:
            write(root, '/sys/module/%s/version' % name, version + '\n')


# /proc/driver/nvidia/version as the proprietary and the open kernel modules
# print it (two spaces around the version; GCC line with a trailing blank)
NVRM_PROPRIETARY = ('NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  Tue Mar  5 22:23:56 UTC 2024\n'
                    'GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04) \n')
NVRM_OPEN = ('NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  %s  Release Build  '
             '(dvs-builder@U16-I3-B03-4-3)  Sat Feb 17 22:55:48 UTC 2024\n'
             'GCC version:  gcc version 9.4.0 (Ubuntu 9.4.0-1ubuntu1~20.04.2) \n')


def a100x8(root):
    kernel(root, 'a100x8', '5.15.0-91-generic', '#101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023',
           12289, ['nvidia_uvm', 'nvidia_drm', 'nvidia_modeset', 'nvidia', 'mlx5_ib', 'ib_uverbs',
                   'ib_core', 'mlx5_core', 'ena', 'nvme'],
           'BOOT_IMAGE=/boot/vmlinuz-5.15.0-91-generic root=PARTUUID=1b2c3d4e-01 ro console=ttyS0')
    dmi(root, 'p4d.24xlarge')
    write(root, '/etc/os-release', UBUNTU_2204)
    write(root, '/proc/cpuinfo', cpuinfo('GenuineIntel', 6, 85,
                                         'Intel(R) Xeon(R) Platinum 8275CL CPU @ 3.00GHz',
                                         INTEL_FLAGS, 2, 24, 2))
    write(root, '/sys/devices/system/cpu/online', '0-95\n')
    write(root, '/proc/meminfo', meminfo(1198565320, 0))
    # the 8 GPUs; 6 NVSwitches (NVIDIA, but a bridge class: not accelerators);
    # an EFA NIC and an NVMe disk (Amazon's vendor id, not accelerator classes)
    for a in ['0000:10:1c.0', '0000:10:1d.0', '0000:20:1c.0', '0000:20:1d.0',
              '0000:90:1c.0', '0000:90:1d.0', '0000:a0:1c.0', '0000:a0:1d.0']:
        pci(root, a, '10de', '20b0', '030200', '10de', '134f', 'nvidia')
    for i in range(6):
        pci(root, '0000:00:%02x.0' % (0x10 + i), '10de', '1af1', '068000', '10de', '1626', 'nvidia-nvswitch')
    pci(root, '0000:00:05.0', '1d0f', 'efa1', '020000', '1d0f', 'efa1', 'efa')
    pci(root, '0000:00:04.0', '1d0f', '8061', '010802', '1d0f', '8061', 'nvme')
    ib(root, 'mlx5_0', 1, '4: ACTIVE', '200 Gb/sec (4X HDR)', 'InfiniBand')
    ib(root, 'mlx5_1', 1, '4: ACTIVE', '200 Gb/sec (4X HDR)', 'InfiniBand')
    dpkg(root, [('charliecloud-runtime', 'install ok installed', '0.31-1'),
                ('libpmix2', 'install ok installed', '4.1.2-2ubuntu1'),
                ('openmpi-bin', 'install ok installed', '4.1.2-2ubuntu1'),
                ('slurmd', 'install ok installed', '22.05.8-4+burst1')])
    # proprietary NVIDIA driver (version in sysfs and procfs), MLNX_OFED's
    # mlx5 (versioned), the kernel's own ib_core and ib_uverbs (no version)
    drivers(root, {'nvidia': '550.54.15', 'nvidia_uvm': '550.54.15', 'nvidia_drm': '550.54.15',
                   'nvidia_modeset': '550.54.15', 'mlx5_core': '23.10-1.1.9',
                   'mlx5_ib': '23.10-1.1.9', 'ib_core': None, 'ib_uverbs': None})
    write(root, '/proc/driver/nvidia/version', NVRM_PROPRIETARY % '550.54.15')
    write(root, '/usr/lib/charliecloud/version.txt', '0.31\n')


def a10gx4(root):
    kernel(root, 'a10gx4', '5.15.0-1051-aws', '#56~20.04.1-Ubuntu SMP Tue Nov 28 15:43:31 UTC 2023',
           4097, ['nvidia', 'nvidia_uvm', 'ena', 'nvme', 'nvme_core', 'lustre', 'lnet', 'ksocklnd'],
           'BOOT_IMAGE=/boot/vmlinuz-5.15.0-1051-aws root=PARTUUID=5e6f7a8b-01 ro console=tty1 console=ttyS0 nvme_core.io_timeout=4294967295',
           arch=False)
    dmi(root, 'g5.12xlarge')
    write(root, '/usr/lib/os-release', UBUNTU_2204)
    write(root, '/proc/cpuinfo', cpuinfo('AuthenticAMD', 23, 49, 'AMD EPYC 7R32', AMD_FLAGS, 1, 24, 2))
    write(root, '/sys/devices/system/cpu/online', '0-47\n')
    write(root, '/proc/meminfo', meminfo(197568300, 1024))
    for a in ['0000:00:1b.0', '0000:00:1c.0', '0000:00:1d.0', '0000:00:1e.0']:
        pci(root, a, '10de', '2237', '030200', '10de', '152f', 'nvidia')
    pci(root, '0000:00:05.0', '1d0f', 'ec20', '020000', '1d0f', 'ec20', 'ena')
    pci(root, '0000:00:04.0', '1d0f', '8061', '010802', '1d0f', '8061', 'nvme')
    pci(root, '0000:00:1f.0', '1d0f', 'cd01', '010802', '1d0f', 'cd01', 'nvme')
    dpkg(root, [('charliecloud-runtime', 'deinstall ok config-files', '0.30-1'),
                ('libpmix2', 'install ok installed', '4.1.2-2ubuntu1'),
                ('slurmd', 'install ok installed', '22.05.8-4+burst1')])
    # NVIDIA's open kernel module with no /sys/module/nvidia (a copy that
    # kept procfs only): the version comes from /proc/driver/nvidia/version;
    # a Lustre client over TCP
    write(root, '/proc/driver/nvidia/version', NVRM_OPEN % '535.161.07')
    drivers(root, {'nvidia_uvm': '535.161.07', 'lustre': '2.15.4', 'lnet': '2.15.4'})


def h100x8_missing1(root):
    kernel(root, 'h100x8-missing1', '6.5.0-1018-aws', '#18~22.04.1-Ubuntu SMP Fri Apr  5 17:44:33 UTC 2024',
           12289, ['nvidia', 'nvidia_uvm', 'nvidia_peermem', 'efa', 'ib_core', 'ena', 'nvme'],
           'BOOT_IMAGE=/boot/vmlinuz-6.5.0-1018-aws root=PARTUUID=9a8b7c6d-01 ro console=ttyS0')
    dmi(root, 'p5.48xlarge')
    write(root, '/etc/os-release', UBUNTU_2204)
    write(root, '/proc/cpuinfo', cpuinfo('AuthenticAMD', 25, 1, 'AMD EPYC 7R13 Processor', AMD_FLAGS, 2, 48, 2))
    write(root, '/sys/devices/system/cpu/online', '0-191\n')
    write(root, '/proc/meminfo', meminfo(2113834260, 0))
    # 8 slots; 0000:86:00.0 has fallen off the bus
    for a in ['0000:53:00.0', '0000:64:00.0', '0000:75:00.0', '0000:97:00.0',
              '0000:a8:00.0', '0000:b9:00.0', '0000:ca:00.0']:
        pci(root, a, '10de', '2330', '030200', '10de', '16c1', 'nvidia')
    pci(root, '0000:00:05.0', '1d0f', 'ec20', '020000', '1d0f', 'ec20', 'ena')
    for i in range(4):
        ib(root, 'efa_%d' % i, 1, '4: ACTIVE', '100 Gb/sec (4X EDR)', 'Unspecified')
    dpkg(root, [('libpmix2', 'install ok installed', '4.1.2-2ubuntu1'),
                ('openmpi-bin', 'install ok installed', '4.1.2-2ubuntu1'),
                ('slurmd', 'install ok installed', '22.05.8-4+burst1')])
    # AWS's EFA driver (the installer's, "g" for GPUDirect), the kernel's ib_core
    drivers(root, {'nvidia': '550.54.15', 'nvidia_uvm': '550.54.15', 'nvidia_peermem': '550.54.15',
                   'efa': '2.10.0g', 'ib_core': None})
    write(root, '/proc/driver/nvidia/version', NVRM_PROPRIETARY % '550.54.15')
    # Charliecloud built from source into /usr/local (no package)
    write(root, '/usr/local/lib/charliecloud/version.txt', '0.37\n')


for name, fn in (('a100x8', a100x8), ('a10gx4', a10gx4), ('h100x8-missing1', h100x8_missing1)):
    root = os.path.join(OUT, name)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    fn(root)
