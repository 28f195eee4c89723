/*
 * keys.c - the contract vocabulary.
 */
#include <string.h>
#include <strings.h>

#include "keys.h"

static const struct key_info table[KEY_COUNT] = {
	{ KEY_PROVIDER, "node_provider", KIND_STRING, UNIT_COUNT,
	  "cloud provider (aws, gcp, local, ...)" },
	{ KEY_REGION, "node_region", KIND_STRING, UNIT_COUNT,
	  "region (us-east-1, us-central1, ...)" },
	{ KEY_MACHINETYPE, "node_machinetype", KIND_STRING, UNIT_COUNT,
	  "instance type name (g5.12xlarge, a2-highgpu-1g, ...)" },
	{ KEY_VCPUS, "node_vcpus_count", KIND_NUMBER, UNIT_COUNT,
	  "virtual CPUs" },
	{ KEY_MEMORY, "node_memory_size", KIND_NUMBER, UNIT_SIZE,
	  "memory (binary units: 256G)" },
	{ KEY_ACC_COUNT, "accelerator_count", KIND_NUMBER, UNIT_COUNT,
	  "number of accelerators (0 for none)" },
	{ KEY_ACC_TYPE, "accelerator_type", KIND_STRING, UNIT_COUNT,
	  "GPU, FPGA or ASIC" },
	{ KEY_ACC_MANUFACTURER, "accelerator_manufacturer", KIND_STRING, UNIT_COUNT,
	  "NVIDIA, AMD, Intel, AWS, Xilinx" },
	{ KEY_ACC_ARCH, "accelerator_architecture", KIND_ARCH, UNIT_COUNT,
	  "architecture, ordered per vendor (volta < turing < ampere < ada < hopper)" },
	{ KEY_ACC_MODEL, "accelerator", KIND_STRING, UNIT_COUNT,
	  "accelerator model (A100-80GB, L4, H100; A100 means any A100-*)" },
	{ KEY_ACC_MEMORY, "accelerator_memory_size", KIND_NUMBER, UNIT_SIZE,
	  "memory per accelerator (80G)" },
	{ KEY_PROCESSOR, "processor", KIND_STRING, UNIT_COUNT,
	  "processor model" },
	{ KEY_PROC_MANUFACTURER, "processor_manufacturer", KIND_STRING, UNIT_COUNT,
	  "Intel, AMD, AWS" },
	{ KEY_PROC_UARCH, "processor_microarchitecture", KIND_STRING, UNIT_COUNT,
	  "CPU microarchitecture (icelake, zen3, neoverse-v1, ...)" },
	{ KEY_PROC_ISA, "processor_isa", KIND_STRING, UNIT_COUNT,
	  "x86_64 or aarch64" },
	{ KEY_STORAGE_TYPE, "storage_type", KIND_STRING, UNIT_COUNT,
	  "local storage: nvme-ssd, ssd, hdd, ebs" },
	{ KEY_STORAGE_SIZE, "storage_size", KIND_NUMBER, UNIT_SIZE,
	  "local storage size" },
	{ KEY_NETWORK, "network_performance", KIND_NUMBER, UNIT_NET,
	  "network bandwidth in Gbit/s (100G)" },
	{ KEY_PRICE, "price_per_hour", KIND_NUMBER, UNIT_PRICE,
	  "price in US dollars per hour in the region" },
	{ KEY_SPOT, "spot", KIND_BOOL, UNIT_COUNT,
	  "yes: rank and bound by spot prices" },
	{ KEY_RANK, "rank", KIND_RANK, UNIT_COUNT,
	  "price (default: cheapest first) or fit (least excess first)" },
	{ KEY_MAX_PRICE, "max_price", KIND_NUMBER, UNIT_PRICE,
	  "the same as price_per_hour<=N" },
};

static const char *names[KEY_COUNT + 1];

const struct key_info *key_lookup(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < KEY_COUNT; i++)
		if (strlen(table[i].name) == len &&
		    strncasecmp(table[i].name, name, len) == 0)
			return &table[i];
	return NULL;
}

const struct key_info *key_info(enum key_id id)
{
	return (unsigned)id < KEY_COUNT ? &table[id] : NULL;
}

const char *const *key_names(void)
{
	size_t i;

	if (!names[0])
		for (i = 0; i < KEY_COUNT; i++)
			names[i] = table[i].name;
	return names;
}
