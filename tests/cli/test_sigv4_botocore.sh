#!/usr/bin/env bash
# tests/cli/test_sigv4_botocore.sh - lib/sigv4 against botocore's SigV4Auth,
# byte for byte, on EC2 Query API requests (TAP).
#
# A Python script (Debian's python3-botocore, run by /usr/bin/python3 so a
# python3 earlier on PATH cannot hide it) builds the requests the EC2 client
# sends: POSTs of form-encoded Action=...&Version=2016-11-15&... bodies with
# values that need encoding (spaces, '/', '+', '=', ':', UTF-8, base64 user
# data), GET DescribeInstances with a query string, with and without a
# session token, at fixed times. botocore signs each with SigV4Auth on an
# AWSRequest, its clock patched to the chosen time; tests/unit/sigv4_sign
# signs the same request text. Canonical request, string to sign and
# Authorization must be equal. No network: nothing is sent.
set -u
src=${BURST_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${BURST_TOP_BUILDDIR:-$src}
SIGN="$build/tests/unit/sigv4_sign"
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/integration/tap.sh"

[ -x "$SIGN" ] || bail "$SIGN not built (make check builds it)"
"$PY" -c 'import botocore.auth' 2>"$tmp/py.err" ||
	bail "no botocore for $PY: apt-get install python3-botocore (tools/deps.sh)"

# Writes, for each request N: N.name (what it is), N.args (the arguments of
# sigv4_sign, one a line), N.req (the HTTP request text, without X-Amz-Date,
# which the signer adds), N.boto (botocore's canonical request, string to
# sign and Authorization, in sigv4_sign's output format).
"$PY" - "$tmp" <<'EOF' 2>"$tmp/py.err" || { cat "$tmp/py.err" | sed 's/^/# /'; bail "botocore failed"; }
import base64, datetime, sys, types
from urllib.parse import quote, quote_plus, urlsplit

import botocore.auth
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

out = sys.argv[1]
VERSION = '2016-11-15'
CT = 'application/x-www-form-urlencoded; charset=utf-8'

# botocore.auth reads the clock through its module-level 'datetime'
# (datetime.datetime.utcnow() in 1.29, .now(timezone.utc) in later ones):
# give it a datetime module whose clock is fixed.
class FixedClock(datetime.datetime):
    at = None

    @classmethod
    def utcnow(cls):
        return cls.at

    @classmethod
    def now(cls, tz=None):
        return cls.at.replace(tzinfo=tz) if tz else cls.at

shim = types.ModuleType('datetime')
shim.__dict__.update(datetime.__dict__)
shim.datetime = FixedClock
botocore.auth.datetime = shim

class Recording(SigV4Auth):
    """SigV4Auth that keeps its canonical request and string to sign."""
    def canonical_request(self, request):
        self.creq = super().canonical_request(request)
        return self.creq

    def string_to_sign(self, request, canonical_request):
        self.sts = super().string_to_sign(request, canonical_request)
        return self.sts

def enc(s):
    """RFC 3986 encoding, what the EC2 client sends."""
    return quote(s, safe='-_.~')

def form(params, plus=False):
    q = quote_plus if plus else enc
    return '&'.join(f'{q(k)}={q(v)}' for k, v in params)

KEYS = [('AKIDEXAMPLE', 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY'),
        ('ASIAQ3EXAMPLE7BURST', 'je7MtGbClwBF/2Zp9Utk+h3yCo8nvbEXAMPLEKEY=')]
TOKEN = ('IQoJb3JpZ2luX2VjEOP//////////wEaCXVzLWVhc3QtMSJHMEUCIQD+example/token'
         '+with/slashes+and+plus==')
USERDATA = base64.b64encode((
    '#!/bin/bash\n# burst node bootstrap\nset -euo pipefail\n'
    'echo "cluster=lab partition=burst" > /etc/burst-node.conf\n'
    'systemctl enable --now slurmd  # caf\u00e9 \u2603 ~ ?a=b&c=d\n' * 20
).encode()).decode()

n = 0
def case(name, method, url, body=b'', headers=None, key=0, token=None,
         region='us-east-1', when=datetime.datetime(2026, 11, 23, 10, 15, 30)):
    global n
    n += 1
    headers = dict(headers or {})
    if method == 'POST':
        headers.setdefault('Content-Type', CT)
    ak, sk = KEYS[key]
    FixedClock.at = when
    req = AWSRequest(method=method, url=url, headers=headers, data=body)
    auth = Recording(Credentials(ak, sk, token), 'ec2', region)
    auth.add_auth(req)
    amz_date = when.strftime('%Y%m%dT%H%M%SZ')
    # the clock patch took: botocore signed at the chosen time
    assert req.headers['X-Amz-Date'] == amz_date, (req.headers['X-Amz-Date'], amz_date)
    with open(f'{out}/{n}.boto', 'w', encoding='utf-8', newline='\n') as f:
        f.write(f'--- canonical request\n{auth.creq}\n--- string to sign\n{auth.sts}\n'
                f'--- authorization\n{req.headers["Authorization"]}\n')
    parts = urlsplit(url)
    target = parts.path + ('?' + parts.query if parts.query else '')
    text = f'{method} {target} HTTP/1.1\nHost:{parts.netloc}\n'
    text += ''.join(f'{k}:{v}\n' for k, v in headers.items())
    with open(f'{out}/{n}.req', 'wb') as f:
        f.write(text.encode('utf-8') + b'\n' + body)
    with open(f'{out}/{n}.args', 'w') as f:
        f.write('\n'.join([ak, sk, region, 'ec2', amz_date] + ([token] if token else [])) + '\n')
    with open(f'{out}/{n}.name', 'w') as f:
        f.write(name)

def post(name, params, plus=False, region='us-east-1', **kw):
    body = form([('Action', params[0]), ('Version', VERSION)] + params[1:], plus).encode()
    case(name, 'POST', f'https://ec2.{region}.amazonaws.com/', body, region=region, **kw)

def get(name, params, path='/', **kw):
    query = form([('Action', params[0]), ('Version', VERSION)] + params[1:])
    case(name, 'GET', f'https://ec2.us-east-1.amazonaws.com{path}?{query}', **kw)

run = ['RunInstances', ('ImageId', 'ami-0abcdef1234567890'), ('InstanceType', 'c6i.large'),
       ('MinCount', '1'), ('MaxCount', '1')]
tags = [('TagSpecification.1.ResourceType', 'instance'),
        ('TagSpecification.1.Tag.1.Key', 'Name'),
        ('TagSpecification.1.Tag.1.Value', 'a b'),
        ('TagSpecification.1.Tag.2.Key', 'burst:cluster'),
        ('TagSpecification.1.Tag.2.Value', 'lab/x+y=z'),
        ('TagSpecification.1.Tag.3.Key', 'owner'),
        ('TagSpecification.1.Tag.3.Value', 'Ren\u00e9e \u2603 \u6f22\u5b57 \U0001f680')]
post('RunInstances, plain', run)
post('RunInstances, plain, session token', run, token=TOKEN)
post('RunInstances, tags needing encoding', run + tags)
post('RunInstances, tags, session token, other key', run + tags, key=1, token=TOKEN)
post('RunInstances, base64 user data', run + [('UserData', USERDATA)])
post('RunInstances, user data and tags, token', run + tags + [('UserData', USERDATA)], token=TOKEN)
post('RunInstances, form body with + for spaces', run + tags, plus=True)
post('RunInstances, launch template, subnet, spot', run[:1] + [
    ('LaunchTemplate.LaunchTemplateName', 'burst lt/1'), ('LaunchTemplate.Version', '$Latest'),
    ('SubnetId', 'subnet-0123456789abcdef0'), ('InstanceMarketOptions.MarketType', 'spot'),
    ('InstanceMarketOptions.SpotOptions.MaxPrice', '0.125'), ('MinCount', '4'), ('MaxCount', '4')])
post('RunInstances, eu-west-1', run, region='eu-west-1')
post('DescribeInstances, filters', ['DescribeInstances',
    ('Filter.1.Name', 'tag:burst:cluster'), ('Filter.1.Value.1', 'lab/x+y=z'),
    ('Filter.2.Name', 'instance-state-name'), ('Filter.2.Value.1', 'pending'),
    ('Filter.2.Value.2', 'running'), ('MaxResults', '1000')])
post('DescribeInstances, instance ids, token', ['DescribeInstances',
    ('InstanceId.1', 'i-0123456789abcdef0'), ('InstanceId.2', 'i-0fedcba9876543210')],
    token=TOKEN, key=1)
post('DescribeInstances, next token', ['DescribeInstances',
    ('NextToken', 'eyJ2IjoiMiIsImMiOiJ0Z3Z+/abc==')])
post('TerminateInstances', ['TerminateInstances', ('InstanceId.1', 'i-0123456789abcdef0')])
post('TerminateInstances, token, new year', ['TerminateInstances',
    ('InstanceId.1', 'i-0123456789abcdef0')], token=TOKEN,
    when=datetime.datetime(2026, 12, 31, 23, 59, 59))
post('CreateTags, empty value', ['CreateTags', ('ResourceId.1', 'i-0123456789abcdef0'),
    ('Tag.1.Key', 'burst:state'), ('Tag.1.Value', '')])
post('DescribeSpotPriceHistory, times with colons', ['DescribeSpotPriceHistory',
    ('StartTime', '2026-11-23T10:00:00Z'), ('InstanceType.1', 'g5.xlarge'),
    ('ProductDescription.1', 'Linux/UNIX')])
post('DescribeInstanceTypes', ['DescribeInstanceTypes', ('InstanceType.1', 'p4d.24xlarge')],
     when=datetime.datetime(2027, 2, 28, 0, 0, 0))
post('RunInstances, every printable ASCII in a tag', run +
     [('TagSpecification.1.Tag.1.Value', ''.join(chr(c) for c in range(32, 127)))])
get('GET DescribeInstances', ['DescribeInstances'])
get('GET DescribeInstances, filters', ['DescribeInstances',
    ('Filter.1.Name', 'tag:Name'), ('Filter.1.Value.1', 'a b/c+d=e \u00e9')])
get('GET DescribeInstances, filters, token', ['DescribeInstances',
    ('Filter.1.Name', 'tag:Name'), ('Filter.1.Value.1', 'a b/c+d=e \u00e9'),
    ('MaxResults', '5')], token=TOKEN)
get('GET DescribeInstances, repeated and unsorted keys', ['DescribeInstances',
    ('InstanceId.2', 'i-2'), ('InstanceId.1', 'i-1'), ('Filter.1.Value.1', 'b'),
    ('Filter.1.Value.1', 'a')])
get('GET, path normalized and encoded again', ['DescribeRegions'],
    path='/a/./b/../c//d%2Fe%20f/')
case('GET, header values trimmed and collapsed', 'GET',
     'https://ec2.us-east-1.amazonaws.com/?Action=DescribeRegions&Version=2016-11-15',
     headers={'X-Amz-Meta-Note': '  a   b \t c  ', 'Content-Type': 'text/plain'})
EOF

count=0
nreq=$(find "$tmp" -name '*.name' | wc -l)
for i in $(seq 1 "$nreq"); do
	desc="$i: $(cat "$tmp/$i.name")"
	mapfile -t args <"$tmp/$i.args"
	"$SIGN" "${args[@]}" <"$tmp/$i.req" >"$tmp/$i.c" 2>"$tmp/$i.err"
	rc=$?
	count=$((count + 1))
	# the Authorization lines (the line after '--- authorization')
	got=$(sed -n '/^--- authorization$/{n;p}' "$tmp/$i.c")
	want=$(sed -n '/^--- authorization$/{n;p}' "$tmp/$i.boto")
	diff -u "$tmp/$i.boto" "$tmp/$i.c" >"$tmp/$i.diff"
	[ "$rc" -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ]
	ok $? "$desc: Authorization equals botocore's" "$tmp/$i.err" "$tmp/$i.diff"
	[ "$rc" -eq 0 ] && [ ! -s "$tmp/$i.diff" ]
	ok $? "$desc: canonical request and string to sign equal botocore's" "$tmp/$i.diff"
done
[ "$count" -ge 20 ]
ok $? "signed $count requests (at least 20)"
done_testing
