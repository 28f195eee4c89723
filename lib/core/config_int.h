/*
 * config_int.h - what the parts of burst.conf's reader share (config.c,
 * config_keys.c, config_OBJECT.c, config_catalog.c, config_check.c) and
 * their tests.
 */
#ifndef BURST_CONFIG_INT_H
#define BURST_CONFIG_INT_H

#include <stddef.h>

#include "config.h"
#include "confwords.h"
#include "keys.h"

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
	double stopped;          /* OVERRIDE_PRICE: Stopped= USD per stopped hour, NAN if not given */
	struct cfg_value *vals;  /* OVERRIDE_TYPE */
	size_t nvals;
	struct cfg_where where;
};

/* ---- reading (config.c) ---- */

/* The configuration being read and its errors. */
struct loader {
	struct burst_config *cfg;
	struct conf_errors errs;
};

/* An error at file:line (the capped list of confwords.h). */
void cfg_err(struct loader *ld, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "unknown OBJ key", with the nearest of known (see burst.conf(5) else). */
void cfg_unknown_key(struct loader *ld, const char *file, int line, const char *obj,
		     const char *key, const char *const *known);
/* A comma-separated list: a NULL-terminated array of *n new strings (empty
 * items dropped; never NULL). */
char **cfg_split_list(const char *s, size_t *n);
void cfg_free_list(char **v, size_t n);
/* An object's name: letters, digits, '_', '.' or '-'. */
bool cfg_valid_name(const char *s);
/* yes/true/1 or no/false/0 (any case); false when v is neither. */
bool cfg_parse_bool(const char *v, bool *out);
struct cfg_where cfg_where_of(const char *file, int line);
/* ADDRESS:PORT: 1 when v is one. */
int cfg_valid_hostport(const char *v);
/* An IPv4 address in dotted form (the n bytes at v), or "*" (every
 * address): into out; 1 when valid. */
int cfg_listen_addr(const char *v, size_t n, char out[16]);

/* ---- object lines (config.c) ---- */

/* The objects of one kind so far: an array of n items of size bytes, each
 * with its name (a char *) at name_off and its cfg_where at where_off. */
struct cfg_objects {
	const void *v;
	size_t n, size, name_off, where_off;
};
#define CFG_OBJECTS(v, n, type) \
	((struct cfg_objects){ (v), (n), sizeof(type), offsetof(type, name), offsetof(type, where) })

/*
 * The opening of an object line (KIND=NAME Key=Value...): NAME is a name
 * (letters, digits, '_', '.' or '-'; rule is said after that, e.g. " (it
 * becomes a Slurm feature)") and no other object of objs has it. False
 * after saying why not.
 */
bool cfg_object_open(struct loader *ld, const char *file, int line, const char *kind, const char *name,
		     const char *rule, struct cfg_objects objs);

/* One Key=Value of an object line for obj: false when key is not one of its keys. */
typedef bool (*cfg_key_fn)(struct loader *ld, const char *file, int line, void *obj, const char *key,
			   const char *val);

/*
 * The words of an object line after its name, each given to key: a word
 * without '=' is an error (its message starts with bare), and so is a key
 * key does not take ("unknown KIND key", the nearest of known suggested).
 */
void cfg_object_words(struct loader *ld, const char *file, int line, struct conf_word *w, int n,
		      const char *kind, const char *bare, const char *const *known, cfg_key_fn key, void *obj);

/* ---- the keys (config_keys.c) ---- */

enum cfg_key_kind {
	CK_OBJECT,       /* a line of its own: Provider=NAME Key=Value... (object) */
	CK_CONTRACT,     /* Contract=NAME EXPRESSION: the rest of the line */
	CK_INCLUDE,      /* Include FILE */
	CK_STRING,       /* any text (off: a char *) */
	CK_DIR,          /* a directory; empty: none (off: a char *) */
	CK_PATH,         /* an absolute path (off: a char *) */
	CK_PATH_SYSLOG,  /* an absolute path or syslog (off: a char *) */
	CK_BOOL,         /* yes or no (off: a bool) */
	CK_INT,          /* a whole number from min to max (off: an int), unit says of what */
	CK_CUSTOM,       /* set() parses it */
};

/* One key of burst.conf's table (Slurm's s_p_options_t shape). */
struct cfg_key {
	const char *name;
	enum cfg_key_kind kind;
	size_t off;              /* where in struct burst_config */
	long min, max;           /* CK_INT */
	const char *unit;        /* CK_INT: "seconds", "a TCP port" */
	void (*object)(struct loader *ld, const char *file, int line, struct conf_word *w, int n);
	void (*set)(struct loader *ld, const char *file, int line, const char *key, const char *val);
	const char *example;     /* a value it takes (after "NAME="; NULL: none) */
};

/* Every key a line may start with, and every global key: the parse, the
 * names "did you mean" chooses from (in order), the tests' examples. */
extern const struct cfg_key cfg_keys[];
extern const size_t cfg_nkeys;

/* The key of that name (any case), or NULL. */
const struct cfg_key *cfg_key_find(const char *name);
/* The keys' names, NULL-terminated (caller frees the array). */
const char **cfg_key_names(void);
/* A line of global keys (its first word one of them): each word parsed. */
void cfg_parse_globals(struct loader *ld, const char *file, int line, struct conf_word *w, int n);

void cfg_parse_join_listen(struct loader *ld, const char *file, int line, struct burst_config *cfg,
			   const char *val);
void cfg_parse_metrics_listen(struct loader *ld, const char *file, int line, const char *val);
/*
 * The admission policy keys, global or on a NodeSet line (obj: "" or
 * "NodeSet NAME: ", which the messages start with). Returns false when key
 * is not one of them.
 */
bool cfg_policy_key(struct loader *ld, const char *file, int line, const char *obj,
		    const char *key, const char *val, char ***blessed, size_t *nblessed,
		    double *tolerance, char ***required, size_t *nrequired,
		    unsigned long long *taint, bool *taint_set, char ***drivers,
		    size_t *ndrivers);

/* ---- object lines (config_OBJECT.c) ---- */

void cfg_parse_provider(struct loader *ld, const char *file, int line, struct conf_word *w, int n);
void cfg_free_provider(struct cfg_provider *p);
/* The provider types burstctl check-config names when one has no driver. */
const char *cfg_driver_names(char *buf, size_t len);
/* rest: the contract, after the name */
void cfg_parse_contract(struct loader *ld, const char *file, int line, char *rest, const char *name);
/* A contract's error (multi-line), its continuation lines indented. */
void cfg_contract_error(struct loader *ld, const char *file, int line, const char *what,
			const char *msg);
void cfg_parse_nodeset(struct loader *ld, const char *file, int line, struct conf_word *w, int n);
void cfg_free_nodeset(struct cfg_nodeset *ns);
void cfg_parse_budget(struct loader *ld, const char *file, int line, struct conf_word *w, int n);
void cfg_free_budget(struct cfg_budget *b);
void cfg_parse_price(struct loader *ld, const char *file, int line, struct conf_word *w, int n);
void cfg_parse_itype(struct loader *ld, const char *file, int line, struct conf_word *w, int n);
void cfg_free_override(struct cfg_override *o);

/* ---- candidates (config_catalog.c), for config_check ---- */

/* Whether s is one of list's n items (any case). */
bool cfg_in_list(char **list, size_t n, const char *s);

/* A node set's candidates before its Constraint, in the order they are
 * made (raw) and in name order (sorted): node sets that select the same
 * providers, regions and types (as all do in a one-provider burst.conf)
 * make the same list, which is then sorted once, not once per node set. */
struct ns_cands {
	struct candidate *raw;
	size_t nraw;
	struct candset sorted;
	bool valid;
};

void cfg_ns_cands_clear(struct ns_cands *nc);
/* Add the candidates of node set nsi to cs. Returns how many were added. */
size_t cfg_nodeset_candidates(const struct burst_config *cfg, const struct catalog *cat,
			      size_t nsi, struct candset *cs, struct ns_cands *prev);

#endif
