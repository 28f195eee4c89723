/*
 * test_plugstack_check.c - burst-node join refuses a node whose
 * plugstack.conf does not load the admission plugin from a file it has.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"
#include "../../burst-node/plugstack_check.h"

static char dir[256];

static void put(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static const char *check(const char *slurm_conf_name, const char *dirs, char *why, size_t len)
{
	char sc[512];

	snprintf(sc, sizeof(sc), "%s/%s", dir, slurm_conf_name);
	return plugstack_admission_problem(sc, dirs, why, len);
}

int main(void)
{
	char why[4096], text[2048], libdir[512], other[512];

	snprintf(dir, sizeof(dir), "/var/tmp/test_plugstack_check.XXXXXX");
	if (!mkdtemp(dir))
		return perror("mkdtemp"), 1;
	snprintf(libdir, sizeof(libdir), "%s/lib", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	mkdir(libdir, 0755);
	mkdir(other, 0755);
	put("slurm.conf", "ClusterName=x\n");

	ok(check("slurm.conf", libdir, why, sizeof(why)) != NULL, "no plugstack.conf: refused");
	has_str(why, "has no plugstack.conf", "... saying so");

	put("plugstack.conf", "required /x/spank_cloud_contract.so conf=/etc/slurm/burst.conf\n"
	    "# required /x/spank_burst_admission.so\n");
	ok(check("slurm.conf", libdir, why, sizeof(why)) != NULL, "plugstack.conf without the admission plugin (a comment does not count): refused");
	has_str(why, "does not load spank_burst_admission.so", "... saying what to add");

	snprintf(text, sizeof(text), "required %s/spank_burst_admission.so conf=/etc/slurm/burst.conf\n", libdir);
	put("plugstack.conf", text);
	ok(check("slurm.conf", libdir, why, sizeof(why)) != NULL, "listed, but the file is missing: refused");
	has_str(why, "which this node does not have", "... naming the missing file");
	has_str(why, libdir, "... with its path");

	put("lib/spank_burst_admission.so", "");
	ok(check("slurm.conf", "/nonexistent", why, sizeof(why)) == NULL, "listed by absolute path and present: accepted");
	snprintf(text, sizeof(text), "optional %s/spank_burst_admission.so conf=/etc/slurm/burst.conf\n", libdir);
	put("plugstack.conf", text);
	ok(check("slurm.conf", libdir, why, sizeof(why)) != NULL, "listed optional (Slurm ignores its failures): refused");
	has_str(why, "list it \"required\"", "... saying to list it required");

	put("plugstack.conf", "required   spank_burst_admission.so\tconf=/etc/slurm/burst.conf\n");
	ok(check("slurm.conf", other, why, sizeof(why)) != NULL, "a relative name not in the plugin directories: refused");
	ok(check("slurm.conf", "/nonexistent:" , why, sizeof(why)) != NULL, "... nor in an empty list entry");
	snprintf(text, sizeof(text), "/nonexistent:%s", libdir);
	ok(check("slurm.conf", text, why, sizeof(why)) == NULL, "a relative name found in the second plugin directory: accepted");
	snprintf(text, sizeof(text), "ClusterName=x\npluginDir=%s # Slurm's own\n", other);
	put("slurm.conf", text);
	ok(check("slurm.conf", libdir, why, sizeof(why)) != NULL, "slurm.conf's PluginDir= (any case) replaces the default directories");
	put("slurm.conf", "ClusterName=x\n");

	snprintf(text, sizeof(text), "include %s/plugstack.conf.d/*.conf\n", dir);
	put("plugstack.conf", text);
	snprintf(text, sizeof(text), "%s/plugstack.conf.d", dir);
	mkdir(text, 0755);
	put("plugstack.conf.d/a.conf", "required /x/spank_cloud_contract.so\n");
	ok(check("slurm.conf", libdir, why, sizeof(why)) != NULL, "included files without it: refused");
	snprintf(text, sizeof(text), "required %s/spank_burst_admission.so\n", libdir);
	put("plugstack.conf.d/b.conf", text);
	ok(check("slurm.conf", libdir, why, sizeof(why)) == NULL, "found through an include glob: accepted");
	put("plugstack.conf", "include plugstack.conf.d/*.conf\n");
	ok(check("slurm.conf", libdir, why, sizeof(why)) == NULL, "... a relative glob, relative to plugstack.conf's directory");
	put("plugstack.conf", "include /nonexistent.d/*.conf\nrequired /x/spank_cloud_contract.so\n");
	ok(check("slurm.conf", libdir, why, sizeof(why)) != NULL, "an include that matches nothing (an on-premises node): refused");

	/* PlugStackConfig= moves it */
	put("plugstack.conf", "required /x/spank_cloud_contract.so\n");
	snprintf(text, sizeof(text), "%s/elsewhere.conf", dir);
	{
		char sc[2200], line[1024];
		snprintf(line, sizeof(line), "required %s/spank_burst_admission.so\n", libdir);
		put("elsewhere.conf", line);
		snprintf(sc, sizeof(sc), "ClusterName=x\nPlugStackConfig=%s\n", text);
		put("slurm2.conf", sc);
	}
	ok(check("slurm2.conf", libdir, why, sizeof(why)) == NULL, "slurm.conf's PlugStackConfig= is the file read");
	ok(check("slurm.conf", libdir, why, sizeof(why)) != NULL, "... and without it, plugstack.conf beside slurm.conf");

	/* slurm.conf read as slurmctld reads it: an Include followed (a site's
	 * slurm-burst lines by Include, the admin guide's recipe), the last
	 * value of a key wins, a node line's words are the node's */
	{
		char sc[2200];
		snprintf(sc, sizeof(sc), "PlugStackConfig=%s/plugstack.conf\n", dir);
		put("first.conf", sc);
		snprintf(sc, sizeof(sc), "PlugStackConfig=%s\n", text);
		put("inc.conf", sc);
		put("slurm3.conf", "ClusterName=x\nInclude first.conf\nNodeName=n1 PlugStackConfig=/nope\n"
		    "Include inc.conf  # the burst lines\n");
	}
	if (!ok(check("slurm3.conf", libdir, why, sizeof(why)) == NULL,
		"PlugStackConfig= in an included file, its last value: the file read (failed before: "
		"the first value in slurm.conf itself, none here)"))
		diag("%s", why);
	put("slurm4.conf", "ClusterName=x\nInclude missing.conf\n");
	ok(check("slurm4.conf", libdir, why, sizeof(why)) != NULL && strstr(why, dir) &&
	   strstr(why, "/plugstack.conf"),
	   "an Include that cannot be read: plugstack.conf beside slurm.conf is looked for (and is "
	   "without the plugin here): refused");

	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("cannot remove %s", dir);
	}
	return done_testing();
}
