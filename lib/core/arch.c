/*
 * arch.c - accelerator architectures, in order per vendor.
 *
 * Architectures are comparable only within one family (a product line of
 * one vendor: NVIDIA GPUs, AMD RDNA, AMD CDNA, ...).
 * Order follows the vendors' product generations: NVIDIA's GPU
 * microarchitectures by release, AMD's RDNA and CDNA lines, Intel Gaudi,
 * AWS Inferentia and Trainium, Xilinx UltraScale+.
 */
#include <string.h>
#include <strings.h>

#include "arch.h"

static const struct arch_info table[] = {
	{ "kepler",      "NVIDIA", "nvidia-gpu",        0, 0 },
	{ "maxwell",     "NVIDIA", "nvidia-gpu",        0, 1 },
	{ "pascal",      "NVIDIA", "nvidia-gpu",        0, 2 },
	{ "volta",       "NVIDIA", "nvidia-gpu",        0, 3 },
	{ "turing",      "NVIDIA", "nvidia-gpu",        0, 4 },
	{ "ampere",      "NVIDIA", "nvidia-gpu",        0, 5 },
	{ "ada",         "NVIDIA", "nvidia-gpu",        0, 6 },
	{ "hopper",      "NVIDIA", "nvidia-gpu",        0, 7 },
	{ "blackwell",   "NVIDIA", "nvidia-gpu",        0, 8 },
	{ "gcn",         "AMD",    "amd-gcn",           1, 0 },
	{ "rdna",        "AMD",    "amd-rdna",          2, 1 },
	{ "rdna2",       "AMD",    "amd-rdna",          2, 2 },
	{ "rdna3",       "AMD",    "amd-rdna",          2, 3 },
	{ "cdna",        "AMD",    "amd-cdna",          3, 1 },
	{ "cdna2",       "AMD",    "amd-cdna",          3, 2 },
	{ "cdna3",       "AMD",    "amd-cdna",          3, 3 },
	{ "gaudi",       "Intel",  "intel-gaudi",       4, 0 },
	{ "gaudi2",      "Intel",  "intel-gaudi",       4, 1 },
	{ "gaudi3",      "Intel",  "intel-gaudi",       4, 2 },
	{ "inferentia",  "AWS",    "aws-inferentia",    5, 0 },
	{ "inferentia2", "AWS",    "aws-inferentia",    5, 1 },
	{ "trainium",    "AWS",    "aws-trainium",      6, 0 },
	{ "trainium2",   "AWS",    "aws-trainium",      6, 1 },
	{ "ultrascale+", "Xilinx", "xilinx-ultrascale", 7, 0 },
};

#define NARCH (sizeof(table) / sizeof(table[0]))

static const char *names[NARCH + 1];

const struct arch_info *arch_lookup_n(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NARCH; i++)
		if (strlen(table[i].name) == len &&
		    strncasecmp(table[i].name, name, len) == 0)
			return &table[i];
	return NULL;
}

const struct arch_info *arch_lookup(const char *name)
{
	return arch_lookup_n(name, strlen(name));
}

const char *const *arch_names(void)
{
	size_t i;

	if (!names[0])
		for (i = 0; i < NARCH; i++)
			names[i] = table[i].name;
	return names;
}

size_t arch_count(void)
{
	return NARCH;
}

const struct arch_info *arch_at(size_t i)
{
	return i < NARCH ? &table[i] : NULL;
}
