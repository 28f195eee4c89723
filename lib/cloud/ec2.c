/*
 * ec2.c - EC2 Query API client (see ec2.h).
 */
#include "ec2.h"
#include "ec2_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <curl/curl.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <openssl/evp.h>

#include "httpc.h"
#include "sigv4.h"
#include "strutil.h"

#define EC2_API_VERSION "2016-11-15"
#define MAX_BODY (64L * 1024 * 1024)

struct ec2_client {
	char *region;
	char *endpoint;       /* URL */
	char *host;           /* Host header value (host[:port]) */
	char *path;           /* URL path, "/" by default */
	struct aws_creds creds;
	struct aws_creds_opts copts;
	bool resolvable;      /* creds came from aws_creds_resolve: refresh them */
	char *copt_file, *copt_profile, *copt_imds;
	char *ca_file;
	long connect_timeout_ms, timeout_ms, max_total_ms, base_ms, cap_ms;
	unsigned max_attempts;
	bool paced;           /* RunInstances, TerminateInstances: throttling not retried (ec2_client_paced) */
	struct ec2_stats stats;
	char last_code[256];
	char last_request_id[256];
	CURL *curl;
	struct sigv4_key_cache sigkey;   /* the day's signing key (sigv4.h) */
};

/* ---- classification and backoff ---- */

static const char *const capacity_codes[] = {
	"InsufficientInstanceCapacity", "InsufficientHostCapacity",
	"InsufficientReservedInstanceCapacity", "InsufficientCapacity", "Unsupported",
	"MaxSpotInstanceCountExceeded", "SpotMaxPriceTooLow",
	"InsufficientFreeAddressesInSubnet", "InsufficientCapacityOnOutpost",
	"InsufficientAddressCapacity", "UnfulfillableCapacity", NULL
};
static const char *const quota_codes[] = {
	"InstanceLimitExceeded", "VcpuLimitExceeded", "VolumeLimitExceeded",
	"MaxIOPSLimitExceeded", "AddressLimitExceeded", "ResourceLimitExceeded",
	"NetworkInterfaceLimitExceeded", "PendingVerification", NULL
};
static const char *const throttled_codes[] = {
	"RequestLimitExceeded", "Throttling", "ThrottlingException", "RequestThrottled",
	"RequestThrottledException", "TooManyRequestsException", NULL
};
static const char *const transient_codes[] = {
	"InternalError", "InternalFailure", "ServiceUnavailable", "Unavailable",
	"ServerInternal", NULL
};
static const char *const auth_codes[] = {
	"AuthFailure", "UnauthorizedOperation", "SignatureDoesNotMatch",
	"InvalidClientTokenId", "OptInRequired", "Blocked", "MissingAuthenticationToken",
	"IncompleteSignature", "ExpiredToken", "AccessDenied", "AccessDeniedException",
	"AuthFailure.ServiceLinkedRoleCreationNotPermitted", NULL
};

static bool in_list(const char *code, const char *const *l)
{
	for (; *l; l++)
		if (strcmp(code, *l) == 0)
			return true;
	return false;
}

enum ec2_class ec2_classify(const char *code, long http_status)
{
	if (code && *code) {
		if (strcmp(code, "InvalidInstanceID.NotFound") == 0)
			return EC2_NOT_FOUND;
		if (in_list(code, throttled_codes))
			return EC2_THROTTLED;
		if (in_list(code, capacity_codes))
			return EC2_CAPACITY;
		if (in_list(code, quota_codes))
			return EC2_QUOTA;
		if (in_list(code, transient_codes))
			return EC2_TRANSIENT;
		if (in_list(code, auth_codes))
			return EC2_AUTH;
		return EC2_PERMANENT;
	}
	if (http_status >= 200 && http_status < 300)
		return EC2_OK;
	if (http_status >= 500)
		return EC2_TRANSIENT;
	if (http_status == 429)
		return EC2_THROTTLED;
	if (http_status == 401 || http_status == 403)
		return EC2_AUTH;
	return EC2_PERMANENT;
}

const char *ec2_class_name(enum ec2_class c)
{
	switch (c) {
	case EC2_OK: return "OK";
	case EC2_CAPACITY: return "CAPACITY";
	case EC2_QUOTA: return "QUOTA";
	case EC2_THROTTLED: return "THROTTLED";
	case EC2_TRANSIENT: return "TRANSIENT";
	case EC2_PERMANENT: return "PERMANENT";
	case EC2_AUTH: return "AUTH";
	case EC2_NOT_FOUND: return "NOT_FOUND";
	}
	return "?";
}

long ec2_backoff_ms(unsigned attempt, long base_ms, long cap_ms, uint32_t rnd)
{
	long ceil_ms = base_ms > 0 ? base_ms : 1;

	if (cap_ms < 0)
		cap_ms = 0;
	for (unsigned i = 0; i < attempt && ceil_ms < cap_ms; i++)
		ceil_ms *= 2;
	if (ceil_ms > cap_ms)
		ceil_ms = cap_ms;
	return (long)(rnd % ((uint64_t)ceil_ms + 1));
}

/* ---- redaction ---- */

void ec2_redact(char *msg, size_t cap, const char *const *secrets)
{
	static const char mark[] = "[redacted]";
	const size_t mlen = sizeof(mark) - 1;

	for (; secrets && *secrets; secrets++) {
		const char *s = *secrets;
		size_t slen = s ? strlen(s) : 0;
		char *p;

		if (slen == 0)
			continue;
		while ((p = strstr(msg, s)) != NULL) {
			size_t tail = strlen(p + slen);
			if ((size_t)(p - msg) + mlen + 1 > cap) {
				*p = '\0';     /* no room for the mark: cut here */
				break;
			}
			if ((size_t)(p - msg) + mlen + tail + 1 > cap)
				tail = cap - 1 - (size_t)(p - msg) - mlen;
			memmove(p + mlen, p + slen, tail);
			memcpy(p, mark, mlen);
			p[mlen + tail] = '\0';
		}
	}
}

/* ---- XML helpers ---- */

static bool is_el(const xmlNode *n, const char *name)
{
	return n && n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static xmlNode *child(const xmlNode *n, const char *name)
{
	if (!n)
		return NULL;
	for (xmlNode *c = n->children; c; c = c->next)
		if (is_el(c, name))
			return c;
	return NULL;
}

/* Text of n's child name (allocated with malloc), or NULL when absent. */
static char *child_text(const xmlNode *n, const char *name)
{
	xmlNode *c = child(n, name);
	xmlChar *t;
	char *r;

	if (!c)
		return NULL;
	t = xmlNodeGetContent(c);
	r = xstrdup(t ? (const char *)t : "");
	xmlFree(t);
	str_trim(r);
	return r;
}

static long child_long(const xmlNode *n, const char *name)
{
	char *t = child_text(n, name);
	long v = t ? strtol(t, NULL, 10) : 0;

	free(t);
	return v;
}

static xmlDoc *read_xml(const char *xml, size_t len)
{
	if (len > (size_t)MAX_BODY)
		return NULL;
	/* no network, no entity substitution, no DTD loading */
	return xmlReadMemory(xml, (int)len, "ec2.xml", NULL,
			     XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
}

static int error_from_doc(xmlDoc *doc, char **code, char **message, char **rid)
{
	xmlNode *root = xmlDocGetRootElement(doc), *errs, *e;

	if (!is_el(root, "Response") && !is_el(root, "ErrorResponse"))
		return -1;
	errs = child(root, "Errors");
	e = errs ? child(errs, "Error") : child(root, "Error");
	if (!e)
		return -1;
	*code = child_text(e, "Code");
	*message = child_text(e, "Message");
	*rid = child_text(root, "RequestID");
	if (!*rid)
		*rid = child_text(root, "RequestId");
	/* the cloud's text, bound for logs, node reasons and terminals: its
	 * control characters (a newline, a C1 CSI; XML carries no ESC) written
	 * out as it enters */
	{
		char **f[] = { code, message, rid };
		for (size_t i = 0; i < 3; i++) {
			char *t = str_escape_ctl(*f[i] ? *f[i] : "");
			free(*f[i]);
			*f[i] = t;
		}
	}
	return 0;
}

int ec2_parse_error(const char *xml, size_t len, char **code, char **message,
		    char **request_id)
{
	xmlDoc *doc = read_xml(xml, len);
	int rc;

	*code = *message = *request_id = NULL;
	if (!doc)
		return -1;
	rc = error_from_doc(doc, code, message, request_id);
	xmlFreeDoc(doc);
	return rc;
}

static void instance_free(struct ec2_instance *i)
{
	free(i->id);
	free(i->type);
	free(i->state);
	free(i->private_ip);
	free(i->launch_time);
	free(i->client_token);
	free(i->image_id);
	for (size_t k = 0; k < i->ntags; k++) {
		free((char *)i->tags[k].key);
		free((char *)i->tags[k].value);
	}
	free(i->tags);
}

void ec2_instances_free(struct ec2_instances *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		instance_free(&l->v[i]);
	free(l->v);
	free(l->reservation_id);
	memset(l, 0, sizeof(*l));
}

/*
 * RunInstances and DescribeInstances answers are read as a stream (libxml2's
 * SAX2 push parser), not as a tree: only the fields struct ec2_instance
 * holds are copied, every other element is passed over without a copy of
 * its text. A listing page of 1,000 instances no longer builds (and frees)
 * a tree of every element of every instance, and finding a field is no
 * longer a walk over its siblings.
 *
 * Where an element stands decides what it is: its parent's role and its own
 * name. The fields are those of the instance item itself (instancesSet/item),
 * not the like-named ones deeper in it (networkInterfaceSet/item/
 * privateIpAddress is not the instance's privateIpAddress).
 */
enum xrole {
	XR_OUTSIDE,        /* before the root */
	XR_ROOT,           /* RunInstancesResponse / DescribeInstancesResponse */
	XR_RSET,           /* reservationSet */
	XR_RITEM,          /* reservationSet/item */
	XR_ISET,           /* instancesSet */
	XR_INST,           /* instancesSet/item: one instance */
	XR_ISTATE,         /* its instanceState */
	XR_TAGSET,         /* its tagSet */
	XR_TAG,            /* tagSet/item */
	XR_TEXT,           /* a field: its text is kept */
	XR_SKIP,           /* anything else, and all below it */
};

enum xfield {
	XF_NONE, XF_ID, XF_TYPE, XF_STATE, XF_IP, XF_TIME, XF_TOKEN, XF_IMAGE, XF_INDEX,
	XF_TAG_KEY, XF_TAG_VALUE, XF_RESERVATION, XF_NEXT,
};

#define XR_DEPTH 32

struct istream {
	struct ec2_instances *out;
	size_t n0;                 /* out->n before this answer */
	bool had_reservation;      /* out->reservation_id was set before it */
	const char *const *tag_keys;  /* the tags kept (NULL: all) */
	size_t ntag_keys;
	unsigned depth;            /* of the element being read (root: 1) */
	enum xrole role[XR_DEPTH]; /* role[d]: that of the open element at depth d */
	enum xfield field;         /* the field whose text is being read */
	unsigned field_depth;
	struct strbuf text;
	char *tag_key, *tag_value; /* of the tag being read */
	char *next_token;
	char root[64];             /* the root's name when it is not an instances answer */
};

/* The role of an element called name whose parent's role is parent; sets
 * *field for XR_TEXT. */
static enum xrole xrole_of(enum xrole parent, const char *name, enum xfield *field)
{
	static const struct {
		const char *name;
		enum xfield f;
	} inst[] = {
		{ "instanceId", XF_ID }, { "instanceType", XF_TYPE }, { "privateIpAddress", XF_IP },
		{ "launchTime", XF_TIME }, { "clientToken", XF_TOKEN }, { "imageId", XF_IMAGE },
		{ "amiLaunchIndex", XF_INDEX },
	};

	*field = XF_NONE;
	switch (parent) {
	case XR_OUTSIDE:
		return strcmp(name, "RunInstancesResponse") && strcmp(name, "DescribeInstancesResponse")
			? XR_SKIP : XR_ROOT;
	case XR_ROOT:
		if (!strcmp(name, "instancesSet"))
			return XR_ISET;
		if (!strcmp(name, "reservationSet"))
			return XR_RSET;
		if (!strcmp(name, "reservationId"))
			return *field = XF_RESERVATION, XR_TEXT;
		if (!strcmp(name, "nextToken"))
			return *field = XF_NEXT, XR_TEXT;
		return XR_SKIP;
	case XR_RSET:
		return strcmp(name, "item") ? XR_SKIP : XR_RITEM;
	case XR_RITEM:
		return strcmp(name, "instancesSet") ? XR_SKIP : XR_ISET;
	case XR_ISET:
		return strcmp(name, "item") ? XR_SKIP : XR_INST;
	case XR_INST:
		for (size_t i = 0; i < sizeof(inst) / sizeof(inst[0]); i++)
			if (!strcmp(name, inst[i].name))
				return *field = inst[i].f, XR_TEXT;
		if (!strcmp(name, "instanceState"))
			return XR_ISTATE;
		if (!strcmp(name, "tagSet"))
			return XR_TAGSET;
		return XR_SKIP;
	case XR_ISTATE:
		return strcmp(name, "name") ? XR_SKIP : (*field = XF_STATE, XR_TEXT);
	case XR_TAGSET:
		return strcmp(name, "item") ? XR_SKIP : XR_TAG;
	case XR_TAG:
		if (!strcmp(name, "key"))
			return *field = XF_TAG_KEY, XR_TEXT;
		if (!strcmp(name, "value"))
			return *field = XF_TAG_VALUE, XR_TEXT;
		return XR_SKIP;
	case XR_TEXT:
	case XR_SKIP:
		break;
	}
	return XR_SKIP;
}

static struct ec2_instance *xs_cur(struct istream *s)
{
	return s->out->n > s->n0 ? &s->out->v[s->out->n - 1] : NULL;
}

/* The first of a field's values counts, as in the tree (child_text): a
 * second privateIpAddress of the same item changes nothing. */
static void xs_set(char **dst, struct strbuf *t)
{
	if (*dst)
		return;
	*dst = xstrdup(t->s ? t->s : "");
	str_trim(*dst);
}

static void xs_start(void *ud, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri,
		     int nns, const xmlChar **nss, int nattr, int ndef, const xmlChar **attrs)
{
	struct istream *s = ud;
	enum xrole parent = s->depth ? (s->depth < XR_DEPTH ? s->role[s->depth] : XR_SKIP) : XR_OUTSIDE;
	enum xfield f;
	enum xrole r;

	(void)prefix, (void)uri, (void)nns, (void)nss, (void)nattr, (void)ndef, (void)attrs;
	r = xrole_of(parent, (const char *)local, &f);
	if (!s->depth && r == XR_SKIP)
		snprintf(s->root, sizeof(s->root), "%s", (const char *)local);
	s->depth++;
	if (s->depth < XR_DEPTH)
		s->role[s->depth] = r;
	if (r == XR_TEXT) {
		s->field = f;
		s->field_depth = s->depth;
		s->text.len = 0;
		if (s->text.s)
			s->text.s[0] = '\0';
	} else if (r == XR_INST) {
		struct ec2_instances *o = s->out;
		o->v = xrealloc(o->v, (o->n + 1) * sizeof(*o->v));
		memset(&o->v[o->n], 0, sizeof(o->v[o->n]));
		o->v[o->n++].launch_index = -1;
	} else if (r == XR_TAG) {
		free(s->tag_key);
		free(s->tag_value);
		s->tag_key = s->tag_value = NULL;
	}
}

static bool xs_keep_tag(const struct istream *s, const char *key)
{
	if (!s->tag_keys)
		return true;
	for (size_t i = 0; i < s->ntag_keys; i++)
		if (!strcmp(s->tag_keys[i], key))
			return true;
	return false;
}

static void xs_field(struct istream *s)
{
	struct ec2_instance *in = xs_cur(s);

	switch (s->field) {
	case XF_RESERVATION:
		xs_set(&s->out->reservation_id, &s->text);
		return;
	case XF_NEXT:
		xs_set(&s->next_token, &s->text);
		return;
	case XF_TAG_KEY:
		xs_set(&s->tag_key, &s->text);
		return;
	case XF_TAG_VALUE:
		xs_set(&s->tag_value, &s->text);
		return;
	default:
		break;
	}
	if (!in)
		return;
	switch (s->field) {
	case XF_ID: xs_set(&in->id, &s->text); break;
	case XF_TYPE: xs_set(&in->type, &s->text); break;
	case XF_STATE: xs_set(&in->state, &s->text); break;
	case XF_IP: xs_set(&in->private_ip, &s->text); break;
	case XF_TIME: xs_set(&in->launch_time, &s->text); break;
	case XF_TOKEN: xs_set(&in->client_token, &s->text); break;
	case XF_IMAGE: xs_set(&in->image_id, &s->text); break;
	case XF_INDEX: {
		char *li = NULL, *end = NULL;
		long v;
		xs_set(&li, &s->text);
		v = *li ? strtol(li, &end, 10) : -1;
		if (in->launch_index < 0)
			in->launch_index = *li && end && !*end && v >= 0 && v < 1000000 ? (int)v : -1;
		free(li);
		break;
	}
	default:
		break;
	}
}

static void xs_end(void *ud, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri)
{
	struct istream *s = ud;
	enum xrole r = s->depth < XR_DEPTH ? s->role[s->depth] : XR_SKIP;

	(void)local, (void)prefix, (void)uri;
	if (r == XR_TEXT && s->field_depth == s->depth) {
		xs_field(s);
		s->field = XF_NONE;
	} else if (r == XR_INST) {
		struct ec2_instance *in = xs_cur(s);
		if (in && in->private_ip && !*in->private_ip) {
			free(in->private_ip);
			in->private_ip = NULL;
		}
		if (in && in->client_token && !*in->client_token) {
			free(in->client_token);
			in->client_token = NULL;
		}
	} else if (r == XR_TAG) {
		struct ec2_instance *in = xs_cur(s);
		const char *key = s->tag_key ? s->tag_key : "";
		if (in && xs_keep_tag(s, key)) {
			in->tags = xrealloc(in->tags, (in->ntags + 1) * sizeof(*in->tags));
			in->tags[in->ntags].key = s->tag_key ? s->tag_key : xstrdup("");
			in->tags[in->ntags].value = s->tag_value ? s->tag_value : xstrdup("");
			in->ntags++;
			s->tag_key = s->tag_value = NULL;
		}
	}
	s->depth--;
}

static void xs_chars(void *ud, const xmlChar *ch, int len)
{
	struct istream *s = ud;

	if (s->field != XF_NONE)
		sb_addn(&s->text, (const char *)ch, (size_t)len);
}

/* libxml2's complaints are not printed: the parse's outcome says it. */
#if LIBXML_VERSION >= 21200
static void xs_quiet(void *ud, const xmlError *e)
#else
static void xs_quiet(void *ud, xmlErrorPtr e)
#endif
{
	(void)ud, (void)e;
}

/*
 * Stream xml into *out (appended). 0; -1 when it is not well-formed XML
 * (err says where and what); -2 when it is XML but no instances answer. On
 * a failure *out is as it was before the call.
 */
static int instances_stream(const char *xml, size_t len, struct ec2_instances *out,
			    const char *const *tag_keys, size_t ntag_keys, char **next_token,
			    burst_err_t *err)
{
	xmlSAXHandler sax;
	xmlParserCtxtPtr ctxt;
	struct istream s;
	int rc = 0;

	*next_token = NULL;
	memset(&s, 0, sizeof(s));
	s.out = out;
	s.n0 = out->n;
	s.had_reservation = out->reservation_id != NULL;
	s.tag_keys = tag_keys;
	s.ntag_keys = ntag_keys;
	sb_init(&s.text);
	if (len > (size_t)MAX_BODY || len > (size_t)INT32_MAX) {
		burst_err_set(err, "EC2 answer is not well-formed XML: %zu bytes, more than the %ld "
			      "an answer may have", len, MAX_BODY);
		return -1;
	}
	memset(&sax, 0, sizeof(sax));
	sax.initialized = XML_SAX2_MAGIC;
	sax.startElementNs = xs_start;
	sax.endElementNs = xs_end;
	sax.characters = xs_chars;
	sax.cdataBlock = xs_chars;
	sax.serror = xs_quiet;
	ctxt = xmlCreatePushParserCtxt(&sax, &s, NULL, 0, "ec2.xml");
	if (!ctxt) {
		burst_err_set(err, "EC2 answer cannot be read: out of memory");
		return -1;
	}
	/* no network, no DTD loaded, no entity substituted (no entity
	 * declaration handler: a DTD's entities are never defined) */
	xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (xmlParseChunk(ctxt, xml, (int)len, 1) != 0 || !ctxt->wellFormed) {
		const xmlError *e = xmlCtxtGetLastError(ctxt);
		char what[256];
		snprintf(what, sizeof(what), "%s", e && e->message ? e->message : "");
		what[strcspn(what, "\n")] = '\0';
		if (!len || !xml[strspn(xml, " \t\r\n")])
			burst_err_set(err, "EC2 answer is not well-formed XML: it is empty");
		else if (e)
			burst_err_set(err, "EC2 answer is not well-formed XML: line %d: %s", e->line, what);
		else
			burst_err_set(err, "EC2 answer is not well-formed XML");
		rc = -1;
	} else if (s.root[0]) {
		burst_err_set(err, "unexpected EC2 answer <%s>, expected RunInstancesResponse "
			      "or DescribeInstancesResponse", s.root);
		rc = -2;
	}
	xmlFreeParserCtxt(ctxt);
	free(s.tag_key);
	free(s.tag_value);
	sb_free(&s.text);
	if (rc != 0) {
		/* nothing of a bad answer stays: a retry appends the good one */
		for (size_t i = s.n0; i < out->n; i++)
			instance_free(&out->v[i]);
		out->n = s.n0;
		if (!s.had_reservation) {
			free(out->reservation_id);
			out->reservation_id = NULL;
		}
		free(s.next_token);
		return rc;
	}
	if (s.next_token && !*s.next_token) {
		free(s.next_token);
		s.next_token = NULL;
	}
	*next_token = s.next_token;
	return 0;
}

int ec2_parse_instances_keep(const char *xml, size_t len, struct ec2_instances *out,
			     const char *const *tag_keys, size_t ntag_keys, char **next_token,
			     burst_err_t *err)
{
	return instances_stream(xml, len, out, tag_keys, ntag_keys, next_token, err);
}

int ec2_parse_instances(const char *xml, size_t len, struct ec2_instances *out,
			char **next_token, burst_err_t *err)
{
	return instances_stream(xml, len, out, NULL, 0, next_token, err) == 0 ? 0 : -1;
}

static char *take_next_token(const xmlNode *root)
{
	char *t = child_text(root, "nextToken");

	if (t && !*t) {
		free(t);
		t = NULL;
	}
	return t;
}

void ec2_instance_types_free(struct ec2_instance_types *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].gpu_manufacturer);
		free(l->v[i].gpu_name);
		free(l->v[i].network_performance);
		free(l->v[i].arch);
		free(l->v[i].cpu_manufacturer);
		free(l->v[i].storage_disk);
		free(l->v[i].neuron_name);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int types_from_doc(xmlDoc *doc, struct ec2_instance_types *out, char **next_token,
			  burst_err_t *err)
{
	xmlNode *root = xmlDocGetRootElement(doc), *set;

	*next_token = NULL;
	if (!is_el(root, "DescribeInstanceTypesResponse")) {
		burst_err_set(err, "unexpected EC2 answer <%s>, expected "
			      "DescribeInstanceTypesResponse", root ? (const char *)root->name : "");
		return -1;
	}
	set = child(root, "instanceTypeSet");
	for (xmlNode *it = set ? set->children : NULL; it; it = it->next) {
		struct ec2_instance_type *t;
		xmlNode *gpus, *net, *proc, *sto, *neu, *archs;
		char *efa;

		if (!is_el(it, "item"))
			continue;
		out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
		t = &out->v[out->n++];
		memset(t, 0, sizeof(*t));
		t->name = child_text(it, "instanceType");
		t->vcpus = (int)child_long(child(it, "vCpuInfo"), "defaultVCpus");
		t->memory_mib = child_long(child(it, "memoryInfo"), "sizeInMiB");
		gpus = child(child(it, "gpuInfo"), "gpus");
		if (gpus && child(gpus, "item")) {
			xmlNode *g = child(gpus, "item");
			t->gpu_count = (int)child_long(g, "count");
			t->gpu_manufacturer = child_text(g, "manufacturer");
			t->gpu_name = child_text(g, "name");
			t->gpu_memory_mib = child_long(child(g, "memoryInfo"), "sizeInMiB");
		}
		net = child(it, "networkInfo");
		t->network_performance = child_text(net, "networkPerformance");
		efa = child_text(net, "efaSupported");
		t->efa_supported = efa && strcmp(efa, "true") == 0;
		free(efa);
		t->efa_max_interfaces = (int)child_long(child(net, "efaInfo"), "maximumEfaInterfaces");
		proc = child(it, "processorInfo");
		archs = child(proc, "supportedArchitectures");
		t->arch = child_text(archs, "item");   /* the first */
		t->cpu_manufacturer = child_text(proc, "manufacturer");
		sto = child(it, "instanceStorageInfo");
		if (sto) {
			char *nvme = child_text(sto, "nvmeSupport");
			xmlNode *disks = child(sto, "disks");
			t->storage_gb = child_long(sto, "totalSizeInGB");
			if (disks && child(disks, "item"))
				t->storage_disk = child_text(child(disks, "item"), "type");
			t->storage_nvme = nvme && strcmp(nvme, "unsupported") != 0;
			free(nvme);
		}
		neu = child(child(it, "neuronInfo"), "neuronDevices");
		if (neu && child(neu, "item")) {
			xmlNode *d = child(neu, "item");
			t->neuron_count = (int)child_long(d, "count");
			t->neuron_name = child_text(d, "name");
			t->neuron_memory_mib = child_long(child(d, "memoryInfo"), "sizeInMiB");
		}
	}
	*next_token = take_next_token(root);
	return 0;
}

int ec2_parse_instance_types(const char *xml, size_t len, struct ec2_instance_types *out,
			     char **next_token, burst_err_t *err)
{
	xmlDoc *doc = read_xml(xml, len);
	int rc;

	*next_token = NULL;
	if (!doc) {
		burst_err_set(err, "EC2 answer is not well-formed XML");
		return -1;
	}
	rc = types_from_doc(doc, out, next_token, err);
	xmlFreeDoc(doc);
	return rc;
}

/* ---- client ---- */

static void set_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? xstrdup(src) : NULL;
}

static size_t collect(char *p, size_t sz, size_t n, void *ud);

struct ec2_client *ec2_client_new(const struct ec2_client_opts *o, burst_err_t *err)
{
	struct ec2_client *c = NULL;
	CURLU *u = NULL;
	char *host = NULL, *port = NULL, *path = NULL, *scheme = NULL;
	struct strbuf sb;

	if (!o || !o->region || !*o->region) {
		burst_err_set(err, "ec2: no region given (set the provider's Region=)");
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->region = xstrdup(o->region);
	if (o->endpoint && *o->endpoint) {
		c->endpoint = xstrdup(o->endpoint);
	} else {
		sb_init(&sb);
		sb_addf(&sb, "https://ec2.%s.amazonaws.com/", o->region);
		c->endpoint = sb_take(&sb);
	}
	u = curl_url();
	if (!u || curl_url_set(u, CURLUPART_URL, c->endpoint, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		burst_err_set(err, "ec2: endpoint '%s' is not a URL (want https://HOST/)",
			      c->endpoint);
		goto fail;
	}
	if (strcmp(scheme, "https") != 0 && strcmp(scheme, "http") != 0) {
		burst_err_set(err, "ec2: endpoint '%s' must be https:// (or http:// for tests)",
			      c->endpoint);
		goto fail;
	}
	if (curl_url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
		port = NULL;
	if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
		path = NULL;
	sb_init(&sb);
	sb_addf(&sb, "%s%s%s", host, port ? ":" : "", port ? port : "");
	c->host = sb_take(&sb);
	c->path = xstrdup(path && *path ? path : "/");

	if (o->creds) {
		if (!o->creds->access_key || !o->creds->secret_key) {
			burst_err_set(err, "ec2: credentials without an access key or secret key");
			goto fail;
		}
		aws_creds_copy(&c->creds, o->creds);
	} else {
		if (o->creds_opts) {
			c->copts = *o->creds_opts;
			set_str(&c->copt_file, o->creds_opts->credentials_file);
			set_str(&c->copt_profile, o->creds_opts->profile);
			set_str(&c->copt_imds, o->creds_opts->imds_endpoint);
			c->copts.credentials_file = c->copt_file;
			c->copts.profile = c->copt_profile;
			c->copts.imds_endpoint = c->copt_imds;
		}
		if (aws_creds_resolve(&c->copts, &c->creds, err) != 0)
			goto fail;
		c->resolvable = true;
	}
	if (o->ca_file && *o->ca_file)
		c->ca_file = xstrdup(o->ca_file);
	c->connect_timeout_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : 5000;
	c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 30000;
	c->max_attempts = o->max_attempts > 0 ? o->max_attempts : 5;
	c->max_total_ms = o->max_total_ms > 0 ? o->max_total_ms : 60000;
	c->base_ms = o->backoff_base_ms > 0 ? o->backoff_base_ms : 200;
	c->cap_ms = o->backoff_cap_ms > 0 ? o->backoff_cap_ms : 10000;
	c->curl = curl_easy_init();
	if (!c->curl) {
		burst_err_set(err, "ec2: cannot initialise libcurl");
		goto fail;
	}
	/* the options every request has, set once: the handle keeps them */
	httpc_common(c->curl, c->ca_file, c->connect_timeout_ms, c->timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_URL, c->endpoint);
	curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, collect);
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_free(scheme);
	curl_url_cleanup(u);
	return c;
fail:
	curl_free(host);
	curl_free(port);
	curl_free(path);
	curl_free(scheme);
	curl_url_cleanup(u);
	ec2_client_free(c);
	return NULL;
}

struct ec2_client *ec2_client_for_provider(const char *region, const char *endpoint,
					   const char *ca_file, const char *credentials_file,
					   const char *profile, burst_err_t *err)
{
	struct ec2_client_opts o;
	struct aws_creds_opts co;

	memset(&o, 0, sizeof(o));
	memset(&co, 0, sizeof(co));
	co.credentials_file = credentials_file;
	co.profile = profile;
	o.region = region;
	o.endpoint = endpoint;
	o.ca_file = ca_file;
	o.creds_opts = &co;
	return ec2_client_new(&o, err);
}

void ec2_client_paced(struct ec2_client *c, bool paced)
{
	c->paced = paced;
}

void ec2_client_free(struct ec2_client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	aws_creds_free(&c->creds);
	sigv4_key_cache_clear(&c->sigkey);
	free(c->region);
	free(c->endpoint);
	free(c->host);
	free(c->path);
	free(c->copt_file);
	free(c->copt_profile);
	free(c->copt_imds);
	free(c->ca_file);
	free(c);
}

struct ec2_stats ec2_client_stats(const struct ec2_client *c)
{
	return c->stats;
}

void ec2_stats_reset(struct ec2_client *c)
{
	memset(&c->stats, 0, sizeof(c->stats));
}

const char *ec2_last_code(const struct ec2_client *c)
{
	return c->last_code;
}

const char *ec2_last_request_id(const struct ec2_client *c)
{
	return c->last_request_id;
}

/* ---- one request ---- */

static size_t collect(char *p, size_t sz, size_t n, void *ud)
{
	struct strbuf *sb = ud;
	size_t len = sz * n;

	if (sb->len + len > (size_t)MAX_BODY)
		return 0;
	if (sb->len + len + 1 > sb->cap) {
		sb->cap = (sb->len + len + 1) * 2;
		sb->s = xrealloc(sb->s, sb->cap);
	}
	memcpy(sb->s + sb->len, p, len);
	sb->len += len;
	sb->s[sb->len] = '\0';
	return len;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static uint32_t random32(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (uint32_t)random();
	return r;
}

/* "ec2 ACTION in REGION (CTX): " */
static void prefix(struct strbuf *sb, const struct ec2_client *c, const char *action,
		   const char *ctx)
{
	sb_addf(sb, "ec2 %s in %s", action, c->region);
	if (ctx && *ctx)
		sb_addf(sb, " (%s)", ctx);
	sb_add(sb, ": ");
}

static void set_err(burst_err_t *err, const struct ec2_client *c, struct strbuf *msg)
{
	const char *secrets[] = { c->creds.secret_key, c->creds.session_token, NULL };

	size_t len = msg->s ? msg->len : 0;
	/* redact before truncating to the err buffer, so that no prefix of a
	 * secret can survive at the cut; "[redacted]" is at most 10x a secret */
	size_t cap = len * 10 + 16;
	char *buf = xmalloc(cap);

	snprintf(buf, cap, "%s", msg->s ? msg->s : "");
	ec2_redact(buf, cap, secrets);
	burst_err_set(err, "%s", buf);
	/* every message made of an answer's text (its error document, what
	 * could not be read of it) is made here: no control character of the
	 * cloud's leaves */
	burst_err_escape_ctl(err);
	free(buf);
	sb_free(msg);
}

/*
 * A RunInstances or DescribeInstances answer streamed into out (appended)
 * by the call itself, so that one that is not XML is retried as before and
 * one that is XML but not such an answer is a PERMANENT failure naming it.
 */
struct answer_stream {
	struct ec2_instances *out;
	const char *const *tag_keys;   /* the tags kept (NULL: all) */
	size_t ntag_keys;
	char *next;                    /* the answer's nextToken (allocated) or NULL */
};

/*
 * One signed POST. On EC2_OK *doc is the parsed answer (caller frees), or
 * (as given, doc NULL) the answer streamed into as->out; a
 * caller that needs nothing of it passes doc NULL, and a 200 answer that
 * looks like XML is then not parsed (CreateTags, one per instance of a
 * burst: the parse cost more than the rest of the call's own work). On
 * failure err holds the message (without the retry note).
 */
static enum ec2_class request_once(struct ec2_client *c, const char *action, const char *ctx,
				   const char *body, xmlDoc **doc, struct answer_stream *as,
				   burst_err_t *err)
{
	struct sigv4_header hdrs[2];
	struct sigv4_request req;
	struct sigv4_creds sc;
	struct sigv4_result sig = { 0 };
	struct curl_slist *cl = NULL;
	struct strbuf resp, line, msg;
	char amz_date[32], curl_err[CURL_ERROR_SIZE];
	struct tm tm;
	time_t t;
	long status = 0;
	CURLcode cc;
	enum ec2_class cls = EC2_PERMANENT;
	char *code = NULL, *message = NULL, *rid = NULL;

	xmlDoc *parsed = NULL;

	if (doc)
		*doc = NULL;
	sb_init(&resp);
	sb_init(&line);
	sb_init(&msg);
	c->last_code[0] = c->last_request_id[0] = '\0';

	t = time(NULL);
	gmtime_r(&t, &tm);
	strftime(amz_date, sizeof(amz_date), "%Y%m%dT%H%M%SZ", &tm);
	hdrs[0] = (struct sigv4_header){ "Host", c->host };
	hdrs[1] = (struct sigv4_header){ "Content-Type",
					 "application/x-www-form-urlencoded; charset=utf-8" };
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.path = c->path;
	req.query = NULL;
	req.headers = hdrs;
	req.nheaders = 2;
	req.body = body;
	req.body_len = strlen(body);
	sc.access_key = c->creds.access_key;
	sc.secret_key = c->creds.secret_key;
	sc.session_token = c->creds.session_token;
	if (sigv4_sign_cached(&req, &sc, c->region, "ec2", amz_date, &c->sigkey, &sig, err) != 0) {
		prefix(&msg, c, action, ctx);
		sb_addf(&msg, "cannot sign the request: %s", err->msg);
		set_err(err, c, &msg);
		goto out;
	}

	sb_addf(&line, "Host: %s", c->host);
	cl = curl_slist_append(cl, line.s);
	sb_free(&line);
	cl = curl_slist_append(cl, "Content-Type: application/x-www-form-urlencoded; charset=utf-8");
	sb_addf(&line, "X-Amz-Date: %s", sig.amz_date);
	cl = curl_slist_append(cl, line.s);
	sb_free(&line);
	sb_addf(&line, "Authorization: %s", sig.authorization);
	cl = curl_slist_append(cl, line.s);
	explicit_bzero(line.s, line.len);
	sb_free(&line);
	if (sig.security_token) {
		sb_addf(&line, "X-Amz-Security-Token: %s", sig.security_token);
		cl = curl_slist_append(cl, line.s);
		explicit_bzero(line.s, line.len);
		sb_free(&line);
	}
	cl = curl_slist_append(cl, "Expect:");
	cl = curl_slist_append(cl, "Accept:");

	/* this request's own options (those every request has were set when
	 * the client was made: the handle keeps them and its connection) */
	curl_err[0] = '\0';
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, cl);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &resp);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, curl_err);
	c->stats.api_calls++;
	cc = curl_easy_perform(c->curl);
	/* nothing of this request's (its stack) stays with the handle */
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, NULL);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, NULL);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, NULL);
	if (cc != CURLE_OK) {
		switch (cc) {
		case CURLE_PEER_FAILED_VERIFICATION:
		case CURLE_SSL_CACERT_BADFILE:
		case CURLE_SSL_CERTPROBLEM:
		case CURLE_UNSUPPORTED_PROTOCOL:
		case CURLE_URL_MALFORMAT:
			cls = EC2_PERMANENT;
			break;
		default:
			cls = EC2_TRANSIENT;
		}
		prefix(&msg, c, action, ctx);
		sb_addf(&msg, "cannot talk to %s: %s", c->endpoint,
			curl_err[0] ? curl_err : curl_easy_strerror(cc));
		set_err(err, c, &msg);
		goto out;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status == 200 && as) {
		burst_err_t why;
		int rc = instances_stream(resp.s ? resp.s : "", resp.s ? resp.len : 0, as->out,
					  as->tag_keys, as->ntag_keys, &as->next, &why);
		if (rc == 0) {
			cls = EC2_OK;
			goto out;
		}
		/* not XML (cut short, a proxy's page): retried; XML but not
		 * this answer: nothing a retry changes */
		cls = rc == -1 ? EC2_TRANSIENT : EC2_PERMANENT;
		prefix(&msg, c, action, ctx);
		sb_addf(&msg, "HTTP 200 with %s", why.msg);
		set_err(err, c, &msg);
		goto out;
	}
	if (status == 200 && !doc && resp.s && resp.s[strspn(resp.s, " \t\r\n")] == '<') {
		cls = EC2_OK;
		goto out;
	}
	parsed = resp.s ? read_xml(resp.s, resp.len) : NULL;
	if (status == 200 && parsed) {
		cls = EC2_OK;
		if (doc)
			*doc = parsed;
		else
			xmlFreeDoc(parsed);
		goto out;
	}
	if (parsed && error_from_doc(parsed, &code, &message, &rid) == 0 && *code) {
		cls = ec2_classify(code, status);
		snprintf(c->last_code, sizeof(c->last_code), "%s", code);
		snprintf(c->last_request_id, sizeof(c->last_request_id), "%s", rid);
		prefix(&msg, c, action, ctx);
		sb_addf(&msg, "%s: %s", code, message);
		if (*rid)
			sb_addf(&msg, " (request id %s)", rid);
	} else {
		cls = status == 200 ? EC2_TRANSIENT : ec2_classify(NULL, status);
		prefix(&msg, c, action, ctx);
		if (status == 200)
			sb_addf(&msg, "HTTP 200 with an answer that is not XML");
		else
			sb_addf(&msg, "HTTP %ld without an EC2 error document", status);
	}
	if (parsed)
		xmlFreeDoc(parsed);
	set_err(err, c, &msg);
out:
	curl_slist_free_all(cl);
	sigv4_result_free(&sig);
	sb_free(&resp);
	free(code);
	free(message);
	free(rid);
	return cls;
}

/* Append to err's message on the same line. */
static void append(burst_err_t *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void append(burst_err_t *err, const char *fmt, ...)
{
	size_t len = strnlen(err->msg, sizeof(err->msg));
	va_list ap;

	if (len + 1 >= sizeof(err->msg))
		return;
	va_start(ap, fmt);
	vsnprintf(err->msg + len, sizeof(err->msg) - len, fmt, ap);
	va_end(ap);
}

/* The request with retries of THROTTLED and TRANSIENT within the budget. */
static enum ec2_class call(struct ec2_client *c, const char *action, const char *ctx,
			   const char *body, xmlDoc **doc, struct answer_stream *as, burst_err_t *err)
{
	long start = now_ms();
	bool refreshed = false;
	enum ec2_class cls;

	for (unsigned attempt = 0;; attempt++) {
		long delay;

		if (c->resolvable && aws_creds_expiring(&c->creds, time(NULL))) {
			struct aws_creds fresh;
			if (aws_creds_resolve(&c->copts, &fresh, err) != 0) {
				struct strbuf msg;
				char *why = xstrdup(err->msg);
				sb_init(&msg);
				prefix(&msg, c, action, ctx);
				sb_addf(&msg, "cannot refresh credentials: %s", why);
				free(why);
				set_err(err, c, &msg);
				return EC2_AUTH;
			}
			aws_creds_free(&c->creds);
			c->creds = fresh;
		}
		cls = request_once(c, action, ctx, body, doc, as, err);
		if (cls == EC2_AUTH && c->resolvable && !refreshed &&
		    strcmp(c->last_code, "ExpiredToken") == 0 &&
		    attempt + 1 < c->max_attempts) {
			/* temporary credentials expired early: fetch new ones once */
			refreshed = true;
			c->creds.expiration = 1;
			c->stats.retries++;
			continue;
		}
		if (cls != EC2_THROTTLED && cls != EC2_TRANSIENT)
			return cls;
		if (cls == EC2_THROTTLED && c->paced &&
		    (!strcmp(action, "RunInstances") || !strcmp(action, "TerminateInstances"))) {
			/* the caller paces these to its model of the buckets: an
			 * empty one is its news, and a retry here another throttle */
			append(err, " (not retried here: the launches and terminations are paced)");
			return cls;
		}
		if (attempt + 1 >= c->max_attempts) {
			c->stats.budget_exhausted++;
			append(err, " (gave up after %u attempts in %ld ms)",
			       attempt + 1, now_ms() - start);
			return cls;
		}
		delay = ec2_backoff_ms(attempt, c->base_ms, c->cap_ms, random32());
		if (now_ms() - start + delay > c->max_total_ms) {
			c->stats.budget_exhausted++;
			append(err, " (gave up after %u attempts: the retry budget of %ld ms "
			       "is spent)", attempt + 1, c->max_total_ms);
			return cls;
		}
		sleep_ms(delay);
		c->stats.backoff_ms += delay;
		c->stats.retries++;
	}
}

/* ---- request bodies ---- */

/*
 * Form-encode s: RFC 3986 percent-encoding (sigv4_uri_encode) but a space
 * as '+', as application/x-www-form-urlencoded allows and botocore sends.
 * Only the body's hash is signed, so AWS takes either; servers that verify
 * the signature over the form re-encoded from its parsed fields (moto) need
 * botocore's bytes. '%' itself is encoded, so "%20" can only be a space.
 */
static char *form_encode(const char *s)
{
	char *e = sigv4_uri_encode(s, true), *r = e, *w = e;

	while (*r) {
		if (r[0] == '%' && r[1] == '2' && r[2] == '0') {
			*w++ = '+';
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return e;
}

static void param(struct strbuf *sb, const char *name, const char *value)
{
	char *n = form_encode(name);
	char *v = form_encode(value ? value : "");

	sb_addf(sb, "&%s=%s", n, v);
	free(n);
	free(v);
}

static void paramf(struct strbuf *sb, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void paramf(struct strbuf *sb, const char *value, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	param(sb, name, value);
}

static void begin(struct strbuf *sb, const char *action)
{
	sb_init(sb);
	sb_addf(sb, "Action=%s&Version=%s", action, EC2_API_VERSION);
}

static char *base64(const void *data, size_t len)
{
	char *out = xmalloc(4 * ((len + 2) / 3) + 1);

	EVP_EncodeBlock((unsigned char *)out, data, (int)len);
	return out;
}

long ec2_client_call_bound_ms(const struct ec2_client *c)
{
	return c->max_total_ms + c->connect_timeout_ms + c->timeout_ms;
}

enum ec2_class ec2_run_instances(struct ec2_client *c, const struct ec2_run_params *p,
				 struct ec2_instances *out, burst_err_t *err)
{
	struct strbuf b;
	char num[32];
	const char *ctx = p->instance_type ? p->instance_type :
		(p->launch_template_name ? p->launch_template_name : p->launch_template_id);
	struct answer_stream as = { 0 };
	enum ec2_class cls;

	memset(out, 0, sizeof(*out));
	if (!p->client_token || !*p->client_token ||
	    (!p->image_id && !p->launch_template_id && !p->launch_template_name)) {
		burst_err_set(err, "ec2 RunInstances in %s: %s", c->region,
			      !p->client_token || !*p->client_token ? "no ClientToken given"
			      : "neither an image id nor a launch template given");
		return EC2_PERMANENT;
	}
	begin(&b, "RunInstances");
	if (p->image_id)
		param(&b, "ImageId", p->image_id);
	if (p->launch_template_id)
		param(&b, "LaunchTemplate.LaunchTemplateId", p->launch_template_id);
	if (p->launch_template_name)
		param(&b, "LaunchTemplate.LaunchTemplateName", p->launch_template_name);
	if (p->launch_template_id || p->launch_template_name)
		param(&b, "LaunchTemplate.Version",
		      p->launch_template_version ? p->launch_template_version : "$Default");
	if (p->instance_type)
		param(&b, "InstanceType", p->instance_type);
	snprintf(num, sizeof(num), "%d", p->min_count > 0 ? p->min_count : 1);
	param(&b, "MinCount", num);
	snprintf(num, sizeof(num), "%d", p->max_count > 0 ? p->max_count :
		 (p->min_count > 0 ? p->min_count : 1));
	param(&b, "MaxCount", num);
	if (p->subnet_id)
		param(&b, "SubnetId", p->subnet_id);
	for (size_t i = 0; i < p->nsecurity_groups; i++)
		paramf(&b, p->security_group_ids[i], "SecurityGroupId.%zu", i + 1);
	if (p->iam_instance_profile_arn)
		param(&b, "IamInstanceProfile.Arn", p->iam_instance_profile_arn);
	else if (p->iam_instance_profile_name)
		param(&b, "IamInstanceProfile.Name", p->iam_instance_profile_name);
	if (p->user_data && p->user_data_len) {
		char *ud = base64(p->user_data, p->user_data_len);
		param(&b, "UserData", ud);
		free(ud);
	}
	if (p->ntags) {
		param(&b, "TagSpecification.1.ResourceType", "instance");
		for (size_t i = 0; i < p->ntags; i++) {
			paramf(&b, p->tags[i].key, "TagSpecification.1.Tag.%zu.Key", i + 1);
			paramf(&b, p->tags[i].value, "TagSpecification.1.Tag.%zu.Value", i + 1);
		}
	}
	param(&b, "ClientToken", p->client_token);
	param(&b, "MetadataOptions.HttpTokens", "required");
	param(&b, "MetadataOptions.HttpEndpoint", "enabled");
	if (p->metadata_tags)
		param(&b, "MetadataOptions.InstanceMetadataTags", "enabled");

	as.out = out;
	cls = call(c, "RunInstances", ctx, b.s, NULL, &as, err);
	if (cls != EC2_OK)
		ec2_instances_free(out);
	free(as.next);
	sb_free(&b);
	return cls;
}

enum ec2_class ec2_describe_instances_page(struct ec2_client *c, const struct ec2_describe_params *p,
					   const char *token, struct ec2_instances *out, char **next,
					   burst_err_t *err)
{
	struct ec2_describe_params none = { 0 };
	struct answer_stream as = { 0 };
	struct strbuf b;
	char num[32], ctx[128];
	enum ec2_class cls;

	*next = NULL;
	if (!p)
		p = &none;
	if (p->nids == 1)
		snprintf(ctx, sizeof(ctx), "%s", p->instance_ids[0]);
	else if (p->nids > 1)
		snprintf(ctx, sizeof(ctx), "%zu instances", p->nids);
	else
		ctx[0] = '\0';
	begin(&b, "DescribeInstances");
	for (size_t i = 0; i < p->nids; i++)
		paramf(&b, p->instance_ids[i], "InstanceId.%zu", i + 1);
	for (size_t i = 0; i < p->nfilters; i++) {
		paramf(&b, p->filters[i].name, "Filter.%zu.Name", i + 1);
		for (size_t k = 0; k < p->filters[i].nvalues; k++)
			paramf(&b, p->filters[i].values[k], "Filter.%zu.Value.%zu", i + 1, k + 1);
	}
	if (p->nids == 0) {
		snprintf(num, sizeof(num), "%d", p->max_results > 0 ? p->max_results : 1000);
		param(&b, "MaxResults", num);
	}
	if (token)
		param(&b, "NextToken", token);
	as.out = out;
	as.tag_keys = p->tag_keys;
	as.ntag_keys = p->ntag_keys;
	cls = call(c, "DescribeInstances", ctx, b.s, NULL, &as, err);
	sb_free(&b);
	if (cls == EC2_OK)
		*next = as.next;
	else
		free(as.next);
	return cls;
}

enum ec2_class ec2_describe_instances(struct ec2_client *c, const struct ec2_describe_params *p,
				      struct ec2_instances *out, burst_err_t *err)
{
	char *next = NULL;
	enum ec2_class cls;

	memset(out, 0, sizeof(*out));
	do {
		char *token = next;
		cls = ec2_describe_instances_page(c, p, token, out, &next, err);
		free(token);
	} while (cls == EC2_OK && next);
	free(next);
	if (cls != EC2_OK)
		ec2_instances_free(out);
	return cls;
}

static void ids_ctx(char *ctx, size_t cap, const char *const *ids, size_t n)
{
	if (n == 1)
		snprintf(ctx, cap, "%s", ids[0]);
	else
		snprintf(ctx, cap, "%zu instances", n);
}

/* The rest of an action on instances by id (TerminateInstances,
 * StopInstances, StartInstances) that b has begun. */
static enum ec2_class instances_call(struct ec2_client *c, struct strbuf *b, const char *action,
				     const char *const *ids, size_t n, burst_err_t *err)
{
	char ctx[128];
	xmlDoc *doc = NULL;
	enum ec2_class cls;

	ids_ctx(ctx, sizeof(ctx), ids, n);
	for (size_t i = 0; i < n; i++)
		paramf(b, ids[i], "InstanceId.%zu", i + 1);
	cls = call(c, action, ctx, b->s, &doc, NULL, err);
	if (doc)
		xmlFreeDoc(doc);
	sb_free(b);
	return cls;
}

enum ec2_class ec2_terminate_instances(struct ec2_client *c, const char *const *ids, size_t n,
				       burst_err_t *err)
{
	struct strbuf b;

	if (n == 0)
		return EC2_OK;
	begin(&b, "TerminateInstances");
	return instances_call(c, &b, "TerminateInstances", ids, n, err);
}

enum ec2_class ec2_stop_instances(struct ec2_client *c, const char *const *ids, size_t n,
				  burst_err_t *err)
{
	struct strbuf b;

	if (n == 0)
		return EC2_OK;
	begin(&b, "StopInstances");
	return instances_call(c, &b, "StopInstances", ids, n, err);
}

enum ec2_class ec2_start_instances(struct ec2_client *c, const char *const *ids, size_t n,
				   burst_err_t *err)
{
	struct strbuf b;

	if (n == 0)
		return EC2_OK;
	begin(&b, "StartInstances");
	return instances_call(c, &b, "StartInstances", ids, n, err);
}

enum ec2_class ec2_console_output(struct ec2_client *c, const char *id, char **out, burst_err_t *err)
{
	struct strbuf b;
	char ctx[160], *b64, *w, *r;
	xmlDoc *doc = NULL;
	enum ec2_class cls;

	*out = NULL;
	snprintf(ctx, sizeof(ctx), " %.140s", id);
	begin(&b, "GetConsoleOutput");
	paramf(&b, id, "InstanceId");
	paramf(&b, "true", "Latest");
	cls = call(c, "GetConsoleOutput", ctx, b.s, &doc, NULL, err);
	sb_free(&b);
	if (cls != EC2_OK) {
		if (doc)
			xmlFreeDoc(doc);
		return cls;
	}
	b64 = child_text(xmlDocGetRootElement(doc), "output");
	xmlFreeDoc(doc);
	if (!b64 || !*b64) {
		/* no output yet: the console is empty */
		free(b64);
		*out = xstrdup("");
		return EC2_OK;
	}
	/* base64 without the line breaks EC2 may put in it */
	for (w = r = b64; *r; r++)
		if (*r != '\n' && *r != '\r' && *r != ' ' && *r != '\t')
			*w++ = *r;
	*w = '\0';
	{
		size_t len = strlen(b64);
		unsigned char *dec = xmalloc(len / 4 * 3 + 4);
		int n = len % 4 ? -1 : EVP_DecodeBlock(dec, (const unsigned char *)b64, (int)len);

		if (n < 0) {
			free(dec);
			free(b64);
			burst_err_set(err, "ec2 GetConsoleOutput%s: the output is not base64", ctx);
			return EC2_PERMANENT;
		}
		/* EVP_DecodeBlock counts the padding as bytes */
		if (len >= 1 && b64[len - 1] == '=')
			n--;
		if (len >= 2 && b64[len - 2] == '=')
			n--;
		dec[n] = '\0';
		*out = (char *)dec;
	}
	free(b64);
	return EC2_OK;
}

enum ec2_class ec2_create_tags(struct ec2_client *c, const char *const *ids, size_t n,
			       const struct ec2_tag *tags, size_t ntags, burst_err_t *err)
{
	struct strbuf b;
	char ctx[128];
	enum ec2_class cls;

	if (n == 0 || ntags == 0)
		return EC2_OK;
	ids_ctx(ctx, sizeof(ctx), ids, n);
	begin(&b, "CreateTags");
	for (size_t i = 0; i < n; i++)
		paramf(&b, ids[i], "ResourceId.%zu", i + 1);
	for (size_t i = 0; i < ntags; i++) {
		paramf(&b, tags[i].key, "Tag.%zu.Key", i + 1);
		paramf(&b, tags[i].value, "Tag.%zu.Value", i + 1);
	}
	cls = call(c, "CreateTags", ctx, b.s, NULL, NULL, err);
	sb_free(&b);
	return cls;
}

enum ec2_class ec2_describe_instance_types(struct ec2_client *c, const char *const *types,
					   size_t n, struct ec2_instance_types *out,
					   burst_err_t *err)
{
	char *next = NULL;
	enum ec2_class cls = EC2_OK;

	memset(out, 0, sizeof(*out));
	do {
		struct strbuf b;
		xmlDoc *doc = NULL;

		begin(&b, "DescribeInstanceTypes");
		for (size_t i = 0; i < n; i++)
			paramf(&b, types[i], "InstanceType.%zu", i + 1);
		if (n == 0)
			param(&b, "MaxResults", "100");
		if (next)
			param(&b, "NextToken", next);
		free(next);
		next = NULL;
		cls = call(c, "DescribeInstanceTypes", n == 1 ? types[0] : NULL, b.s, &doc, NULL, err);
		sb_free(&b);
		if (cls == EC2_OK && types_from_doc(doc, out, &next, err) != 0) {
			char *why = str_escape_ctl(err->msg);
			burst_err_set(err, "ec2 DescribeInstanceTypes in %s: %s", c->region, why);
			free(why);
			cls = EC2_PERMANENT;
		}
		if (doc)
			xmlFreeDoc(doc);
	} while (cls == EC2_OK && next);
	free(next);
	if (cls != EC2_OK)
		ec2_instance_types_free(out);
	return cls;
}
