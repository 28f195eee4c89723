/*
 * test_ratelimit.c - the token bucket model (lib/core/ratelimit.c): parsing,
 * EC2's documented defaults, refill and taking, when the n-th token comes,
 * pacing of launches (instances and requests), and the bound over regions;
 * a quota counted per minute of the clock (Compute Engine's).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ratelimit.h"
#include "tap.h"

static int near(double a, double b)
{
	return fabs(a - b) < 1e-6;
}

int main(void)
{
	struct rate_spec s;
	struct rate_limits l;
	struct tbucket b;
	struct launch_pace p, v[3];
	char why[300], buf[64];

	/* parsing */
	ok(rate_spec_parse("1000/2", &s, why, sizeof(why)) == 0 && s.size == 1000 && s.rate == 2,
	   "1000/2: a bucket of 1000, 2 a second");
	ok(rate_spec_parse("1/0.1", &s, why, sizeof(why)) == 0 && s.size == 1 && near(s.rate, 0.1),
	   "decimals: 1/0.1");
	ok(rate_spec_parse("none", &s, why, sizeof(why)) == 0 && s.size == 0, "none: no limit");
	is_str(rate_spec_format(&s, buf, sizeof(buf)), "none", "none formatted");
	s = (struct rate_spec){ 1000, 2 };
	is_str(rate_spec_format(&s, buf, sizeof(buf)), "1000/2", "1000/2 formatted");
	ok(rate_spec_parse("1000", &s, why, sizeof(why)) < 0 && strstr(why, "SIZE/RATE") && strstr(why, "1000/2"),
	   "1000 (no rate) refused, saying what is wanted: %s", why);
	ok(rate_spec_parse("10/0", &s, why, sizeof(why)) < 0 && strstr(why, "more than 0"),
	   "a refill of 0 refused: %s", why);
	ok(rate_spec_parse("0/5", &s, why, sizeof(why)) < 0 && strstr(why, "at least 1"), "a bucket of 0 refused: %s", why);
	ok(rate_spec_parse("ten/2", &s, why, sizeof(why)) < 0, "ten/2 refused");
	ok(rate_spec_parse("10/2x", &s, why, sizeof(why)) < 0, "10/2x refused");
	ok(rate_spec_parse("-1/2", &s, why, sizeof(why)) < 0, "-1/2 refused");
	ok(rate_spec_parse("", &s, why, sizeof(why)) < 0, "empty refused");

	/* EC2's documented buckets (the API reference's throttling page) */
	rate_limits_default("aws", &l);
	ok(l.launch.size == 1000 && l.launch.rate == 2, "aws: RunInstances instances 1000 then 2/s");
	ok(l.launch_calls.size == 5 && l.launch_calls.rate == 2, "aws: RunInstances requests 5 then 2/s");
	ok(l.terminate.size == 1000 && l.terminate.rate == 20, "aws: TerminateInstances instances 1000 then 20/s");
	ok(l.terminate_calls.size == 100 && l.terminate_calls.rate == 5, "aws: TerminateInstances requests 100 then 5/s");
	rate_limits_default("local", &l);
	ok(l.launch.size == 0 && l.launch_calls.size == 0 && l.terminate.size == 0, "local: no limits");

	/* a bucket: full at first, refills to its size */
	s = (struct rate_spec){ 10, 2 };
	tb_init(&b, &s, 100);
	ok(near(tb_tokens(&b, 100), 10), "full at first");
	tb_take(&b, 10, 100);
	ok(near(tb_tokens(&b, 100), 0), "empty after taking 10");
	ok(near(tb_tokens(&b, 101.5), 3), "3 tokens 1.5 s later");
	ok(near(tb_tokens(&b, 200), 10), "never more than its size");
	ok(near(tb_when(&b, 1, 100), 100.5), "the first token comes after 0.5 s");
	ok(near(tb_when(&b, 10, 100), 105), "10 tokens after 5 s");
	ok(near(tb_when(&b, 30, 100), 115), "30 tokens taken as they come: after 15 s (more than the size)");
	ok(near(tb_when(&b, 2, 103), 103), "at once when they are there");
	tb_take(&b, 4, 103);
	ok(near(tb_tokens(&b, 103), 2), "6 by then, 4 taken: 2 left");
	tb_drain(&b, 104);
	ok(near(tb_tokens(&b, 104), 0) && near(tb_tokens(&b, 105), 2), "a throttling answer drains it; it refills from then");
	tb_init(&b, NULL, 0);
	ok(tb_unlimited(&b) && tb_when(&b, 1e9, 7) == 7 && isinf(tb_tokens(&b, 0)), "no bucket: no limit");

	/* pacing a region's launches: EC2's RunInstances */
	rate_limits_default("aws", &l);
	pace_init(&p, &l.launch, &l.launch_calls, 0);
	ok(pace_now(&p, 5000, 0) == 1000, "1000 instances at once, not 5000");
	pace_take(&p, 1000, 1, 0);
	ok(pace_now(&p, 10, 0) == 0, "then none");
	ok(pace_now(&p, 10, 0.5) == 1, "one after 0.5 s");
	ok(pace_now(&p, 10, 2) == 4, "four after 2 s");
	ok(near(pace_when(&p, 4000, 0), 2000), "4000 more: the last after 2000 s");
	/* the requests' bucket: 5, then 2 a second */
	pace_init(&p, &l.launch, &l.launch_calls, 0);
	pace_take(&p, 5, 5, 0);
	ok(pace_now(&p, 100, 0) == 0, "no request left: nothing now though instances are");
	ok(pace_now(&p, 100, 0.5) == 100, "one request 0.5 s later carries them");
	p.per_call = 40;
	ok(pace_now(&p, 100, 0.5) == 40, "at most what one request carries (40)");
	ok(pace_now(&p, 100, 1.0) == 80, "two requests after 1 s: 80");
	ok(near(pace_when(&p, 400, 0), 5), "400 more in requests of 40: 10 requests, after 5 s");
	pace_init(&p, NULL, NULL, 0);
	ok(pace_now(&p, 15000, 0) == 15000 && pace_when(&p, 15000, 3) == 3, "no limits: all at once");

	/* the bound over regions */
	s = (struct rate_spec){ 100, 10 };
	{
		struct rate_spec calls = { 50, 50 };
		size_t i;
		for (i = 0; i < 3; i++)
			pace_init(&v[i], &s, &calls, 0);
	}
	ok(near(pace_bound(v, 1, 100, 0), 0), "one region, its bucket's worth: at once");
	ok(near(pace_bound(v, 1, 200, 0), 10), "one region, 200: 10 s");
	ok(near(pace_bound(v, 3, 300, 0), 0), "three regions, 300: at once");
	ok(near(pace_bound(v, 3, 600, 0), 10), "three regions, 600: 10 s");
	ok(near(pace_bound(v, 3, 601, 0), 10.1), "601: the last at 10.1 s");
	v[2].per_call = 1;   /* one instance a request there: 50, then 50 a second */
	ok(near(pace_bound(v, 3, 600, 0), 10), "a region of one-instance requests keeps up");
	v[2].calls.rate = 1;
	ok(pace_bound(v, 3, 600, 0) > 10 && pace_bound(v, 3, 600, 0) < 20,
	   "a region short of requests: later (%.2f s)", pace_bound(v, 3, 600, 0));
	ok(near(pace_bound(v, 3, 0, 5), 5), "nothing to launch: now");
	{
		struct rate_spec zero = { 1, 1e-300 };
		struct launch_pace z;
		pace_init(&z, &zero, NULL, 0);
		pace_take(&z, 1, 1, 0);
		ok(isinf(pace_bound(&z, 1, 1e6, 0)), "a refill that never comes: never");
	}
	/* the sender: one request in flight, counted again from when it left */
	{
		struct rate_spec inst = { 1000, 2 }, calls = { 5, 2 }, none = { 0, 0 };
		struct pace_sender ps;

		pace_sender_init(&ps, &inst, &calls, 0);
		ok(pace_send(&ps, 1500, 0, 0.25) == 1000 && ps.inflight, "1500 wanted: 1000 sent, in flight");
		ok(pace_send(&ps, 500, 1, 0.25) == 0, "nothing more while it is in flight");
		pace_answer(&ps, 1000, 3, 3.1, false);
		ok(pace_now(&ps.cur, 500, 4) == 2, "it left the worker at 3 s: at 4 s 2 more, not 8 (%zu)",
		   pace_now(&ps.cur, 500, 4));
		ok(pace_send(&ps, 500, 4, 0.25) == 1, "sent at 4 s, read 0.25 s early: 1");
		pace_answer(&ps, 1, 4.2, 4.3, true);
		ok(pace_now(&ps.cur, 500, 4.3) == 0 && pace_now(&ps.cur, 500, 5.3) == 2,
		   "throttled at 4.3 s: empty then, 2 a second later");
		ok(near(pace_sender_eta(&ps, 3, 4.3, 0.25), 4.3 + 2 + 0.25), "the 4th waiting one: 2 s later, plus the slack");
		pace_send(&ps, 10, 10, 0);
		pace_unsend(&ps);
		ok(!ps.inflight && pace_now(&ps.cur, 500, 10) == 11, "a request dropped: as before it");
		pace_sender_init(&ps, &none, &none, 0);
		ok(pace_send(&ps, 5000, 0, 0.25) == 5000 && !ps.inflight, "no limit: all at once, nothing waited for");
	}
	/*
	 * The sender against a cloud: EC2's RunInstances buckets (1000 then 2/s,
	 * 5 requests then 2/s), 3000 instances, the loop's ticks every 250 ms,
	 * each request held 0-2 s on its way (a worker busy with other calls,
	 * in order). Nothing is throttled, and the last request reaches the
	 * cloud at most two holds, two ticks and the slack after the bound.
	 */
	{
		struct rate_spec inst = { 1000, 2 }, calls = { 5, 2 };
		struct pace_sender ps;
		struct tbucket ci, cc;
		struct launch_pace one;
		unsigned rnd = 12345, throttled = 0, requests = 0;
		double t, arrive = 0, answered = -1, last = 0, bound, hold_max = 2.0;
		size_t left = 3000, n = 0;

		pace_sender_init(&ps, &inst, &calls, 0);
		tb_init(&ci, &inst, 0);
		tb_init(&cc, &calls, 0);
		pace_init(&one, &inst, &calls, 0);
		bound = pace_bound(&one, 1, 3000, 0);
		for (t = 0; (left || ps.inflight) && t < 10000; t += 0.25) {
			size_t k;
			if (ps.inflight && answered <= t) {
				bool th = tb_tokens(&ci, arrive) + 1e-9 < (double)n || tb_tokens(&cc, arrive) + 1e-9 < 1;
				if (th)
					throttled++;
				else {
					tb_take(&ci, (double)n, arrive);
					tb_take(&cc, 1, arrive);
				}
				pace_answer(&ps, n, arrive, answered, th);
				if (th)
					left += n;
			}
			k = pace_send(&ps, left, t, 0.25);
			if (k) {
				double hold;
				rnd = rnd * 1103515245u + 12345u;
				hold = hold_max * (double)((rnd >> 8) & 0xffff) / 65536.0;
				arrive = t + hold > arrive ? t + hold : arrive;
				answered = arrive + 0.01;
				last = arrive;
				n = k;
				left -= k;
				requests++;
			}
		}
		ok(throttled == 0, "against a cloud, requests held 0-2 s: none throttled (%u of %u requests)",
		   throttled, requests);
		/* late by at most: the request before the last held (its answer
		 * waited for), the last held, a tick after each, the slack */
		ok(left == 0 && last >= bound - 1e-6 && last <= bound + 2 * hold_max + 2 * 0.25 + 0.25 + 0.02,
		   "the last request at %.2f s, the bound %.2f s", last, bound);
	}

	/* a quota counted per interval of the clock (Compute Engine's per-minute rate quotas) */
	{
		struct win_quota q;
		unsigned rnd = 7, over = 0, sent = 0;
		double t, last = 0, cloud[64] = { 0 };

		wq_init(&q, 0, 60, 1);
		ok(wq_unlimited(&q) && near(wq_when(&q, 5), 5), "a quota of 0: no limit");
		wq_init(&q, 5, 60, 1);
		for (int i = 0; i < 5; i++) {
			ok(near(wq_when(&q, 130), 130), "request %d of 5 in the minute from 120 s: at once", i + 1);
			wq_take(&q, 130);
		}
		ok(near(wq_when(&q, 130), 181), "the 6th: at the next minute (180 s) and the slack, 181 s");
		ok(near(wq_when(&q, 200), 200), "... and at 200 s at once");
		wq_init(&q, 2, 60, 1);
		wq_take(&q, 179.5);
		wq_take(&q, 179.5);
		ok(near(wq_when(&q, 185), 241), "2 sent within the slack of a minute's end count in the next minute too (%.1f)",
		   wq_when(&q, 185));
		wq_init(&q, 2, 60, 1);
		wq_take(&q, 150.5);
		ok(near(wq_when(&q, 150.5), 150.5), "1 of 2 sent: the second at once");
		wq_drain(&q, 151);
		ok(near(wq_when(&q, 151), 181), "a throttling answer: nothing more until the next minute (181 s)");
		wq_init(&q, 4, 2, 3);
		ok(near(q.slack, 0.5), "the slack is cut to a quarter of the interval");

		/* 40 requests, each as soon as the quota allows, against a cloud
		 * whose clock (and the way there) differs by up to the slack:
		 * none of its minutes counts more than 10; the last at the
		 * bound (the 4th minute after the first's) and the slack */
		wq_init(&q, 10, 60, 1);
		t = 1;
		for (int i = 0; i < 40; i++) {
			double at = wq_when(&q, t), d;
			long w;
			rnd = rnd * 1103515245u + 12345u;
			d = 2.0 * (double)((rnd >> 8) & 0xffff) / 65536.0 - 1.0;
			w = (long)floor((at + d) / 60);
			if (w >= 0 && w < 64 && ++cloud[w] > 10)
				over++;
			wq_take(&q, at);
			sent++;
			last = at;
			t = at + 0.01 * (double)((rnd >> 4) & 7);
		}
		ok(over == 0 && sent == 40, "40 requests against a cloud's minutes of 10 with its clock off by up to 1 s: "
		   "none refused (%u over)", over);
		/* the sender's own gaps (up to 0.07 s) after the 4th minute's first */
		ok(last >= 181 && last <= 181 + 9 * 0.07 + 1e-6, "the last at %.2f s: the bound (180 s), the slack, "
		   "the sender's 9 gaps", last);
	}
	return done_testing();
}
