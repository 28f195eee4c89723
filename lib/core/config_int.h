/*
 * config_int.h - catalog overrides from burst.conf (internal to config.c
 * and its tests).
 */
#ifndef BURST_CONFIG_INT_H
#define BURST_CONFIG_INT_H

#include "config.h"

struct cfg_value {
	enum key_id key;
	double num;              /* KIND_NUMBER */
	char *str;               /* KIND_STRING */
	int arch;                /* KIND_ARCH: arch table index */
};

enum cfg_override_kind { OVERRIDE_TYPE, OVERRIDE_PRICE };

struct cfg_override {
	enum cfg_override_kind kind;
	char *provider;
	char *type;
	char *region;            /* OVERRIDE_PRICE */
	double ondemand, spot;   /* OVERRIDE_PRICE, NAN if not given */
	struct cfg_value *vals;  /* OVERRIDE_TYPE */
	size_t nvals;
	struct cfg_where where;
};

#endif
