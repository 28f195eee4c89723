/*
 * azure_vm.h - the compute resource provider's virtual machines as the azure
 * driver writes and reads them: the body of a VM's PUT (one request makes the
 * VM, its OS disk and its network interface, all deleted with it), the paths
 * of a VM, a listing and a network interface, and what is read back (its
 * provisioning state, tags, zone, network interface; the interface's private
 * address).
 *
 * The body is what Microsoft's SDK's VirtualMachine model accepts
 * (tests/integration/azure_sdk_check.js validates every body the tests
 * send): properties.hardwareProfile.vmSize, storageProfile.imageReference
 * (publisher/offer/sku/version from an image URN, or id from a resource id),
 * osDisk (FromImage, deleteOption Delete), osProfile (computerName,
 * adminUsername, an SSH key or none: password login off, customData base64),
 * networkProfile.networkInterfaceConfigurations (networkApiVersion
 * 2020-11-01: the NIC is made with the VM and deleted with it), priority
 * Spot with evictionPolicy Delete and billingProfile.maxPrice.
 */
#ifndef BURST_AZURE_VM_H
#define BURST_AZURE_VM_H

#include <stdbool.h>
#include <stddef.h>

#include "burst_err.h"

#define AZ_NIC_API_VERSION "2020-11-01"   /* networkProfile.networkApiVersion */

struct az_vm_spec {
	const char *name;          /* the VM's (and its computer's) name */
	const char *location;      /* region, e.g. eastus */
	const char *zone;          /* "1".."3", or NULL/"" for none */
	const char *size;          /* Standard_D2s_v5 */
	const char *image;         /* PUBLISHER:OFFER:SKU:VERSION or /subscriptions/... */
	const char *subnet_id;     /* the subnet's resource id */
	const char *admin_user;    /* NULL: burst */
	const char *ssh_key;       /* an OpenSSH public key line, or NULL */
	const void *custom_data;   /* raw bytes (base64-encoded here), or NULL */
	size_t custom_len;
	const char *const *tag_keys, *const *tag_vals;
	size_t ntags;
	bool spot;
	double max_price;          /* spot: USD per hour, -1: up to on-demand */
	const char *os_disk_type;  /* NULL: StandardSSD_LRS */
};

/* Is s a name Azure accepts for a Linux VM (1-64 of [A-Za-z0-9._-], not
 * starting with . or -, not ending with . or -)? */
bool az_vm_name_ok(const char *s);

/* Is image an URN PUBLISHER:OFFER:SKU:VERSION or a resource id? NULL, or why not. */
const char *az_image_check(const char *image);

/* The PUT body (JSON text, caller frees), or NULL with err. */
char *az_vm_body(const struct az_vm_spec *s, burst_err_t *err);

/* "/subscriptions/SUB/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines[/NAME]?api-version=..."
 * (name NULL: the listing); caller frees. Names are not escaped: they are checked first. */
char *az_vm_path(const char *sub, const char *rg, const char *name);

struct az_vm {
	char name[80];
	char state[32];            /* provisioningState: Creating, Succeeded, Failed, Deleting, ... */
	char location[48];
	char zone[8];
	char size[64];
	char nic_id[512];          /* its first network interface's resource id, or "" */
	char time_created[40];     /* ISO 8601, or "" */
	char cluster[128];         /* tag burst-cluster */
	char provider[64];         /* tag burst-provider (the Provider= that made it), "" when none */
	char node[128];            /* tag burst-node */
	int attempt;               /* tag burst-attempt, 0 when none */
	char power[32];            /* from an instanceView: running, deallocated, ... or "" */
};

/* One VM object (a GET's answer or an element of a listing's value). 0, or
 * -1 when it is no VM (no name or properties). Strings are escaped. */
struct json_object;
int az_vm_from_json(struct json_object *o, struct az_vm *out);
int az_vm_parse(const char *json, struct az_vm *out);

/*
 * A listing page: f called for each VM (returning non-zero stops), *next
 * the nextLink (caller frees; NULL on the last page). The count of VMs, or
 * -1 when the page is no listing.
 */
long az_vm_list_parse(const char *json, int (*f)(const struct az_vm *vm, void *ud), void *ud, char **next);

/* A network interface's primary private address into ip. 0, or -1. */
int az_nic_private_ip(const char *json, char *ip, size_t len);

#endif
