// The step object of one advance of a workflow run (step.go). host is Go:
// it answers from the run's memos and notes what the advance did. Once
// the advance has done something new, the step functions throw signal,
// which unwinds the code; Go knows the advance ended whatever the code
// does with the signal (catching it changes nothing).
(function (host) {
	"use strict";
	const signal = new Error("the workflow run advanced (a step signal: let it propagate)");
	function message(e) {
		if (e !== null && typeof e === "object" && e.message !== undefined) {
			return String(e.message);
		}
		return String(e);
	}
	async function run(name, fn, opts) {
		if (typeof fn !== "function") {
			throw new TypeError("step.run(name, fn): fn must be a function");
		}
		const m = host.begin(name, opts);
		if (m.end) {
			throw signal;
		}
		if (m.done) {
			return JSON.parse(m.json);
		}
		let json;
		try {
			const v = await fn({ attempt: m.attempt });
			json = v === undefined ? "null" : JSON.stringify(v);
			if (json === undefined) {
				json = "null";
			}
		} catch (e) {
			if (e === signal) {
				host.failed(name, m.attempt, "a step cannot call step functions (steps do not nest)");
			} else {
				host.failed(name, m.attempt, message(e));
			}
			throw signal;
		}
		host.done(name, m.attempt, json);
		throw signal;
	}
	async function sleep(name, seconds) {
		const m = host.sleep(name, seconds);
		if (m.end) {
			throw signal;
		}
	}
	async function waitForEvent(name, opts) {
		const m = host.wait(name, opts);
		if (m.end) {
			throw signal;
		}
		if (m.done) {
			return JSON.parse(m.json);
		}
		const match = opts !== null && typeof opts === "object" ? opts.match : undefined;
		for (const d of m.deliveries) {
			let ok = true;
			if (typeof match === "function") {
				try {
					ok = Boolean(await match(JSON.parse(d.payload), { event: d.event, key: d.key }));
				} catch (e) {
					if (e === signal) {
						throw e;
					}
					ok = false;
				}
			}
			if (ok) {
				host.matched(name, d.seq);
				throw signal;
			}
		}
		host.park(name);
		throw signal;
	}
	return Object.freeze({ run, sleep, waitForEvent });
})
