/*
 * azure_vm.c - VM bodies, paths and answers of the compute resource
 * provider (azure_vm.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "arm.h"
#include "azure_vm.h"
#include "strutil.h"

bool az_vm_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0, i;

	if (n < 1 || n > 64 || s[0] == '.' || s[0] == '-' || s[n - 1] == '.' || s[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '.' || s[i] == '-' || s[i] == '_'))
			return false;
	return true;
}

const char *az_image_check(const char *image)
{
	const char *p;
	int colons = 0;

	if (!image || !*image)
		return "no image (Image=PUBLISHER:OFFER:SKU:VERSION or an image's resource id)";
	if (image[0] == '/')
		return strncasecmp(image, "/subscriptions/", 15) ? "a resource id starts with /subscriptions/" : NULL;
	for (p = image; *p; p++) {
		if (*p == ':') {
			if (p == image || p[1] == ':' || p[1] == '\0')
				return "an URN is PUBLISHER:OFFER:SKU:VERSION, none of them empty";
			colons++;
		} else if ((unsigned char)*p <= ' ' || *p == '"' || *p == '\\')
			return "spaces, quotes and control characters are not part of an image";
	}
	return colons == 3 ? NULL : "an URN is PUBLISHER:OFFER:SKU:VERSION (four parts)";
}

static void add_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

static json_object *obj_in(json_object *o, const char *k)
{
	json_object *n = json_object_new_object();

	json_object_object_add(o, k, n);
	return n;
}

char *az_vm_body(const struct az_vm_spec *s, burst_err_t *err)
{
	json_object *root, *props, *o, *p, *a;
	const char *why, *user = s->admin_user && *s->admin_user ? s->admin_user : "burst";
	char *out;
	size_t i;

	if (!az_vm_name_ok(s->name)) {
		burst_err_set(err, "VM name '%.80s' is not one Azure accepts (1-64 letters, digits, . - _)",
			      s->name ? s->name : "");
		return NULL;
	}
	if (!s->location || !*s->location || !s->size || !*s->size) {
		burst_err_set(err, "VM %s: no location or size", s->name);
		return NULL;
	}
	if ((why = az_image_check(s->image))) {
		burst_err_set(err, "VM %s: Image=%.200s: %s", s->name, s->image ? s->image : "", why);
		return NULL;
	}
	if (!s->subnet_id || strncasecmp(s->subnet_id, "/subscriptions/", 15)) {
		burst_err_set(err, "VM %s: SubnetId= must be a subnet's resource id (/subscriptions/.../subnets/NAME)",
			      s->name);
		return NULL;
	}
	root = json_object_new_object();
	add_str(root, "location", s->location);
	if (s->zone && *s->zone) {
		a = json_object_new_array();
		json_object_array_add(a, json_object_new_string(s->zone));
		json_object_object_add(root, "zones", a);
	}
	if (s->ntags) {
		o = obj_in(root, "tags");
		for (i = 0; i < s->ntags; i++)
			add_str(o, s->tag_keys[i], s->tag_vals[i]);
	}
	props = obj_in(root, "properties");
	add_str(obj_in(props, "hardwareProfile"), "vmSize", s->size);
	o = obj_in(props, "storageProfile");
	p = obj_in(o, "imageReference");
	if (s->image[0] == '/')
		add_str(p, "id", s->image);
	else {
		char *urn = xstrdup(s->image), *f[4], *save = NULL;
		f[0] = strtok_r(urn, ":", &save);
		for (i = 1; i < 4; i++)
			f[i] = strtok_r(NULL, ":", &save);
		add_str(p, "publisher", f[0]);
		add_str(p, "offer", f[1]);
		add_str(p, "sku", f[2]);
		add_str(p, "version", f[3]);
		free(urn);
	}
	p = obj_in(o, "osDisk");
	add_str(p, "createOption", "FromImage");
	add_str(p, "deleteOption", "Delete");
	add_str(obj_in(p, "managedDisk"), "storageAccountType", s->os_disk_type ? s->os_disk_type : "StandardSSD_LRS");
	o = obj_in(props, "osProfile");
	add_str(o, "computerName", s->name);
	add_str(o, "adminUsername", user);
	if (s->custom_data && s->custom_len) {
		char *b = xmalloc(4 * ((s->custom_len + 2) / 3) + 1);
		EVP_EncodeBlock((unsigned char *)b, s->custom_data, (int)s->custom_len);
		add_str(o, "customData", b);
		free(b);
	}
	p = obj_in(o, "linuxConfiguration");
	json_object_object_add(p, "disablePasswordAuthentication", json_object_new_boolean(1));
	if (s->ssh_key && *s->ssh_key) {
		json_object *k = json_object_new_object();
		char path[300];
		snprintf(path, sizeof(path), "/home/%s/.ssh/authorized_keys", user);
		add_str(k, "path", path);
		add_str(k, "keyData", s->ssh_key);
		a = json_object_new_array();
		json_object_array_add(a, k);
		json_object_object_add(obj_in(p, "ssh"), "publicKeys", a);
	}
	o = obj_in(props, "networkProfile");
	add_str(o, "networkApiVersion", AZ_NIC_API_VERSION);
	{
		json_object *nic = json_object_new_object(), *ip = json_object_new_object(), *ips, *nics;
		char nicname[90];
		snprintf(nicname, sizeof(nicname), "%s-nic", s->name);
		add_str(nic, "name", nicname);
		p = obj_in(nic, "properties");
		json_object_object_add(p, "primary", json_object_new_boolean(1));
		add_str(p, "deleteOption", "Delete");
		add_str(ip, "name", "ipconfig1");
		json_object_object_add(obj_in(ip, "properties"), "primary", json_object_new_boolean(1));
		{
			json_object *ipp;
			json_object_object_get_ex(ip, "properties", &ipp);
			add_str(obj_in(ipp, "subnet"), "id", s->subnet_id);
		}
		ips = json_object_new_array();
		json_object_array_add(ips, ip);
		json_object_object_add(p, "ipConfigurations", ips);
		nics = json_object_new_array();
		json_object_array_add(nics, nic);
		json_object_object_add(o, "networkInterfaceConfigurations", nics);
	}
	if (s->spot) {
		add_str(props, "priority", "Spot");
		add_str(props, "evictionPolicy", "Delete");
		json_object_object_add(obj_in(props, "billingProfile"), "maxPrice",
				       json_object_new_double(s->max_price > 0 ? s->max_price : -1));
	}
	out = xstrdup(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return out;
}

char *az_vm_path(const char *sub, const char *rg, const char *name)
{
	struct strbuf sb;

	sb_init(&sb);
	sb_addf(&sb, "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachines%s%s?api-version=%s",
		sub, rg, name ? "/" : "", name ? name : "", ARM_COMPUTE_API);
	return sb_take(&sb);
}

static json_object *get(json_object *o, const char *k)
{
	json_object *v;

	return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static void cp(char *dst, size_t len, json_object *v)
{
	dst[0] = '\0';
	if (v && json_object_is_type(v, json_type_string)) {
		snprintf(dst, len, "%s", json_object_get_string(v));
		str_escape_ctl_buf(dst, len);
	}
}

int az_vm_from_json(json_object *o, struct az_vm *out)
{
	json_object *props = get(o, "properties"), *tags = get(o, "tags"), *z = get(o, "zones"), *nics, *iv;

	json_object *name = get(o, "name");

	memset(out, 0, sizeof(*out));
	/* a VM has its name: a string, not empty, that fits whole (a name cut
	 * short would be another VM's) */
	if (!props || !json_object_is_type(props, json_type_object) || !name ||
	    !json_object_is_type(name, json_type_string) || !json_object_get_string_len(name) ||
	    (size_t)json_object_get_string_len(name) >= sizeof(out->name))
		return -1;
	cp(out->name, sizeof(out->name), name);
	cp(out->location, sizeof(out->location), get(o, "location"));
	cp(out->state, sizeof(out->state), get(props, "provisioningState"));
	cp(out->size, sizeof(out->size), get(get(props, "hardwareProfile"), "vmSize"));
	cp(out->time_created, sizeof(out->time_created), get(props, "timeCreated"));
	if (z && json_object_is_type(z, json_type_array) && json_object_array_length(z) > 0)
		cp(out->zone, sizeof(out->zone), json_object_array_get_idx(z, 0));
	nics = get(get(props, "networkProfile"), "networkInterfaces");
	if (nics && json_object_is_type(nics, json_type_array) && json_object_array_length(nics) > 0)
		cp(out->nic_id, sizeof(out->nic_id), get(json_object_array_get_idx(nics, 0), "id"));
	cp(out->cluster, sizeof(out->cluster), get(tags, "burst-cluster"));
	cp(out->provider, sizeof(out->provider), get(tags, "burst-provider"));
	cp(out->node, sizeof(out->node), get(tags, "burst-node"));
	{
		char a[16];
		cp(a, sizeof(a), get(tags, "burst-attempt"));
		out->attempt = atoi(a);
	}
	iv = get(get(props, "instanceView"), "statuses");
	if (iv && json_object_is_type(iv, json_type_array)) {
		size_t i;
		for (i = 0; i < json_object_array_length(iv); i++) {
			char code[64];
			cp(code, sizeof(code), get(json_object_array_get_idx(iv, i), "code"));
			if (!strncmp(code, "PowerState/", 11) && strlen(code + 11) < sizeof(out->power))
				memcpy(out->power, code + 11, strlen(code + 11) + 1);
		}
	}
	return 0;
}

int az_vm_parse(const char *json, struct az_vm *out)
{
	json_object *root = json ? json_tokener_parse(json) : NULL;
	int rc = az_vm_from_json(root, out);

	json_object_put(root);
	return rc;
}

long az_vm_list_parse(const char *json, int (*f)(const struct az_vm *vm, void *ud), void *ud, char **next)
{
	json_object *root = json ? json_tokener_parse(json) : NULL, *v = get(root, "value"), *nl = get(root, "nextLink");
	long n = 0;
	size_t i;

	*next = NULL;
	if (!v || !json_object_is_type(v, json_type_array)) {
		json_object_put(root);
		return -1;
	}
	for (i = 0; i < json_object_array_length(v); i++) {
		struct az_vm vm;
		if (az_vm_from_json(json_object_array_get_idx(v, i), &vm) < 0)
			continue;
		n++;
		if (f && f(&vm, ud))
			break;
	}
	if (nl && json_object_is_type(nl, json_type_string) && *json_object_get_string(nl))
		*next = xstrdup(json_object_get_string(nl));
	json_object_put(root);
	return n;
}

int az_nic_private_ip(const char *json, char *ip, size_t len)
{
	json_object *root = json ? json_tokener_parse(json) : NULL;
	json_object *ipc = get(get(root, "properties"), "ipConfigurations");
	int rc = -1;
	size_t i;

	ip[0] = '\0';
	if (ipc && json_object_is_type(ipc, json_type_array))
		for (i = 0; i < json_object_array_length(ipc) && rc < 0; i++) {
			json_object *c = json_object_array_get_idx(ipc, i), *pp = get(c, "properties");
			json_object *pr = get(pp, "primary");
			if (json_object_array_length(ipc) > 1 && !(pr && json_object_get_boolean(pr)))
				continue;
			cp(ip, len, get(pp, "privateIPAddress"));
			if (ip[0] && strspn(ip, "0123456789.:abcdefABCDEF") == strlen(ip))
				rc = 0;
			else
				ip[0] = '\0';
		}
	json_object_put(root);
	return rc;
}
