# tools/deps.sh - install the Debian packages slurm-burst needs (sourced by
# check.sh, demo.sh and bench scripts). Installs only what is missing, and
# runs 'apt-get update' first when anything is.

# Build and unit-test dependencies.
BURST_BUILD_DEPS="build-essential autoconf automake libtool pkg-config \
libslurm-dev libjson-c-dev libssl-dev libcurl4-openssl-dev libsqlite3-dev \
libmunge-dev libxml2-dev libyaml-dev python3 python3-botocore valgrind openssl"

# tests/cli/test_gitlab_ci.sh parses the GitLab CI template with PyYAML
BURST_BUILD_DEPS="$BURST_BUILD_DEPS python3-yaml"
# tests/cli/test_wire_lua.sh runs contrib/job_submit.lua in Lua 5.3 (the
# release Debian 12's Slurm links job_submit/lua against)
BURST_BUILD_DEPS="$BURST_BUILD_DEPS lua5.3"
# tests/cli/test_standby_upgrade.sh makes an older release's agent.db and
# renews its lease with the sqlite3 program
BURST_BUILD_DEPS="$BURST_BUILD_DEPS sqlite3"
# What the integration tests' private Slurm cluster needs (prometheus:
# tests/integration/test_metrics.sh scrapes the agent with it).
BURST_LAB_DEPS="slurmctld slurmd slurm-client munge iproute2 libpmix2 \
charliecloud-runtime busybox-static libxml2-utils python3-junitparser curl \
openmpi-bin libopenmpi-dev prometheus"
# tests/integration/test_site.sh: source NAT on its router namespace
BURST_LAB_DEPS="$BURST_LAB_DEPS nftables"
# tests/integration/test_gitlab_ci_local.sh: gitlab-ci-local reads the CI
# project's git repository and its shell executor copies it with rsync
# (node and npm, and gitlab-ci-local itself: tools/gitlab-ci-local.sh)
BURST_LAB_DEPS="$BURST_LAB_DEPS git rsync"
# the gcp tests' fake Compute Engine (tests/integration/gce_fake.py)
# verifies the RS256 signatures of the JWTs its token endpoint is sent
BURST_LAB_DEPS="$BURST_LAB_DEPS python3-cryptography"
# tests/integration/test_budget.sh and test_cost.sh read the agent's
# database with the sqlite3 program
BURST_LAB_DEPS="$BURST_LAB_DEPS sqlite3"
# tests/integration/test_cost.sh: job accounting in a slurmdbd of the lab's
# own on a private MariaDB (lab_dbd in tests/integration/lab.sh); the host
# only (tools/debroot.sh leaves them out of the Debian 13 root)
BURST_LAB_DEPS="$BURST_LAB_DEPS mariadb-server slurmdbd"
# The OpenStack provider's tests: real Keystone and Nova on loopback
# (tests/integration/os_peers.sh). Nova's API, conductor, scheduler and fake
# compute run from python3-nova's own functional-test fixtures, which need
# the test libraries below; nova-common has the api-paste.ini.
BURST_OPENSTACK_DEPS="python3-keystone python3-keystonemiddleware python3-keystoneclient \
python3-openstackclient python3-nova nova-common python3-placement python3-novaclient \
python3-wsgi-intercept python3-oslotest python3-fixtures python3-testtools \
python3-testscenarios python3-requests-mock"
# What tools/debroot.sh needs on the host to make the Debian 13 root of
# check.sh's second Slurm release (the packages inside it are the build and lab lists).
BURST_MATRIX_DEPS="debootstrap"
# What make check-packages needs (tests/packaging): dpkg-buildpackage,
# rpmbuild and the clean Debian 12 root.
BURST_PACKAGING_DEPS="dpkg-dev debhelper dh-autoreconf rpm debootstrap"

# A package's name on this machine's Debian release: Debian 13 renamed
# libraries for its 64-bit time_t (libpmix2 -> libpmix2t64). SUITE (the
# release's codename) defaults to this machine's.
burst_pkg_name() {   # NAME [SUITE]
	local suite=${2:-}
	[ -n "$suite" ] || suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	case "$1:$suite" in
	libpmix2:bookworm | libpmix2:bullseye | libpmix2:) echo libpmix2 ;;
	libpmix2:*) echo libpmix2t64 ;;
	*) echo "$1" ;;
	esac
}

burst_install_deps() {
	local missing=() p suite
	# this machine's release, read once for all the names
	suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	for p in "$@"; do
		p=$(burst_pkg_name "$p" "$suite")
		if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
			missing+=("$p")
		fi
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing Debian packages: ${missing[*]}" >&2
		echo "run as root, or install them: apt-get install ${missing[*]}" >&2
		return 1
	fi
	echo "installing Debian packages: ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}
