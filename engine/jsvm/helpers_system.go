package jsvm

import (
	"encoding/base64"
	"encoding/hex"
	"os"
	"path"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// util, path and os.
//
// os.env reads only the node's environment variables whose names start
// with SVC_JS_: an operator passes a secret to code by naming it so,
// and the node's own secrets (SVC_JWT_SECRET, SVC_ENCRYPTION_KEY,
// SVC_CLUSTER_KEY, ...) stay out of reach of code. Each node has its own
// environment: set the same variables on every node.

// envPrefix starts the names of the variables code may read.
const envPrefix = "SVC_JS_"

// maxSleep bounds one util.sleep.
const maxSleep = 10 * time.Second

func (h *helperSet) system(o *goja.Object) {
	rt := h.inv.rt
	util := h.namespace(o, "util")
	util.set("base64Encode", func(call goja.FunctionCall) goja.Value {
		return rt.ToValue(base64.StdEncoding.EncodeToString([]byte(h.str(call, 0, "helpers.util.base64Encode", "the text"))))
	})
	util.set("base64Decode", func(call goja.FunctionCall) goja.Value {
		s := h.str(call, 0, "helpers.util.base64Decode", "the text")
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			b, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
		}
		if err != nil {
			h.inv.fail("helpers.util.base64Decode: not base64")
		}
		return rt.ToValue(string(b))
	})
	util.set("hexEncode", func(call goja.FunctionCall) goja.Value {
		return rt.ToValue(hex.EncodeToString([]byte(h.str(call, 0, "helpers.util.hexEncode", "the text"))))
	})
	util.set("hexDecode", func(call goja.FunctionCall) goja.Value {
		b, err := hex.DecodeString(h.str(call, 0, "helpers.util.hexDecode", "the text"))
		if err != nil {
			h.inv.fail("helpers.util.hexDecode: not hexadecimal")
		}
		return rt.ToValue(string(b))
	})
	util.set("unix", func(goja.FunctionCall) goja.Value { return rt.ToValue(h.inv.m.core.Now().Unix()) })
	util.set("sleep", func(call goja.FunctionCall) goja.Value {
		d := min(time.Duration(call.Argument(0).ToInteger())*time.Millisecond, maxSleep)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-h.inv.ctx.Done():
			h.inv.throw("helpers.util.sleep", h.inv.ctx.Err())
		}
		return goja.Undefined()
	})

	p := h.namespace(o, "path")
	strs := func(call goja.FunctionCall) []string {
		out := make([]string, len(call.Arguments))
		for i, a := range call.Arguments {
			out[i] = a.String()
		}
		return out
	}
	p.set("join", func(call goja.FunctionCall) goja.Value { return rt.ToValue(path.Join(strs(call)...)) })
	p.set("base", func(call goja.FunctionCall) goja.Value { return rt.ToValue(path.Base(h.optStr(call, 0, ""))) })
	p.set("dir", func(call goja.FunctionCall) goja.Value { return rt.ToValue(path.Dir(h.optStr(call, 0, ""))) })
	p.set("ext", func(call goja.FunctionCall) goja.Value { return rt.ToValue(path.Ext(h.optStr(call, 0, ""))) })
	p.set("clean", func(call goja.FunctionCall) goja.Value { return rt.ToValue(path.Clean(h.optStr(call, 0, ""))) })
	p.set("isAbs", func(call goja.FunctionCall) goja.Value { return rt.ToValue(path.IsAbs(h.optStr(call, 0, ""))) })

	osns := h.namespace(o, "os")
	osns.set("env", func(call goja.FunctionCall) goja.Value {
		name := h.str(call, 0, "helpers.os.env", "the variable's name")
		if !strings.HasPrefix(name, envPrefix) {
			h.inv.fail("helpers.os.env: code reads only variables whose names start with %s (%s is not one)", envPrefix, name)
		}
		v := h.inv.m.env(name)
		if v == "" {
			return goja.Undefined()
		}
		return rt.ToValue(v)
	})
	osns.set("hostname", func(goja.FunctionCall) goja.Value {
		n, _ := os.Hostname()
		return rt.ToValue(n)
	})
	osns.set("nodeId", func(goja.FunctionCall) goja.Value { return rt.ToValue(h.inv.m.nodeID()) })
}
