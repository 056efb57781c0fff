package jsvm

import (
	"time"

	"github.com/dop251/goja"
	"github.com/robfig/cron/v3"
)

// helpers.cron reads 5-field cron expressions (minute hour day-of-month
// month day-of-week, in UTC; robfig/cron's standard parser, which also
// takes @hourly, @daily, @every 5m...), as jobs use them.

func (h *helperSet) schedule(o *goja.Object) {
	rt := h.inv.rt
	ns := h.namespace(o, "cron")
	ns.set("valid", func(call goja.FunctionCall) goja.Value {
		_, err := cron.ParseStandard(h.optStr(call, 0, ""))
		return rt.ToValue(err == nil)
	})
	// next(expr, after, count): the next firing times after after (unix
	// seconds; default now), count of them (default 1: a number; more:
	// an array).
	ns.set("next", func(call goja.FunctionCall) goja.Value {
		expr := h.str(call, 0, "helpers.cron.next", "the expression")
		sched, err := cron.ParseStandard(expr)
		if err != nil {
			h.inv.fail("helpers.cron.next: %v", err)
		}
		after := h.inv.m.core.Now().UTC()
		if v := call.Argument(1); !goja.IsUndefined(v) && !goja.IsNull(v) {
			after = time.Unix(v.ToInteger(), 0).UTC()
		}
		n := int64(1)
		if v := call.Argument(2); !goja.IsUndefined(v) && !goja.IsNull(v) {
			n = min(max(v.ToInteger(), 1), 1000)
		}
		out := make([]int64, 0, n)
		t := after
		for range n {
			t = sched.Next(t)
			if t.IsZero() {
				break
			}
			out = append(out, t.Unix())
		}
		if call.Argument(2) == nil || goja.IsUndefined(call.Argument(2)) {
			if len(out) == 0 {
				return goja.Null()
			}
			return rt.ToValue(out[0])
		}
		return h.inv.b.fromGo(out)
	})
}
