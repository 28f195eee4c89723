/*
 * fuzz_azure.c - libFuzzer target for Azure Resource Manager's JSON answers,
 * Entra ID's and IMDS's token answers and an Azure credentials file: each
 * input is read as a VM, a listing page, a network interface, an ARM error
 * body, an operation status, a token answer and a credentials file, by the
 * parsers the azure driver's client uses (lib/cloud/arm.c, azure_auth.c,
 * azure_vm.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arm.h"
#include "azure_auth.h"
#include "azure_vm.h"
#include "fuzz.h"
#include "strutil.h"

static int count(const struct az_vm *vm, void *ud)
{
	if (!vm->name[0])
		abort();     /* a VM of a listing has its name */
	(*(long *)ud)++;
	return 0;
}

FUZZ_TARGET(azure)
{
	char *json = xstrndup((const char *)data, size), *next = NULL, *msg = NULL, code[96], st[32], ip[64];
	struct az_vm vm;
	struct az_creds c;
	burst_err_t err;
	long n = 0, got;
	char *tok = NULL;
	time_t exp = 0;

	az_vm_parse(json, &vm);
	got = az_vm_list_parse(json, count, &n, &next);
	if (got >= 0 && got != n)
		abort();     /* each VM of the page is seen once */
	free(next);
	if (az_nic_private_ip(json, ip, sizeof(ip)) == 0 && (!ip[0] || strspn(ip, "0123456789.:abcdefABCDEF") != strlen(ip)))
		abort();     /* an address is only digits, dots, colons and hex */
	arm_error_parse(json, code, sizeof(code), &msg);
	free(msg);
	msg = NULL;
	arm_operation_parse(json, st, sizeof(st), code, sizeof(code), &msg);
	free(msg);
	if (az_token_parse(json, 1000, &tok, &exp, &err) == 0 && (!tok || !*tok || exp <= 0))
		abort();     /* a token has a value and an expiry */
	free(tok);
	arm_retry_after(json, 1000);
	az_image_check(json);
	if (az_creds_from_file(fuzz_file("azure.env", data, size), &c, &err) == 0)
		az_creds_free(&c);
	free(json);
	return 0;
}
